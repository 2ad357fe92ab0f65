"""The reviewer rules of `store.ingest.reviewer_rules` (issue 11, round 12), each with a case
it must catch and a case it must leave alone, on synthetic sessions written here."""

from __future__ import annotations

import json

from store.ingest.edit_gists import first_added, windows
from store.ingest.failure_bar import INSTALLED_AT_ONCE, NO_CAUSE
from store.ingest.reviewer_rules import (
    OWN_BAD_IMPORT,
    OWN_MESSAGE,
    PERMISSION_HICCUP,
    REPLACED_BY_ROOT_CAUSE,
    SERVICE_DOWN,
    TAKEN_BACK,
    UNSETTLED_CORRECTION,
    WORK_SUMMARY,
    broken_before,
    command_steps,
    down,
    error_numbers,
    exception_name,
    installs_missing,
    line_the_cause_names,
    own_message,
    unsettled_correction,
    work_summary,
)
from store.ingest.snippets import edit_gist
from store.models import ToolUse
from tests.store.test_warm import Transcript, of_type, only, prompt

# --------------------------------------------------------------------------- 1. installs


def test_an_install_step_of_a_command_line_names_the_missing_module() -> None:
    assert installs_missing("source .venv/bin/activate && pip install -q click && app", "click")
    assert installs_missing("python3 -m pip install --user rich", "rich")
    assert installs_missing("conda run -n lab pip install opencv-python-headless -q", "cv2")
    assert installs_missing("uv pip install 'pyyaml>=6'", "yaml")
    assert installs_missing("sudo apt-get install -y jq", "jq")


def test_a_command_line_that_installs_something_else_or_nothing_does_not() -> None:
    assert not installs_missing("pip install requests && python -m app", "click")
    assert not installs_missing("python -m click_app --help", "click")
    assert not installs_missing("pip show click", "click")
    assert not installs_missing("echo 'pip install click'", "click")
    assert not installs_missing("", "click")


MISSING_CLICK = (
    'Traceback (most recent call last):\n  File "/w/src/cli.py", line 7, in <module>\n'
    "    import click\nModuleNotFoundError: No module named 'click'"
)


def test_a_missing_module_installed_in_the_rerun_line_is_routine_set_up() -> None:
    t = Transcript()
    t.run("Bash", MISSING_CLICK, error=True, command="python -m src.cli config --show")
    t.run("Bash", "Environment: production",
          command="pip install --quiet click && python -m src.cli config --show")  # fmt: skip
    assert only(t.extract(), "DEAD_END").suppressed == INSTALLED_AT_ONCE


def test_a_missing_module_installed_through_a_launcher_is_routine_set_up() -> None:
    t = Transcript()
    t.run("Bash", "ModuleNotFoundError: No module named 'cv2'", error=True,
          command="conda run -n lab python3 src/load.py")  # fmt: skip
    t.run("Bash", "", command="conda run -n lab pip install opencv-python-headless -q")
    t.run("Bash", "loaded 485 pairs", command="conda run -n lab python3 src/load.py")
    assert only(t.extract(), "DEAD_END").suppressed == INSTALLED_AT_ONCE


def test_a_rerun_line_that_installs_another_package_is_no_set_up() -> None:
    t = Transcript()
    t.run("Bash", MISSING_CLICK, error=True, command="python -m src.cli config --show")
    t.run("Bash", "Environment: production",
          command="pip install --quiet rich && python -m src.cli config --show")  # fmt: skip
    assert all(n.suppressed != INSTALLED_AT_ONCE for n in t.extract().nodes)


# --------------------------------------------------------------------------- 2. error line

SETUP_OUTPUT = (
    "Exit code 1\n=== First Time Setup ===\nInstalling PHP dependencies...\n"
    "fatal: detected dubious ownership in repository at '/srv/app'\n"
    "Installing dependencies from lock file\nGenerating optimized autoload files\n"
    "> @php artisan package:discover --ansi\n\nIn PackageManifest.php line 179:\n"
    "  The /srv/app/bootstrap/cache directory must be present and writable.  \n\n"
    "Script @php artisan package:discover --ansi returned with error code 1"
)


