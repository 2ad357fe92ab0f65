"""The relation proposal detail pane of the review queue: the pair, what accepting it would
add, the two skills' statuses, and the sessions that used both (date, project, branch, first
prompt).

Skill names, projects and prompts are untrusted: they go into `Text` (never markup), one
neutralised line each.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import RelationProposal, SharedSession
from store.text import one_line
from widgets.hanging import hanging
from widgets.pattern_text import section, when
from widgets.proposal_table import WARN_STATUSES

EMPTY = "Select a proposal to see the sessions behind it."
TONES = {"pending": "warning", "accepted": "met", "rejected": "unmet"}


class ProposalDetailView(VerticalScroll, can_focus=True):
    """Shows one `RelationProposal` and its shared sessions (None: still loading); call
    `show`."""

    COMPONENT_CLASSES = {
        "proposal-detail--dim",
        "proposal-detail--met",
        "proposal-detail--unmet",
        "proposal-detail--warning",
    }

    DEFAULT_CSS = """
    ProposalDetailView { padding: 0 1; background: $surface; }
    ProposalDetailView > Static { width: 1fr; }
    ProposalDetailView > .proposal-detail--dim { color: $text-muted; }
    ProposalDetailView > .proposal-detail--met { color: $text-success; text-style: bold; }
    ProposalDetailView > .proposal-detail--unmet { color: $text-error; text-style: bold; }
    ProposalDetailView > .proposal-detail--warning { color: $text-warning; text-style: bold; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._proposal: RelationProposal | None = None
        self._sessions: list[SharedSession] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="proposal-detail-body")

    @property
    def proposal(self) -> RelationProposal | None:
        return self._proposal

    @property
    def sessions(self) -> list[SharedSession] | None:
        return self._sessions

    def show(
        self, proposal: RelationProposal | None, sessions: list[SharedSession] | None = None
    ) -> None:
        """Show `proposal`; `sessions` are its shared sessions (None: not loaded yet)."""
        same = (
            proposal is not None
            and self._proposal is not None
            and _key(proposal) == _key(self._proposal)
        )
        self._proposal = proposal
        self._sessions = sessions
        if self.is_mounted:
            self.query_one("#proposal-detail-body", Static).update(hanging(self.renderable()))
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        if self._proposal is None:
            return Text(EMPTY, style="dim")
        p = self._proposal
        return Group(
            self._heading(p),
            self._statuses(p),
            section(f"Used together in {p.shared} sessions"),
            *self._session_lines(p),
        )

    def _style(self, suffix: str) -> Style:
        return self.get_component_rich_style(f"proposal-detail--{suffix}")

    def _heading(self, p: RelationProposal) -> Text:
        out = Text()
        out.append(one_line(p.status, 20), self._style(TONES.get(p.status, "dim")))
        out.append(" · ")
        out.append(one_line(p.source_name, 80), Style(bold=True))
        out.append(" often_used_with ", self._style("dim"))
        out.append(one_line(p.target_name, 80), Style(bold=True))
        out.append(f"\nproposed {when(p.proposed_at)} from co-usage", self._style("dim"))
        if p.decided_at:
            out.append(
                f"\n{one_line(p.status, 20)} {when(p.decided_at)}"
                f" by {one_line(p.decided_by, 120) or 'unknown'}",
                self._style("dim"),
            )
        if p.reason:
            out.append("\nreason: ", self._style("dim"))
            out.append(one_line(p.reason, 400))
        if p.status == "pending":
            out.append(
                "\nAccepting adds the relation (origin: computed); rejecting keeps the pair"
                " from being proposed again.",
                self._style("dim"),
            )
        return out

    def _statuses(self, p: RelationProposal) -> Text:
        out = Text("\n")
        for name, status in ((p.source_name, p.source_status), (p.target_name, p.target_status)):
            out.append(f"{one_line(name, 60)}: ")
            tone = self._style("warning") if status in WARN_STATUSES else Style()
            out.append(one_line(status, 20) or "?", tone)
            out.append("   ")
        return out

    def _session_lines(self, p: RelationProposal) -> list[Text]:
        if self._sessions is None:
            return [Text("loading the sessions…", self._style("dim"))]
        if not self._sessions:
            return [Text("(none of them is in the library any more)", self._style("dim"))]
        lines = []
        for s in self._sessions:
            line = Text()
            line.append(f"{when(s.started_at) if s.started_at else '?':<16} ", self._style("dim"))
            line.append(f"{one_line(s.project, 40) or '?'}")
            if s.branch:
                line.append(f" @ {one_line(s.branch, 30)}", self._style("dim"))
            line.append(f"  {one_line(s.session_id[:8], 8)}", self._style("dim"))
            if s.title:
                line.append("\n    ")
                line.append(one_line(s.title, 160))
            lines.append(line)
        if p.shared > len(self._sessions):
            more = p.shared - len(self._sessions)
            lines.append(Text(f"… and {more} more", self._style("dim")))
        return lines


def _key(p: RelationProposal) -> tuple[str, str]:
    return (p.source_name, p.target_name)
