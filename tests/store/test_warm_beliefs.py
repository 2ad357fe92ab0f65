"""Four shapes independent judges rejected on fresh sessions (issue 11), each a rule about
the transcript's structure: a "success" whose output still carries the failure, a stated
cause nothing after it bears out, a cause the session later replaced, and a missing
dependency the very next action installed. Each with a case the rule must leave alone."""

from __future__ import annotations

from store.ingest.failure_bar import INSTALLED_AT_ONCE
from tests.store.test_warm import Transcript, of_type, only

# --------------------------------------------------------------------------- false success

TSC_FAILS = (
    "src/api/client.ts(3,24): error TS2307: Cannot find module 'undici' or its corresponding"
    " type declarations.\nFound 1 error in src/api/client.ts:3"
)


def _tsc_then_edit(t: Transcript) -> None:
    t.run("Bash", TSC_FAILS, error=True, command="npx tsc --noEmit")
    t.run("Edit", "The file /w/src/api/client.ts has been updated.",
          file_path="/w/src/api/client.ts", old_string="import { fetch } from 'undici'",
          new_string="const { fetch } = globalThis")  # fmt: skip


def test_a_piped_rerun_whose_output_still_fails_closes_no_episode() -> None:
    t = Transcript()
    _tsc_then_edit(t)
    # `| tail` makes the exit status tail's: the tool flags nothing, the error is still there
    t.run("Bash", TSC_FAILS, command="npx tsc --noEmit 2>&1 | tail -5")
    assert of_type(t.extract(), "SOLUTION") == []


def test_a_piped_rerun_that_still_carries_the_error_class_closes_no_episode() -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\nModuleNotFoundError: No module named "
          "'yaml'", error=True, command="python -m site_builder build")  # fmt: skip
    t.run("Edit", "The file /w/site_builder/plugins.py has been updated.",
          file_path="/w/site_builder/plugins.py", old_string="import yaml",
          new_string="import ruamel.yaml as yaml")  # fmt: skip
    t.run("Bash", "plugin skipped: ModuleNotFoundError: No module named 'yaml'\n"
          "Success: built 12 pages", command="python -m site_builder build | tail -3")  # fmt: skip
    assert of_type(t.extract(), "SOLUTION") == []


def test_the_episode_stays_open_until_a_run_really_passes() -> None:
    t = Transcript()
    _tsc_then_edit(t)
    t.run("Bash", TSC_FAILS, command="npx tsc --noEmit 2>&1 | tail -5")
    t.run("Edit", "The file /w/tsconfig.json has been updated.", file_path="/w/tsconfig.json",
          old_string='"lib": ["es2020"]', new_string='"lib": ["es2022", "dom"]')  # fmt: skip
    t.run("Bash", "", command="npx tsc --noEmit 2>&1 | tail -5")
    (fix,) = of_type(t.extract(), "SOLUTION")
    assert fix.line_end == 20  # the last run, not the piped one (lines 11-12) that still failed


def test_a_piped_rerun_with_clean_output_still_closes_the_episode() -> None:
    t = Transcript()
    _tsc_then_edit(t)
    t.run("Bash", "", command="npx tsc --noEmit 2>&1 | tail -5")
    fix = only(t.extract(), "SOLUTION")
    assert "client.ts" in fix.summary


# --------------------------------------------------------------------------- unverified cause

PYTEST_FAILS = (
    "FAILED tests/test_settings.py::test_env - KeyError: 'APP_ENV'\n"
    "    load_config() read APP_ENV before load_dotenv() ran\n1 failed in 0.2s"
)
CAUSE_A = (
    "The root cause is that `load_config` reads `APP_ENV` at import time, before"
    " `load_dotenv` has loaded `.env`."
)


def _settings_failure(t: Transcript) -> None:
    t.run("Bash", PYTEST_FAILS, error=True, command="pytest tests/test_settings.py")
    t.say(CAUSE_A)
    t.run("Edit", "The file /w/app/settings.py has been updated.",
          file_path="/w/app/settings.py", old_string="ENV = os.environ['APP_ENV']",
          new_string="ENV = os.environ.get('APP_ENV', 'dev')")  # fmt: skip