def test_the_error_line_the_stated_cause_names_is_the_gist() -> None:
    first = SETUP_OUTPUT.index("fatal:")
    span = (first, SETUP_OUTPUT.index("\n", first))
    found = line_the_cause_names(SETUP_OUTPUT, span, "The `bootstrap/cache` directory is missing.")
    assert found is not None
    assert SETUP_OUTPUT[found[0] : found[1]] == (
        "The /srv/app/bootstrap/cache directory must be present and writable."
    )


def test_a_cause_the_chosen_line_already_names_or_that_names_nothing_keeps_it() -> None:
    first = SETUP_OUTPUT.index("fatal:")
    span = (first, SETUP_OUTPUT.index("\n", first))
    assert line_the_cause_names(SETUP_OUTPUT, span, "Git distrusts `/srv/app` here.") is None
    assert line_the_cause_names(SETUP_OUTPUT, span, "The cache directory is missing.") is None
    # named, but only on a line that says nothing is wrong
    assert line_the_cause_names(SETUP_OUTPUT, span, "The `autoload` step broke.") is None


def test_a_dead_end_quotes_the_line_its_cause_is_about() -> None:
    t = Transcript()
    t.run("Bash", SETUP_OUTPUT, error=True, command="bash setup.sh")
    t.say("The `bootstrap/cache` directory is absent from the mounted volume because the"
          " scaffold step skipped it, so artisan cannot write its manifest.")  # fmt: skip
    summary = only(t.extract(), "DEAD_END").summary
    assert "must be present and writable" in summary
    assert "dubious ownership" not in summary


def test_a_dead_end_whose_cause_names_no_other_line_keeps_its_gist() -> None:
    t = Transcript()
    output = "Exit code 1\nError: connect ECONNREFUSED 127.0.0.1:5432\n    at TCP.onconnect"
    t.run("Bash", output, error=True, command="npm run migrate")
    t.say("The migration fails because `postgres` is not running in the `db` container.")
    assert "ECONNREFUSED" in only(t.extract(), "DEAD_END").summary


# --------------------------------------------------------------------------- 3. root cause

FIRST_CAUSE = (
    "I found the issue. The problem is that `renderStats` reads `totals.count` before"
    " `loadTotals` has resolved, so `StatsPanel` renders zeros.\n\nLet me fix it:"
)
TWOFOLD = (
    "I found the issue. The problem is twofold:\n\n1. **Render order**: `renderStats` reads"
    " `totals.count` before `loadTotals` has resolved\n2. **Missing guard**: `StatsPanel`"
    " never checks the response\n\nLet me fix both:"
)


def _stats_session(t: Transcript, summary: str, cause: str = FIRST_CAUSE) -> None:
    t.add("The dashboard shows 0 for every total.", role="user", kind="prompt")
    t.run("Read", "export function renderStats(totals) {\n  return totals.count\n}\n"
          "loadTotals().then(setTotals)", file_path="/w/src/StatsPanel.js")  # fmt: skip
    t.say(cause)
    t.run("Edit", "The file /w/src/StatsPanel.js has been updated.",
          file_path="/w/src/StatsPanel.js", old_string="return totals.count",
          new_string="return totals?.count ?? null")  # fmt: skip
    t.run("Bash", '{"totals": {"count": 24}}', command="curl -s localhost:3000/api/stats")
    t.say(summary)


def _first_cause(t: Transcript) -> str:
    (node,) = [n for n in of_type(t.extract(), "DISCOVERY") if "`totals.count`" in n.summary]
    return node.suppressed


def test_a_cause_the_turn_sums_up_as_another_root_cause_is_kept_out() -> None:
    t = Transcript()
    _stats_session(t, "Fixed. The root cause was a missing `Contact` model import in"
                   " `api/stats.js`, so `populate()` threw before any total was sent.")  # fmt: skip
    assert _first_cause(t) == REPLACED_BY_ROOT_CAUSE


