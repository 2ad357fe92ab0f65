"""The precision-first bar (issue 11): a candidate reaches the pending queue only with a shape
reviewers approve, proven by the session's structure. Each rule with a hand-written
transcript fragment that fails without it; rules about transcript structure and language,
never about a project's words."""

from __future__ import annotations

import pytest

from store.ingest import bar, shapes, snippets
from store.ingest.episodes import _failed_step
from store.models import ToolResult, ToolUse
from tests.store.test_warm import Transcript, of_type, only, pending, prompt

NO_CAUSE = "a failure with no stated cause: its error alone is not a lesson"
FRESH = "an error in code the session itself had written or edited (work in progress)"


# --------------------------------------------------------------------------- failures


def test_a_failure_with_no_cause_is_no_lesson_on_its_own() -> None:
    t = Transcript()
    t.run("Bash", "E   KeyError: 'region'", error=True, command="pytest tests/api")
    assert only(t.extract(), "DEAD_END").suppressed == NO_CAUSE


def test_a_failure_whose_cause_the_agent_states_is_a_dead_end() -> None:
    t = Transcript()
    t.run("Bash", "E   KeyError: 'region'", error=True, command="pytest tests/api")
    t.say("`settings.REGION` is only set in `.env.production`, so the test settings lack it.")
    assert not only(t.extract(), "DEAD_END").suppressed


REFUSALS = [
    "Error: unknown flag: --disable-all",  # a flag the installed version does not have
    "Error: Failed to attach to process 14: Permission denied (os error 13)",
    "error: Missing CLICKHOUSE_URL or CLICKHOUSE_HOST",  # a required variable
    "error: Authentication credentials were not provided. (http status: 401)",
]


@pytest.mark.parametrize("output", REFUSALS)
def test_a_refusal_with_neither_a_cause_nor_a_fix_is_no_lesson(output: str) -> None:
    t = Transcript()
    t.run("Bash", output, error=True, command="tool run --disable-all ./...")
    assert only(t.extract(), "DEAD_END").suppressed == NO_CAUSE


@pytest.mark.parametrize("output", REFUSALS)
def test_a_refusal_the_agent_explains_is_a_dead_end(output: str) -> None:
    t = Transcript()
    t.run("Bash", output, error=True, command="tool run --disable-all ./...")
    t.say("`tool` 2.0 requires the `TOOL_TOKEN` variable because the v1 config file is gone.")
    assert not only(t.extract(), "DEAD_END").suppressed


def test_a_refusal_and_what_fixed_it_are_one_lesson_in_the_solution() -> None:
    t = Transcript()
    t.run("Bash", "Error: unknown flag: --disable-all", error=True,
          command="golangci-lint run --disable-all ./...")  # fmt: skip
    t.run("Bash", "0 issues.", command="golangci-lint run ./...")
    result = t.extract()
    assert only(result, "DEAD_END").suppressed == NO_CAUSE
    fix = only(result, "SOLUTION")
    assert not fix.suppressed
    assert fix.summary == (
        "`golangci-lint run ./...` succeeds after dropping `--disable-all` (it had failed with"
        " Error: unknown flag: --disable-all)."
    )


@pytest.mark.parametrize(
    ("output", "failed", "worked"),
    [
        ("bash: python: command not found", "python manage.py migrate",
         "python3 manage.py migrate"),  # the program mistyped for this machine
        ('exec: "gotestsum": executable file not found in $PATH', "gotestsum ./...",
         "go test ./..."),
        ("npm error enoent Could not read package.json: Error: ENOENT: no such file or"
         " directory, open '/w/package.json'", "npm run build",
         "cd /w/web && npm run build"),  # run from the wrong folder
        ("python3: can't open file '/w/scripts/seed.py': [Errno 2] No such file or directory",
         "python3 scripts/seed.py", "python3 tools/seed.py"),  # a typo'd path
    ],
)  # fmt: skip
def test_an_environment_slip_that_retyping_got_past_is_routine(
    output: str, failed: str, worked: str
) -> None:
    t = Transcript()
    t.run("Bash", output, error=True, command=failed)
    t.say("The script lives in another folder because the repository keeps its app in `web/`.")
    t.run("Bash", "done", command=worked)
    result = t.extract()
    dead = only(result, "DEAD_END")
    assert dead.suppressed.startswith("an environment slip")
    assert all(s.suppressed for s in of_type(result, "SOLUTION"))


def test_an_environment_slip_with_no_fix_is_no_lesson_even_explained() -> None:
    t = Transcript()
    t.run("Bash", "bash: sentry-cli: command not found", error=True,
          command="sentry-cli releases new 1.2")  # fmt: skip
    t.say("`sentry-cli` is not installed on this machine, so releases can't be created here.")
    assert only(t.extract(), "DEAD_END").suppressed.startswith("an environment slip")


