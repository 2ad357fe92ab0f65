"""What a SOLUTION may credit (issue 11, held-out judging): only a change that sits between the
failing and the working attempt and can honestly be named — a small named change to the same
command (1–3 flags or arguments), an edit of a file, or an install of the package the error
said was missing. A command run in between, a rewritten command line, a change the words of
the command do not show (quoting, another step) and an install the error never asked for are
never the credit: the dead end stands alone and the solution is suppressed with the reason."""

from __future__ import annotations

import pytest

from store.ingest.changes import tweak_doubt
from tests.store.test_warm import Transcript, of_type, only

NOT_FOUND = "Exit code 1\nerror: no such table: users"


def pending_fixes(t: Transcript) -> list[str]:
    return [n.summary for n in of_type(t.extract(), "SOLUTION") if not n.suppressed]


# -------------------------------------------------------------- (a) the same command, tweaked


def test_a_flag_added_to_the_same_command_is_credited() -> None:
    t = Transcript()
    t.run("Bash", "error[E0463]: can't find crate for `std`", error=True,
          command="cargo build --release")  # fmt: skip
    t.run("Bash", "    Finished `release` profile [optimized] target(s) in 41.2s",
          command="cargo build --release --target x86_64-unknown-linux-gnu")  # fmt: skip
    (fix,) = pending_fixes(t)
    assert "succeeds after adding `--target`, `x86_64-unknown-linux-gnu`" in fix


def test_a_flag_swapped_for_another_is_credited_with_both_named() -> None:
    t = Transcript()
    t.run("Bash", "Error: unknown flag: --wisp", error=True, command="bd list --wisp")
    t.run("Bash", "bd-12  open  tidy the cleanup labels", command="bd list --label=cleanup")
    (fix,) = pending_fixes(t)
    assert "succeeds after adding `--label=cleanup` and dropping `--wisp`" in fix


def test_a_read_only_command_in_between_does_not_block_the_tweak_nor_get_the_credit() -> None:
    t = Transcript()
    t.run("Bash", "Error: unknown flag: --wisp", error=True, command="bd list --wisp")
    t.run("Bash", "Usage: bd list [--label=L] [--status=S]", command="bd help list")
    t.run("Bash", "On branch main\nnothing to commit", command="git status")
    t.run("Bash", "bd-12  open  tidy the cleanup labels", command="bd list --label=cleanup")
    (fix,) = pending_fixes(t)
    assert "adding `--label=cleanup` and dropping `--wisp`" in fix
    assert "running" not in fix


def test_a_read_only_command_in_between_is_never_the_credit() -> None:
    t = Transcript()
    t.run("Bash", NOT_FOUND, error=True, command="npm run seed")
    t.run("Bash", "3 messages in the inbox", command="bd inbox list")
    t.run("Bash", "Seeded 12 users", command="npm run seed")
    result = t.extract()
    assert [n.summary for n in of_type(result, "SOLUTION") if not n.suppressed] == []
    assert " after " not in only(result, "SOLUTION").summary


def test_a_command_that_acts_in_between_is_never_the_credit() -> None:
    t = Transcript()
    t.run("Bash", NOT_FOUND, error=True, command="npm run seed")
    t.run("Bash", "Applied 3 migrations", command="npm run migrate")
    t.run("Bash", "Seeded 12 users", command="npm run seed -- --force")
    fix = only(t.extract(), "SOLUTION")
    assert (
        fix.suppressed
        == "another command ran in between (`npm run migrate`): what fixed it is not clear"
    )
    assert " after " not in fix.summary


def test_a_rewritten_command_line_is_not_credited_word_by_word() -> None:
    t = Transcript()
    failed = 'docker compose run --rm -e HOME=/tmp -e CI=1 -u 1000 tests sh -c "pytest -q"'
    worked = 'docker compose run --rm app sh -c "cd /src && python -m pytest -q"'
    denied = "sh: 1: pytest: Permission denied\nError: exit status 126"
    t.run("Bash", denied, error=True, command=failed)
    t.run("Bash", "12 passed in 3.1s", command=worked)
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed
    assert " after " not in fix.summary