def test_a_twofold_cause_the_turn_sums_up_as_another_root_cause_is_kept_out() -> None:
    t = Transcript()
    _stats_session(t, "The root cause was a missing `Contact` model import in `api/stats.js`.",
                   cause=TWOFOLD)  # fmt: skip
    assert _first_cause(t) == REPLACED_BY_ROOT_CAUSE


def test_a_fact_is_not_replaced_by_a_later_root_cause() -> None:
    t = Transcript()
    t.add("Why is the dashboard slow?", role="user", kind="prompt")
    t.run("Bash", "StatsPanel.js:12: useEffect(() => loadTotals(), [])",
          command="rg -n loadTotals src")  # fmt: skip
    t.say("`StatsPanel` calls `loadTotals` once on mount from `StatsPanel.js`.")
    t.run("Bash", "done in 2.1s", command="npm run build")
    t.say("The root cause was a missing `Contact` model import in `api/stats.js`.")
    found = [n for n in of_type(t.extract(), "DISCOVERY") if "once on mount" in n.summary]
    assert all(n.suppressed != REPLACED_BY_ROOT_CAUSE for n in found)


def test_a_cause_the_turns_root_cause_restates_is_kept() -> None:
    t = Transcript()
    _stats_session(t, "Fixed. The root cause was that `renderStats` ran before"
                   " `loadTotals` resolved.")  # fmt: skip
    assert _first_cause(t) != REPLACED_BY_ROOT_CAUSE


def test_a_root_cause_after_the_user_spoke_again_supersedes_nothing() -> None:
    t = Transcript()
    _stats_session(t, "Done.")
    t.add("Now look at the contacts page.", role="user", kind="prompt")
    t.say("The root cause there was a missing `Contact` model import in `api/contacts.js`.")
    assert _first_cause(t) != REPLACED_BY_ROOT_CAUSE


# --------------------------------------------------------------------------- 4. steps


def test_steps_are_cut_outside_quotes_only() -> None:
    line = 'ls src && conda run -n lab python3 -c "import torch; print(torch.__version__)"'
    assert command_steps(line) == [
        "ls src",
        'conda run -n lab python3 -c "import torch; print(torch.__version__)"',
    ]
    assert command_steps("echo 'a && b' ; make") == ["echo 'a && b'", "make"]


def test_steps_without_quotes_are_cut_at_every_separator() -> None:
    assert command_steps("a && b || c; d\ne") == ["a", "b", "c", "d", "e"]
    assert command_steps("make test") == ["make test"]


def test_a_dead_end_quotes_its_failing_step_whole() -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\nModuleNotFoundError: No module named"
          " 'torch'", error=True,
          command='ls data && conda run -n base python3 -c "import torch; print(1)"')  # fmt: skip
    summary = only(t.extract(), "DEAD_END").summary
    assert '`conda run -n base python3 -c "import torch; print(1)"`' in summary


# --------------------------------------------------------------------------- 5. permissions

EXTERNALLY_MANAGED = (
    "error: externally-managed-environment\n\n× This environment is externally managed\n"
    "╰─> To install Python packages system-wide, try apt install python3-xyz"
)
EACCES = (
    "npm ERR! code EACCES\nnpm ERR! Error: EACCES: permission denied, mkdir"
    " '/usr/local/lib/node_modules/pnpm'"
)


def _retried(failed: str, output: str, worked: str) -> list[str]:
    t = Transcript()
    t.run("Bash", output, error=True, command=failed)
    t.run("Bash", "Successfully installed", command=worked)
    return [n.suppressed for n in t.extract().nodes]


def test_a_permission_refusal_got_past_by_a_standard_flag_is_routine() -> None:
    assert _retried(
        "pip install requests", EXTERNALLY_MANAGED, "pip install --break-system-packages requests"
    ) == [PERMISSION_HICCUP, PERMISSION_HICCUP]
    assert _retried("npm install -g pnpm", EACCES, "npm install -g pnpm --prefix ~/.local") == [
        PERMISSION_HICCUP,
        PERMISSION_HICCUP,
    ]