def test_a_program_installed_to_fix_a_command_not_found_is_a_lesson() -> None:
    t = Transcript()
    t.run("Bash", "bash: mise: command not found", error=True, command="mise run test")
    t.run("Bash", "installed mise 2024.1.0", command="brew install mise")
    t.run("Bash", "12 passed", command="mise run test")
    fix = only(t.extract(), "SOLUTION")
    assert not fix.suppressed
    assert "`brew install mise`" in fix.summary


def test_the_same_error_three_times_unresolved_is_a_dead_end() -> None:
    once, thrice = Transcript(), Transcript()
    for t, tries in ((once, 1), (thrice, 3)):
        for _ in range(tries):
            t.run("Bash", "[TypeError: generate is not a function]", error=True,
                  command="npm run build")  # fmt: skip
    assert only(once.extract(), "DEAD_END").suppressed == NO_CAUSE
    assert not only(thrice.extract(), "DEAD_END").suppressed


@pytest.mark.parametrize(
    "gist",
    [
        "FAIL entire.io/cli/cmd/entire/cli/integration_test 21.909s",
        'error: script "typecheck" exited with code 126',
        "× should process a backlog item and set status to Done 2ms",
    ],
)
def test_an_error_line_that_says_only_that_it_failed_needs_a_cause(gist: str) -> None:
    assert shapes.bare_gist(gist)
    t = Transcript()
    for _ in range(3):  # not even persistence makes it a lesson
        t.run("Bash", gist, error=True, command="make test")
    assert only(t.extract(), "DEAD_END").suppressed.startswith("the error says only")


def test_a_check_of_the_state_that_saw_the_problem_is_no_attempt() -> None:
    t = Transcript()
    t.run("Bash", "error: timed out waiting for the condition", error=True,
          command="kubectl -n api rollout status deploy/api --timeout=10s")  # fmt: skip
    t.say("The rollout is stuck at 2 of 6 because `maxUnavailable: 0` waits for a Ready pod.")
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed.startswith("a check of the state that saw the problem")


def test_a_name_the_agent_guessed_is_no_lesson_without_a_cause() -> None:
    t = Transcript()
    t.run("Bash", 'npm error Missing script: "lint"', error=True, command="npm run lint")
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed.startswith("a name the agent guessed")


def test_an_error_in_a_file_the_session_wrote_is_work_in_progress() -> None:
    t = Transcript()
    t.run("Write", "File created successfully", file_path="/w/cmd/debug.go", content="package x")
    t.run("Bash", "cmd/debug.go:53:3: error is not nil (line 50) but it returns nil (nilerr)",
          error=True, command="golangci-lint run ./...")  # fmt: skip
    t.say("`debug.go` returns nil because the linter requires wrapping, which `nilerr` flags.")
    assert only(t.extract(), "DEAD_END").suppressed == FRESH


def test_a_failing_test_the_session_wrote_is_work_in_progress() -> None:
    t = Transcript()
    t.run("Edit", "updated", file_path="/w/resume_test.go", old_string="}",
          new_string="func TestResume_UserConfirmsOverwrite(t *testing.T) {}")  # fmt: skip
    output = "--- FAIL: TestResume_UserConfirmsOverwrite (21.90s)\nFAIL\tentire.io/cli 21.909s"
    t.run("Bash", output, error=True, command="go test ./...")
    t.say("The prompt never reaches the test because `huh` reads `/dev/tty` instead of stdin.")
    assert only(t.extract(), "DEAD_END").suppressed == FRESH


def test_a_missing_package_is_the_environment_even_in_fresh_code() -> None:
    t = Transcript()
    t.run("Write", "File created", file_path="/w/src/use.test.ts", content="import x")
    t.run("Bash", "src/use.test.ts(6,33): error TS2307: Cannot find module '@testing-library/"
          "react' or its corresponding type declarations.", error=True,
          command="npx tsc --noEmit")  # fmt: skip
    assert not only(t.extract(), "DEAD_END").suppressed


def test_a_cause_that_is_the_agents_own_slip_explains_nothing() -> None:
    slip = "I put the upgrade in the block but not the downgrade, because I missed it."
    rule = "I put the upgrade in the block, and `DROP INDEX CONCURRENTLY` can't run in one."
    assert not shapes.explains(slip)
    assert shapes.explains(rule)


def test_a_prompt_printed_by_a_command_that_went_on_is_no_failure() -> None:
    answered = "Overwrite local logs? [y/N] n\n--- PASS: TestResume (0.4s)\nPASS\nok  \tcli\t0.9s"
    stopped = "? Would you like to use Turbopack? › No / Yes\nnpm warn exec create-next-app"
    t = Transcript()
    t.run("Bash", answered, command="go test ./cli")
    t.run("Bash", stopped, command="npx create-next-app@latest app")
    (dead,) = of_type(t.extract(), "DEAD_END")
    assert dead.summary.startswith("`npx create-next-app@latest app` stops at")


