"""The node detail pane: a reasoning node's fields, its evidence, and the transcript around it.

Summaries, evidence, transcript text and the knowledge bar's reasons are untrusted: they go
into `Text` (never markup) after their control characters are neutralised.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import ERASED, NODE_TYPES, ContextMessage, Node
from store.text import neutralise, one_line

#: The component class that colours each node type.
TYPE_CLASSES: dict[str, str] = {
    t: f"node-detail--{t.lower().replace('_', '-')}" for t in NODE_TYPES
}
MAX_EVIDENCE_CHARS = 4000
#: Lines shown of a message around the evidence (the evidence message is shown whole).
CONTEXT_LINES = 8
CONTEXT_CHARS = 1200
INDENT = "     "
EMPTY = "Select a node to see its evidence."
FORGOTTEN = (
    "This node was forgotten (`librarian forget`): its summary, evidence and review texts are"
    " erased for good. What was erased, when, by whom and why is in the event log."
)


class NodeDetailView(VerticalScroll, can_focus=True):
    """Shows one `Node` and the `ContextMessage`s around its evidence; call `show`."""

    COMPONENT_CLASSES = {
        *TYPE_CLASSES.values(),
        "node-detail--label",
        "node-detail--dim",
        "node-detail--evidence",
        "node-detail--error",
        "node-detail--status",
        "node-detail--suppressed",
    }

    DEFAULT_CSS = """
    NodeDetailView { padding: 0 1; background: $surface; }
    NodeDetailView > Static { width: 1fr; }
    NodeDetailView > .node-detail--label { text-style: bold; }
    NodeDetailView > .node-detail--dim { color: $text-muted; }
    NodeDetailView > .node-detail--evidence { background: $warning 15%; }
    NodeDetailView > .node-detail--error { color: $text-error; text-style: bold; }
    NodeDetailView > .node-detail--status { color: $text-warning; text-style: bold; }
    NodeDetailView > .node-detail--suppressed { color: $text-warning; }
    NodeDetailView > .node-detail--hypothesis { color: $text-accent; text-style: bold; }
    NodeDetailView > .node-detail--investigation { color: $text-primary; text-style: bold; }
    NodeDetailView > .node-detail--discovery { color: $text-primary; text-style: bold; }
    NodeDetailView > .node-detail--pivot { color: $text-warning; text-style: bold; }
    NodeDetailView > .node-detail--dead-end { color: $text-error; text-style: bold; }
    NodeDetailView > .node-detail--solution { color: $text-success; text-style: bold; }
    NodeDetailView > .node-detail--context-load { color: $text-muted; text-style: bold; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._node: Node | None = None
        self._transcript: tuple[ContextMessage, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="node-detail-body")

    @property
    def node(self) -> Node | None:
        return self._node

    @property
    def transcript(self) -> tuple[ContextMessage, ...] | None:
        """The messages shown around the evidence; None while they are being loaded."""
        return self._transcript

    def show(self, node: Node | None, transcript: Sequence[ContextMessage] | None = None) -> None:
        """Show `node` and the messages around its evidence (`transcript`: None while they
        are being loaded, empty when none were archived)."""
        same = node is not None and self._node is not None and node.node_id == self._node.node_id
        self._node = node
        self._transcript = None if transcript is None else tuple(transcript)
        if self.is_mounted:
            self.query_one("#node-detail-body", Static).update(self.renderable())
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        """The whole pane: wrapped lines keep their indentation."""
        if self._node is None:
            return Text(EMPTY, style="dim")
        node = self._node
        return Group(
            self._title(node),
            self._fields(node),
            *self._evidence(node),
            *(self._messages(self._transcript) if node.status != "forgotten" else ()),
        )

    # -- sections ------------------------------------------------------------------

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name)

    def _title(self, node: Node) -> Text:
        out = Text()
        out.append(one_line(node.type, 24), self._style(TYPE_CLASSES.get(node.type, "")))
        out.append("  ")
        status = {
            "pending": "node-detail--status",
            "suppressed": "node-detail--status",
            "forgotten": "node-detail--error",
        }.get(node.status, "node-detail--dim")
        out.append(one_line(node.status, 20), self._style(status))
        out.append("\n")
        out.append(neutralise(node.summary, keep_newlines=False) or "(no summary)", "bold")
        out.append("\n")
        return out

    def _fields(self, node: Node) -> Table:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style=self._style("node-detail--label"), no_wrap=True, min_width=10)
        grid.add_column(ratio=1)
        grid.add_row(
            "Confidence",
            Text(
                f"{node.confidence:.2f} · informativeness {node.informativeness:.2f}"
                f" · scope {one_line(node.scope, 20)} · tier {one_line(node.tier, 20)}"
            ),
        )
        if node.suppressed_reason:
            grid.add_row("Kept out", self._kept_out(node))
        grid.add_row("Project", Text(one_line(node.project, 300)))
        grid.add_row("Session", Text(one_line(node.session_id, 80)))
        grid.add_row("Developer", Text(one_line(node.developer, 200) or "unknown"))
        grid.add_row(
            "Found",
            Text(
                f"{_when(node.created_at)} · {_lines(node.line_start, node.line_end)}"
                f" of {one_line(node.file, 200)}"
            ),
        )
        if node.decided_at:
            by = one_line(node.decided_by, 200) or "unknown"
            label = "Forgotten" if node.status == "forgotten" else "Decided"
            grid.add_row(label, Text(f"{_when(node.decided_at)} by {by}"))
        if node.reason:
            grid.add_row("Reason", Text(one_line(node.reason, 1000)))
        if node.merged_into:
            grid.add_row("Merged into", Text(one_line(node.merged_into, 80)))
        if node.superseded_by:
            grid.add_row("Superseded by", Text(one_line(node.superseded_by, 80)))
        if node.retrieval_count:
            last = _when(node.last_retrieved_at)
            grid.add_row("Retrieved", Text(f"{node.retrieval_count}× (last {last})"))
        return grid

    def _kept_out(self, node: Node) -> Text:
        """Why the knowledge bar kept the node out of the queue (and whether it still is)."""
        reason = one_line(node.suppressed_reason, 1000)
        if node.status == "suppressed":
            return Text(
                f"below the knowledge bar: {reason}", self._style("node-detail--suppressed")
            )
        return Text(
            f"was below the knowledge bar ({reason}), promoted", self._style("node-detail--dim")
        )

    def _evidence(self, node: Node) -> list[RenderableType]:
        parts: list[RenderableType] = [Text("\nEvidence (verbatim)", "bold underline")]
        if node.status == "forgotten" or node.evidence == ERASED:
            parts.append(Padding(Text(FORGOTTEN, self._style("node-detail--error")), (0, 0, 0, 2)))
            return parts
        evidence = Text(
            neutralise(node.evidence[:MAX_EVIDENCE_CHARS]), self._style("node-detail--evidence")
        )
        parts.append(Padding(evidence, (0, 0, 0, 2)))
        if len(node.evidence) > MAX_EVIDENCE_CHARS:
            cut = f"[cut at {MAX_EVIDENCE_CHARS:,} characters]"
            parts.append(Padding(Text(cut, "italic dim"), (0, 0, 0, 2)))
        return parts

    def _messages(self, context: Sequence[ContextMessage] | None) -> list[RenderableType]:
        parts: list[RenderableType] = [Text("\nTranscript around the evidence", "bold underline")]
        dim = self._style("node-detail--dim")
        if context is None:
            parts.append(Text("loading…", dim))
        elif not context:
            parts.append(Text("no archived messages for this node", dim))
        for message in context or ():
            parts += self._message(message)
        return parts

    def _message(self, message: ContextMessage) -> list[RenderableType]:
        mark = self._style("node-detail--evidence") if message.in_range else Style()
        head = Text()
        head.append("▶" if message.in_range else " ", mark + self._style("node-detail--status"))
        head.append(f"#{message.index:<3} ", mark + self._style("node-detail--dim"))
        head.append(f"{one_line(message.role, 20)} · {one_line(message.kind, 20)}", mark)
        if message.is_error:
            head.append("  error", mark + self._style("node-detail--error"))
        head.append(
            f"  {_when(message.timestamp)}  {_lines(message.line_start, message.line_end)}",
            mark + self._style("node-detail--dim"),
        )
        if message.text == ERASED:
            erased = Text("[erased by `librarian forget`]", mark + self._style("node-detail--dim"))
            return [head, Padding(erased, (0, 0, 0, len(INDENT)))]
        lines, cut = _message_lines(message)
        body = Text("\n".join(lines), mark)
        if cut:
            body.append("\n[…]", self._style("node-detail--dim"))
        return [head, Padding(body, (0, 0, 0, len(INDENT)))]


def _message_lines(message: ContextMessage) -> tuple[list[str], bool]:
    """The message's text as neutralised lines, shortened unless it holds the evidence."""
    if message.in_range:
        return neutralise(message.text).split("\n"), False
    text = message.text[:CONTEXT_CHARS]
    lines = neutralise(text).split("\n")
    cut = len(message.text) > CONTEXT_CHARS or len(lines) > CONTEXT_LINES
    return lines[:CONTEXT_LINES], cut


def _lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}–{end}"


def _when(stamp: str) -> str:
    """`2026-11-02 09:00` from an ISO timestamp (shown as given when it is not one)."""
    text = one_line(stamp, 40)
    if len(text) >= 16 and text[10] == "T":
        return f"{text[:10]} {text[11:16]}"
    return text or "?"
