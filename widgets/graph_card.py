"""The middle of the Graph screen: the centred skill — name and status in its colour, its
description, the blast radius counted, the graph problems that touch it (cycles, dangling
references, self-relations) and the way back (the skills it was reached from).

Everything from a SKILL.md is untrusted: it goes into `Text` after `one_line`/`neutralise`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import GraphFocus, GraphProblems
from store.text import neutralise, one_line, plural
from widgets.graph_list import dependencies_of
from widgets.graph_style import skill_label, status_style
from widgets.hanging import flush, hanging

EMPTY = "No skill to show yet: scan some skills (`librarian scan`)."


def radius_summary(focus: GraphFocus) -> str:
    """ "blast radius: N skills (M direct) · S sessions · P patterns · D drafts"."""
    radius = focus.radius
    skills = plural(focus.dependent_count, "skill")
    if not focus.complete:
        skills = f"{plural(focus.direct_count, 'skill')} direct, counting the rest…"
    else:
        skills += f" ({focus.direct_count:,} direct)"
    return " · ".join(
        [
            f"blast radius: {skills}",
            plural(len(radius.sessions), "session"),
            plural(len(radius.patterns), "pattern"),
            plural(len(radius.drafts), "draft"),
        ]
    )


def problem_lines(problems: GraphProblems) -> list[Text]:
    """One line per problem, literally: cycles, dangling references, self-relations, stable
    skills on proposed ones."""
    lines = []
    for cycle, knot in zip(problems.cycles, problems.knots, strict=True):
        path = " → ".join(one_line(n, 40) for n in (*cycle, cycle[0]))
        more = f" (a knot of {len(knot)})" if len(knot) > len(cycle) else ""
        lines.append(Text.assemble(("⟳ cycle: ", "bold red"), path + more))
    for r in problems.dangling:
        lines.append(
            Text.assemble(
                ("✗ dangling: ", "bold red"),
                f"{one_line(r.source, 40)} {r.type} {one_line(r.target, 40)}",
                (" (no such skill)", "dim"),
            )
        )
    for r in problems.self_loops:
        lines.append(
            Text.assemble(
                ("↺ self-relation: ", "bold yellow"),
                f"{one_line(r.source, 40)} {r.type} itself",
                (" (ignored)", "dim"),
            )
        )
    for u in problems.unproven:
        lines.append(
            Text.assemble(
                ("! unproven: ", "bold yellow"),
                f"{one_line(u.source, 40)} (stable) {u.relation} {one_line(u.target, 40)}",
                (f" ({u.target_status}: a stable skill cannot depend on it)", "dim"),
            )
        )
    return lines


class GraphCard(VerticalScroll, can_focus=False):
    """Shows one `GraphFocus` and the trail back; call `show`."""

    DEFAULT_CSS = """
    GraphCard { padding: 0 1; background: $surface; }
    GraphCard > Static { width: 1fr; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._focus: GraphFocus | None = None
        self._trail: tuple[str, ...] = ()
        self._waiting = "loading the graph…"

    def compose(self) -> ComposeResult:
        yield Static(self.renderable(), id="graph-card-body")

    @property
    def focus_shown(self) -> GraphFocus | None:
        return self._focus

    def show(self, focus: GraphFocus | None, trail: Sequence[str] = (), waiting: str = "") -> None:
        """Show `focus` (None: `waiting`, or that there is nothing to show); `trail` is the
        way back, most recent first."""
        self._focus = focus
        self._trail = tuple(trail)
        self._waiting = waiting
        if self.is_mounted:
            self.query_one("#graph-card-body", Static).update(hanging(self.renderable()))

    def renderable(self) -> RenderableType:
        focus = self._focus
        if focus is None:
            return Text(self._waiting or EMPTY, style="dim")
        title = skill_label(focus.name, focus.status, 120)
        title.stylize("bold")
        title.append_text(
            Text.assemble(
                "  ",
                (focus.status, status_style(focus.status)),
                f" · v{focus.version_no} · depends on {len(dependencies_of(focus))}",
                (" (missing)", "dim red") if focus.status == "missing" else "",
            )
        )
        parts: list[RenderableType] = [
            title,
            flush(Text(neutralise(focus.description[:600], keep_newlines=False), style="dim")),
            self._radius(focus),
        ]
        problems = problem_lines(focus.problems)
        if problems:
            parts += [Text("Graph problems", style="bold red"), *problems]
        elif focus.complete:
            parts += [Text("No cycle or dangling reference here.", style="dim")]
        if self._trail:
            back = " ← ".join(one_line(n, 30) for n in self._trail[:4])
            more = " …" if len(self._trail) > 4 else ""
            parts += [Text(""), Text.assemble(("back: ", "bold"), back + more, style="dim")]
        return Group(*parts)

    def _radius(self, focus: GraphFocus) -> Text:
        text = Text(radius_summary(focus))
        if focus.dependent_count:
            text.stylize("bold red" if focus.status != "stable" else "bold yellow")
        else:
            text.stylize("bold")
        return text
