"""Untrusted text never reaches the terminal raw: a transcript whose session id, cwd, branch,
client version, record types and messages carry ESC, BEL, OSC and CSI sequences, and a skill
whose name and description do, go through ingest, review, consolidation and graduation; then
every command prints them (as text and as `--json`) and neither stdout nor stderr carries a
control or invisible character other than the newline."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from store.embed import FastEmbedder
from store.library import Library
from store.text import safe_json
from tests.store.test_ingest import Transcript
from tests.store.test_session_start import pitfall

OSC_TITLE = "\x1b]0;pwned\x07"
LINK = "\x1b]8;;http://evil.example\x1b\\"
CSI = "\x9b2J"  # the 8-bit CSI, which `json.dumps(ensure_ascii=False)` leaves raw
HOSTILE = f"{OSC_TITLE}\x1b[31m{CSI}\u202e\x07"
CWD = f"/work/pay{HOSTILE}ments"
BRANCH = f"fix/{HOSTILE}pool\nforged line"
VERSION = f"2.1{HOSTILE}"
SKILL = "evil-skill"


def session_ids() -> list[str]:
    return [f"s{i}-{HOSTILE}-\n{i}" for i in range(3)]


def hostile_session(folder: Path, index: int, session_id: str) -> None:
    path = folder / f"hostile-{index}.jsonl"
    t = Transcript(path, session_id, CWD, BRANCH)
    t.prompt(f"The integration tests fail with a connection pool timeout {HOSTILE} under load.")
    t.say(f"I think the pool is too small{OSC_TITLE} for the test workers. Let me check.")
    t.tool(
        "Bash",
        f"pytest tests/integration -x {LINK}",
        f"FAILED tests/integration/test_pay.py - TimeoutError: pool exhausted {HOSTILE}",
        is_error=True,
    )
    t.say(f"The pool is exhausted because the `db` fixture never closes its session{HOSTILE}.")
    t.say(
        "That didn't work, same error. Let's try a different approach: instead of raising "
        f"the pool size, close sessions in the fixture teardown{HOSTILE}."
    )
    t.tool("Bash", "pytest tests/integration -x", f"42 passed in 3.1s {CSI}")
    t.say(
        f"The root cause was a fixture{LINK} that never closed its database session{HOSTILE}."
        " Fixed: tests pass now."
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        record["version"] = VERSION
    records.append({"type": f"unknown-{HOSTILE}", "sessionId": session_id})
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def hostile_skill(root: Path) -> None:
    folder = root / SKILL
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f'---\nname: "{SKILL}\\e]0;x\\a"\n'
        'description: "Roll back a deploy \\e[31mred\\e[0m \\x9b2J and \\u202e reversed."\n'
        "metadata:\n"
        '  requires: "other\\e[1m-skill"\n'
        "---\n\nBody with \x1b]0;title\x07 and \x1b[2J.\n",
        encoding="utf-8",
    )


def unsafe(text: str) -> set[str]:
    return {ch for ch in text if ch != "\n" and not ch.isprintable()}


class Cli:
    """Runs `librarian` in this process and checks everything it printed."""

    def __init__(
        self, library: Path, capsys: pytest.CaptureFixture[str], embedder: FastEmbedder
    ) -> None:
        self.library = library
        self.capsys = capsys
        self.embedder = embedder
        self.ran: list[str] = []
        self.stderr = ""

    def __call__(self, *argv: str, stdin: str = "", code: int | None = 0) -> str:
        sys.stdin = io.StringIO(stdin)
        try:
            status = main(["--library", str(self.library), *argv])
        except SystemExit as exit_:  # argparse
            status = int(exit_.code or 0)
        finally:
            sys.stdin = sys.__stdin__
        out, err = self.capsys.readouterr()
        self.ran.append(argv[0])
        self.stderr = err
        assert not unsafe(out), (argv, sorted(unsafe(out)), out[:400])
        assert not unsafe(err), (argv, sorted(unsafe(err)), err[:400])
        if code is not None:
            assert status == code, (argv, status, err)
        return out

    def both(self, *argv: str) -> Any:
        """`--json` (returned, parsed), then text."""
        data = json.loads(self(*argv, "--json"))
        self(*argv)
        return data


@pytest.fixture
def cli(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    _embedder: FastEmbedder,
) -> Cli:
    monkeypatch.setattr("store.kernel.FastEmbedder", lambda *a, **k: _embedder)
    return Cli(tmp_path / "library", capsys, _embedder)


def hostile_pattern(library_dir: Path, embedder: FastEmbedder) -> None:
    """A pitfall over the approved nodes whose every text field is hostile (the sessions are
    near-duplicates, so consolidation merged them into too few nodes to cluster). No draft:
    the draft's security lint refuses the raw controls its session ids would bring in."""
    with Library(library_dir, embedder=embedder) as library:
        members = [[n.node_id, n.session_id] for n in library.nodes(status="approved")]
        record = pitfall(
            "p-hostile",
            title=f"Pool {HOSTILE} exhausted\nforged line",
            summary=f"summary {LINK}",
            trigger=f"when {OSC_TITLE}",
            resolution=f"close the session {HOSTILE}",
            severity="high",
            project=CWD,
            members=members,
            first_seen=f"2026-10-01{HOSTILE}",
        )
        with library.db.write() as conn:
            library.append_event(
                conn, "pattern.consolidated", "patterns", {"patterns": [record], "dissolved": []}
            )