def test_the_agents_own_tools_are_agent_mechanics() -> None:
    t = Transcript()
    t.run("mcp__browser__navigate", "The navigate tool did not respond in time.", error=True,
          url="http://127.0.0.1:8199/")  # fmt: skip
    dead = only(t.extract(), "DEAD_END")
    assert dead.suppressed.startswith("agent mechanics (the agent's own tool")


@pytest.mark.parametrize(
    "command",
    [
        "python3 <<'EOF'\nimport json\nprint(json.load(open('out.json'))[0])\nEOF",
        "FILE=run.output\npython3 - <<EOF\nprint(1)\nEOF",
        "cat out.json | python3 -",
    ],
)
def test_a_script_the_agent_pipes_into_an_interpreter_is_a_throwaway(command: str) -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\nKeyError: 0", error=True, command=command)
    assert only(t.extract(), "DEAD_END").suppressed.startswith("a routine command")


def test_any_grep_is_a_search_and_a_quota_is_no_lesson() -> None:
    t = Transcript()
    t.run("Bash", "mgrep: index not found for src", error=True, command='mgrep "2026.5.0" src')
    t.run("Bash", "Error: 429 Too Many Requests: rate limit exceeded", error=True,
          command="gh api repos/o/r/releases")  # fmt: skip
    search, quota = of_type(t.extract(), "DEAD_END")
    assert search.suppressed.startswith("a routine command")
    assert quota.suppressed.startswith("a service's quota or rate limit")


def test_a_line_of_several_steps_names_the_step_that_failed() -> None:
    command = "git fetch origin pull/1/head 2>&1 | tail -3\necho ---\ngh pr view 1 --json merged"
    assert _failed_step(command, 'Unknown JSON field: "merged"') == "gh pr view 1 --json merged"
    assert _failed_step("make build && make test", "undefined: Foo") is None
    t = Transcript()
    t.run("Bash", 'Unknown JSON field: "merged"', error=True, command=command)
    dead = only(t.extract(), "DEAD_END")
    assert dead.summary.startswith("`gh pr view 1 --json merged` fails with")
    t = Transcript()
    t.run("Bash", "error: unknown flag: --fast", error=True, command="make build && make test")
    assert only(t.extract(), "DEAD_END").suppressed.startswith("a command line of several steps")


# --------------------------------------------------------------------------- solutions


def _failed_then_passed(t: Transcript, before: str, after: str) -> None:
    t.run("Bash", "error: unknown flag: --fast", error=True, command=before)
    t.run("Bash", "ok", command=after)


def test_a_retry_that_only_runs_less_fixed_nothing() -> None:
    t = Transcript()
    t.run("Bash", "FAIL tests/a.test.ts\n 2 failed", error=True, command="npx vitest run")
    t.run("Bash", " 15 passed", command="npx vitest run tests/spec.test.ts")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed.startswith("the retry only ran a narrower")


def test_a_retry_with_another_flag_is_a_solution() -> None:
    t = Transcript()
    _failed_then_passed(t, "make build --fast", "make build --quick")
    assert not only(t.extract(), "SOLUTION").suppressed


def test_a_fix_to_code_the_session_wrote_before_the_failure_is_no_solution() -> None:
    t = Transcript()
    t.run("Write", "File created", file_path="/w/app/pty.go", content="package app")
    t.run("Bash", "undefined: creack\nFAIL", error=True, command="go build ./app")
    t.run("Edit", "updated", file_path="/w/app/pty.go", old_string="a := 1", new_string="a := 2")
    t.run("Bash", "ok", command="go build ./app")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed.startswith("it edits code the session itself had written")


def test_a_whole_rewrite_says_nothing_concrete() -> None:
    t = Transcript()
    t.run("Bash", "E   KeyError: 'region'", error=True, command="pytest tests/api")
    t.run("Write", "File written", file_path="/w/app/settings.py", content="REGION = 'eu'")
    t.run("Bash", "3 passed", command="pytest tests/api")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed == "the only change rewrote a file whole: it says nothing concrete"


def test_an_edits_gist_is_its_first_line_of_code_not_its_docstring() -> None:
    t = Transcript()
    t.run("Edit", "updated", file_path="/w/m.py",
          old_string='"""Revises: 0187"""\nrevision = "0188"\ndown_revision = "0187"',
          new_string='"""Revises: 0188"""\nrevision = "0189"\ndown_revision = "0188"')  # fmt: skip
    edit = t.messages[0].tool_uses[0]
    assert snippets.edit_gist(edit) == '`revision = "0188"` → `revision = "0189"`'


