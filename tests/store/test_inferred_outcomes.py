"""Outcomes inferred from ingested transcripts: a `Skill` call's turn with unresolved tool
errors is a failure, without them a success; dated at the call, recorded once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from store.ingest.outcomes import describe, first_word, infer
from store.ingest.transcript import parse_session
from store.library import Library
from store.models import ParsedSession
from store.verify import verify
from tests.store.conftest import write_skill


class Session:
    """Claude Code-shaped JSONL, one record per call, with explicit times."""

    def __init__(self, path: Path, session: str = "s-1") -> None:
        self.path, self.session = path, session
        self.count = 0
        self.minute = 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def _record(self, kind: str, message: Any, **extra: Any) -> dict[str, Any]:
        self.count += 1
        self.minute += 1
        return {
            "type": kind,
            "uuid": f"{self.session}-{self.count}",
            "parentUuid": None,
            "sessionId": self.session,
            "cwd": "/work/api",
            "gitBranch": "main",
            "version": "2.1.39",
            "userType": "external",
            "isSidechain": False,
            "timestamp": f"2026-10-20T10:{self.minute:02d}:00.000Z",
            "message": message,
            **extra,
        }

    def _write(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    @property
    def time(self) -> str:
        """The time of the last record, as the event log writes it."""
        return f"2026-10-20T10:{self.minute:02d}:00.000000+00:00"

    def prompt(self, text: str = "Please deploy the API.") -> Session:
        self._write(self._record("user", {"role": "user", "content": text}))
        return self

    def call(self, name: str, tool_input: dict[str, Any]) -> str:
        tool_id = f"toolu_{self.count + 1}"
        block = {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}
        message = {"id": f"msg-{self.count + 1}", "role": "assistant", "content": [block]}
        self._write(self._record("assistant", message))
        return tool_id

    def result(self, tool_id: str, text: str, is_error: Any = False) -> Session:
        block = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
        if is_error is not None:
            block["is_error"] = is_error
        self._write(self._record("user", {"role": "user", "content": [block]}))
        return self

    def tool(self, name: str, tool_input: dict[str, Any], ok: bool = True) -> Session:
        tool_id = self.call(name, tool_input)
        return self.result(tool_id, "done" if ok else "Error: it failed", is_error=not ok)

    def bash(self, command: str, ok: bool = True) -> Session:
        return self.tool("Bash", {"command": command, "description": "run"}, ok)

    def skill(self, name: str, ok: bool = True) -> str:
        """A `Skill` call, its launch result and the injected body; returns the call's time."""
        tool_id = self.call("Skill", {"skill": name})
        at = self.time
        self.result(tool_id, f"Launching skill: {name}" if ok else "Unknown skill", not ok)
        if ok:
            text = f"Base directory for this skill: /home/dev/.claude/skills/{name}\n\n# {name}"
            self._write(
                self._record(
                    "user",
                    {"role": "user", "content": [{"type": "text", "text": text}]},
                    isMeta=True,
                )
            )
        return at

    def say(self, text: str) -> Session:
        message = {
            "id": f"msg-{self.count + 1}",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        }
        self._write(self._record("assistant", message))
        return self


def parsed(session: Session) -> ParsedSession:
    result = parse_session(session.path)
    assert isinstance(result, ParsedSession)
    return result


def outcomes(library: Library) -> list[dict[str, Any]]:
    rows = library.db.conn.execute(
        "SELECT o.ts, s.name, o.version_no, o.success, o.session_id, o.detail, o.inferred"
        " FROM outcomes o JOIN skills s USING(skill_id) ORDER BY o.ts, s.name"
    ).fetchall()
    return [dict(row) for row in rows]


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploy the API with a canary.")
    write_skill(root, "rollback", "Roll the API back to the last good release.")
    library.scan([root])
    return library


# -- the inference, on parsed transcripts ------------------------------------------------------


def test_a_clean_turn_is_a_success(tmp_path: Path) -> None:
    s = Session(tmp_path / "s-1.jsonl").prompt()
    at = s.skill("deploy")
    s.bash("make deploy").say("Deployed.")
    [found] = infer(parsed(s))
    assert (found.skill, found.success, found.at) == ("deploy", True, at)
    assert found.detail == "turn ended without unresolved errors"
    assert found.call == "s-1.jsonl:2"


