"""The Team screen's panel: the hub and this library's standing with it — reachable or not,
who you are there, what waits for you as a reviewer, the push queue and the pull cursor, your
items' verdicts in the hub, what was pulled, and the last push or pull.

Names, hosts and problems can come from the hub or the config: they go into `Text`, literally.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import TeamStatus
from store.text import one_line, plural

EMPTY = "Reading the team state…"


def _when(stamp: str) -> str:
    return stamp[:19].replace("T", " ") if stamp else "never"


def status_renderable(s: TeamStatus, last: tuple[str, ...] = ()) -> RenderableType:
    """The panel's content for a status and the lines of the last push or pull."""
    parts: list[RenderableType] = []
    if not s.configured:
        parts.append(Text("Team mode is off.", style="bold"))
        hint = s.problem.removeprefix("team mode is off: ")
        parts.append(Text(one_line(hint[:1].upper() + hint[1:], 300)))
        parts.append(
            Text(f"{plural(s.queued, 'event')} would be pushed once a hub is set.", style="dim")
        )
        return Group(*parts)
    head = Text()
    head.append("hub ", style="bold")
    head.append(one_line(s.hub, 120))
    if s.reachable:
        head.append("  reachable", style="green")
        head.append(f"  ({s.milliseconds:.0f} ms)", style="dim")
    else:
        head.append("  unreachable", style="red bold")
    parts.append(head)
    if not s.reachable:
        parts.append(Text(one_line(s.problem, 300), style="red"))
    else:
        who = Text()
        who.append("you ", style="bold")
        who.append(one_line(s.user, 63))
        who.append(f"  {'reviewer' if s.reviewer else 'contributor'}", style="cyan")
        who.append(
            f"  ·  hub schema {s.hub_schema}  ·  {s.libraries} libraries, {s.hub_events:,} events",
            style="dim",
        )
        parts.append(who)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    if s.reachable:
        waiting = Text(f"{s.waiting_for_me:,}", style="bold yellow" if s.waiting_for_me else "")
        waiting.append(f"  (staged in all: {s.staged:,})", style="dim")
        table.add_row("waiting for you", waiting if s.reviewer else Text("— (not a reviewer)"))
        mine = ", ".join(f"{v:,} {k}" for k, v in sorted(s.mine_in_hub.items())) or "none"
        table.add_row("your items in the hub", Text(mine))
    table.add_row(
        "push queue",
        Text(
            f"{plural(s.queued, 'event')}  ·  last push {_when(s.pushed_at)} (through event"
            f" {s.push_seq:,})"
        ),
    )
    behind = f"  ·  up to {plural(s.behind, 'newer hub event')}" if s.reachable and s.behind else ""
    table.add_row("pull", Text(f"last {_when(s.pulled_at)} (cursor {s.pull_cursor:,}){behind}"))
    table.add_row(
        "team items here",
        Text(
            f"{s.received:,} from teammates, {sum(s.own.values()):,} of yours;"
            f" {plural(s.conflicts, 'overruled decision')} on record"
        ),
    )
    if s.library_id:
        table.add_row("library", Text(f"{s.library_id}  ·  head anchored at event {s.anchored:,}"))
    parts.append(Text(""))
    parts.append(table)
    if last:
        parts.append(Text(""))
        parts.append(Text("last run", style="bold"))
        parts += [Text(one_line(line, 300)) for line in last]
    return Group(*parts)


class TeamStatusView(VerticalScroll, can_focus=True):
    """Shows a `TeamStatus` (and the last run's lines); call `show`."""

    DEFAULT_CSS = """
    TeamStatusView { padding: 0 1; background: $surface; height: 1fr; }
    TeamStatusView > Static { width: 1fr; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.status: TeamStatus | None = None
        self.last: tuple[str, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="team-status-body")

    def show(self, status: TeamStatus | None = None, last: tuple[str, ...] | None = None) -> None:
        """Draw `status` (default: the one shown) with `last` lines (default: the ones shown)."""
        if status is not None:
            self.status = status
        if last is not None:
            self.last = last
        if self.status is not None:
            self.query_one("#team-status-body", Static).update(
                status_renderable(self.status, self.last)
            )