# --------------------------------------------------------------------------- statements


def _ran(t: Transcript, output: str) -> None:
    t.run("Bash", output, command="make inspect")


def test_a_statement_nothing_in_the_tool_output_bears_out_is_kept_out() -> None:
    t = Transcript()
    t.say("The root cause was that `complete_checkout` holds a pooled connection across"
          " `capture()`, because the transaction stays open.")  # fmt: skip
    node = only(t.extract(), "DISCOVERY")
    assert node.suppressed == "nothing it names appears in the session's tool output before it"


def test_a_conclusion_the_tool_output_bears_out_is_kept() -> None:
    t = Transcript()
    _ran(t, "Thread 14: capture (provider.py:40)\n  complete_checkout (service.py:88)")
    t.say("The root cause was that `complete_checkout` holds a pooled connection across"
          " `capture()`, because the transaction stays open.")  # fmt: skip
    assert not only(t.extract(), "DISCOVERY").suppressed


def test_a_statement_read_off_the_command_just_before_it_is_kept() -> None:
    t = Transcript()
    t.run("Bash", "READINESS_CHECK_DEPENDENCIES=postgres,redis,ledger-grpc",
          command="kubectl -n api exec api-1 -- env")  # fmt: skip
    t.say("I see `READINESS_CHECK_DEPENDENCIES` lists `ledger-grpc` in production, because"
          " its probe waits on it.")  # fmt: skip
    assert not only(t.extract(), "DISCOVERY").suppressed


def test_a_confirmed_bug_read_off_a_run_is_kept() -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\n  parse_slot_num\nOverflowError: cannot"
          " convert float infinity to integer", error=True,
          command="python3 -c 'parse_slot_num(float(\"inf\"))'")  # fmt: skip
    t.say("Confirmed: `parse_slot_num(float('inf'))` raises `OverflowError` because `int()`"
          " rejects infinity.")  # fmt: skip
    assert not only(t.extract(), "DISCOVERY").suppressed


def test_a_note_made_while_reading_code_is_no_finding() -> None:
    t = Transcript()
    t.run("Read", "func dispatchStage() { runLocalStage() }", file_path="/w/dispatch.go")
    t.say("For local stages, `dispatchStage` calls `runLocalStage` instead of"
          " `runSandboxedStage`, because `isLocal` is set.")  # fmt: skip
    node = only(t.extract(), "DISCOVERY")
    assert node.suppressed == "neither a conclusion nor read off a command's output"


def test_why_a_failing_command_now_passes_is_a_finding() -> None:
    t = Transcript()
    t.run("Bash", "--- FAIL: TestResume (21.9s)", error=True, command="go test ./cli")
    t.run("Bash", "--- PASS: TestResume (0.4s)\nok", command="go test ./cli")
    t.say("Both tests pass! The `ACCESSIBLE=1` mode makes huh read from stdin instead of"
          " opening `/dev/tty` directly.")  # fmt: skip
    assert [n.type for n in pending(t.extract())] == ["DISCOVERY"]


def test_a_statement_about_the_code_the_agent_is_changing_is_work_in_progress() -> None:
    t = Transcript()
    t.run("Edit", "updated", file_path="/w/meta.go", old_string="SessionCount int",
          new_string="")  # fmt: skip
    t.run("Bash", "meta.go:40: SessionCount: count,", command="grep -n SessionCount meta.go")
    t.say("I notice that the `ReadCommitted` function still sets `SessionCount` on"
          " `CommittedMetadata`, because it was not updated.")  # fmt: skip
    node = only(t.extract(), "DISCOVERY")
    assert node.suppressed == "about code the agent is changing (its work in progress)"


@pytest.mark.parametrize(
    ("sentence", "why"),
    [
        ("12 of the pod's 15 API connections are idle in transaction.", "points at"),
        ("The two test-file references to `2026.5.0` are commentary.", "points at"),
        ("The output shows it found `debug.go` and `root.go`.", "names nothing"),
        ("A critical syntax error on line 222 of `pr.py`.", "no subject and verb"),
        ("The root cause was the same recurring problem as `perf/load`.", "points at"),
    ],
)
def test_a_subject_must_name_what_the_sentence_is_about(sentence: str, why: str) -> None:
    assert why in shapes.self_contained(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The `ACCESSIBLE=1` mode makes huh read from stdin instead of `/dev/tty`.",
        "The root cause was that `complete_checkout` holds a pooled connection.",
        "The root cause was the configuration shipped with 3.9.0, not the code.",
        "When `initializeSession` creates a session, it doesn't calculate attribution.",
        "The Matter SDK exposes three exception hierarchies.",
    ],
)
def test_a_subject_that_names_something_stands_alone(sentence: str) -> None:
    assert shapes.self_contained(sentence) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "Now update `chkit.ts` to import from `global-flags.ts` instead.",
        "`async_set_user`: added an orphan guard for `credential_exists`.",
        "A node reconnect now resets the backoff at the `30s` cadence.",
        "Since `SessionCount` is being removed, we need to change the signature.",
        "Only `requirements_dev.txt` and `requirements_test.txt` need to change.",
        "`readCheckpointMetadata` is unused now because the tests were removed.",
    ],
)
def test_a_change_made_or_planned_is_no_finding(sentence: str) -> None:
    assert shapes.describes_change(sentence)


