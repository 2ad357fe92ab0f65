"""Pattern, retrieval and graduation commands end to end, in subprocesses, on a copy of the
demo library (which has patterns, agent retrievals and a pending draft)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.app.test_cli import run


@pytest.fixture
def demo_copy(demo_library_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "demo"
    shutil.copytree(demo_library_dir, target)
    return target


def test_pattern_commands_read_and_log(demo_copy: Path) -> None:
    listed = run(demo_copy, "patterns", "--json")
    assert listed.returncode == 0, listed.stderr
    patterns = json.loads(listed.stdout)
    assert {p["kind"] for p in patterns} >= {"pitfall", "insight"}
    pitfall = next(p for p in patterns if p["kind"] == "pitfall")
    shown = run(demo_copy, "pattern", pitfall["pattern_id"])
    assert shown.returncode == 0
    assert "graduation:" in shown.stdout
    assert "members:" in shown.stdout
    before = len(json.loads(run(demo_copy, "retrievals", "--json").stdout))
    diagnosed = run(demo_copy, "diagnose", "Edit failed: string to replace not found", "--json")
    assert diagnosed.returncode == 0, diagnosed.stderr
    assert json.loads(diagnosed.stdout)[0]["kind"] == "pattern"
    assert run(demo_copy, "search", "connection pool").returncode == 0
    assert run(demo_copy, "pitfalls").returncode == 0
    profile = run(demo_copy, "profile", "--project", "/home/dev/work/payments-api")
    assert profile.stdout.startswith("# Knowledge profile")
    assert "## Pitfalls" in profile.stdout
    suggested = run(demo_copy, "suggest", "roll back a kubernetes deployment")
    assert suggested.returncode == 0
    tools = [r["tool"] for r in json.loads(run(demo_copy, "retrievals", "--json").stdout)]
    assert len(tools) == before + 5
    assert tools[:5] == ["suggest", "profile", "pitfalls", "search", "diagnose"]
    empty = run(demo_copy, "diagnose", " ")
    assert empty.returncode == 2
    assert "problem statement" in empty.stderr


def test_graduate_and_review_a_draft_from_the_command_line(demo_copy: Path, tmp_path: Path) -> None:
    dry = run(demo_copy, "graduate", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr
    checks = json.loads(dry.stdout)["checks"]
    assert any(c["draft"] for c in checks)
    drafts = json.loads(run(demo_copy, "drafts", "--json", "--status", "pending").stdout)
    assert len(drafts) == 1
    draft = drafts[0]
    assert draft["content"].startswith("---\nname: ")
    root = tmp_path / "skills"
    assert run(demo_copy, "config", "set", "graduation.skills_root", str(root)).returncode == 0
    refused = run(demo_copy, "drafts", "reject", draft["draft_id"])
    assert refused.returncode == 2
    assert "reason" in refused.stderr
    approved = run(demo_copy, "drafts", "approve", draft["draft_id"])
    assert approved.returncode == 0, approved.stderr
    written = (root / draft["name"] / "SKILL.md").read_text(encoding="utf-8")
    head, _, rest = draft["content"].partition("\n---\n")  # the draft, and who approved it
    assert written.startswith(head + "\n  librarian-approved-by: ")
    assert written.endswith("\n---\n" + rest)
    skills = json.loads(run(demo_copy, "skills", "--json").stdout)
    assert next(s for s in skills if s["name"] == draft["name"])["status"] == "proposed"
    assert run(demo_copy, "verify").returncode == 0


def test_consolidate_and_skill_events(demo_copy: Path) -> None:
    again = run(demo_copy, "consolidate", "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["created"] == report["changed"] == 0
    assert report["unchanged"] >= 1
    applied = run(demo_copy, "skill-event", "kubernetes-rollout", "applied", "--detail", "ok")
    assert applied.returncode == 0
    assert "skill.applied" in applied.stdout
    unknown = run(demo_copy, "skill-event", "no-such-skill", "applied")
    assert unknown.returncode == 2
    assert "no skill named" in unknown.stderr
    no_key = run(demo_copy, "consolidate", "--llm")
    assert no_key.returncode == 2
    assert "API key" in no_key.stderr


def test_record_outcome_and_health_from_the_command_line(demo_copy: Path) -> None:
    # v2 is on disk but was set aside as a drifting candidate: v1 is served and judged, and
    # now v1 fails too (7 of 13 runs in the window)
    for flag in ("--failure",) * 6:
        done = run(
            demo_copy, "record-outcome", "kubernetes-rollout", flag, "--version", "1",
            "--detail", "canary",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    current = run(demo_copy, "record-outcome", "kubernetes-rollout", "--success")
    assert "v2" in current.stdout  # the default: the version on disk
    bad = run(demo_copy, "record-outcome", "kubernetes-rollout", "--success", "--version", "9")
    assert bad.returncode == 2
    assert "no version 9" in bad.stderr
    neither = run(demo_copy, "record-outcome", "kubernetes-rollout")
    assert neither.returncode == 2
    report = json.loads(run(demo_copy, "health", "--json").stdout)
    worst = report["skills"][0]
    assert worst["name"] == "kubernetes-rollout"
    assert worst["verdict"] == "DRIFTING"
    assert [v["version_no"] for v in worst["versions"]] == [1, 2]
    applied = run(demo_copy, "health", "--apply")
    assert "changed: kubernetes-rollout: deprecated" in applied.stdout
    assert run(demo_copy, "verify").returncode == 0
