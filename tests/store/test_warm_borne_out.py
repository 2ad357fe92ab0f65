"""Two DISCOVERY shapes held-out judges rejected (issue 11): a cause the agent states after
changing code ("The issue was that …": its account of its own change) that the tool output
does not bear out, and a linter's or compiler's finding copied out of its report (a file
and line, then the message)."""

from __future__ import annotations

import pytest

from store.ingest import shapes
from tests.store.test_warm import Transcript, of_type, only

CAUSE = (
    "The issue was that `render_invoice` reads `TAX_RATE` from `settings.toml`, which the"
    " staging image does not ship."
)


def _edit(t: Transcript) -> None:
    t.run("Edit", "The file /w/billing/render.py has been updated.",
          file_path="/w/billing/render.py", old_string="rate = TAX",
          new_string="rate = env_rate()")  # fmt: skip


def test_a_stated_cause_only_its_subject_appears_for_is_kept_out() -> None:
    t = Transcript()
    t.run("Bash", "invoice.py:12: def render_invoice(order):", command="grep -n def invoice.py")
    _edit(t)
    t.say(CAUSE)
    node = only(t.extract(), "DISCOVERY")
    assert node.suppressed == "a cause it states that the tool output does not bear out"


def test_a_stated_cause_before_any_change_is_read_as_any_conclusion() -> None:
    t = Transcript()
    t.run("Bash", "invoice.py:12: def render_invoice(order):", command="grep -n def invoice.py")
    t.say(CAUSE)
    assert not only(t.extract(), "DISCOVERY").suppressed


def test_a_stated_cause_the_failing_commands_error_shows_is_kept() -> None:
    t = Transcript()
    t.run("Bash", "Traceback (most recent call last):\nFileNotFoundError: settings.toml",
          error=True, command="python -m billing.render 42")  # fmt: skip
    _edit(t)
    t.say(CAUSE)
    result = t.extract()
    # borne out: it reaches the queue, as the cause of the dead end it explains
    assert only(result, "DISCOVERY").suppressed == "the cause the DEAD_END before it states"
    dead = only(result, "DEAD_END")
    assert not dead.suppressed
    assert dead.summary.endswith(CAUSE)


def test_a_stated_cause_whose_things_the_output_shows_is_kept() -> None:
    t = Transcript()
    t.run("Bash", "render_invoice: TAX_RATE = settings['TAX_RATE']\nls: settings.toml: absent",
          command="make inspect")  # fmt: skip
    _edit(t)
    t.say(CAUSE)
    assert not only(t.extract(), "DISCOVERY").suppressed


def test_a_stated_cause_after_a_passing_rerun_still_needs_the_output_to_bear_it_out() -> None:
    t = Transcript()
    t.run("Bash", "--- FAIL: TestExport (0.2s)", error=True, command="go test ./export")
    t.run("Edit", "The file /w/export/rows.go has been updated.", file_path="/w/export/rows.go",
          old_string="w := out", new_string="w := bufio.NewWriter(f)")  # fmt: skip
    t.run("Bash", "ok  \texample/export\t0.3s", command="go test ./export")
    t.say("The problem was that `writeRows` reused the `bufio.Writer` of `exportAll`.")
    node = only(t.extract(), "DISCOVERY")
    assert node.suppressed


def test_a_finding_copied_from_a_linters_report_is_kept_out() -> None:
    t = Transcript()
    t.run("Bash", "server.go:224:2: QF1003: could use tagged switch on kind (staticcheck)",
          error=True, command="golangci-lint run ./...")  # fmt: skip
    t.say("`server.go:224` - Should use tagged switch on `kind` instead of an if-else chain.")
    assert not [n for n in of_type(t.extract(), "DISCOVERY") if not n.suppressed]


@pytest.mark.parametrize(
    ("summary", "copied"),
    [
        ("`server.go:224` - Should use tagged switch on `kind`.", True),
        ("src/api/client.ts:41:7: 'token' is possibly 'undefined'.", True),
        ("handlers.py:88 (E501) line too long", True),
        ("`server.go` dispatches on `kind` with an if-else chain at line 224.", False),
        ("The `TAX_RATE` in settings.toml:3 is read once at import.", False),
    ],
)
def test_what_counts_as_a_copied_finding(summary: str, copied: bool) -> None:
    assert shapes.copied_finding(summary) is copied


@pytest.mark.parametrize(
    ("sentence", "blames"),
    [
        ("The issue was that the cache ignores `LANG`.", True),
        ("The real problem is `pool_size`.", True),
        ("Root cause: `writeRows` reuses the writer.", True),
        ("So the issue here is the lock.", True),
        ("The cache ignores `LANG` since 2.0.", False),
        ("This issue was reported upstream.", False),
    ],
)
def test_what_counts_as_a_stated_cause(sentence: str, blames: bool) -> None:
    assert bool(shapes.CAUSE_FRAME.search(sentence)) is blames
