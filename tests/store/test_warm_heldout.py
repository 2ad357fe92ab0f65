"""Warm tier rules from reading real sessions nobody had tuned against (issue 11, the judged
target): each rule with a small transcript fragment written for it that fails without it.
Rules about the transcript's structure and language, never about a project's words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.ingest import bar
from store.ingest.snippets import error_gist
from store.ingest.statements import clause
from store.quality.kit import build_kit
from tests.store.test_ingest import Transcript as JsonlTranscript
from tests.store.test_warm import Transcript, of_type, only, pending, prompt

# --------------------------------------------------------------------------- gists


@pytest.mark.parametrize(
    ("output", "gist"),
    [
        (
            # a runner's line for a test that passed never carries the failure
            "@pkg/core:test: (pass) parseFlags > rejects unknown flags [0.5ms]\n"
            "@pkg/cli:test: cannot reach the database: DATABASE_URL is empty\n",
            "@pkg/cli:test: cannot reach the database: DATABASE_URL is empty",
        ),
        (
            # the harness's shell start-up noise comes before the real output; a rule code
            # with its location on the next line is the finding
            "Exit code 1\n/home/u/.claude/shell-snapshots/snapshot-bash-17-ab.sh: line 3: "
            "alias: --: not found\nPLR1714 Consider merging multiple comparisons.\n"
            "   --> app/lock.py:451:18\n    |\nFound 1 error.\n",
            "PLR1714 Consider merging multiple comparisons.\n   --> app/lock.py:451:18",
        ),
    ],
)
def test_noise_lines_never_carry_the_failure(output: str, gist: str) -> None:
    span = error_gist(output)
    assert span is not None
    assert output[span[0] : span[1]] == gist


# --------------------------------------------------------------------------- dead ends


def test_housekeeping_in_code_the_agent_just_edited_is_no_lesson() -> None:
    t = Transcript()
    t.run("Edit", "The file /w/app/hooks.go has been updated.", file_path="/w/app/hooks.go",
          old_string="a", new_string="b")  # fmt: skip
    t.run("Bash", './hooks.go:906:13: no new variables on left side of :=\nFAIL', error=True,
          command="go test ./app")  # fmt: skip
    t.run("Edit", "The file /w/app/hooks.go has been updated.", file_path="/w/app/hooks.go",
          old_string="x :=", new_string="x =")  # fmt: skip
    t.run("Bash", "ok  app 0.3s", command="go test ./app")
    result = t.extract()
    assert pending(result) == []
    assert only(result, "DEAD_END").suppressed.startswith("housekeeping in code the agent")


def test_the_same_complaint_about_code_the_agent_never_touched_is_a_lesson() -> None:
    t = Transcript()
    t.run("Bash", './vendor.go:12:2: "io" imported and not used\nFAIL', error=True,
          command="go build ./...")  # fmt: skip
    assert [n.suppressed for n in of_type(t.extract(), "DEAD_END")] == [""]


def test_the_agents_shell_glue_failing_is_not_the_project() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nsleep: invalid time interval: echo", error=True,
          command="npx wrangler pages dev dist --port 8788 &\nsleep 5 echo ready")  # fmt: skip
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed == "the agent's shell glue failed (`sleep`), not the project"


def test_a_bare_assertion_with_no_cause_is_no_dead_end() -> None:
    t = Transcript()
    t.run("Bash", "error: expect(received).toBe(expected)\n 3 fail", error=True,
          command="bun test packages/cli")  # fmt: skip
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed == "a bare assertion: no test, value or cause named"


def test_a_cause_the_agent_finds_turns_later_joins_its_dead_end() -> None:
    t = Transcript()
    t.run("Bash", "error: Missing CLICKHOUSE_URL or CLICKHOUSE_HOST\n2 errors", error=True,
          command="bun test packages/cli")  # fmt: skip
    t.say("Let me look at the test setup.")
    t.run("Read", "1  const url = process.env.CLICKHOUSE_URL", file_path="/w/live.test.ts")
    t.say("The failing suite is a live ClickHouse e2e test that requires `CLICKHOUSE_URL`.")
    result = t.extract()
    dead = only(result, "DEAD_END")
    assert dead.summary.endswith(
        "— The failing suite is a live ClickHouse e2e test that requires `CLICKHOUSE_URL`."
    )
    # the sentence that states it is not a second node
    assert [n.type for n in pending(result)] == ["DEAD_END"]


def test_a_later_causal_sentence_about_something_else_is_not_attached() -> None:
    t = Transcript()
    t.run("Bash", 'Error from server (NotFound): pods "pg-0" not found', error=True,
          command="kubectl -n db logs pg-0")  # fmt: skip
    t.run("Bash", "LOG: lock queued", command="kubectl -n db logs pg-primary-0")
    t.say("Postgres queues lock requests in order because the ALTER waits for ACCESS EXCLUSIVE.")
    dead = only(t.extract(), "DEAD_END")
    assert "—" not in dead.summary


def test_a_failure_the_agent_then_calls_working_was_wanted() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nUnknown command \"enabl\". Did you mean \"enable\"?", error=True,
          command="/tmp/cli enabl")  # fmt: skip
    t.run("Bash", "", command="rm /tmp/cli")
    t.say("Done. The output now follows the usage-first style.")
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed == "a failure the agent wanted (it says so)"


# --------------------------------------------------------------------------- solutions


def test_a_check_run_in_between_fixes_nothing() -> None:
    t = Transcript()
    t.run("Bash", "FAIL tests/spec.test.ts\n 1 failed", error=True,
          command="npx vitest run tests/spec.test.ts")  # fmt: skip
    t.run("Bash", "", command="npx tsc --noEmit")
    t.run("Bash", " 15 passed", command="npx vitest run tests/spec.test.ts")
    fix = only(t.extract(), "SOLUTION")
    assert "tsc" not in fix.summary
    assert fix.suppressed == "passed again with nothing changed in between"


def test_a_whole_rewrite_of_the_agents_own_test_is_no_solution() -> None:
    t = Transcript()
    t.run("Write", "File created successfully", file_path="/w/tests/logs.test.ts", content="a")
    t.run("Bash", "FAIL tests/logs.test.ts\n 1 failed", error=True,
          command="npx vitest run tests/logs.test.ts")  # fmt: skip
    t.run("Write", "File written", file_path="/w/tests/logs.test.ts", content="b")
    t.run("Bash", " 15 passed", command="npx vitest run tests/logs.test.ts")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed == "the agent rewrote its own test until it passed"


def test_a_stated_fix_that_shows_old_and_new_says_what_changed() -> None:
    t = Transcript()
    t.say("Fixed both bugs in `release.yaml`: the upload tag (`${{ github.ref }}` → "
          "`${{ github.event.release.tag_name }}`).")  # fmt: skip
    assert [n.type for n in pending(t.extract())] == ["SOLUTION"]


# --------------------------------------------------------------------------- hypotheses


def test_a_hypothesis_must_propose_an_explanation() -> None:
    t = Transcript()
    t.say(
        "The sandbox-level function in `Orchestrator.ts` could be `runSandboxedStage` or"
        " `runStageInSandbox` in `src/lib/stages.ts`."
    )
    guess = only(t.extract(), "HYPOTHESIS")
    assert guess.suppressed == "a guess that explains nothing (a name or a plan)"


def test_a_hypothesis_the_next_check_bears_out_becomes_the_discovery() -> None:
    t = Transcript()
    t.say("I think `initialDelaySeconds: 5` is too short for the slow warm-up of `api`.")
    t.run("Bash", "Readiness probe failed after 5s", command="kubectl -n api describe pod api-1")
    t.say("Confirmed: the probe fires before the app listens.")
    result = t.extract()
    assert of_type(result, "HYPOTHESIS") == []
    found = [n for n in pending(result) if n.type == "DISCOVERY"]
    assert [n.summary for n in found] == [
        "`initialDelaySeconds: 5` is too short for the slow warm-up of `api`."
    ]


def test_a_hypothesis_the_next_check_rules_out_is_kept_out() -> None:
    t = Transcript()
    t.say("Maybe the `api` pods fail because `initialDelaySeconds: 5` is too short.")
    t.run("Bash", "startup took 2.1s", command="kubectl -n api logs api-1")
    t.say("Startup takes 2 s, so `initialDelaySeconds` is not the cause of the failing pods.")
    guess = only(t.extract(), "HYPOTHESIS")
    assert guess.suppressed == "the agent's next check ruled it out"


def test_a_hypothesis_a_later_root_cause_contradicts_is_kept_out() -> None:
    t = Transcript()
    t.say("Maybe `initialDelaySeconds: 5` in `deploy/api.yaml` is too short for the warm-up.")
    t.filler(3)
    t.say("The root cause was `READINESS_CHECK_DEPENDENCIES` listing `ledger-grpc` in prod only.")
    guess = only(t.extract(), "HYPOTHESIS")
    assert guess.suppressed == "a later finding names another cause (ruled out)"


# --------------------------------------------------------------------------- language


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("I'm on `horizon/POLY-39` but need to work on `horizon/POLY-40`.", "the session's own"),
        ("The linter confirms `getIndexContent` is now unused.", "the session's own"),
        ("The deploy script was already updated to `wrangler deploy`.", "the session's own"),
        ("`queue/test.md` was modified before I started, per `git status`.", "the session's own"),
        ("`ruff-format` fixed it (the hook fails because we're on `main`).", "the session's own"),
        ("Now the production change in `_base.py`.", "narration"),
        ("Full suite 1290 passed, 3 skipped; `ruff` and `mypy` all clean.", "a report"),
        ("`clear_lock_user` (line 779) is the exact path from the original log.", "not self"),
        ("The backoff escalates to 240s — matching kyleberry's log for `sync.py`.", "not self"),
        ("Before: ❌ `calc()` read staged content; ✅ `write()` read the worktree.", "not a sent"),
        ("`IsInstalled()` is sound - Testable: uses `LookPath` - Good errors: wrapped.", "not a s"),
        (
            "| Change | Where |\n|----|----|\n| transient errors now retry instead of suspending"
            " the slot | `matter.py` |",
            "not a sentence",
        ),
        ("`github.ref` is not reliable for `release` events: it can be the branch.", ""),
    ],
)
def test_what_only_the_session_could_say_is_no_lesson(sentence: str, reason: str) -> None:
    verdict = bar.judge(sentence, said=True)
    assert verdict.reason.startswith(reason) if reason else verdict.passes, verdict


@pytest.mark.parametrize(
    ("sentence", "statement"),
    [
        ("★ Insight ─────────────\nThree hierarchies collide in `matter.py`.",
         "Three hierarchies collide in `matter.py`."),
        ("✅ It removes the spurious suspension.", "It removes the spurious suspension."),
        ("Confirmed — `agent1` is absorbed into `Orchestrator.ts`.",
         "`agent1` is absorbed into `Orchestrator.ts`."),
        ("Found it — `async_delete_user` calls `clear_lock_user`.",
         "`async_delete_user` calls `clear_lock_user`."),
        ("— I'm on `main`.", "I'm on `main`."),
    ],
)  # fmt: skip
def test_marks_in_front_of_a_statement_are_cut(sentence: str, statement: str) -> None:
    assert clause(sentence) == statement


def test_a_statement_that_leans_after_its_mark_is_cut_is_kept_out() -> None:
    t = Transcript()
    t.say(
        "✅ It removes the spurious suspension in `_base.py`: transient errors retry instead"
        " of suspending the slot."
    )
    assert pending(t.extract()) == []


def test_a_bare_noun_takes_the_name_the_session_gave_it() -> None:
    t = Transcript()
    t.say("The nightly `settlement` export runs inside an API pod.")
    t.filler(2)
    t.say("The root cause was that the export holds pooled connections across S3 uploads.")
    (found,) = [n for n in pending(t.extract()) if n.type == "DISCOVERY"][-1:]
    assert found.summary == (
        "The root cause was that the `settlement` export holds pooled connections across S3"
        " uploads."
    )


def test_a_noun_the_session_never_named_is_left_alone() -> None:
    t = Transcript()
    t.say("The orchestrator scans `feature_requests/*/AGI-*.md` instead of `queue/*.md`.")
    assert only(t.extract(), "DISCOVERY").summary.startswith("The orchestrator scans")


# --------------------------------------------------------------------------- corrections


def test_a_question_on_a_declined_call_is_not_a_pivot() -> None:
    t = Transcript()
    t.run("AskUserQuestion", "The user doesn't want to proceed with this tool use.", error=True,
          question="A or B?")  # fmt: skip
    prompt(t, "Explain the considerations of what `filterEligible` should achieve first.")
    pivot = only(t.extract(), "PIVOT")
    assert pivot.suppressed == "the user asked a question, not for another way"


def test_a_redirect_that_ends_in_a_question_is_still_a_pivot() -> None:
    t = Transcript()
    t.run("Edit", "The user doesn't want to proceed with this tool use.", error=True,
          file_path="/w/a.py", old_string="a", new_string="b")  # fmt: skip
    prompt(t, "I thought we had an `is_device_connected` on the provider - can we use that?")
    assert [n.type for n in pending(t.extract())] == ["PIVOT"]


# --------------------------------------------------------------------------- the judging kit


def test_the_judging_kit_writes_each_pending_node_with_its_transcript(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    folder = tmp_path / "sessions"
    session = JsonlTranscript(folder / "p" / "s1.jsonl", "s1", "/w/app")
    session.prompt("Run the migrations.")
    session.tool("Bash", "alembic upgrade head", "ERROR Multiple head revisions are present",
                 is_error=True)  # fmt: skip
    session.say("Two migrations both revise `0187`; the token is AKIA" + "Q7XZ3MB2K9TR4WLE.")
    session.tool("Bash", "alembic merge heads && alembic upgrade head", "Running upgrade 0188")
    out = tmp_path / "kit.jsonl"
    report = build_kit([folder], out, radius=2, embedder=embedder, workdir=tmp_path / "w")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert report.pending == len(records) > 0
    assert report.sessions == 1
    record = next(r for r in records if r["type"] == "DEAD_END")
    assert set(record) >= {"id", "session_file", "lines", "type", "summary", "evidence",
                           "context"}  # fmt: skip
    assert record["session_file"].endswith("p/s1.jsonl")
    assert any(m["evidence"] for m in record["context"])
    text = json.dumps(records)
    assert "Q7XZ3MB2K9TR4WLE" not in text  # redacted
    assert all(r["status"] == "pending" for r in records)