def test_the_agents_own_tooling_is_no_finding() -> None:
    assert shapes.about_agent("The `code-review` skill prescribes an 8-step workflow per PR.")
    assert not shapes.about_agent("`AGENTS.md` says tests run with `pytest -n 4`.")


def test_a_hedged_statement_typed_as_a_finding_is_kept_out() -> None:
    t = Transcript()
    _ran(t, "db fixture: engine=payments_test")
    # what a document says (a CONTEXT_LOAD), stated with a hedge the type does not show
    t.say("According to the notes, the `db` fixture may hold a connection from the"
          " `payments_test` engine, so the count is off.")  # fmt: skip
    node = only(t.extract(), "CONTEXT_LOAD")
    assert node.suppressed == "a guess stated as a finding (hedged)"


def test_a_short_statement_carries_too_little_information() -> None:
    t = Transcript()
    _ran(t, "branch: horizon/POLY-40")
    t.say("It turns out `horizon/POLY-40` is the branch checked out for the ticket work today.")
    node = only(t.extract(), "DISCOVERY")
    assert node.suppressed.startswith("too little information for a statement")


def test_a_garbled_summary_is_kept_out() -> None:
    assert shapes.garbled("https:/253 — using their template with the `.d.ts` evidence")
    assert shapes.garbled("`parse_tag` strips whitespace after `lcm:<slot>:`, and `(.")
    assert not shapes.garbled("`parse_tag` strips whitespace after `lcm:<slot>:`.")


def test_a_subagents_report_is_its_conclusion() -> None:
    t = Transcript()
    read = ToolUse("toolu_r", "Read", '{"file_path":"/w/package.json"}')
    t.add("", file="agent-a.jsonl", agent_id="a", kind="tool_use", tool_uses=(read,))
    shown = '"next": "15.5.2",\n"react": "19.1.0"'
    t.add(shown, file="agent-a.jsonl", agent_id="a", role="user", kind="tool_result",
          tool_results=(ToolResult("toolu_r", shown, False),))  # fmt: skip
    report = (
        "**Differences from CLAUDE.md:**\n1. **Versions**: `next` upgraded to v15.5.2 and"
        " `react` to v19.1.0\n2. **Scripts**: no `type-check` script in `package.json`"
    )
    t.add(report, file="agent-a.jsonl", agent_id="a")
    t.run("Task", report, prompt="Compare package.json with CLAUDE.md")
    node = only(t.extract(), "DISCOVERY")
    assert not node.suppressed
    assert node.summary.startswith("Differences from CLAUDE.md: `next` upgraded to v15.5.2")
    assert "Versions:" not in node.summary  # the items' labels are cut


def test_a_subagents_tour_of_the_code_is_no_finding() -> None:
    assert shapes.reports_finding("Found 6 places where `any` enters `src/checkout`")
    assert shapes.reports_finding("`next` 15.5.2 differs from the documented 14")
    assert not shapes.reports_finding("`src/config.ts` loads `.env` through `dotenv` at start")


def test_a_guess_the_agent_went_on_to_check_stays_a_guess() -> None:
    t = Transcript()
    t.say("Maybe `pool_size=5` in `settings.py` is too small for the 8 `xdist` workers, so"
          " the pool runs dry.")  # fmt: skip
    t.run("Bash", "pool_size=5", command="grep -n pool_size settings.py")
    t.say("Okay.")
    guess = only(t.extract(), "HYPOTHESIS")
    assert guess.suppressed == "a guess the agent went on to check (it stays open)"


def test_a_sentence_tied_to_the_one_before_it_loses_the_tie() -> None:
    from store.ingest.statements import clause

    assert clause("So in `a.py` and `b.py`, the `InvalidState` error escapes.") == (
        "In `a.py` and `b.py`, the `InvalidState` error escapes."
    )


# --------------------------------------------------------------------------- corrections