def test_a_permission_refusal_fixed_otherwise_is_not_a_hiccup() -> None:
    # another argument took the place of one: more than a standard flag
    assert PERMISSION_HICCUP not in _retried("npm install -g pnpm", EACCES, "npm install -g pnpm@8")
    # an unknown flag is a refusal, but no permission one
    assert PERMISSION_HICCUP not in _retried(
        "bd list --wisp", "Error: unknown flag: --wisp", "bd list --wisp --user"
    )


def test_a_permission_refusal_with_an_edit_in_between_is_not_a_hiccup() -> None:
    t = Transcript()
    t.run("Bash", EACCES, error=True, command="npm install -g pnpm")
    t.run("Edit", "The file /w/.npmrc has been updated.", file_path="/w/.npmrc",
          old_string="", new_string="prefix=${HOME}/.npm-global")  # fmt: skip
    t.run("Bash", "added 1 package", command="npm install -g pnpm --prefix ~/.local")
    assert all(n.suppressed != PERMISSION_HICCUP for n in t.extract().nodes)


# --------------------------------------------------------------------------- 6. broken before

GO_VET = (
    "Exit code 1\n# example.com/app/pkg/store\n"
    "pkg/store/configmap.go:79:43: non-constant format string in call to fmt.Errorf\n"
    "FAIL\texample.com/app/pkg/store [build failed]"
)


def test_a_located_compiler_error_in_code_the_session_never_wrote_is_kept() -> None:
    t = Transcript()
    t.run("Bash", GO_VET, error=True, command="go test ./pkg/store/...")
    dead = only(t.extract(), "DEAD_END")
    assert not dead.suppressed
    assert "configmap.go:79:43: non-constant format string" in dead.summary


def test_a_located_compiler_error_naming_what_the_session_wrote_stays_out() -> None:
    t = Transcript()
    t.run("Edit", "The file /w/pkg/store/store.go has been updated.",
          file_path="/w/pkg/store/store.go", old_string="return err",
          new_string='return fmt.Errorf("open: " + err.Error())')  # fmt: skip
    t.run("Bash", GO_VET, error=True, command="go test ./pkg/store/...")
    assert only(t.extract(), "DEAD_END").suppressed


def test_a_compiler_error_in_a_file_the_session_wrote_on_windows_is_its_work() -> None:
    t = Transcript()
    t.run("Edit", "The file has been updated.",
          file_path="c:\\w\\src\\app\\page.tsx", old_string="const a = 1",
          new_string="const landmarks = detect(frame)")  # fmt: skip
    t.run("Bash", "src/app/page.tsx(309,33): error TS18047: 'landmarks' is possibly 'null'.",
          error=True, command="npx tsc --noEmit")  # fmt: skip
    assert only(t.extract(), "DEAD_END").suppressed == (
        "an error in code the session itself had written or edited (work in progress)"
    )


def test_a_warning_or_a_lint_code_is_no_located_compiler_error() -> None:
    assert broken_before("pkg/a.go:3:5: undefined: storeConfig in call here", [])
    assert not broken_before("main.c:3:5: warning: unused variable x here", [])
    assert not broken_before("src/a.py:3:1: F401 os imported but unused", [])
    assert not broken_before("x.go:1:2: oops", [])


# --------------------------------------------------------------------------- 7. work summary


def test_lines_of_a_summary_of_work_are_not_lessons() -> None:
    assert work_summary("`spec/factories/users.rb` - Added `billing` capability to `:admin`.")
    assert work_summary("`api.go`: added `isOwner` guard; fixed `AccountNo` → `AccountID`.")
    assert work_summary("`a.value` - gets the value of the select; `b.value` - of the button.")
    assert work_summary("The conflict in `nav.rb` has been resolved by: keeping the flag.")
    assert work_summary("Built the `acme/api:2` image, ran a container, confirmed `jq` works.")
    assert work_summary('The `nav_controller.js` change broke the "Select regions" button.')


