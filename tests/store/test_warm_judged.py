"""Warm tier rules from the second judged sample (issue 11): the gist of a linter's or
checker's report is its finding, a solution credits the edit that held, a failure the agent
says it meant is no dead end, and the agent's own new test expecting the wrong thing is no
lesson about the project."""

from __future__ import annotations

import pytest

from store.ingest.snippets import error_gist, undecorated
from tests.store.test_warm import Transcript, of_type, only

DIALYZER = (
    "Pre-commit validation failed:\\n\\n[DIALYZER]\\nFinding suitable PLTs\nChecking PLT...\n"
    "PLT is up to date!\nStarting Dialyzer\n[\n  check_plt: false,\n]\n"
    "Total errors: 1, Skipped: 0, Unnecessary Skips: 0\ndone in 0m12.82s\n"
    "lib/app/services/summary.ex:120:18:pattern_match\nThe pattern can never match the type.\n"
    "\nPattern:\n{:error, _reason}\n"
)
CREDO = (
    "Exit code 2\nChecking 3 source files ...\n\n  Software Design\n┃ \n"
    "┃ [D] ↘ Nested modules could be aliased at the top of the invoking module.\n"
    "┃       lib/app/registry.ex:135:5 #(App.Registry.check)\n\n"
    "Please report incorrect results: https://example.invalid/issues\n"
    "40 mods/funs, found 1 software design suggestion.\n"
)
EXUNIT = (
    "Running ExUnit with seed: 1, max_cases: 32\n\n  1) test mount renders the page "
    "(AppWeb.ReviewLiveTest)\n     test/app_web/live/review_live_test.exs:35\n"
    '     Assertion with =~ failed\n     code:  assert html =~ "Review: #{project.name}"\n'
    '     left:  "<html lang=\\"en\\">…"\n'
)


@pytest.mark.parametrize(
    ("output", "gist"),
    [
        (
            DIALYZER,
            "lib/app/services/summary.ex:120:18:pattern_match\n"
            "The pattern can never match the type.",
        ),
        (
            CREDO,
            "┃ [D] ↘ Nested modules could be aliased at the top of the invoking module.\n"
            "┃       lib/app/registry.ex:135:5 #(App.Registry.check)",
        ),
        (
            "Found 1 error.\nsrc/app/db.py:3:8: F401 [*] `os` imported but unused\n",
            "src/app/db.py:3:8: F401 [*] `os` imported but unused",
        ),
        (
            # a warning at a location is not the failure; the error line is
            "src/a.c:3:5: warning: unused variable 'x'\nld: cannot find -lfoo\n",
            "ld: cannot find -lfoo",
        ),
        (
            EXUNIT,
            "1) test mount renders the page (AppWeb.ReviewLiveTest)\n"
            "     test/app_web/live/review_live_test.exs:35\n     Assertion with =~ failed\n"
            '     code:  assert html =~ "Review: #{project.name}"',
        ),
    ],
)
def test_the_gist_of_a_report_is_its_finding(output: str, gist: str) -> None:
    span = error_gist(output)
    assert span is not None
    assert output[span[0] : span[1]] == gist


def test_report_decoration_is_dropped_from_summaries() -> None:
    assert " ".join(undecorated("┃ [D] ↘ Nested modules could be aliased.").split()) == (
        "Nested modules could be aliased."
    )
    assert undecorated("expected [a] | [B] here") == "expected [a] | [B] here"
    t = Transcript()
    t.run("Bash", CREDO, error=True, command="mix credo --strict lib/app/registry.ex")
    dead = only(t.extract(), "DEAD_END")
    assert dead.summary.startswith(
        "`mix credo --strict lib/app/registry.ex` fails with Nested modules could be aliased"
        " at the top of the invoking module. lib/app/registry.ex:135:5"
    )
    assert "┃" not in dead.summary
    assert "↘" not in dead.summary


def _edit(t: Transcript, path: str, old: str, new: str) -> None:
    t.run(
        "Edit", f"The file {path} has been updated.", file_path=path, old_string=old, new_string=new
    )