def test_a_correction_needs_a_reason_or_a_rule() -> None:
    t = Transcript()
    t.run("Edit", "The user doesn't want to proceed with this tool use.", error=True,
          file_path="/w/a.py", old_string="a", new_string="b")  # fmt: skip
    prompt(t, "read/write would be awesome.")
    t.run("Edit", "The user doesn't want to proceed with this tool use.", error=True,
          file_path="/w/b.py", old_string="a", new_string="b")  # fmt: skip
    prompt(t, "Don't touch `b.py`: the generated client is overwritten by `make gen`, edit the"
              " template in `gen/` instead.")  # fmt: skip
    vague, rule = of_type(t.extract(), "PIVOT")
    assert vague.suppressed.startswith("a correction")
    assert not rule.suppressed
    assert rule.summary.startswith("The user declined Edit of `/w/b.py`:")


def test_declining_the_agents_question_is_answering_it() -> None:
    t = Transcript()
    t.run("AskUserQuestion", "The user doesn't want to proceed with this tool use.",
          error=True, questions="Which approach?")  # fmt: skip
    prompt(t, "Don't use polling: the server pushes `node_removed` events, so subscribe instead.")
    pivot = only(t.extract(), "PIVOT")
    assert pivot.suppressed == "the user answered the agent's question in words"


# --------------------------------------------------------------------------- forks


def test_a_file_written_beside_one_that_could_not_be_written_is_a_pivot() -> None:
    t = Transcript()
    refused = "<tool_use_error>File has not been read yet. Read it first.</tool_use_error>"
    for tool in ("Write", "Edit"):
        t.run(tool, refused, error=True, file_path="/w/src/hooks/useTodos.ts", content="x",
              old_string="a", new_string="b")  # fmt: skip
    t.run("Write", "File created", file_path="/w/src/hooks/useSimpleTodos.ts", content="x")
    t.run("Edit", "updated", file_path="/w/src/app/page.tsx", old_string="a",
          new_string="import { useTodos } from '@/hooks/useSimpleTodos';")  # fmt: skip
    pivot = only(t.extract(), "PIVOT")
    assert not pivot.suppressed
    assert pivot.summary == (
        "Writes to `useTodos.ts` kept failing (File has not been read yet, 2 attempts), so a"
        " second file `useSimpleTodos.ts` was written beside it instead; `page.tsx` now uses it."
    )


def test_a_file_written_after_a_retry_that_worked_is_no_fork() -> None:
    t = Transcript()
    refused = "<tool_use_error>File has not been read yet.</tool_use_error>"
    t.run("Write", refused, error=True, file_path="/w/src/a.ts", content="x")
    t.run("Write", refused, error=True, file_path="/w/src/a.ts", content="x")
    t.run("Write", "File written", file_path="/w/src/a.ts", content="x")  # it worked
    t.run("Write", "File created", file_path="/w/src/b.ts", content="y")
    assert of_type(t.extract(), "PIVOT") == []


# --------------------------------------------------------------------------- issue 11, round 3


def test_a_near_identical_node_later_in_the_session_is_kept_out() -> None:
    t = Transcript()
    for command in ("npm run build", "npx next build"):  # one error, two commands
        for _ in range(3):
            t.run("Bash", "[TypeError: generate is not a function]", error=True,
                  command=command)  # fmt: skip
    first, second = of_type(t.extract(), "DEAD_END")
    assert not first.suppressed
    assert second.suppressed == "nearly repeats an earlier DEAD_END of the session"


@pytest.mark.parametrize(
    "said",
    [
        # the session's voice: "we" is the agent and its user
        "The root cause was that we call `flush()` before `commit()` in `store.py`.",
        # a generic noun nobody named: which file only the session knew
        "The root cause was that the script reads `DATABASE_URL` before `.env` is loaded.",
    ],
)
def test_a_statement_in_the_sessions_voice_leans_on_the_session(said: str) -> None:
    t = Transcript()
    t.run("Bash", "DATABASE_URL flush() commit() store.py .env", command="cat notes.txt")
    t.say(said)
    assert all(n.suppressed for n in t.extract().nodes if n.strategy != "episode")


def test_a_generic_noun_with_its_name_beside_it_is_self_contained() -> None:
    assert not bar._leans("The root cause was that the script `seed.py` reads `DATABASE_URL`.")
    assert not bar._leans("`seed.py` fails because the file reads `DATABASE_URL` too early.")
    assert bar._leans("The root cause was that the file reads `DATABASE_URL` too early.")


def test_a_test_run_that_ends_with_passes_only_is_no_failure() -> None:
    t = Transcript()
    logged = "tests/test_api.py::test_retry ERROR:root:upstream gave 503, retrying\n"
    t.run("Bash", logged + "error: upstream 503\n===== 5 passed in 0.31s =====",
          command="pytest tests/test_api.py")  # fmt: skip
    assert not of_type(t.extract(), "DEAD_END")
    t = Transcript()
    t.run("Bash", logged + "error: upstream 503\n===== 1 failed, 4 passed in 0.31s =====",
          command="pytest tests/test_api.py")  # fmt: skip
    assert of_type(t.extract(), "DEAD_END")