def test_facts_and_fixes_with_their_failure_are_not_work_summaries() -> None:
    assert not work_summary("`package.json` pins next 15.5.2, so `npm run dev` uses Turbopack.")
    assert not work_summary("`go generate` fails until the structs exist in `model/types.go`.")
    assert not work_summary(
        "Built images of `acme/api` are 2 GB because `node_modules` is in them."
    )
    assert not work_summary("The `next.config.js` change to `output: 'export'` broke `/api`.")


def test_a_summary_of_work_in_the_agents_words_stays_out_of_the_queue() -> None:
    t = Transcript()
    t.run("Bash", "Failure/Error: expect(user.can?(:billing)).to be true\n1 example, 1 failure",
          error=True, command="bundle exec rspec spec/users_spec.rb")  # fmt: skip
    t.run("Edit", "updated", file_path="/app/spec/factories/users.rb", old_string="a",
          new_string="b")  # fmt: skip
    t.run("Bash", "1 example, 0 failures", command="bundle exec rspec spec/users_spec.rb")
    t.say("**Fixed and already committed:**\n- `spec/factories/users.rb` - Added `billing`"
          " capability to `:admin` trait.")  # fmt: skip
    (said,) = [n for n in t.extract().nodes if n.strategy != "episode"]
    assert said.suppressed == WORK_SUMMARY


# --------------------------------------------------------------------------- 8. corrections


def test_a_correction_that_asks_or_points_at_an_unnamed_thing_is_not_self_contained() -> None:
    assert unsettled_correction("actually we should change the wording on that proto to inStock")
    assert unsettled_correction("wait what? What do you mean it is not reachable? Look at the md")
    t = Transcript()
    prompt(t, "Add the stock flag to the handset resolver.")
    t.run("Edit", "updated", file_path="/app/resolver.go", old_string="a", new_string="b")
    prompt(t, "actually i think we should change the verbage on that proto to inStock, never OOS")
    assert only(t.extract(), "PIVOT").suppressed == UNSETTLED_CORRECTION


def test_a_correction_that_names_what_it_is_about_is_left_alone() -> None:
    assert not unsettled_correction("no, we use pnpm in this repo, never npm")
    assert not unsettled_correction("Don't retry POST /charges: that is not idempotent.")
    t = Transcript()
    prompt(t, "Add the stock flag to the handset resolver.")
    t.run("Edit", "updated", file_path="/app/resolver.go", old_string="a", new_string="b")
    prompt(
        t,
        "No, don't name the handset.proto field `out_of_stock`; use `in_stock`, clients"
        " never negate flags",
    )
    assert not only(t.extract(), "PIVOT").suppressed


# --------------------------------------------------------------------------- 9. service down

REFUSED = (
    'sqlalchemy.exc.OperationalError: connection to server at "127.0.0.1", port 5432 failed:'
    " Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?"
)


def test_a_local_service_not_running_is_routine_failure_and_start_alike() -> None:
    t = Transcript()
    t.run("Bash", f"Exit code 1\n{REFUSED}", error=True, command="alembic upgrade head")
    t.run("Bash", "started", command="brew services start postgresql@16")
    t.run("Bash", "Running upgrade -> 4f2a", command="alembic upgrade head")
    result = t.extract()
    assert only(result, "DEAD_END").suppressed == SERVICE_DOWN
    assert all(n.suppressed for n in of_type(result, "SOLUTION"))


def test_a_refused_connection_to_another_host_is_not_a_local_service() -> None:
    remote = 'psql: error: connection to server at "db.acme.io" (10.2.0.7) failed: timeout'
    assert not down(remote)
    assert not down("Error: ECONNREFUSED db.internal.acme.io:6379 (TLS required by the proxy)")
    assert down("Error: connect ECONNREFUSED 127.0.0.1:6379")
    assert down("Cannot connect to the Docker daemon at unix:///var/run/docker.sock.")


