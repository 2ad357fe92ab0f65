"""Governance through the real command parser (issue 16): candidate versions in `health`,
`show` and `lineage`; pins in `relate`, `blast` and `graph`; the stable-on-proposed rule in
`relate` and `scan`; the write gate in `drafts show/diff/keep`; counted retrievals in
`pattern`; `enrich` and `enrichments` end to end. Output stays safe for a terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main
from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from tests.store.conftest import write_skill
from tests.store.test_patterns import add_node, add_session
from tests.store.test_write_gate import DEAD, FIX, PROJECT

HOSTILE = "[bold red]x[/] \x1b[2J"


@pytest.fixture
def library_dir(tmp_path: Path, _embedder: FastEmbedder) -> Path:
    """deploy (stable) with a candidate v2 proving itself; app pins deploy@1; web follows;
    canary is proposed; a pitfall draft with a host name in it; a thin skill `notes`."""
    root = tmp_path / "skills"
    folder = tmp_path / "lib"
    write_skill(root, "deploy", "Deploy the API with a canary.")
    write_skill(root, "app", "Ship the app.", extra="metadata:\n  requires: deploy@1\n")
    write_skill(root, "web", "Ship the web.", extra="metadata:\n  requires: deploy\n")
    write_skill(root, "canary", "Canary checks for a release, with an error budget.")
    write_skill(root, "notes", "Release notes.", body="## When to use\n\n- a release\n")
    write_skill(root, "hostile", f"Notes {HOSTILE}.")
    with Library(folder, embedder=_embedder, clock=stepping_clock()) as library:
        library.scan([root])
        library.change_status("canary", "skill.proposed", "new")
        write_skill(root, "deploy", "Deploy the API with a canary and a watch window.")
        library.scan([root])
        library.record_outcome("deploy", True)
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
        library.diagnose("requests time out waiting for a pooled database connection")
        library.retrieval_log.channel = "mcp"
        library.diagnose("requests time out waiting for a pooled database connection")
        library.graduate()
    return folder


#: The CLI reads the library on the day after the fixture's events, whatever today's date:
#: `health` judges a 30-day window, so on the wall clock the result would depend on the date.
CLI_NOW = "2026-11-03T09:00:00+00:00"


@pytest.fixture(autouse=True)
def _cli_on_a_fixed_day(monkeypatch: pytest.MonkeyPatch) -> None:
    def at(root: Path, *, read_only: bool = False) -> Library:
        return Library(root, read_only=read_only, clock=lambda: CLI_NOW)

    monkeypatch.setattr("app.cli.common.library_at", at)


def run(capsys: pytest.CaptureFixture[str], folder: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--library", str(folder), *args])
    out, err = capsys.readouterr()
    assert "\x1b" not in out
    return code, out, err


def test_candidates_in_health_show_and_lineage(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, library_dir, "health")
    assert out.startswith("HEALTHY   deploy ")  # judged on the served version, v1
    assert "candidate v2 (serving v1): 1 of 5 clean runs in a row" in out
    _, out, _ = run(capsys, library_dir, "show", "deploy", "--no-body")
    assert "  serving: v1 (v2 is on disk)" in out
    assert "  candidate: candidate v2 (serving v1): 1 of 5 clean runs in a row" in out
    _, out, _ = run(capsys, library_dir, "lineage", "deploy")
    assert "SKILL.md changed: v2 is a candidate, v1 stays served" in out
    _, out, _ = run(capsys, library_dir, "health", "--json")
    deploy = next(h for h in json.loads(out)["skills"] if h["name"] == "deploy")
    assert deploy["candidate"]["status"] == "candidate"
    assert deploy["served_version"] == 1


def test_pins_and_the_stable_on_proposed_rule(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, library_dir, "blast", "deploy", "--version", "2")
    assert "deploy v2 (stable): 1 dependent skills" in out
    assert "  not hit: app (stable) requires deploy@1 (pinned to v1)" in out
    assert "  pinned: app requires deploy@1 (the served version; extracted)" in out
    code, out, _ = run(capsys, library_dir, "relate", "web", "requires", "deploy", "--version", "1")
    assert (code, out.strip()) == (0, "added: web requires deploy@1")
    code, _, err = run(capsys, library_dir, "relate", "web", "requires", "canary")
    assert code != 0
    assert "web is stable and requires canary, which is only proposed" in err
    code, _, err = run(capsys, library_dir, "relate", "web", "requires", "deploy@2")
    assert "v2 of deploy is a candidate still proving itself" in err
    code, out, _ = run(capsys, library_dir, "graph", "app")
    assert "requires         deploy@1 (stable) [extracted]" in out
    root = library_dir.parent / "skills"
    write_skill(root, "web", "Ship the web.", extra="metadata:\n  requires: deploy canary\n")
    _, out, _ = run(capsys, library_dir, "scan", str(root), "--no-embed")
    assert "warning: web is stable and requires canary, which is only proposed" in out
    _, out, _ = run(capsys, library_dir, "graph")
    assert "1 stable skills on proposed ones" in out.splitlines()[0]
    assert "unproven: web is stable and requires canary" in out


def test_drafts_show_diff_and_keep_and_the_counted_retrievals(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, library_dir, "drafts", "--json")
    (draft,) = json.loads(out)
    draft_id = draft["draft_id"]
    _, out, _ = run(capsys, library_dir, "drafts", "show", draft_id)
    assert "{host}" in out
    assert "  {host}           replaces pg-main.payments.internal  (host, 5x)" in out
    assert "regression cases (3):" in out
    _, out, _ = run(capsys, library_dir, "drafts", "diff", draft_id)
    assert "+## Parameters" in out
    assert "-# Increasing pool_size did not stop QueuePool limit timeouts in the API at pg-" in out
    code, out, _ = run(capsys, library_dir, "drafts", "keep", draft_id, "{host}")
    assert code == 0
    assert "  {host}           kept     pg-main.payments.internal  (host, 5x)" in out
    code, _, err = run(capsys, library_dir, "drafts", "keep", draft_id)
    assert code != 0
    assert "needs a literal" in err
    _, out, _ = run(capsys, library_dir, "pattern", draft["pattern_id"])
    assert "1 agent retrieval in the top 5" in out
    assert "(1 not counted: not an agent's request)" in out
    assert "    not counted #" in out
    assert "a person ran `librarian diagnose`" in out
    assert "an agent asked (mcp.diagnose)" in out


def test_enrich_lists_proposes_and_approves(
    library_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, library_dir, "enrich")
    assert out.startswith("6 thin skills")  # every description here is short
    assert "notes" in out
    assert "[bold red]x[/] \\x1b[2J" in out  # untrusted text, literally
    code, _, err = run(capsys, library_dir, "enrich", "hostile")
    assert code != 0  # a control character in its YAML: refused, with the reason
    assert "cannot rewrite its frontmatter: the frontmatter is not valid YAML" in err
    assert "\x1b" not in err
    code, out, _ = run(capsys, library_dir, "enrich", "notes", "--json")
    assert code == 0
    (proposal,) = json.loads(out)
    assert proposal["source"] == "rules"
    _, out, _ = run(capsys, library_dir, "enrichments")
    assert proposal["proposal_id"] in out
    _, out, _ = run(capsys, library_dir, "enrichments", "diff", proposal["proposal_id"])
    assert "+  when_to_use: a release" in out
    code, out, _ = run(capsys, library_dir, "enrichments", "approve", proposal["proposal_id"])
    assert code == 0
    assert "approved" in out
    text = (library_dir.parent / "skills" / "notes" / "SKILL.md").read_text(encoding="utf-8")
    assert "when_to_use: a release" in text
    code, _, err = run(capsys, library_dir, "enrichments", "reject", proposal["proposal_id"])
    assert code != 0
    assert "already approved" in err
    code, _, _ = run(capsys, library_dir, "verify")
    assert code == 0