def test_more_than_three_named_changes_are_a_rewrite() -> None:
    doubt = tweak_doubt(
        "deploy push --env staging --region eu",
        "deploy push --env prod --region us --canary --wait",
    )
    assert doubt == "the command was rewritten (4 changes): which one fixed it is not clear"
    assert tweak_doubt("deploy push --env staging", "deploy push --env prod --wait") == ""
    assert tweak_doubt("deploy --env staging", "deploy --env prod --region us --wait") == ""


def test_a_change_the_words_do_not_show_is_not_credited_to_the_flag_that_does() -> None:
    # The real fix was quoting the path in the step before; `--no-verify` only shows up.
    t = Transcript()
    failed = "git add src/(auth)/page.tsx && git commit -m 'fix: login'"
    worked = "git add 'src/(auth)/page.tsx' && git commit --no-verify -m 'fix: login'"
    syntax = "bash: syntax error near unexpected token `('\nerror: pathspec did not match"
    t.run("Bash", syntax, error=True, command=failed)
    t.run("Bash", "[main 1a2b3c4] fix: login\n 1 file changed", command=worked)
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed.startswith("the command line changed beyond the flags named")
    assert " after " not in fix.summary


@pytest.mark.parametrize(
    ("failed", "worked", "credited"),
    [
        # how the output is kept or cut is not a change to the command
        ("npm run build 2>&1 | tail -20", "npm run build --verbose 2>&1 | head -50", True),
        ("npx tsc --noEmit", "npx tsc --noEmit --skipLibCheck > /tmp/out.txt", True),
        # another step in front, a quoting change, a changed inline script: not named
        ("npx tsc --noEmit", "cd web && npx tsc --noEmit --skipLibCheck", False),
        ('psql -c "SELECT 1 FROM a"', 'psql -c "SELECT 1 FROM b" --no-psqlrc', False),
        ("make test ARGS=a", "make test ARGS=b", True),
        # another subcommand from there on is another command
        ('gh pr create --title "x"', 'gh pr edit 6689 --title "x"', False),
        # another script run by the same interpreter is another program
        ("bash scripts/setup.sh --ci", "bash scripts/bootstrap.sh --ci", False),
        # a run that only asks for help ran nothing
        ("bd list --wisp", "bd list --help", False),
    ],
)
def test_only_a_fully_named_difference_is_credited(
    failed: str, worked: str, credited: bool
) -> None:
    assert (tweak_doubt(failed, worked) == "") is credited


# ------------------------------------------------------------------------- (c) installs


def test_an_install_of_the_package_the_error_named_is_credited() -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'yaml'",
          error=True, command="python scripts/render.py")  # fmt: skip
    t.run("Bash", "Successfully installed pyyaml-6.0.2", command="pip install pyyaml")
    t.run("Bash", "rendered 4 pages", command="python scripts/render.py")
    (fix,) = pending_fixes(t)
    assert "after running `pip install pyyaml`" in fix


def test_an_install_the_error_never_asked_for_is_not_credited() -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\nKeyError: 'DATABASE_URL'",
          error=True, command="python scripts/render.py")  # fmt: skip
    t.run("Bash", "Successfully installed python-dotenv-1.0.1", command="pip install python-dotenv")
    t.run("Bash", "rendered 4 pages", command="python scripts/render.py")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed.startswith("an install ran in between that the error never asked for")
    assert " after " not in fix.summary


def test_an_install_of_another_package_than_the_missing_one_is_not_credited() -> None:
    t = Transcript()
    t.run("Bash", "error TS2307: Cannot find module 'zod' or its corresponding type declarations.",
          error=True, command="npx tsc --noEmit")  # fmt: skip
    t.run("Bash", "added 1 package in 2s", command="npm install valibot")
    t.run("Bash", "", command="npx tsc --noEmit")
    assert pending_fixes(t) == []


# ---------------------------------------------------------------------------- (b) edits