# --------------------------------------------------------------------------- 10. edit gists


def test_an_edit_past_the_width_shows_where_the_lines_differ() -> None:
    old = "coach = create(:channel, :coach, account: account, users: [caregiver.user, coach.user])"
    new = (
        "coach = create(:channel, :coach, account: account, care_case: care_case, users:"
        " [caregiver.user, coach.user])"
    )
    gist = edit_gist(ToolUse("t1", "Edit", json.dumps({"old_string": old, "new_string": new})))
    shown_old, shown_new = gist.split(" → ")
    assert shown_old != shown_new
    assert "care_case" in shown_new
    assert "care_case" not in shown_old


def test_short_lines_and_early_differences_are_quoted_from_their_start() -> None:
    assert windows("retries = 3", "retries = 5", 70) == ("retries = 3", "retries = 5")
    old = "timeout = 30  # seconds, as the load balancer closes idle connections after 60"
    new = "timeout = 55  # seconds, as the load balancer closes idle connections after 60"
    assert windows(old, new, 70) == (old, new)


def test_the_added_line_shown_is_the_one_that_does_something() -> None:
    fields = {"old_string": "import asyncio", "new_string": "import asyncio\nimport sys\n"
              "# Add the parent folder to the path\nsys.path.insert(0, str(ROOT))"}  # fmt: skip
    gist = edit_gist(ToolUse("t1", "Edit", json.dumps(fields)))
    assert gist == "added `sys.path.insert(0, str(ROOT))`"
    assert first_added(["import sys", "import os"]) == "import sys"


# --------------------------------------------------------------------------- 11. own import


def _imports_then_runs(new_string: str, error: str, *, also_edit: str = "") -> Transcript:
    t = Transcript()
    t.run("Edit", "updated", file_path="/app/cli/main.py", old_string="import click",
          new_string=new_string)  # fmt: skip
    if also_edit:
        t.run("Edit", "updated", file_path=also_edit, old_string="a = 1", new_string="a = 2")
    t.run("Bash", f"Traceback (most recent call last):\n  File \"/app/cli/main.py\", line 3\n"
          f"ModuleNotFoundError: No module named '{error}'", error=True,
          command="python -m cli.main --help")  # fmt: skip
    return t


def test_an_import_of_a_name_the_session_made_up_is_its_own_slip() -> None:
    alias = _imports_then_runs("import gliclass as glc\nfrom glc import Model", "glc")
    assert only(alias.extract(), "DEAD_END").suppressed == OWN_BAD_IMPORT
    sub = _imports_then_runs("import click\nimport transformers.pipeline", "transformers.pipeline")
    assert only(sub.extract(), "DEAD_END").suppressed == OWN_BAD_IMPORT


def test_a_module_that_exists_or_a_plain_dependency_is_not_the_sessions_slip() -> None:
    there = _imports_then_runs("from shared.io import read", "shared.io",
                               also_edit="/app/shared/io.py")  # fmt: skip
    assert only(there.extract(), "DEAD_END").suppressed != OWN_BAD_IMPORT
    plain = _imports_then_runs("import click\nimport pytest", "pytest")
    assert only(plain.extract(), "DEAD_END").suppressed != OWN_BAD_IMPORT


# --------------------------------------------------------------------------- 12. taken back

SPEC_FAILS = "1) chats defaults to the caregiver tab\nFailure/Error: expect(page).to have_tab\n"


def _fix_then_later_edit(old_string: str, new_string: str) -> Transcript:
    t = Transcript()
    t.run("Bash", f"{SPEC_FAILS}1 example, 1 failure", error=True,
          command="bundle exec rspec spec/chats_spec.rb:42")  # fmt: skip
    t.run("Edit", "updated", file_path="/app/spec/chats_spec.rb",
          old_string="before do\n  stub_api\nend",
          new_string="before do\n  stub_api\n  Flags.disable(:new_nav)\nend")  # fmt: skip
    t.run("Bash", "1 example, 0 failures", command="bundle exec rspec spec/chats_spec.rb:42")
    t.filler(3)
    t.run("Edit", "updated", file_path="/app/spec/chats_spec.rb", old_string=old_string,
          new_string=new_string)  # fmt: skip
    return t