def _discovery(t: Transcript, words: str) -> str:
    (node,) = [n for n in of_type(t.extract(), "DISCOVERY") if words in n.summary]
    return node.suppressed


def test_a_cause_whose_failure_never_passes_after_is_kept_out() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", PYTEST_FAILS, error=True, command="pytest tests/test_settings.py")
    assert _discovery(t, "import time") == (
        "a cause the session never bore out: what it explains never passed after"
    )


def test_a_cause_the_next_passing_run_bears_out_is_not_kept_out_as_unverified() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    assert "bore out" not in _discovery(t, "import time")


def test_a_cause_stated_as_the_session_ends_is_kept_out() -> None:
    t = Transcript()
    t.run("Bash", "invoice.py:12: def render_invoice(order):", command="grep -n def invoice.py")
    t.say("The issue was that `render_invoice` reads `TAX_RATE` from `settings.toml`, which"
          " the staging image does not ship.")  # fmt: skip
    assert _discovery(t, "TAX_RATE") == (
        "a cause stated as the session ends: nothing after it bears it out"
    )


def test_an_old_failure_far_before_a_cause_does_not_make_it_unverified() -> None:
    t = Transcript()
    t.run("Bash", "Error: connect ECONNREFUSED 127.0.0.1:5432", error=True, command="make seed")
    t.filler(45)  # long ago, and never retried: the later cause is not about it
    t.run("Bash", "settings.py:4: ENV = os.environ['APP_ENV']\nconftest.py:2: APP_ENV",
          command="rg -n APP_ENV")  # fmt: skip
    t.say(CAUSE_A)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    assert "bore out" not in _discovery(t, "import time")


def test_another_commands_failure_does_not_supersede_a_cause() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    t.run("Bash", "Error: connect ECONNREFUSED 127.0.0.1:5432", error=True, command="make seed")
    t.say("The problem is that `make seed` needs the `postgres` service from `compose.yaml`.")
    assert "superseded" not in _discovery(t, "import time")


# --------------------------------------------------------------------------- superseded

CAUSE_B = (
    "The root cause is that `conftest.py` sets `APP_ENV` only for the `api` tests, so"
    " `test_settings.py` runs without it."
)


def test_a_cause_replaced_after_the_command_failed_again_is_kept_out() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", PYTEST_FAILS, error=True, command="pytest tests/test_settings.py")
    t.run("Read", "def pytest_configure():\n    os.environ['APP_ENV'] = 'test'  # api only",
          file_path="/w/tests/conftest.py")  # fmt: skip
    t.say(CAUSE_B)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    assert _discovery(t, "import time") == (
        "the command failed again and the agent stated another cause (superseded)"
    )


def test_a_cause_the_agent_later_calls_not_the_real_one_is_kept_out() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    t.filler(3)
    t.say("Looking at the CI log, the real cause was the `APP_ENV` default in `conftest.py`.")
    result = t.extract()
    # neither the DISCOVERY nor the DEAD_END it explains keeps the belief given up
    assert [n for n in result.nodes if "import time" in n.summary and not n.suppressed] == []
    assert "import time" not in only(result, "DEAD_END").summary


def test_a_cause_stated_alone_stays_on_its_dead_end() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    assert "import time" in only(t.extract(), "DEAD_END").summary


def test_a_later_real_cause_supersedes_a_discovery() -> None:
    t = Transcript()
    t.run("Bash", "settings.py:4: ENV = os.environ['APP_ENV']\nconftest.py:2: APP_ENV",
          command="rg -n APP_ENV")  # fmt: skip
    t.say(CAUSE_A)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    t.filler(8)  # beyond the window in which the agent takes a conclusion straight back
    t.say("Looking at the CI log, the real cause was the `APP_ENV` default in `conftest.py`.")
    assert _discovery(t, "import time") == (
        "a later statement names the real cause instead (a belief it gave up)"
    )