def test_unresolved_errors_in_the_turn_are_a_failure(tmp_path: Path) -> None:
    s = Session(tmp_path / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.bash("pytest -q", ok=False)
    s.tool("Edit", {"file_path": "/work/api/src/app.py", "old_string": "a"}, ok=False)
    s.bash("ls")  # another program succeeding resolves nothing
    s.prompt("Never mind, we will do it tomorrow.")
    s.bash("pytest -q")  # the next turn: too late to count for the skill
    [found] = infer(parsed(s))
    assert not found.success
    assert found.detail == "turn ended with 2 unresolved errors: Bash `pytest`, Edit `src/app.py`"


def test_an_error_resolved_later_in_the_turn_is_no_failure(tmp_path: Path) -> None:
    s = Session(tmp_path / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.tool("Edit", {"file_path": "/work/api/app.py"}, ok=False)
    s.tool("Read", {"file_path": "/work/api/app.py"})  # another tool: not a resolution
    s.tool("Edit", {"file_path": "/work/api/app.py"})
    s.bash("cd /work/api && pytest tests", ok=False)
    s.bash("FOO=1 .venv/bin/pytest tests -x")  # the same program
    s.bash("npm run -s lint", ok=False)
    s.bash("echo 4 > baseline.txt && npm run -s lint && npx eslint .")  # npm ran, and passed
    s.tool("WebFetch", {"url": "https://a.example"}, ok=False)
    s.tool("WebFetch", {"url": "https://b.example"})  # other tools: by name
    [found] = infer(parsed(s))
    assert found.success, found.detail


def test_two_skill_calls_in_one_turn_each_see_only_what_follows(tmp_path: Path) -> None:
    s = Session(tmp_path / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.tool("Read", {"file_path": "/etc/deploy.yaml"}, ok=False)
    s.skill("rollback")
    s.bash("kubectl rollout undo deploy/api")
    deploy, rollback = infer(parsed(s))
    assert (deploy.skill, deploy.success) == ("deploy", False)
    assert "Read `etc/deploy.yaml`" in deploy.detail
    assert (rollback.skill, rollback.success) == ("rollback", True)


def test_a_skill_that_never_launched_has_no_outcome(tmp_path: Path) -> None:
    s = Session(tmp_path / "s-1.jsonl").prompt()
    s.skill("deploy", ok=False)
    s.bash("make deploy", ok=False)
    assert infer(parsed(s)) == []


def test_malformed_tool_results_do_not_break_the_inference(tmp_path: Path) -> None:
    s = Session(tmp_path / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.result(s.call("Bash", {"command": "make"}), "odd", is_error="yes")  # not a real flag
    s.result("toolu_nowhere", "lost", is_error=None)  # no call, no flag
    [found] = infer(parsed(s))
    assert found.success
    s.result("", "Error: something broke", is_error=True)  # an error with no call
    [found] = infer(parsed(s))
    assert not found.success
    assert "unknown tool" in found.detail


def test_untrusted_targets_are_neutralised_and_redacted() -> None:
    secret = "AKIA" + "Q7XZ3MB2K9TR4WLE"
    text = describe([("Bash", f"{secret}\x1b[31m"), ("Edit", "a/b/c.py"), ("Edit", "a/b/c.py")])
    assert "\x1b" not in text
    assert secret not in text
    assert "Edit `b/c.py` ×2" in text


@pytest.mark.parametrize(
    ("command", "word"),
    [
        ("pytest -q", "pytest"),
        ("cd /x && cd y && make test", "make"),
        ("FOO=1 BAR=2 ./scripts/run.sh --fast", "run.sh"),
        ("", ""),
    ],
)
def test_first_word(command: str, word: str) -> None:
    assert first_word(command) == word


# -- recorded through the library ------------------------------------------------------------


def test_ingest_records_inferred_outcomes_at_the_call_time(lib: Library, tmp_path: Path) -> None:
    s = Session(tmp_path / "p" / "s-1.jsonl").prompt()
    ok_at = s.skill("ops:deploy")  # a plugin prefix: the catalog knows the bare name
    s.bash("make deploy")
    s.prompt("Now roll back, please.")
    bad_at = s.skill("rollback")
    s.bash("kubectl rollout undo", ok=False)
    s.prompt("And the unknown one.")
    s.skill("ghost")  # not in the catalog: skipped silently
    s.bash("true", ok=False)
    report = lib.ingest([tmp_path / "p"])
    assert report.outcomes_inferred == 2
    rows = outcomes(lib)
    assert [(r["name"], r["ts"], r["success"], r["inferred"]) for r in rows] == [
        ("deploy", ok_at, 1, 1),
        ("rollback", bad_at, 0, 1),
    ]
    assert all(r["session_id"] == "s-1" and r["version_no"] == 1 for r in rows)
    assert "Bash `kubectl`" in rows[1]["detail"]
    deploy = lib.db.conn.execute(
        "SELECT success_count, last_success_at FROM skills WHERE name='deploy'"
    ).fetchone()
    assert tuple(deploy) == (1, ok_at)  # the transcript's time, not the ingest time
    assert verify(lib).ok


def test_reingest_records_each_call_once(lib: Library, tmp_path: Path) -> None:
    s = Session(tmp_path / "p" / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.bash("make deploy")
    lib.ingest([tmp_path / "p"])
    assert len(outcomes(lib)) == 1
    with s.path.open("a", encoding="utf-8") as handle:  # grown, but no new message
        handle.write(json.dumps({"type": "progress", "sessionId": "s-1"}) + "\n")
    again = lib.ingest([tmp_path / "p"])
    assert (again.ingested, again.outcomes_inferred) == (1, 0)
    s.prompt("Again, please.")  # the Stop hook fires after the next turn: the file grew
    s.skill("deploy")
    s.bash("make deploy", ok=False)
    grown = lib.ingest([tmp_path / "p"])
    assert (grown.ingested, grown.outcomes_inferred) == (1, 1)
    assert [r["success"] for r in outcomes(lib)] == [1, 0]
    assert verify(lib).ok


def test_retired_skills_still_get_outcomes(lib: Library, tmp_path: Path) -> None:
    lib.change_status("deploy", "skill.retired", "broke production")
    s = Session(tmp_path / "p" / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.bash("make deploy", ok=False)
    lib.ingest([tmp_path / "p"])
    [row] = outcomes(lib)
    assert (row["name"], row["success"]) == ("deploy", 0)
    assert verify(lib).ok


def test_health_counts_inferred_runs_when_they_happened(lib: Library, tmp_path: Path) -> None:
    s = Session(tmp_path / "p" / "s-1.jsonl").prompt()
    for _ in range(3):
        s.prompt()
        s.skill("deploy")
        s.bash("make deploy", ok=False)
    lib.ingest([tmp_path / "p"])
    rows, _ = lib.health()
    deploy = next(h for h in rows if h.name == "deploy")
    assert (deploy.runs, deploy.failures, deploy.verdict) == (3, 3, "DRIFTING")
    lib.config.set("health.window_days", "5")  # the runs (Oct 20) fall outside the window
    rows, _ = lib.health()
    assert next(h for h in rows if h.name == "deploy").verdict == "IDLE"
