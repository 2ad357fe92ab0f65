"""PatternDetailView, DraftTable and DraftDetailView in tiny harness apps: the criteria
checklist with its numbers, steps with their evidence, a drafted SKILL.md shown literally with
its citations."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.message import Message

from store.models import Citation, Criterion, Draft, GraduationCheck, Pattern, Step
from widgets.draft_detail import DraftDetailView
from widgets.draft_table import DraftTable
from widgets.pattern_detail import PatternDetailView

HOSTILE = "[bold red]x[/] [link=http://e]y[/link] \x1b[31mred\x1b[0m \u202eevil\u202c"


def pattern(**changes: object) -> Pattern:
    row = Pattern(
        pattern_id="p_1",
        kind="strategy",
        polarity="key",
        title="Check the readiness probe before the rollout",
        summary="Three sessions found the probe timing out.",
        trigger="When new pods never become Ready.",
        steps=(
            Step("Read the probe events.", "n_1", "s-1", "s-1.jsonl", 4, 5),
            Step("Time the probe from inside the pod.", "n_2", "s-2", "s-2.jsonl", 9, 9),
        ),
        resolution="Raise the probe timeout.",
        severity="",
        scope="PROJECT",
        project="/home/dev/infra",
        classifier="rules",
        base_confidence=0.62,
        confidence=0.58,
        members=3,
        sessions=3,
        developers=2,
        first_seen="2026-10-01T09:00:00+00:00",
        last_seen="2026-10-20T10:30:00+00:00",
        status="active",
        retrieval_count=4,
        last_retrieved_at="2026-11-01T08:00:00+00:00",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


def criteria(unmet: str = "") -> tuple[Criterion, ...]:
    return (
        Criterion("sessions", unmet != "sessions", 3, 3, "3 distinct sessions; needs 3"),
        Criterion("retrieval", unmet != "retrieval", 1.33, 0.3, "4 retrievals = 1.33; needs 0.30"),
        Criterion("ratified", unmet != "ratified", 3, 3, "3 of 3 members approved"),
        Criterion("confidence", unmet != "confidence", 0.58, 0.4, "confidence 0.58; needs 0.40"),
    )


def draft(**changes: object) -> Draft:
    row = Draft(
        draft_id="d_1",
        pattern_id="p_1",
        name="check-the-readiness-probe",
        content=(
            "---\nname: check-the-readiness-probe\ndescription: [bold]probe[/] first\n---\n\n"
            "# Steps\n\n1. Read the probe events. [1]\n"
        ),
        citations=(Citation("[1]", "n_1", "s-1", "s-1.jsonl", 4, 5),),
        status="pending",
        created_at="2026-11-02T09:00:00+00:00",
        created_by="Dana <dana@example.com>",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


class Harness(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield PatternDetailView()
        yield DraftTable()
        yield DraftDetailView()

    def on_draft_table_highlighted(self, message: DraftTable.Highlighted) -> None:
        self.messages.append(message)

    def on_draft_table_selected(self, message: DraftTable.Selected) -> None:
        self.messages.append(message)


def plain(view: PatternDetailView | DraftDetailView) -> str:
    """The pane as plain text, wide enough that nothing wraps, trailing spaces dropped."""
    console = Console(width=200, file=io.StringIO(), color_system=None)
    with console.capture() as capture:
        console.print(view.renderable())
    return "\n".join(line.rstrip() for line in capture.get().splitlines())


async def test_pattern_fields_checklist_and_steps() -> None:
    app = Harness()
    async with app.run_test(size=(120, 60)) as pilot:
        view = app.query_one(PatternDetailView)
        assert plain(view) == "Select a pattern to see its criteria, steps and draft."
        view.show(pattern())  # the check is still loading
        await pilot.pause()
        lines = plain(view).splitlines()
        assert lines[0] == "Diagnostic strategy · key pattern  active"
        assert lines[1] == "Check the readiness probe before the rollout"
        assert lines[2] == "Three sessions found the probe timing out."
        assert "Scope      PROJECT · /home/dev/infra" in lines
        assert "Evidence   3 nodes from 3 sessions by 2 developers" in lines
        assert "Confidence 0.58 (base 0.62) · classified by rules" in lines
        assert "Retrieved  4× (last 2026-11-01 08:00)" in lines
        assert "checking…" in lines

        view.show(pattern(), GraduationCheck(pattern(), criteria("retrieval"), False, None, False))
        await pilot.pause()
        lines = plain(view).splitlines()
        assert "✓ Sessions   3 distinct sessions; needs 3" in lines
        assert "✗ Retrieval  4 retrievals = 1.33; needs 0.30" in lines
        assert "Not eligible yet: retrieval not met." in lines
        assert "When the pod" not in lines
        assert "When new pods never become Ready." in lines
        assert "1. Read the probe events." in lines
        assert "   node n_1 · s-1.jsonl lines 4–5" in lines
        assert "2. Time the probe from inside the pod." in lines
        assert "   node n_2 · s-2.jsonl line 9" in lines
        assert "Raise the probe timeout." in lines
        assert "Draft SKILL.md" not in lines

        view.show(pattern(), GraduationCheck(pattern(), criteria(), True, None, False))
        await pilot.pause()
        assert "Eligible: graduate drafts a SKILL.md into the review queue." in plain(view)

        # A check of another pattern (a late answer) is ignored.
        other = pattern(pattern_id="p_2")
        view.show(pattern(), GraduationCheck(other, criteria(), True, None, False))
        assert view.check is None


async def test_a_pattern_below_the_bar_says_why_it_is_not_served() -> None:
    app = Harness()
    flaw = "a strategy needs at least 2 concrete ordered steps: it has 1 [bold]x[/]"
    async with app.run_test(size=(120, 60)) as pilot:
        view = app.query_one(PatternDetailView)
        flawed = pattern(flaw=flaw)
        unmet = (Criterion("bar", False, 0.0, 1.0, flaw), *criteria())
        view.show(flawed, GraduationCheck(flawed, unmet, False, None, False))
        await pilot.pause()
        lines = plain(view).splitlines()
        assert lines[1] == "Check the readiness probe before the rollout"
        assert lines[2] == f"Not served: {flaw}"  # literally, markup and all
        assert f"✗ Bar        {flaw}" in lines
        assert "Not eligible yet: bar not met." in lines
        view.show(pattern())
        await pilot.pause()
        assert "Not served" not in plain(view)


async def test_pattern_draft_preview_and_revalidate() -> None:
    app = Harness()
    async with app.run_test(size=(120, 60)) as pilot:
        view = app.query_one(PatternDetailView)
        view.show(pattern(), GraduationCheck(pattern(), criteria(), False, draft(), False))
        await pilot.pause()
        text = plain(view)
        lines = text.splitlines()
        assert lines[0].endswith("draft")
        assert "A drafted SKILL.md waits for a reviewer in the review queue." in lines
        assert "pending · check-the-readiness-probe · d_1" in lines
        assert "drafted 2026-11-02 09:00 by Dana <dana@example.com>" in lines
        assert "  description: [bold]probe[/] first" in lines  # literal, indented
        assert "Citations (1)" in lines
        assert "[1] node n_1 · session s-1 · s-1.jsonl lines 4–5" in lines

        faded = pattern(status="graduated", confidence=0.2, skill_name="probe-first")
        view.show(faded, GraduationCheck(faded, criteria("confidence"), False, None, True))
        await pilot.pause()
        lines = plain(view).splitlines()
        assert lines[0].endswith("re-validate")
        assert "Re-validate: graduated into probe-first, but the pattern has decayed." in lines
        assert "Skill      probe-first" in lines


async def test_untrusted_pattern_and_draft_text_is_literal() -> None:
    app = Harness()
    async with app.run_test(size=(120, 60)) as pilot:
        view = app.query_one(PatternDetailView)
        hostile = pattern(
            title=HOSTILE,
            summary=HOSTILE,
            trigger=HOSTILE,
            steps=(Step(HOSTILE, "n_1", "s-1", HOSTILE, 1, 1),),
        )
        bad = draft(content=f"---\nname: x\n---\n{HOSTILE}\n", name=HOSTILE, reason=HOSTILE)
        view.show(hostile, GraduationCheck(hostile, criteria(), False, bad, False))
        await pilot.pause()
        text = plain(view)
        literal = "[bold red]x[/] [link=http://e]y[/link] \\x1b[31mred\\x1b[0m <U+202E>evil<U+202C>"
        assert text.count(literal) >= 5  # title, summary, trigger, step, SKILL.md
        assert not any(ch in text for ch in "\x1b\u202e")


async def test_draft_table_rows_busy_and_messages() -> None:
    app = Harness()
    async with app.run_test(size=(120, 30)) as pilot:
        table = app.query_one(DraftTable)
        table.focus()
        table.set_rows([draft(), draft(draft_id="d_2", name=HOSTILE, citations=())])
        await pilot.pause()
        header, first, second, *_ = [s.text for s in table.render_lines(Region(0, 0, 120, 4))]
        assert header.split() == ["skill", "cites", "pattern", "drafted", "by"]
        assert first.split()[:5] == ["✎", "check-the-readiness-probe", "1", "p_1", "2026-11-02"]
        assert "[bold red]x[/]" in second
        assert "\x1b" not in second
        table.set_busy("d_1")
        assert table.busy == frozenset({"d_1"})
        await pilot.press("down", "enter")
        assert [m.draft_id for m in app.messages if isinstance(m, DraftTable.Highlighted)][
            -1
        ] == "d_2"
        assert isinstance(app.messages[-1], DraftTable.Selected)
        table.set_rows([draft(draft_id="d_2")])  # d_1 was decided: its busy flag goes too
        assert table.busy == frozenset()


async def test_draft_detail_shows_the_checklist_and_the_skill_md() -> None:
    app = Harness()
    async with app.run_test(size=(120, 60)) as pilot:
        view = app.query_one(DraftDetailView)
        assert plain(view) == "Select a draft to read its SKILL.md."
        view.show(draft())  # the pattern's check is unknown
        await pilot.pause()
        lines = plain(view).splitlines()
        assert lines[0] == "pending · check-the-readiness-probe · d_1"
        assert "from pattern p_1" in lines
        assert "Graduation criteria" not in lines
        assert "SKILL.md (as it will be written)" in lines
        assert "  # Steps" in lines

        check = GraduationCheck(pattern(), criteria(), False, draft(), False)
        view.show(draft(), check)
        await pilot.pause()
        lines = plain(view).splitlines()
        assert "Graduation criteria" in lines
        assert (
            "Diagnostic strategy: Check the readiness probe before the rollout"
            "  (3 nodes, 3 sessions)"
        ) in lines
        assert "✓ Ratified   3 of 3 members approved" in lines
        assert view.draft == draft()
