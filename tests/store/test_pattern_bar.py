"""The pattern bar and real names (issue 11, item 8): the kind rules, titles from the most
specific member, why a pattern is not served, and skill names built from what the members
share. Plain functions over hand-made clusters: no library, no model."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest

from store.patterns import bar
from store.patterns.classify import (
    NodeRow,
    SessionGraph,
    classify_rules,
    flaw_of,
    parse_llm,
    title_member,
)
from store.patterns.naming import name_words, skill_name
from store.skills.parser import is_valid_skill_name


def row(node_id: str, type_: str, summary: str, session: str = "s1", **kw: Any) -> NodeRow:
    base: dict[str, Any] = {
        "node_id": node_id,
        "session_id": session,
        "project": "/p",
        "type": type_,
        "summary": summary,
        "evidence": kw.pop("evidence", ""),
        "file": f"/t/{session}.jsonl",
        "line_start": kw.get("line", 1),
        "line_end": kw.pop("line", 1) + 1,
        "confidence": kw.pop("confidence", 0.6),
        "scope": "PROJECT",
        "status": kw.pop("status", "approved"),
        "developer": "d",
        "seen": "2026-10-01",
    }
    base.update(kw)
    return NodeRow(**base)


def graph_of(*nodes: NodeRow, edges: tuple[tuple[str, str, str], ...] = ()) -> SessionGraph:
    graph = SessionGraph()
    for node in sorted(nodes, key=lambda n: (n.session_id, n.line_start, n.node_id)):
        graph.nodes[node.node_id] = node
        graph.by_session.setdefault(node.session_id, []).append(node)
    for source, target, kind in edges:
        graph.forward.setdefault(source, []).append((target, kind))
    return graph


TSC_FAILS = [
    row(
        "a",
        "DEAD_END",
        "`npx tsc --noEmit` fails with src/hooks/useTodos.test.ts(6,33): error TS2307: Cannot"
        " find module '@testing-library/react' or its corresponding type declarations.",
        line=10,
    ),
    row(
        "b",
        "DEAD_END",
        "`npx tsc --noEmit` fails with src/App.test.tsx(2,24): error TS2307: Cannot find module"
        " '@testing-library/react'.",
        "s2",
        line=12,
    ),
]


# -- pitfalls: a failing action and a resolution that differs from it -----------------------


def test_a_pitfall_resolution_must_say_what_changed() -> None:
    again = row("z", "SOLUTION", "`npx tsc --noEmit` succeeds.", line=14)
    record = classify_rules(TSC_FAILS, graph_of(*TSC_FAILS, again, edges=(("a", "z", "resolved"),)))
    assert record["kind"] != "pitfall"  # the same action again teaches nothing
    fixed = row(
        "z",
        "SOLUTION",
        "`npx tsc --noEmit` succeeds after adding `@testing-library/react` to `devDependencies`.",
        line=14,
    )
    graph = graph_of(*TSC_FAILS, fixed, edges=(("a", "z", "resolved"),))
    record = classify_rules(TSC_FAILS, graph)
    assert record["kind"] == "pitfall"
    assert record["resolution"].startswith("`npx tsc --noEmit` succeeds after adding")
    assert flaw_of(record, TSC_FAILS) == ""


def test_the_next_success_of_another_command_resolves_nothing() -> None:
    unrelated = row(
        "u", "SOLUTION", "`ls -la src/components` succeeds after adding `-la`.", line=20
    )
    record = classify_rules(TSC_FAILS, graph_of(*TSC_FAILS, unrelated))
    assert record["kind"] != "pitfall"
    assert record["resolution"] == ""
    related = row(
        "r",
        "SOLUTION",
        "`npx tsc --noEmit` succeeds after editing `useTodos.test.ts` (removed the unused"
        " `@testing-library/react` import).",
        line=30,
        status="pending",
    )
    record = classify_rules(TSC_FAILS, graph_of(*TSC_FAILS, unrelated, related))
    assert record["kind"] == "pitfall"
    assert "useTodos.test.ts" in record["resolution"]


def test_agent_mechanics_are_never_a_failing_action() -> None:
    mechanics = [
        row(
            "a", "DEAD_END", "Edit of `service.py` failed with String to replace not found in file."
        ),
        row(
            "b",
            "DEAD_END",
            "Edit of `models.py` failed with String to replace not found in file.",
            "s2",
        ),
    ]
    fix = row("z", "SOLUTION", "`pytest tests/checkout -q` succeeds after editing `service.py`.")
    record = classify_rules(mechanics, graph_of(*mechanics, fix, edges=(("a", "z", "resolved"),)))
    assert record["kind"] != "pitfall"
    assert flaw_of(record, mechanics).startswith("agent mechanics, not project knowledge:")


# -- strategies: at least two concrete ordered steps ---------------------------------------


def test_a_strategy_needs_two_concrete_steps_in_one_session() -> None:
    vague = [
        row("c", "INVESTIGATION", "Investigation: check the logs first", line=5),
        row("d", "HYPOTHESIS", "Hypothesis: the pool is too small", line=9),
        row("e", "INVESTIGATION", "Investigation: look at the configuration", "s2", line=3),
    ]
    record = classify_rules(vague, graph_of(*vague))
    assert record["kind"] == "insight"  # steps that name nothing are no strategy
    assert flaw_of(record, vague).startswith("the title does not pass the knowledge bar")
    concrete = [
        row("c", "INVESTIGATION", "Count `idle in transaction` rows in `pg_stat_activity`", line=5),
        row("d", "HYPOTHESIS", "Investigation: check the logs first", line=7),
        row("e", "HYPOTHESIS", "`pool_size=5` is too small for 150 rps across 4 pods", line=9),
    ]
    record = classify_rules(concrete, graph_of(*concrete))
    assert record["kind"] == "strategy"
    assert [s["node_id"] for s in record["steps"]] == ["c", "e"]  # in transcript order
    assert flaw_of(record, concrete) == ""
    apart = [concrete[0], row("f", "HYPOTHESIS", concrete[2].summary, "s2", line=9)]
    assert classify_rules(apart, graph_of(*apart))["kind"] != "strategy"  # no order between


# -- titles: the most specific member --------------------------------------------------------


def test_the_title_is_the_most_specific_member_not_the_medoid() -> None:
    members = [
        row("m1", "DISCOVERY", "The pool ran out of connections under load.", confidence=0.9),
        row(
            "m2",
            "DISCOVERY",
            "`complete_checkout` held a pooled connection inside an open transaction across"
            " slow HTTP calls, so the API connection pool ran dry.",
            "s2",
            confidence=0.5,
        ),
    ]
    record = classify_rules(members, graph_of(*members))  # the medoid is passed first
    assert record["title"].startswith("`complete_checkout` held a pooled connection")
    twins = [row("n2", "DISCOVERY", members[1].summary, "s3", confidence=0.5), members[1]]
    assert title_member(twins).node_id == "m2"  # ties: confidence, then node id
    assert title_member([*twins[:1], replace(members[1], confidence=0.4)]).node_id == "n2"


def test_a_pitfall_is_titled_after_the_failing_member_that_names_the_error() -> None:
    members = [
        row(
            "d1",
            "DISCOVERY",
            "52 of the 60 API connections are idle in transaction: checked out, transaction"
            " open, up to 9.4 s old, with Postgres doing nothing for them.",
            confidence=0.8,
        ),
        row("f1", "DEAD_END", "Raising `pool_size` to 30 did not help.", "s2", confidence=0.5),
        row(
            "f2",
            "DEAD_END",
            "`k6 run` fails with QueuePool limit reached.",
            "s3",
            confidence=0.5,
        ),
    ]
    assert title_member(members).node_id == "d1"
    assert title_member(members, pitfall=True).node_id == "f2"


# -- the bar, kind by kind --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "fields", "reason"),
    [
        ("pitfall", {"failing": []}, "a pitfall needs a failing action"),
        ("pitfall", {"resolution": ""}, "a pitfall needs a resolution"),
        (
            "pitfall",
            {"resolution": "`npx tsc --noEmit` still fails with TS2307."},
            "the resolution repeats the failing action",
        ),
        ("pitfall", {}, ""),
        (
            "strategy",
            {"steps": ["Check the logs.", "Count rows in `pg_stat_activity`."]},
            "a strategy needs at least 2 concrete ordered steps (naming a file, command,"
            " setting or error): it has 1",
        ),
        (
            "strategy",
            {"steps": ["Count rows in `pg_stat_activity`.", "Lower `pool_size` to 5."]},
            "",
        ),
        ("insight", {"title": "Let me check the `pool_size` setting first."}, "narration"),
        ("insight", {"title": "`CLAUDE.md` has been created with the project notes."}, "report"),
        (
            "insight",
            {"title": "Database sequences never roll back with the surrounding transaction."},
            "names no file",
        ),
        (
            "insight",
            {"title": "`ls -la types/` fails with No such file or directory.", "resolution": ""},
            "only failures that nothing resolved",
        ),
        (
            "insight",
            {"title": "`nextval()` is not rolled back with the test transaction."},
            "",
        ),
        (
            "pitfall",
            {"title": "Edit of `a.py` failed with String to replace not found in file."},
            "agent mechanics",
        ),
    ],
)
def test_the_bar_of_each_kind(kind: str, fields: dict[str, Any], reason: str) -> None:
    given: dict[str, Any] = {
        "title": "`npx tsc --noEmit` fails with TS2307 on `@testing-library/react`.",
        "steps": [],
        "resolution": "`npx tsc --noEmit` succeeds after adding `@testing-library/react`.",
        "failing": ["`npx tsc --noEmit` fails with TS2307 on `@testing-library/react`."],
        "members": 2,
        **fields,
    }
    flaw = bar.flaw(kind, **given)
    assert (reason in flaw) if reason else flaw == ""
    assert given["title"] not in flaw  # fixed sentences, never quoted text


def test_an_llm_reading_is_held_to_the_same_bar() -> None:
    reply = {
        "kind": "strategy",
        "title": "Diagnose pool timeouts",
        "summary": "Look around.",
        "trigger": "when requests time out",
        "steps": [{"text": "Look at the logs", "node": 0}, {"text": "Think hard", "node": 1}],
    }
    record = parse_llm(reply, TSC_FAILS, TSC_FAILS)
    assert flaw_of(record, TSC_FAILS).startswith("a strategy needs at least 2 concrete")


# -- names --------------------------------------------------------------------------------------

#: Realistic clusters (title first, then the other members) and the name a maintainer would give.
CLUSTERS = [
    (
        [
            TSC_FAILS[0].summary,
            TSC_FAILS[1].summary,
            "`npx tsc --noEmit` succeeds after adding `@testing-library/react` to"
            " `devDependencies`.",
        ],
        "tsc-ts2307-testing-library-react",
    ),
    (
        [
            "Raising the pool to 30+15 didn't help: same timeouts, plus Postgres hit"
            " `max_connections`.",
            "52 of the 60 API connections are idle in transaction: checked out, transaction"
            " open, up to 9.4 s old, with Postgres doing nothing for them.",
            "12 of the 15 API connections are idle in transaction: checked out, transaction"
            " open, up to minutes old, with Postgres doing nothing for them.",
        ],
        "api-connections-idle-in-transaction",
    ),
    (
        [
            "`complete_checkout` held a pooled connection inside an open transaction across"
            " slow HTTP calls, so the API connection pool ran dry.",
            "`export_merchant` held a pooled connection inside an open transaction across slow"
            " S3 uploads, so the API connection pool ran dry.",
        ],
        "api-connection-pool-open-transaction",
    ),
    (
        [
            "`npx create-next-app@latest todo-app --typescript --app` stops at ? Would you like"
            " your code inside a `src/` directory?",
            '`yes "" | npx create-next-app@latest todo-app --typescript --app --src-dir` succeeds'
            " after adding `--src-dir`.",
        ],
        "create-next-app-src-dir",
    ),
    (
        [
            "`kubectl -n staging debug -q api-5d8c --image=debug-tools` fails with Error: Failed"
            " to attach to process 14: Permission denied",
            "`kubectl -n staging debug -q api-5d8c --image=debug-tools --profile=general`"
            " succeeds after adding `--profile=general` (it had failed with Permission denied)",
        ],
        "kubectl-profile-permission-denied",
    ),
    (
        [
            "`refund_number_seq` is shared by all four xdist workers (one database, one"
            " sequence), `nextval()` is not rolled back with the test transaction.",
            "Sequences are not transactional: `nextval()` is not undone by the per-test"
            " rollback, and all four xdist workers share the same test database.",
        ],
        "nextval-xdist-workers-database",
    ),
    (
        [
            "`alembic revision --autogenerate` misses changes to a Postgres enum: new"
            " `OrderStatus` values never reach the migration.",
            "`alembic revision --autogenerate` produced an empty migration although"
            " `PaymentState` gained a value: autogenerate does not compare enum values.",
            "Adding a value to a Postgres enum needs a hand-written `ALTER TYPE ... ADD VALUE`"
            " because autogenerate ignores enum changes.",
        ],
        "alembic-revision-postgres-enum",
    ),
    (
        [
            "`pytest -n 4 tests/integration` fails with E sqlalchemy.exc.OperationalError:"
            " (psycopg.errors.LockNotAvailable) canceling statement due to lock timeout",
            "Setting `lock_timeout = 3s` in the migration makes the ALTER fail fast with"
            " `LockNotAvailable` instead of queueing behind the export.",
        ],
        "operational-error-lock-not-available",
    ),
]


@pytest.mark.parametrize(("texts", "expected"), CLUSTERS)
def test_names_come_from_what_the_members_share(texts: list[str], expected: str) -> None:
    name = skill_name(texts[0], texts[1:], set(), "pattern-1")
    assert name == expected
    assert is_valid_skill_name(name)
    assert 2 <= len(name.split("-")) <= 5
    first_words = "-".join(re.findall(r"[a-z0-9]+", texts[0].lower())[:3])
    assert not name.startswith(first_words)  # never the first words of a sentence


def test_names_are_unique_and_spec_valid_whatever_the_text() -> None:
    texts = CLUSTERS[0][0]
    taken = {"tsc-ts2307-testing-library-react"}
    assert skill_name(texts[0], texts[1:], taken, "f") == "tsc-ts2307-testing-library-react-2"
    for hostile in ("I'll fix it", "`rm -rf /` <script>", "Ünïcödé naïve café", "a" * 200):
        name = skill_name(hostile, [hostile], set(), "pattern-1")
        assert is_valid_skill_name(name), name
        assert "claude" not in skill_name(
            "`CLAUDE.md` needs `claude-code` settings", [], set(), "f"
        )


def test_a_title_cut_short_is_its_member() -> None:
    member = (
        "`complete_checkout` held a pooled connection inside an open transaction across slow"
        " HTTP calls, so the API connection pool ran dry."
    )
    other = member.replace("`complete_checkout`", "`export_merchant`")
    # the title is the first member cut at 120 characters: it must not count as a second text
    words = name_words(member[:100] + "…", [member, other])
    assert "complete" not in words