def test_a_solution_credits_the_file_the_failure_named_and_its_last_edit() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "lib/app/tmux.ex:12:5: undefined function capture/1",
        error=True,
        command="mix compile --warnings-as-errors",
    )
    _edit(t, "/w/lib/app/tmux.ex", "alias App.Tmux", "alias App.Services.Tmux")
    _edit(t, "/w/lib/app/other.ex", "x = 1", "x = 2")
    _edit(t, "/w/lib/app/tmux.ex", "Tmux.capture(pane)", "App.Services.Tmux.capture(pane)")
    _edit(t, "/w/lib/app/tmux.ex", "  unused = 1\n  run()", "  run()")  # tidying: not the fix
    t.run("Bash", "Generated app app", command="mix compile --warnings-as-errors")
    result = t.extract()
    fix = only(result, "SOLUTION")
    assert fix.summary.startswith(
        "`mix compile --warnings-as-errors` succeeds after editing `tmux.ex`"
        " (`Tmux.capture(pane)` → `App.Services.Tmux.capture(pane)`), editing `other.ex`"
    )
    # a compiler's error in code the session had not written is the project's state
    # (reviewer rule 6): its dead end stays in the queue with no cause stated, so the
    # solution need not repeat the error
    dead = only(result, "DEAD_END")
    assert not dead.suppressed
    assert "lib/app/tmux.ex:12:5: undefined function capture/1" in dead.summary


def test_a_solution_names_the_error_code_it_resolved() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "src/a.ts(6,33): error TS2307: Cannot find module 'zod'.",
        error=True,
        command="npx tsc --noEmit",
    )
    t.run("Bash", "added 1 package in 2s", command="npm install zod@3.23.8")
    t.run("Bash", "", command="npx tsc --noEmit")
    result = t.extract()
    assert only(result, "SOLUTION").summary.endswith(
        "(it had failed with src/a.ts(6,33): error TS2307: Cannot find module 'zod')."
    )


def test_beside_a_dead_end_in_the_queue_a_solution_names_the_error_by_its_code() -> None:
    t = Transcript()
    t.run("Bash", "src/a.ts(6,33): error TS2307: Cannot find module 'zod'.", error=True,
          command="npx tsc --noEmit")  # fmt: skip
    t.say("`zod` is missing from package.json because the lockfile was regenerated without it.")
    t.run("Bash", "added 1 package in 2s", command="npm install zod@3.23.8")
    t.run("Bash", "", command="npx tsc --noEmit")
    result = t.extract()
    assert not only(result, "DEAD_END").suppressed
    assert only(result, "SOLUTION").summary.endswith("(it had failed with error TS2307).")


@pytest.mark.parametrize(
    "said",
    [
        "That failure is exactly what we want: the ALTER gave up after 3 s instead of queueing.",
        "This failure is the behaviour change I intended, not a regression: the old test "
        "asserted the opposite.",
        "Working as intended: the guard refused the unsigned payload.",
    ],
)
def test_a_failure_the_agent_says_it_meant_is_not_a_dead_end(said: str) -> None:
    t = Transcript()
    t.run(
        "Bash",
        "E   psycopg.errors.LockNotAvailable: canceling statement due to lock timeout",
        error=True,
        command="alembic upgrade head",
    )
    t.say(said)
    dead = [n for n in of_type(t.extract(), "DEAD_END") if n.strategy == "episode"]
    assert [n.suppressed for n in dead] == ["a failure the agent wanted (it says so)"]
    assert dead[0].suppressed == "a failure the agent wanted (it says so)"


def test_a_failure_only_mentioned_later_as_intended_is_still_a_dead_end() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "E   psycopg.errors.LockNotAvailable: canceling statement due to lock timeout",
        error=True,
        command="alembic upgrade head",
    )
    t.say("The migration hangs on the lock. Next I'll set lock_timeout as intended by the runbook.")
    assert not only(t.extract(), "DEAD_END").suppressed.startswith("a failure the agent wanted")


def _new_test_fails_then_passes(t: Transcript, fixed_in: str) -> None:
    test = "/w/test/app_web/live/review_live_test.exs"
    t.run("Write", f"File created successfully at: {test}", file_path=test, content="defmodule")
    t.run("Bash", EXUNIT, error=True, command="mix test test/app_web/live/review_live_test.exs")
    _edit(t, fixed_in, 'html =~ "Review: #{project.name}"', "html =~ project.name")
    t.run("Bash", "3 tests, 0 failures", command="mix test test/app_web/live/review_live_test.exs")


