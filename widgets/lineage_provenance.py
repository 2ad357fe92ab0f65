"""A skill's provenance as a tree: skill ← draft ← pattern ← sessions ← nodes for a graduated
skill (read bottom-up: what the skill was learned from), the sessions that used it for any
skill. Enter on a node, a session, the pattern or the skill asks to open it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from store.models import Lineage, Node, ProvenanceSession
from store.text import one_line
from widgets.keys import bind
from widgets.lineage_text import STATUS_STYLES, when

#: Node type → (glyph, style), as the Sessions DAG draws them.
NODE_LOOK: dict[str, tuple[str, str]] = {
    "HYPOTHESIS": ("?", "magenta"),
    "INVESTIGATION": ("…", "blue"),
    "DISCOVERY": ("!", "bold blue"),
    "PIVOT": ("↪", "bold yellow"),
    "DEAD_END": ("✗", "bold red"),
    "SOLUTION": ("✓", "bold green"),
    "CONTEXT_LOAD": ("≡", "dim"),
}
#: What enter opens, by item kind.
OPENS = {
    "node": "the node in its session's graph",
    "session": "the session",
    "pattern": "the pattern",
    "skill": "the skill in the catalog",
}


@dataclass(frozen=True)
class ProvenanceItem:
    """What a tree line stands for."""

    kind: str  # "skill" | "draft" | "pattern" | "session" | "node" | "note"
    key: str  # skill id, draft id, pattern id, session id, node id ("" for a note)
    node: Node | None = None


class LineageProvenance(Tree[ProvenanceItem]):
    """The provenance chain of one skill; call `show`.

    | Key | Action |
    | --- | --- |
    | up / k, down / j | move |
    | enter | open the node (Sessions DAG), session, pattern or skill under the cursor |
    | space | fold or unfold a branch |
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        bind("up", "cursor_up", "Up", show=False, id="provenance.up", tooltip="Previous line"),
        bind("down", "cursor_down", "Down", show=False, id="provenance.down", tooltip="Next line"),
        bind(
            "fold",
            "toggle_node",
            "Fold",
            show=False,
            id="provenance.fold",
            tooltip="Fold or unfold the branch under the cursor",
        ),
        bind(
            "open",
            "select_cursor",
            "Open",
            show=False,
            id="provenance.open",
            tooltip="Open the node in its session's graph (or the session, pattern, skill)",
        ),
    ]

    DEFAULT_CSS = """
    LineageProvenance { background: $surface; padding: 0 1; }
    """

    @dataclass
    class Chosen(Message):
        """Enter was pressed on a line that can be opened."""

        tree: LineageProvenance
        item: ProvenanceItem

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(
            Text("No skill."), ProvenanceItem("note", ""), name=name, id=id, classes=classes
        )
        self.auto_expand = False  # enter opens; space folds
        self.show_root = True
        self.guide_depth = 3

    def show(self, lineage: Lineage | None) -> None:
        """Draw the provenance of `lineage` (None: nothing chosen)."""
        self.clear()
        if lineage is None:
            self.root.set_label(Text("No skill.", style="dim"))
            self.root.data = ProvenanceItem("note", "")
            return
        self.root.set_label(_skill_label(lineage))
        self.root.data = ProvenanceItem("skill", str(lineage.skill_id))
        p = lineage.provenance
        if p.origin == "graduated":
            self._graduated(lineage)
        else:
            self._note(self.root, p.note)
        if p.used_in_total:
            used = self.root.add(
                Text(f"used in {p.used_in_total} session{'s' if p.used_in_total != 1 else ''}"),
                ProvenanceItem("note", ""),
                expand=p.origin != "graduated",
            )
            for session in p.used_in:
                self._session(used, session)
            if p.used_in_total > len(p.used_in):
                self._note(used, f"… {p.used_in_total - len(p.used_in)} more")
        self.root.expand()
        self.move_cursor(self.root)

    def items(self) -> list[ProvenanceItem]:
        """Every line's item, depth first (for tests and the status line)."""
        found: list[ProvenanceItem] = []

        def walk(node: TreeNode[ProvenanceItem]) -> None:
            if node.data is not None:
                found.append(node.data)
            for child in node.children:
                walk(child)

        walk(self.root)
        return found

    def move_to(self, kind: str, key: str) -> bool:
        """Put the cursor on the first line for (`kind`, `key`), unfolding what hides it."""

        def find(node: TreeNode[ProvenanceItem]) -> TreeNode[ProvenanceItem] | None:
            if node.data is not None and (node.data.kind, node.data.key) == (kind, key):
                return node
            for child in node.children:
                hit = find(child)
                if hit is not None:
                    return hit
            return None

        target = find(self.root)
        if target is None:
            return False
        parent = target.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent
        self.move_cursor(target)
        return True

    # -- building ------------------------------------------------------------------

    def _graduated(self, lineage: Lineage) -> None:
        p = lineage.provenance
        parent = self.root
        if p.draft is not None:
            text = Text.assemble(("← draft ", "dim"))
            text.append(one_line(p.draft.draft_id, 40), style="bold")
            text.append(f"  {p.draft.status}")
            if p.draft.decided_by:
                text.append(f" by {one_line(p.draft.decided_by, 60)} {p.draft.decided_at[:10]}")
            parent = parent.add(text, ProvenanceItem("draft", p.draft.draft_id), expand=True)
        pattern_id = p.pattern.pattern_id if p.pattern else p.metadata.get("librarian-pattern", "")
        text = Text.assemble(("← pattern ", "dim"))
        text.append(one_line(pattern_id or "?", 40), style="bold")
        if p.pattern is not None:
            text.append("  ")
            text.append(one_line(p.pattern.title, 120))
            text.append(
                f"  ({p.pattern.kind}, {p.pattern.status}, {p.pattern.sessions} sessions,"
                f" confidence {p.pattern.confidence:.2f})",
                style="dim",
            )
        else:
            text.append("  (not in this library)", style="dim")
        kind = "pattern" if p.pattern is not None else "note"
        parent = parent.add(text, ProvenanceItem(kind, pattern_id), expand=True)
        for session in p.sessions:
            self._session(parent, session)
        for node_id in p.missing_nodes:
            self._note(parent, f"node {one_line(node_id, 40)} (not in this library)")

    def _session(self, parent: TreeNode[ProvenanceItem], session: ProvenanceSession) -> None:
        text = Text.assemble(("← session ", "dim"))
        text.append(one_line(session.session_id[:8] or "?", 40), style="bold")
        if session.known:
            text.append(f"  {one_line(session.project, 60)}  {when(session.started_at)}")
            if session.title:
                text.append("  ")
                text.append(one_line(session.title, 100), style="italic")
        else:
            text.append("  (not in this library)", style="dim")
        kind = "session" if session.known else "note"
        branch = parent.add(
            text,
            ProvenanceItem(kind, session.session_id),
            expand=True,
            allow_expand=bool(session.nodes),
        )
        for node in session.nodes:
            glyph, style = NODE_LOOK.get(node.type, ("·", ""))
            label = Text.assemble((f"{glyph} ", style))
            label.append(f"{one_line(node.type, 14):<13}", style=style)
            label.append(" ")
            label.append(one_line(node.summary, 160))
            label.append(f"  [{one_line(node.status, 12)}]", style="dim")
            branch.add_leaf(label, ProvenanceItem("node", node.node_id, node))

    def _note(self, parent: TreeNode[ProvenanceItem], note: str) -> None:
        parent.add_leaf(Text(one_line(note, 300), style="dim"), ProvenanceItem("note", ""))

    # -- events --------------------------------------------------------------------

    def on_tree_node_selected(self, event: Tree.NodeSelected[ProvenanceItem]) -> None:
        item = event.node.data
        if item is not None and item.kind in OPENS:
            event.stop()
            self.post_message(self.Chosen(self, item))


def _skill_label(lineage: Lineage) -> Text:
    text = Text.assemble(("● ", STATUS_STYLES.get(lineage.status, "")))
    text.append(one_line(lineage.name, 80), style="bold")
    text.append(f"  {lineage.status}", style=STATUS_STYLES.get(lineage.status, ""))
    text.append(f"  v{lineage.current_version}", style="dim")
    return text
