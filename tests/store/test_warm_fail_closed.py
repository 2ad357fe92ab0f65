"""The warm tier never lets what it could not judge into the queue, and a tool call with a
blank command (seen in a real session) does not break its strategies."""

from __future__ import annotations

import pytest

import store.ingest.warm as warm
from tests.store.test_warm import Transcript


def _session() -> Transcript:
    t = Transcript()
    t.say("The build of `app.jar` fails in `Main.java`; the gradle output says why.")
    t.run("Bash", "build.gradle\nsrc", command="ls")
    # Variables set first, then the program run through one: a command whose target is blank.
    t.run("Bash", "Exit code 1\nCMake Error: Could not create named generator Ninja Multi",
          error=True, command='CMAKE="/opt/cmake/bin/cmake"\nPROJ="/work/app"\n\n'
          '"$CMAKE" -S "$PROJ" -B "$PROJ/build" -G "Ninja Multi" 2>&1')  # fmt: skip
    t.run("Bash", "Exit code 1\nMain.java:12: error: cannot find symbol", error=True,
          command="./gradlew build")  # fmt: skip
    t.run("Edit", "The file Main.java has been updated.", file_path="/work/app/Main.java",
          old_string="Strng name", new_string="String name")  # fmt: skip
    t.run("Bash", "BUILD SUCCESSFUL in 3s", command="./gradlew build")
    return t


def test_a_blank_command_breaks_no_strategy() -> None:
    result = _session().extract()
    assert result.problems == ()
    assert [n for n in result.nodes if n.type == "DEAD_END"]


def test_what_the_bar_could_not_judge_stays_out_of_the_queue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(context: object) -> dict[int, object]:
        raise IndexError("list index out of range")

    monkeypatch.setattr(warm, "_judge", broken)
    result = _session().extract()
    assert result.problems == ("strategy bar failed: IndexError: list index out of range",)
    assert result.nodes
    assert all(n.suppressed.startswith("not judged: the bar failed") for n in result.nodes)