def test_the_agents_own_new_test_expecting_the_wrong_thing_is_no_lesson() -> None:
    t = Transcript()
    _new_test_fails_then_passes(t, "/w/test/app_web/live/review_live_test.exs")
    result = t.extract()
    dead, fix = only(result, "DEAD_END"), only(result, "SOLUTION")
    why = "the agent's own new test expected the wrong thing (it passed once the test changed)"
    # the failure is no lesson, and nor is what the test had to say to pass (the precision
    # bar: the fix edits the test the session had just written)
    assert (dead.suppressed, fix.suppressed) == (
        why,
        "it fixes code the session itself had written or edited (work in progress)",
    )


def test_a_new_test_that_failed_until_the_code_changed_is_work_in_progress() -> None:
    t = Transcript()
    _new_test_fails_then_passes(t, "/w/lib/app_web/live/review_live.ex")
    # The precision bar: the failure names the test the agent had just written.
    assert [n.suppressed for n in of_type(t.extract(), "DEAD_END")] == [
        "an error in code the session itself had written or edited (work in progress)"
    ]


def test_a_failure_that_said_what_to_run_and_running_it_teach_nothing() -> None:
    t = Transcript()
    hook = "Pre-commit validation failed:\n[FORMAT] Not formatted.\nRun 'mix format' to fix."
    t.run("Bash", hook, error=True, command='git commit -m "feat: x"')
    t.run("Bash", "", command="mix format")
    t.run("Bash", "[main 1a2b3c4] feat: x", command='git commit -m "feat: x"')
    result = t.extract()
    dead, fix = only(result, "DEAD_END"), only(result, "SOLUTION")
    assert dead.suppressed == "the error said to run `mix format`, and that fixed it"
    assert fix.suppressed == "ran what the error said to run"
    assert "after running `mix format`" in fix.summary


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("The todo.ts, filters.ts, and actions.ts files are missing.", "where files are"),
        ("The files are actually in `/w/app/types/` directory.", "where files are"),
        ("If igniter can't install, fall back to manual dep entry in `mix.exs`.", "a plan step"),
        ("The fix is to split it into short transactions, no connection held in I/O.", "not self"),
        ("The `any` was hiding three real bugs in this component: `quote` is undefined.", "not s"),
        ("8,715 ms down to 6.7 ms, reading 61 blocks from disk instead of 241,877.", "not self"),
        ("If you pass `--no-verify`, use `git commit` only for WIP commits.", ""),
        ("The config file `settings.py` is loaded before `.env`, so env overrides lose.", ""),
        ("In this project `pool_pre_ping` cannot help: the pool's connections are busy.", ""),
    ],
)
def test_the_agents_sentences_must_stand_alone(sentence: str, reason: str) -> None:
    from store.ingest.bar import judge

    verdict = judge(sentence, said=True)
    assert verdict.reason.startswith(reason) if reason else verdict.passes, verdict.reason


def test_a_solution_says_which_program_or_argument_took_the_others_place() -> None:
    t = Transcript()
    t.run(
        "Bash",
        'OCI runtime exec failed: exec: "curl": executable file not found in $PATH',
        error=True,
        command="kubectl -n api exec api-1 -- curl -s -o /dev/null http://x/health",
    )
    t.run("Bash", "200 0.004", command="kubectl -n api exec api-1 -- python -c 'import urllib'")
    t.run(
        "Bash",
        'ERROR: relation "pg_stat_statements" does not exist',
        error=True,
        command='psql "$RO_URL" -c "SELECT 1"',
    )
    t.run("Bash", "1", command='psql "${RO_URL%/*}/payments" -c "SELECT 1"')
    swap, arg = of_type(t.extract(), "SOLUTION")
    # the error said `curl` was missing: running another program in its place is the fix
    assert "running `python -c …` instead of `curl -s -o …`" in swap.summary
    assert "passing `${RO_URL%/*}/payments` instead of `$RO_URL`" in arg.summary
    assert not swap.suppressed
    assert not arg.suppressed