@pytest.mark.parametrize(
    ("output", "gist"),
    [
        ("Error: Command failed: next build\nTypeError: generate is not a function\n",
         "TypeError: generate is not a function"),  # a wrapper's line around the real one
        ("sh: 1: nvm: not found\nBuild error: the page `/` failed to prerender\n",
         "Build error: the page `/` failed to prerender"),  # a notice on the way
    ],
)  # fmt: skip
def test_the_error_gist_is_not_a_wrapper_or_a_notice_printed_before_it(
    output: str, gist: str
) -> None:
    span = snippets.error_gist(output)
    assert span is not None
    assert output[span[0] : span[1]] == gist


def test_a_program_missing_inside_a_container_is_about_the_project_not_a_slip() -> None:
    t = Transcript()
    t.run("Bash", 'OCI runtime exec failed: exec failed: unable to start container process: exec:'
          ' "curl": executable file not found in $PATH: unknown', error=True,
          command="kubectl -n api exec api-7f -- curl -s localhost:8080/healthz")  # fmt: skip
    t.say("The api image is distroless apart from Python: it has no `curl`, so `python -c` it is.")
    t.run("Bash", "200 0.012", command="kubectl -n api exec api-7f -- python -c 'import urllib'")
    dead = only(t.extract(), "DEAD_END")
    assert not dead.suppressed.startswith("an environment slip")
    assert shapes.missing_program('exec: "curl": executable file not found in $PATH') == "curl"
    assert shapes.missing_program("(eval):1: command not found: npm") == "npm"
    assert shapes.missing_program("node not found") == "node"


def test_a_password_prompt_the_agents_shell_cannot_answer_is_a_slip() -> None:
    t = Transcript()
    t.run("Bash", "sudo: a terminal is required to read the password; either use the -S option",
          error=True, command="sudo tar -xzf /tmp/node.tar.gz -C /usr/local/nodejs")  # fmt: skip
    t.run("Bash", "", command="tar -xzf /tmp/node.tar.gz -C ~/.local/nodejs")
    result = t.extract()
    assert only(result, "DEAD_END").suppressed.startswith("an environment slip")
    assert all(s.suppressed for s in of_type(result, "SOLUTION"))


def test_a_retyped_command_line_whose_failing_step_is_unclear_credits_nothing() -> None:
    t = Transcript()
    t.run("Bash", "Error: EACCES: permission denied, open '/w/.cache/x'", error=True,
          command="npm ci && npm run build -- --no-lint")  # fmt: skip
    t.run("Bash", "done", command="npm ci && npm run build")
    result = t.extract()
    assert only(result, "DEAD_END").suppressed.startswith("a command line of several steps")
    assert only(result, "SOLUTION").suppressed.startswith("the failing command line ran several")


def test_a_script_opening_with_a_comment_is_named_by_its_first_command() -> None:
    tool = ToolUse("t1", "Bash", '{"command": "# Add to shell profile\\nexport PATH=x\\nnode -v"}')
    assert snippets.describe(tool) == "`export PATH=x`"


def test_a_tables_row_lifted_out_of_its_table_is_not_a_sentence() -> None:
    row = "| 7 | `pre-write-guard.sh`: `AUTHORIZE=1` bypass | fixes use the proper tool |."
    assert bar.judge(row, said=True).reason.startswith("not a sentence")


def test_a_conclusion_about_a_file_the_agent_just_edited_is_work_in_progress() -> None:
    t = Transcript()
    t.run("Edit", "updated", file_path="/w/src/models_evaluation.py",
          old_string="from pydantic import BaseModel, model_validator",
          new_string="from pydantic import BaseModel")  # fmt: skip
    t.run("Bash", "E   NameError: name 'model_validator' is not defined", error=True,
          command="pytest tests/test_models.py")  # fmt: skip
    t.run("Bash", "src/models_evaluation.py:43:    @model_validator(mode='after')\n__pycache__",
          command="grep -rn model_validator src/")  # fmt: skip
    t.say("The issue is the `__pycache__` stale bytecode plus a reference in"
          " `models_evaluation.py`.")  # fmt: skip
    found = only(t.extract(), "DISCOVERY")
    assert found.suppressed == "about `models_evaluation.py`, a file the agent is changing"


