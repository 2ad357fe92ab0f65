"""Hooks: the spool, the worker lock, and settings.json surgery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store import hooks

COMMANDS = {
    "Stop": "/opt/bin/librarian --library /tmp/lib hook stop",
    "SessionEnd": "/opt/bin/librarian --library /tmp/lib hook session-end",
}


def test_enqueue_appends_one_line_per_hook(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    payload = {"session_id": "abc", "transcript_path": "~/x/abc.jsonl", "cwd": "/w"}
    assert hooks.enqueue(spool, json.dumps(payload), "stop")
    assert hooks.enqueue(spool, json.dumps(payload), "session-end")
    entries = hooks.read_entries(spool / hooks.QUEUE)
    assert [e["event"] for e in entries] == ["stop", "session-end"]
    assert entries[0]["transcript_path"] == str(Path.home() / "x/abc.jsonl")
    assert hooks.pending_count(spool) == 2


@pytest.mark.parametrize(
    "raw", ["", "not json", "[1,2]", '{"transcript_path": 7}', "[" * 100_000, '{"session_id": "x"}']
)
def test_enqueue_ignores_bad_input(tmp_path: Path, raw: str) -> None:
    assert not hooks.enqueue(tmp_path / "spool", raw, "stop")


def test_claim_takes_the_queue_atomically(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    hooks.enqueue(spool, '{"transcript_path": "/a.jsonl"}', "stop")
    work, entries = hooks.claim(spool)
    assert work is not None
    assert work.suffix == ".work"
    assert [e["transcript_path"] for e in entries] == ["/a.jsonl"]
    assert not (spool / hooks.QUEUE).exists()
    hooks.enqueue(spool, '{"transcript_path": "/b.jsonl"}', "stop")  # new entries go on
    assert [e["transcript_path"] for e in hooks.read_entries(spool / hooks.QUEUE)] == ["/b.jsonl"]
    assert hooks.claim(tmp_path / "empty") == (None, [])


def test_only_one_worker_holds_the_spool(tmp_path: Path) -> None:
    with hooks.worker_lock(tmp_path) as first:
        assert first
        with hooks.worker_lock(tmp_path) as second:
            assert not second
    with hooks.worker_lock(tmp_path) as again:
        assert again


def test_one_hook_of_a_burst_reserves_the_worker_until_it_holds_the_lock(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    assert hooks.reserve_worker(spool)  # the first hook starts the worker
    assert not hooks.reserve_worker(spool)  # the others leave their entry to it
    assert not hooks.reserve_worker(spool)
    hooks.release_reservation(spool)  # the worker holds the lock now
    assert hooks.reserve_worker(spool)


def test_a_reservation_whose_worker_never_started_is_taken_over(tmp_path: Path) -> None:
    spool = tmp_path / "spool"
    spool.mkdir()
    assert hooks.reserve_worker(spool)
    later = (spool / hooks.PENDING).stat().st_mtime + hooks.PENDING_SECONDS + 1
    assert hooks.reserve_worker(spool, now=later)
    assert not hooks.reserve_worker(spool)  # taken over: fresh again


def test_install_merges_keeps_other_settings_and_backs_up(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    original = {
        "model": "opus",
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
    }
    path.write_text(json.dumps(original))
    change = hooks.install(path, COMMANDS)
    assert change.changed
    assert change.backup is not None
    assert json.loads(change.backup.read_text()) == original
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus"
    commands = [h["command"] for g in settings["hooks"]["Stop"] for h in g["hooks"]]
    assert commands == ["notify-send done", COMMANDS["Stop"]]
    assert settings["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == hooks.HOOK_TIMEOUT_SECONDS
    again = hooks.install(path, COMMANDS)
    assert not again.changed  # idempotent: no second entry, no new backup
    assert again.backup is None


def test_dry_run_shows_a_diff_and_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus"}')
    change = hooks.install(path, COMMANDS, dry_run=True)
    assert change.changed
    assert "+" in change.diff
    assert "hook stop" in change.diff
    assert path.read_text() == '{"model": "opus"}'
    assert list(tmp_path.iterdir()) == [path]


def test_uninstall_removes_only_ours(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
        )
    )
    hooks.install(path, COMMANDS)
    hooks.uninstall(path)
    assert json.loads(path.read_text()) == {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}
    }
    assert not hooks.uninstall(path).changed


def test_install_into_a_missing_file_and_python_m_form(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    command = hooks.hook_command(["/usr/bin/python3", "-m", "app"], None, "stop")
    assert command == "/usr/bin/python3 -m app hook stop"
    hooks.install(path, {"Stop": command})
    assert hooks.is_ours(json.loads(path.read_text())["hooks"]["Stop"][0]["hooks"][0])
    hooks.uninstall(path)
    assert json.loads(path.read_text()) == {}


def test_settings_paths(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home", tmp_path / "proj"
    assert hooks.settings_path("user", home, cwd, {}) == home / ".claude" / "settings.json"
    assert hooks.settings_path("user", home, cwd, {"CLAUDE_CONFIG_DIR": "/c,/d"}) == Path(
        "/c/settings.json"
    )
    assert hooks.settings_path("project", home, cwd, {}) == cwd / ".claude" / "settings.json"


def test_install_adds_session_start_with_a_matcher_and_uninstall_removes_only_ours(
    tmp_path: Path,
) -> None:
    assert hooks.EVENTS["SessionStart"] == "session-start"
    commands = {
        event: hooks.hook_command(["/opt/bin/librarian"], Path("/tmp/my lib"), action)
        for event, action in hooks.EVENTS.items()
    }
    assert (
        commands["SessionStart"] == "/opt/bin/librarian --library '/tmp/my lib' hook session-start"
    )
    theirs = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"hooks": {"SessionStart": [theirs]}}))
    hooks.install(path, commands)
    settings = json.loads(path.read_text())
    assert set(settings["hooks"]) == {"Stop", "SessionEnd", "SessionStart", "UserPromptSubmit"}
    # UserPromptSubmit takes no matcher (it fires on every prompt)
    assert settings["hooks"]["UserPromptSubmit"] == [
        {
            "hooks": [
                {
                    "type": "command",
                    "command": "/opt/bin/librarian --library '/tmp/my lib' hook user-prompt",
                    "timeout": hooks.HOOK_TIMEOUT_SECONDS,
                }
            ]
        }
    ]
    assert settings["hooks"]["SessionStart"] == [
        theirs,
        {
            "matcher": "startup|resume|clear|compact",
            "hooks": [
                {
                    "type": "command",
                    "command": commands["SessionStart"],
                    "timeout": hooks.HOOK_TIMEOUT_SECONDS,
                }
            ],
        },
    ]
    # Stop and SessionEnd keep their matcher-less groups.
    assert "matcher" not in settings["hooks"]["Stop"][0]
    assert "matcher" not in settings["hooks"]["SessionEnd"][0]
    assert hooks.is_ours(settings["hooks"]["SessionStart"][1]["hooks"][0])
    assert not hooks.install(path, commands).changed  # idempotent
    dry = hooks.uninstall(path, dry_run=True)
    assert dry.changed
    assert "hook session-start" in dry.diff
    hooks.uninstall(path)
    assert json.loads(path.read_text()) == {"hooks": {"SessionStart": [theirs]}}