def test_no_command_prints_a_raw_control_character(cli: Cli, tmp_path: Path) -> None:
    projects = tmp_path / "projects"
    ids = session_ids()
    for index, session_id in enumerate(ids):
        hostile_session(projects, index, session_id)
    skills = tmp_path / "skills"
    hostile_skill(skills)

    report = cli.both("ingest", str(projects))
    assert report["ingested"] == 3
    listed = cli.both("sessions")
    assert {s["session_id"] for s in listed} == set(ids)  # JSON keeps the data as it was
    assert {s["project"] for s in listed} == {CWD}
    assert {s["branch"] for s in listed} == {BRANCH}
    shown = cli.both("session", ids[0])
    assert shown["session"]["client_version"] == VERSION
    text = cli("session", ids[0])
    escaped = "s0-\\x1b]0;pwned\\x07\\x1b[31m\\x9b2J<U+202E>\\x07- 0"
    assert text.splitlines()[0] == f"session {escaped}"
    assert "  branch fix/\\x1b]0;pwned" in text
    assert "<U+202E>\\x07pool forged line  client 2.1\\x1b]0;pwned" in text
    nodes = cli.both("nodes", "--status", "pending")
    assert nodes
    cli("review", "approve", *[n["node_id"] for n in nodes])
    cli.both("audit")
    cli.both("consolidate")
    hostile_pattern(cli.library, cli.embedder)
    patterns = cli.both("patterns")
    assert patterns
    for pattern in patterns:
        cli.both("pattern", pattern["pattern_id"])
    cli("profile")
    cli("profile", "--project", CWD)
    for command in ("search", "diagnose"):
        cli.both(command, f"pool exhausted {HOSTILE}", "--project", CWD)
    cli.both("pitfalls", "--project", CWD)
    cli.both("retrievals")
    cli.both("graduate", "--dry-run")
    cli.both("drafts")

    cli.both("scan", str(skills))
    skills_listed = cli.both("skills")
    name = next(s["name"] for s in skills_listed if s["name"].startswith(SKILL))
    cli.both("show", name)
    cli.both("suggest", f"roll back the deploy {HOSTILE}")
    cli.both("record-outcome", name, "--failure", "--session", ids[0], "--detail", HOSTILE)
    cli.both("lineage", name)
    cli.both("health")
    cli.both("graph")
    cli.both("graph", name)
    cli.both("blast", name)
    cli.both("proposals")
    cli("retire", name, "--reason", f"harmful {HOSTILE}", "--yes", "--steps", "1", code=None)
    cli.both("runs")
    cli.both("verify")
    cli.both("rebuild")

    hook = json.dumps({"hook_event_name": "SessionStart", "cwd": CWD, "session_id": ids[1]})
    injected = json.loads(cli("hook", "session-start", stdin=hook))
    assert "Pool" in injected["hookSpecificOutput"]["additionalContext"]

    # Errors that quote what they were given are one escaped line.
    error = [
        ("session", f"no-such-{HOSTILE}\nsecond line"),
        ("show", f"missing{HOSTILE}"),
        ("config", "get", f"no.such{HOSTILE}"),
        ("review", f"bogus{HOSTILE}"),
    ]
    for argv in error:
        cli(*argv, code=2)
        lines = cli.stderr.splitlines()
        assert lines[-1].startswith("librarian"), lines
        assert len(lines) == 1 or lines[0].startswith("usage:"), lines  # argparse: usage first
    assert len(cli.ran) > 50


@pytest.mark.parametrize(
    "value",
    [
        {"a": f"x{HOSTILE}\u2028\U000e0041 é ✓\n\t"},
        ["\ud800 lone surrogate", "\x7f", "\u00a0nbsp"],
        "plain",
    ],
)
def test_safe_json_escapes_what_json_dumps_leaves_raw(value: Any) -> None:
    for indent in (2, None):
        text = safe_json(value, indent=indent)
        assert not unsafe(text)
        assert json.loads(text) == value
        text.encode("utf-8")  # a lone surrogate would not encode


def test_json_dumps_alone_leaves_c1_controls_raw() -> None:
    """Why `safe_json` exists."""
    raw = json.dumps({"a": CSI}, ensure_ascii=False)
    assert "\x9b" in raw
    assert "\x1b" not in json.dumps({"a": "\x1b"}, ensure_ascii=False)