def test_an_edit_in_between_is_credited_with_its_file_and_gist() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nError: Cannot read config: unknown key `outDir`", error=True,
          command="npm run build")  # fmt: skip
    t.run("Edit", "The file /w/app/build.config.json has been updated.",
          file_path="/w/app/build.config.json", old_string='"outDir": "dist"',
          new_string='"outputDir": "dist"')  # fmt: skip
    t.run("Bash", "Done in 2.1s", command="npm run build")
    (fix,) = pending_fixes(t)
    assert fix.startswith(
        '`npm run build` succeeds after editing `build.config.json` (`"outDir": "dist"` →'
        ' `"outputDir": "dist"`)'
    )


@pytest.mark.parametrize(
    "step",
    [
        "git add 'src/(auth)/page.tsx'",
        "cd packages/web",
        "mv .env.example .env",
        "python3 -c \"open('cfg.ini','w').write('[db]')\"",
        "echo 'DEBUG=1' > .env.local",
        "sleep 20",
    ],
)
def test_a_small_command_that_changes_the_state_blocks_the_tweaks_credit(step: str) -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nerror: hook failed: lint-staged found no staged files",
          error=True, command="git commit -m 'fix: login'")  # fmt: skip
    t.run("Bash", "", command=step)
    t.run("Bash", "[main 1a2b3c4] fix: login", command="git commit --no-verify -m 'fix: login'")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed.startswith("another command ran in between")
    assert " after " not in fix.summary


@pytest.mark.parametrize(
    "step", ["ls -la src", "git status --short", "cat package.json | head -20", "pwd", "echo $PATH"]
)
def test_a_small_command_that_only_looks_leaves_the_tweaks_credit(step: str) -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nerror: hook failed: lint-staged found no staged files",
          error=True, command="git commit -m 'fix: login'")  # fmt: skip
    t.run("Bash", "ok", command=step)
    t.run("Bash", "[main 1a2b3c4] fix: login", command="git commit --no-verify -m 'fix: login'")
    fix = only(t.extract(), "SOLUTION")
    assert "succeeds after adding `--no-verify`" in fix.summary


def test_another_program_in_the_place_of_one_the_error_said_is_missing_is_credited() -> None:
    failed = "kubectl -n api exec api-1 -- curl -s http://localhost:8080/health"
    worked = "kubectl -n api exec api-1 -- wget -qO- http://localhost:8080/health"
    assert tweak_doubt(failed, worked, missing="curl") == ""
    # the same swap when the error named nothing missing is another command, not a fix
    assert tweak_doubt(failed, worked).startswith("the retry ran another command")
    assert tweak_doubt(failed, worked, missing="jq").startswith("the retry ran another command")


def test_an_edit_of_a_note_or_doc_the_error_never_named_is_not_credited() -> None:
    t = Transcript()
    t.run("Bash", "Exit code 1\nError: Cannot read config: unknown key `outDir`", error=True,
          command="npm run build")  # fmt: skip
    t.run("Edit", "The file /w/app/NOTES.md has been updated.", file_path="/w/app/NOTES.md",
          old_string="- [ ] build", new_string="- [x] build")  # fmt: skip
    t.run("Bash", "Done in 2.1s", command="npm run build")
    fix = only(t.extract(), "SOLUTION")
    assert fix.suppressed == "passed again with nothing changed in between"
    assert "NOTES.md" not in fix.summary


def test_an_edit_of_a_doc_the_error_named_is_credited() -> None:
    t = Transcript()
    lint = "Exit code 1\ndocs/setup.md:12 MD040/fenced-code-language Code blocks need a language"
    t.run("Bash", lint, error=True, command="npx markdownlint docs")
    t.run("Edit", "The file /w/docs/setup.md has been updated.", file_path="/w/docs/setup.md",
          old_string="```\nmake", new_string="```sh\nmake")  # fmt: skip
    t.run("Bash", "", command="npx markdownlint docs")
    fix = only(t.extract(), "SOLUTION")
    assert "after editing `setup.md`" in fix.summary
