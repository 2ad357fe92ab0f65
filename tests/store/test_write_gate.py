"""The write gate of drafts (issue 16): transient literals become named parameters that the
reviewer sees in the draft's diff and can keep; regression cases from the pattern's dead ends
are shown in the draft and written into the skill's references/ as a checklist; who approved a
graduated skill and where it came from are in its manifest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.library import Library
from store.patterns.graduate import GraduationError
from store.patterns.literals import Known, Parameterizer, draft_diff
from store.patterns.regressions import REFERENCE, read_checklist
from store.verify import verify
from tests.store.test_patterns import add_node, add_session, assert_spec_valid

PROJECT = "/home/dana/work/payments-api"
DEAD = [
    "Dead end: raising the connection pool size did not help, requests still time out"
    " waiting for a pooled connection",
    "Dead end: a bigger database connection pool did not fix the pool timeouts under load",
    "Dead end: increasing pool_size did not stop QueuePool limit timeouts in the API at"
    " pg-main.payments.internal",
]
FIX = [
    "Solution: connections were idle in transaction; holding a transaction open across an"
    " HTTP call in /home/dana/work/payments-api/app/checkout.py exhausted the pool, fixed by"
    " short transactions",
    "Solution: idle in transaction sessions held pooled connections; splitting the"
    " transaction so no connection is held during I/O fixed the pool exhaustion",
    "Solution: the pool was exhausted by connections idle in transaction during provider"
    " calls; short transactions fixed it",
]


@pytest.fixture
def lib(make_library: Callable[..., Library]) -> Library:
    library = make_library()
    ids = []
    for i in range(3):
        sid = f"s{i}"
        add_session(library, sid, PROJECT, f"2026-10-{10 + i:02d}T09:00:00+00:00")
        add_node(library, f"n_dead{i}", sid, PROJECT, DEAD[i], line=10)
        add_node(
            library,
            f"n_fix{i}",
            sid,
            PROJECT,
            FIX[i],
            line=20,
            edges_in=[{"source": f"n_dead{i}", "type": "resolved"}],
        )
        ids += [f"n_dead{i}", f"n_fix{i}"]
    library.review("approve", ids)
    library.consolidate()
    library.retrieval_log.channel = "mcp"
    library.diagnose("requests time out waiting for a pooled database connection")
    return library


def drafted(lib: Library) -> str:
    _, made = lib.graduate()
    assert len(made) == 1, [c.criteria for c in lib.graduation()]
    return made[0].draft_id


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("curl https://api.staging.acme.io/v1/health", [("host", "api.staging.acme.io")]),
        ("psql -h pg-0.db.internal -p 5432", [("host", "pg-0.db.internal"), ("port", "5432")]),
        ("PAY-4411 since 2026-10-16", [("ticket", "PAY-4411"), ("date", "2026-10-16")]),
        ("reverted commit 9f3ab21 on main", [("commit", "9f3ab21")]),
        ("edit /Users/kim/src/app/main.py", [("home", "/Users/kim")]),
        ("connect to 10.1.2.3:6432", [("host", "10.1.2.3"), ("port", "6432")]),
        ("the token [REDACTED:ghp_] expired", [("token", "[REDACTED:ghp_]")]),
        ("mail ops@acme.dev", [("email", "ops@acme.dev")]),
        # not transient: versions, file names, standards, public hosts, relative paths
        ("upgrade to 3.9.2, see values.yaml and app.py", []),
        ("UTF-8 and TS2307 in src/app/db.ts", []),
        ("docs at https://github.com/org/repo and socket.io", []),
        ("added 42 rows to /etc/hosts and /dev/null", []),
        ("the decade-old added faced code", []),
    ],
)
def test_transient_literals_are_found_and_ordinary_words_are_not(
    text: str, found: list[tuple[str, str]]
) -> None:
    finder = Parameterizer(Known.from_projects(["/home/dev/work/api"]))
    finder.find(text)
    assert [(r.kind, r.literal) for r in finder.replacements()] == sorted(
        found, key=lambda f: f[0]
    ) or sorted(found) == sorted((r.kind, r.literal) for r in finder.replacements())


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_a_draft_names_its_literals_and_the_diff_shows_each(lib: Library) -> None:
    draft = lib.get_draft(drafted(lib))
    found = {(r.parameter, r.literal) for r in draft.parameters}
    assert ("{host}", "pg-main.payments.internal") in found
    assert "pg-main.payments.internal" not in draft.content
    assert "{host}" in draft.content
    assert "## Parameters" in draft.content
    assert "- `{host}`: the host you work against" in draft.content
    assert "pg-main.payments.internal" in draft.literal  # kept beside the draft
    diff = draft_diff(draft)
    assert "-# Increasing pool_size did not stop QueuePool limit timeouts in the API at pg-" in diff
    assert "+# Increasing pool_size did not stop QueuePool limit timeouts in the API at {host}" in (
        diff
    )
    assert "+## Parameters" in diff
    assert_spec_valid(draft.content, draft.name)
    assert verify(lib).ok


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_the_reviewer_keeps_a_literal_on_purpose(lib: Library) -> None:
    draft_id = drafted(lib)
    kept = lib.keep_literal(draft_id, "{host}")
    assert "pg-main.payments.internal" in kept.content
    assert "`{host}`" not in kept.content
    assert [r.kept for r in kept.parameters if r.parameter == "{host}"] == [True]
    again = lib.keep_literal(draft_id, "pg-main.payments.internal", keep=False)
    assert "pg-main.payments.internal" not in again.content
    with pytest.raises(GraduationError, match="has no literal 'nothing-like-it'"):
        lib.keep_literal(draft_id, "nothing-like-it")
    assert verify(lib).ok


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_regression_cases_are_shown_and_written_as_a_checklist(
    lib: Library, tmp_path: Path
) -> None:
    draft = lib.get_draft(drafted(lib))
    assert draft.regressions
    case = draft.regressions[0]
    assert case.wrong.startswith("Dead end:") or "pool" in case.wrong
    assert "short transactions" in case.expected or "splitting" in case.expected
    assert "## Regression cases" in draft.content
    assert f"`{REFERENCE}`" in draft.content
    approved = lib.approve_draft(draft.draft_id, tmp_path / "skills")
    folder = Path(approved.path).parent
    listed = read_checklist(folder)
    assert len(listed) == len(draft.regressions)
    assert "pg-main.payments.internal" not in (folder / REFERENCE).read_text()
    health = {h.name: h.flags for h in lib.health()[0]}
    assert not any(f.startswith("missing file") for f in health[approved.name])
    assert verify(lib).ok


@pytest.mark.parametrize(
    ("tool", "counted", "why"),
    [
        ("mcp.search", True, "an agent asked (mcp.search)"),
        ("mcp.suggest", True, "an agent asked (mcp.suggest)"),
        ("user-prompt", True, "an agent asked (user-prompt)"),
        ("session-start", False, "injected by the library, not asked for (session-start)"),
        ("profile", False, "a person ran `librarian profile`"),
        ("search", False, "a person ran `librarian search`"),
        ("something-else", False, "not an agent's request (something-else)"),
    ],
)
def test_which_retrievals_count_for_graduation(tool: str, counted: bool, why: str) -> None:
    from store.patterns.retrieval_origin import AGENT_TOOLS, judge

    assert judge(tool, AGENT_TOOLS) == (counted, why)