def test_a_long_summary_is_cut_where_a_clause_or_a_word_ends() -> None:
    from store.ingest.snippets import SUMMARY_CHARS, fit

    text = "The pool ran dry, " + "because every request held a connection " * 8 + "`x y`."
    cut = fit(text)
    assert len(cut) <= SUMMARY_CHARS
    assert cut.endswith("…")
    assert cut[:-1].split()[-1] in text.split()  # a whole word
    assert cut.count("`") % 2 == 0


def test_a_dead_end_ends_with_the_cause_the_agent_states_right_after() -> None:
    t = Transcript()
    t.run(
        "Bash",
        'ERROR:  relation "pg_stat_statements" does not exist',
        error=True,
        command='psql "$RO_URL" -c "SELECT calls FROM pg_stat_statements"',
    )
    t.say(
        "`$RO_URL` points at the `postgres` maintenance database, and the extension is"
        " installed in `payments`. Let me point it there."
    )
    t.run("Bash", "12", command='psql "${RO_URL%/*}/payments" -c "SELECT calls FROM x"')
    result = t.extract()
    dead = next(n for n in of_type(result, "DEAD_END") if n.strategy == "episode")
    assert dead.summary.endswith(
        'fails with ERROR: relation "pg_stat_statements" does not exist — `$RO_URL` points at'
        " the `postgres` maintenance database, and the extension is installed in `payments`."
    )
    # the same sentence is not a second node; the retry changed its query too, so the
    # database it names is not credited as the fix
    assert [n.type for n in result.nodes if not n.suppressed] == ["DEAD_END"]
    assert only(result, "SOLUTION").suppressed.startswith("the retry changed free text")


def test_a_slip_the_agent_owns_is_no_lesson() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "E   psycopg.errors.UndefinedFunction: operator does not exist: bigint > "
        "timestamp with time zone",
        error=True,
        command="pytest tests/settlements -q",
    )
    t.say("The test caught a bug in my keyset cursor: `batch[-1][1]` is `settled_at`, not `id`.")
    _edit(t, "/w/payments/export.py", "after_id = batch[-1][1]", "after_id = batch[-1].id")
    t.run("Bash", "14 passed in 4.61s", command="pytest tests/settlements -q")
    result = t.extract()
    episode = [n for n in result.nodes if n.strategy == "episode"]
    assert {n.suppressed for n in episode} == {
        "a slip in code the agent had just written (it says so)"
    }


def test_a_slip_that_states_a_rule_of_the_tool_is_a_lesson() -> None:
    t = Transcript()
    t.run(
        "Bash",
        "E   psycopg.errors.ActiveSqlTransaction: DROP INDEX CONCURRENTLY cannot run"
        " inside a transaction block",
        error=True,
        command="pytest tests/migrations -q",
    )
    t.say(
        "My mistake: I put the upgrade in `autocommit_block()` but not the downgrade, and"
        " `DROP INDEX CONCURRENTLY` can't run in a transaction either."
    )
    _edit(t, "/w/migrations/0189.py", "    op.drop_index(", "    with ctx.autocommit_block():")
    t.run("Bash", "3 passed", command="pytest tests/migrations -q")
    assert not [n for n in t.extract().nodes if n.strategy == "episode" and n.suppressed]


def test_a_solution_with_several_changes_credits_none() -> None:
    t = Transcript()
    t.run(
        "Bash", "E   ImportError: cannot import name 'Client'", error=True, command="pytest tests"
    )
    _edit(t, "/w/src/api.py", "from .client import Http", "from .client import Http as Client")
    _edit(t, "/w/tests/conftest.py", "yield s", "yield s\n    s.close()")
    t.run("Bash", "3 passed", command="pytest tests")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed == "2 changes in between: which one fixed it is not clear"


def test_a_solution_after_looking_something_up_credits_the_changed_command() -> None:
    t = Transcript()
    t.run(
        "Bash",
        'Error from server (NotFound): pods "pg-0" not found',
        error=True,
        command="kubectl -n db logs pg-0 -c postgres",
    )
    t.run("Bash", "NAME  READY\npg-primary-0  1/1", command="kubectl -n db get pods")
    t.run("Bash", "LOG: checkpoint starting", command="kubectl -n db logs pg-primary-0 -c postgres")
    fix = only(t.extract(), "SOLUTION")
    assert "after passing `pg-primary-0` instead of `pg-0`" in fix.summary