def test_a_fix_a_later_edit_takes_back_out_was_not_the_fix() -> None:
    t = _fix_then_later_edit(
        "before do\n  stub_api\n  Flags.disable(:new_nav)\nend", "before do\n  stub_api\nend"
    )
    assert only(t.extract(), "SOLUTION").suppressed == TAKEN_BACK


def test_a_fix_the_session_keeps_is_not_taken_back() -> None:
    t = _fix_then_later_edit(
        "it 'lists chats' do", "it 'lists chats for the care case' do\n  Flags.disable(:x)"
    )
    assert only(t.extract(), "SOLUTION").suppressed != TAKEN_BACK


# --------------------------------------------------------------------------- 13. error codes


def test_two_error_codes_are_two_dead_ends_not_two_attempts() -> None:
    assert error_numbers("Error de sistema 5.") == ("5",)
    assert error_numbers("npm ERR! code 1 while running the postinstall script of sharp") == ("1",)
    t = Transcript()
    t.run("Bash", "Error de sistema 5.", error=True, command="net localgroup ops bob /add")
    t.run("Bash", "Error de sistema 1376.", error=True, command="net localgroup ops bob /add")
    summaries = [n.summary for n in of_type(t.extract(), "DEAD_END")]
    assert len(summaries) == 2
    assert not any("attempts" in s for s in summaries)


def test_line_numbers_and_timings_do_not_split_attempts() -> None:
    assert error_numbers("src/app.ts(12,5): Cannot find name 'useTodos' in the hook module") == ()
    t = Transcript()
    for ms in ("0.91", "1.07"):
        t.run("Bash", f"FAIL src/app.test.ts ({ms} s)\n  TypeError: generate is not a function"
              " at build (src/gen.ts:41:7)", error=True, command="npx jest")  # fmt: skip
    (dead,) = of_type(t.extract(), "DEAD_END")
    assert "(2 attempts)" in dead.summary


# --------------------------------------------------------------------------- 14. own message


def test_an_error_whose_message_the_session_wrote_is_its_own_check_failing() -> None:
    wrote = ["if missing:\n    raise RuntimeError('Schema structure verification failed!')"]
    assert own_message("RuntimeError: Schema structure verification failed!", wrote)
    t = Transcript()
    t.run("Write", "created", file_path="/app/scripts/verify.py",
          content="raise SystemExit('every profile needs a birth date row')")  # fmt: skip
    t.run("Bash", "Exit code 1\nError: every profile needs a birth date row", error=True,
          command="python scripts/verify.py")  # fmt: skip
    assert only(t.extract(), "DEAD_END").suppressed == OWN_MESSAGE


def test_an_error_message_the_project_wrote_is_not_the_sessions_check() -> None:
    wrote = ["print('Schema structure verification started')"]
    assert not own_message("RuntimeError: Schema structure verification failed!", wrote)
    assert not own_message("KeyError: 'submission_date'", ["row['submission_date']"])


# --------------------------------------------------------------------------- 15. error class


def test_an_exceptions_class_path_is_not_another_program_answering() -> None:
    assert exception_name("asyncpg.exceptions.RaiseError")
    assert exception_name("requests.exceptions.HTTPError")
    t = Transcript()
    t.run("Bash", "Exit code 1\nasyncpg.exceptions.RaiseError: Schema structure verification"
          " failed!", error=True, command="python scripts/migrate.py")  # fmt: skip
    t.run("Bash", "migrated", command="python scripts/migrate.py")
    assert only(t.extract(), "DEAD_END").suppressed == NO_CAUSE


def test_a_program_name_before_a_colon_is_still_a_program() -> None:
    assert not exception_name("lsd")
    assert not exception_name("python3.11")
    assert not exception_name("git")
