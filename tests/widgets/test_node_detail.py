"""NodeDetailView in a tiny harness app: fields, literal evidence, the marked transcript."""

from __future__ import annotations

import io
from dataclasses import replace

from rich.console import Console, Group
from rich.padding import Padding
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult

from store.models import ERASED, ContextMessage, Node
from widgets.node_detail import CONTEXT_LINES, NodeDetailView

HOSTILE = (
    "[bold red]x[/] and [link=http://e]x[/link]\n"
    "colour \x1b[31mred\x1b[0m, title \x1b]0;title\x07, bidi \u202eevil\u202c"
)


def node(**changes: object) -> Node:
    row = Node(
        node_id="n_1",
        session_id="7f3c2a1e-session",
        project="/home/dev/payments-api",
        type="DEAD_END",
        summary="The export timed out on the unindexed query.",
        evidence="FAILED tests/test_export.py - TimeoutError",
        file="7f3c2a1e-session.jsonl",
        line_start=5,
        line_end=5,
        confidence=0.6,
        scope="PROJECT",
        tier="warm",
        status="pending",
        developer="Dana <dana@example.com>",
        created_at="2026-11-02T09:01:00+00:00",
    )
    return replace(row, **changes)  # type: ignore[arg-type]


def message(index: int, text: str, **changes: object) -> ContextMessage:
    row = ContextMessage(
        index=index,
        file="7f3c2a1e-session.jsonl",
        line_start=index + 1,
        line_end=index + 1,
        role="assistant",
        kind="text",
        text=text,
        timestamp=f"2026-11-01T10:0{index}:00.000Z",
        is_error=False,
        in_range=False,
    )
    return replace(row, **changes)  # type: ignore[arg-type]


class DetailApp(App[None]):
    def compose(self) -> ComposeResult:
        yield NodeDetailView()


def shown(app: DetailApp) -> str:
    """The pane as plain text, wrapped at its width, trailing spaces dropped."""
    detail = app.query_one(NodeDetailView)
    console = Console(width=detail.scrollable_content_region.width, file=io.StringIO())
    with console.capture() as capture:
        console.print(detail.renderable())
    return "\n".join(line.rstrip() for line in capture.get().splitlines())


def texts(renderable: object) -> list[Text]:
    """Every `Text` in the pane, in order."""
    if isinstance(renderable, Text):
        return [renderable]
    if isinstance(renderable, Padding):
        return texts(renderable.renderable)
    if isinstance(renderable, Group):
        return [t for part in renderable.renderables for t in texts(part)]
    return []


async def test_fields_evidence_and_the_marked_transcript() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 50)) as pilot:
        detail = app.query_one(NodeDetailView)
        assert shown(app) == "Select a node to see its evidence."
        context = [
            message(3, "Let me run the export test.", kind="tool_use"),
            message(
                4,
                "FAILED tests/test_export.py - TimeoutError",
                role="user",
                kind="tool_result",
                is_error=True,
                in_range=True,
            ),
            message(5, "That didn't work."),
        ]
        detail.show(node(), context)
        await pilot.pause()
        text = shown(app)
        lines = text.splitlines()
        assert lines[0] == "DEAD_END  pending"
        assert lines[1] == "The export timed out on the unindexed query."
        assert "Confidence 0.60 · informativeness 0.00 · scope PROJECT · tier warm" in lines
        assert not any(line.startswith("Kept out") for line in lines)
        assert "Project    /home/dev/payments-api" in lines
        assert "Session    7f3c2a1e-session" in lines
        assert "Developer  Dana <dana@example.com>" in lines
        assert "Found      2026-11-02 09:01 · line 5 of 7f3c2a1e-session.jsonl" in lines
        assert "  FAILED tests/test_export.py - TimeoutError" in lines  # the evidence
        marked = [line for line in lines if line.startswith("▶")]
        assert marked == ["▶#4   user · tool_result  error  2026-11-01 10:04  line 5"]
        assert " #3   assistant · tool_use  2026-11-01 10:03  line 4" in lines
        assert "     That didn't work." in lines
        assert detail.node == node()
        assert detail.transcript == tuple(context)


async def test_the_evidence_message_is_highlighted() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 50)) as pilot:
        detail = app.query_one(NodeDetailView)
        detail.show(
            node(), [message(1, "ordinary words"), message(2, "quoted words", in_range=True)]
        )
        await pilot.pause()
        highlight = detail.get_component_rich_style("node-detail--evidence").bgcolor
        assert highlight is not None
        (quoted,) = [t for t in texts(detail.renderable()) if t.plain == "quoted words"]
        (ordinary,) = [t for t in texts(detail.renderable()) if t.plain == "ordinary words"]
        assert isinstance(quoted.style, Style)
        assert quoted.style.bgcolor == highlight
        assert isinstance(ordinary.style, Style)
        assert ordinary.style.bgcolor != highlight