def test_something_to_create_that_already_existed_is_a_slip_retyping_got_past() -> None:
    t = Transcript()
    t.run("Bash", 'a pull request for branch "fix-x" into branch "main" already exists:\n'
          "https://github.com/o/r/pull/6689", error=True,
          command='gh pr create --title "fix: x" --body "y"')  # fmt: skip
    t.run("Bash", "https://github.com/o/r/pull/6689", command='gh pr edit 6689 --title "fix: x"')
    result = t.extract()
    assert only(result, "DEAD_END").suppressed.startswith("an environment slip (something")
    assert only(result, "SOLUTION").suppressed.startswith("retyped after an environment slip")


def test_a_flagged_run_whose_output_is_a_passing_test_run_is_no_failure() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\n...\n===== 5 passed in 0.31s =====", error=True,
          command="pytest tests/api -q | tail -3; false")  # fmt: skip
    assert not of_type(t.extract(), "DEAD_END")
    t = Transcript()
    t.run("Bash", "Exit code 1\ncmd/x.go:3:1: printf: bad verb\nok  \texample.com/x\t0.2s",
          error=True, command="go test ./... && go vet ./...")  # fmt: skip
    assert of_type(t.extract(), "DEAD_END")


def test_a_banner_opening_the_output_is_not_the_errors_gist() -> None:
    output = (
        "Exit code 1\n==> Running in non-interactive mode because `$NONINTERACTIVE` is set.\n"
        "==> Checking for `sudo` access (which may request your password)...\n"
        "Need sudo access on macOS (e.g. the user dev needs to be an Administrator)!"
    )
    span = snippets.error_gist(output)
    assert span is not None
    assert output[span[0] : span[1]].startswith("Need sudo access on macOS")


def test_a_long_error_chain_keeps_its_last_links() -> None:
    line = (
        "OCI runtime exec failed: exec failed: unable to start container process: exec:"
        ' "curl": executable file not found in $PATH: unknown'
    )
    assert snippets.error_line(line, 110).startswith("exec failed: unable to start container")
    assert '"curl": executable file not found' in snippets.error_line(line, 110)
    short = "src/a.ts(6,33): error TS2307: Cannot find module 'zod'."
    assert snippets.error_line(short, 110) == short


def test_a_conclusion_the_agent_takes_back_right_after_is_not_kept() -> None:
    def session(after: str) -> Transcript:
        t = Transcript()
        t.run("Bash", "config/db.yml:4:  search_path: public",
              command="grep -rn search_path config/")  # fmt: skip
        t.say("The root cause is that `search_path` in `config/db.yml` is `public` only, so"
              " `psql` never sees the `reporting` schema.")  # fmt: skip
        t.run("Bash", "reporting | orders_archive", command="psql -c '\\dt *.orders_archive'")
        t.say(after)
        return t

    kept = only(session("So `reporting.orders_archive` it is.").extract(), "DISCOVERY")
    taken_back = only(
        session("Actually, the table is in `public`: the real issue is a typo.").extract(),
        "DISCOVERY",
    )
    assert not kept.suppressed
    assert taken_back.suppressed == "the agent took it back right after (a belief it gave up)"


def test_a_retry_that_only_changes_how_the_command_reports_fixed_nothing() -> None:
    t = Transcript()
    t.run("Bash", "E   AssertionError: assert 3 == 4", error=True, command="pytest tests/api -x")
    t.run("Bash", "4 passed in 0.2s", command="pytest tests/api -x -q --tb=short")
    assert only(t.extract(), "SOLUTION").suppressed.startswith("the retry only changed how")


def test_a_missing_path_an_added_option_pointed_the_tool_at_is_no_slip() -> None:
    t = Transcript()
    t.run("Bash", "FileNotFoundError: [Errno 2] No such file or directory: 'alembic.ini'",
          error=True, command="alembic upgrade head")  # fmt: skip
    t.run("Bash", "INFO  [alembic.runtime.migration] Running upgrade  -> 0189",
          command="alembic -c db/alembic.ini upgrade head")  # fmt: skip
    result = t.extract()
    assert not only(result, "SOLUTION").suppressed
    assert "`-c`" in only(result, "SOLUTION").summary
    retyped = Transcript()
    retyped.run("Bash", "FileNotFoundError: [Errno 2] No such file or directory: 'alembic.ini'",
                error=True, command="alembic upgrade head")  # fmt: skip
    retyped.run("Bash", "INFO  Running upgrade", command="cd db && alembic upgrade head")
    assert only(retyped.extract(), "DEAD_END").suppressed.startswith("an environment slip")
    skipped = Transcript()
    skipped.run("Bash", ".husky/pre-commit: line 5: .husky/_/husky.sh: No such file or directory",
                error=True, command='git commit -m "fix: x"')  # fmt: skip
    skipped.run("Bash", "[fix 112ec11] fix: x", command='git commit --no-verify -m "fix: x"')
    assert only(skipped.extract(), "SOLUTION").suppressed.startswith("retyped after")