def test_a_second_cause_with_no_failure_between_does_not_supersede_the_first() -> None:
    t = Transcript()
    _settings_failure(t)
    t.run("Bash", "1 passed in 0.2s", command="pytest tests/test_settings.py")
    t.run("Read", "def pytest_configure():\n    os.environ['APP_ENV'] = 'test'  # api only",
          file_path="/w/tests/conftest.py")  # fmt: skip
    t.say(CAUSE_B)
    assert "superseded" not in _discovery(t, "import time")


# --------------------------------------------------------------------------- installed at once

MISSING = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'yaml'"


def _missing_yaml(t: Transcript) -> None:
    t.run("Bash", MISSING, error=True, command="python3 scripts/render.py")


def test_a_missing_package_the_next_action_installs_is_routine() -> None:
    t = Transcript()
    _missing_yaml(t)
    t.run("Bash", "Successfully installed PyYAML-6.0.1", command="pip install pyyaml")
    t.run("Bash", "rendered 3 pages", command="python3 scripts/render.py")
    result = t.extract()
    assert only(result, "DEAD_END").suppressed == INSTALLED_AT_ONCE
    fix = only(result, "SOLUTION")  # the install, with the error it answered, is the lesson
    assert not fix.suppressed
    assert "pip install pyyaml" in fix.summary
    assert "No module named 'yaml'" in fix.summary


def test_a_missing_package_whose_stated_cause_restates_the_absence_is_routine() -> None:
    t = Transcript()
    _missing_yaml(t)
    t.say("The `yaml` module is not installed in this Python environment.")
    t.run("Bash", "Successfully installed PyYAML-6.0.1", command="pip install pyyaml")
    t.run("Bash", "rendered 3 pages", command="python3 scripts/render.py")
    assert only(t.extract(), "DEAD_END").suppressed == INSTALLED_AT_ONCE


def test_a_missing_package_whose_cause_says_why_it_was_missing_is_not_routine() -> None:
    t = Transcript()
    _missing_yaml(t)
    t.say("`yaml` is missing because `requirements.txt` was regenerated without `pyyaml`.")
    t.run("Bash", "Successfully installed PyYAML-6.0.1", command="pip install pyyaml")
    t.run("Bash", "rendered 3 pages", command="python3 scripts/render.py")
    assert all(n.suppressed != INSTALLED_AT_ONCE for n in t.extract().nodes)


def test_a_missing_package_that_recurs_later_is_not_routine_set_up() -> None:
    t = Transcript()
    _missing_yaml(t)
    t.run("Bash", "Successfully installed PyYAML-6.0.1", command="pip install pyyaml")
    t.run("Bash", "rendered 3 pages", command="python3 scripts/render.py")
    t.run("Bash", MISSING, error=True, command="make deploy")
    result = t.extract()
    assert all(n.suppressed != INSTALLED_AT_ONCE for n in result.nodes)


def test_a_missing_package_fixed_by_the_virtualenv_is_not_routine_set_up() -> None:
    t = Transcript()
    _missing_yaml(t)
    t.run("Bash", "rendered 3 pages",
          command="source .venv/bin/activate && python3 scripts/render.py")  # fmt: skip
    result = t.extract()
    assert all(n.suppressed != INSTALLED_AT_ONCE for n in result.nodes)


def test_an_install_that_is_not_the_very_next_action_is_not_routine_set_up() -> None:
    t = Transcript()
    _missing_yaml(t)
    t.run("Edit", "The file /w/requirements.txt has been updated.",
          file_path="/w/requirements.txt", old_string="jinja2",
          new_string="jinja2\npyyaml")  # fmt: skip
    t.run("Bash", "Successfully installed PyYAML-6.0.1", command="pip install -r requirements.txt")
    t.run("Bash", "rendered 3 pages", command="python3 scripts/render.py")
    result = t.extract()
    assert all(n.suppressed != INSTALLED_AT_ONCE for n in result.nodes)