async def test_decided_nodes_show_who_and_why() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 40)) as pilot:
        detail = app.query_one(NodeDetailView)
        detail.show(
            node(
                status="rejected",
                decided_at="2026-11-03T08:00:00+00:00",
                decided_by="Sam <sam@example.com>",
                reason="too vague",
            ),
            [],
        )
        await pilot.pause()
        lines = shown(app).splitlines()
        assert lines[0] == "DEAD_END  rejected"
        assert "Decided    2026-11-03 08:00 by Sam <sam@example.com>" in lines
        assert "Reason     too vague" in lines
        assert "no archived messages for this node" in lines


async def test_transcript_loading_and_long_messages() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 80)) as pilot:
        detail = app.query_one(NodeDetailView)
        detail.show(node())
        await pilot.pause()
        assert "loading…" in shown(app).splitlines()

        long = "\n".join(f"line {i}" for i in range(40))
        detail.show(node(), [message(1, long), message(2, long, in_range=True)])
        await pilot.pause()
        lines = shown(app).splitlines()
        assert lines.count("     line 0") == 2
        # Around the evidence: shortened; the evidence message itself: whole.
        assert lines.count(f"     line {CONTEXT_LINES - 1}") == 2
        assert lines.count(f"     line {CONTEXT_LINES}") == 1
        assert lines.count("     line 39") == 1
        assert "     […]" in lines


async def test_untrusted_text_is_shown_literally() -> None:
    app = DetailApp()
    async with app.run_test(size=(120, 50)) as pilot:
        detail = app.query_one(NodeDetailView)
        detail.show(
            node(summary=HOSTILE, evidence=HOSTILE, project=HOSTILE, developer=HOSTILE),
            [message(1, HOSTILE, in_range=True, role=HOSTILE)],
        )
        await pilot.pause()
        text = shown(app)
        assert "[bold red]x[/] and [link=http://e]x[/link]" in text
        assert "colour \\x1b[31mred\\x1b[0m, title \\x1b]0;title\\x07" in text
        assert "bidi <U+202E>evil<U+202C>" in text
        for raw in ("\x1b", "\x07", "\u202e"):
            assert raw not in text


async def test_nothing_to_show() -> None:
    app = DetailApp()
    async with app.run_test() as pilot:
        detail = app.query_one(NodeDetailView)
        detail.show(node(), [])
        detail.show(None)
        await pilot.pause()
        assert shown(app) == "Select a node to see its evidence."
        assert detail.node is None


async def test_a_forgotten_node_says_so_and_shows_no_transcript() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 40)) as pilot:
        detail = app.query_one(NodeDetailView)
        forgotten = node(
            status="forgotten",
            summary=ERASED,
            evidence=ERASED,
            decided_at="2026-11-03T10:00:00+00:00",
            decided_by="Dana <dana@example.com>",
            reason="a customer's name",
        )
        detail.show(forgotten, [message(4, "the quoted words", in_range=True)])
        await pilot.pause()
        text = shown(app)
        assert text.splitlines()[:2] == ["DEAD_END  forgotten", ERASED]
        assert "Forgotten  2026-11-03 10:00 by Dana <dana@example.com>" in text
        assert "Reason     a customer's name" in text
        assert "This node was forgotten (`librarian forget`)" in text
        assert "the quoted words" not in text
        assert "Transcript around the evidence" not in text


async def test_an_erased_message_is_marked_as_erased() -> None:
    app = DetailApp()
    async with app.run_test(size=(100, 40)) as pilot:
        detail = app.query_one(NodeDetailView)
        detail.show(node(), [message(3, ERASED), message(4, "kept words", in_range=True)])
        await pilot.pause()
        text = shown(app)
        assert "     [erased by `librarian forget`]" in text
        assert "     kept words" in text


async def test_a_suppressed_node_shows_why_it_was_kept_out_literally() -> None:
    app = DetailApp()
    async with app.run_test(size=(120, 40)) as pilot:
        detail = app.query_one(NodeDetailView)
        reason = "narration [bold]of[/bold] intent \x1b[31m, not a finding"
        detail.show(node(status="suppressed", informativeness=0.08, suppressed_reason=reason), [])
        await pilot.pause()
        lines = shown(app).splitlines()
        assert lines[0] == "DEAD_END  suppressed"
        assert "Confidence 0.60 · informativeness 0.08 · scope PROJECT · tier warm" in lines
        assert (
            "Kept out   below the knowledge bar: narration [bold]of[/bold] intent \\x1b[31m,"
            " not a finding"
        ) in lines
        assert "\x1b" not in shown(app)

        detail.show(node(informativeness=0.08, suppressed_reason="narration of intent"), [])
        await pilot.pause()
        lines = shown(app).splitlines()
        assert lines[0] == "DEAD_END  pending"
        assert "Kept out   was below the knowledge bar (narration of intent), promoted" in lines
