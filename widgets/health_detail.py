"""The Health screen's detail pane: one skill's verdict with the numbers behind it, the
per-version breakdown, its flags explained, its most recent runs (failures with their
details) and the thresholds the verdicts come from.

Flags, details and names come from skills and agents: they go into `Text`, literally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from store.models import Outcome, SkillHealth
from store.text import one_line
from widgets.graph_style import status_style, verdict_style
from widgets.hanging import hanging
from widgets.health_table import sparkline

EMPTY = "Select a skill to see its versions, flags and recent runs."
#: What each kind of flag means, by its first word.
FLAG_HELP = {
    "idle": "nobody has used it for a long while: retire it, or check it still applies",
    "re-validate": "the pattern it graduated from is no longer retrieved: re-check the skill",
    "missing": "the SKILL.md cites a file that is not in its folder: an agent following it fails",
    "alert": "a new version drifted while it proved itself: the served version stayed; fix the"
    " edit (a new version proves itself again) or revert it",
    "at": "a skill it requires is drifting at the version it uses: pin a good version"
    " (`librarian relate … requires NAME@N`) or wait for the repair",
}


def runs(count: int) -> str:
    """`1 run`, `17 runs`."""
    return f"{count:,} run{'' if count == 1 else 's'}"


def window_days(settings: Mapping[str, float]) -> str:
    """The health window: `30 days`."""
    return f"{settings.get('window_days', 30):g} days"


def verdict_reason(h: SkillHealth, settings: Mapping[str, float]) -> str:
    """Why the verdict is what it is, with the thresholds."""
    window = window_days(settings)
    warn, fail = settings.get("warn", 0.2), settings.get("fail", 0.5)
    if h.verdict == "IDLE":
        return f"no runs in the last {window}"
    least = settings.get("min_runs", 3)
    if h.runs < least:
        return f"only {runs(h.runs)} in the last {window}: too few to judge (at least {least:g})"
    rate = f"{h.failures} of {runs(h.runs)} failed in the last {window} ({h.failure_rate:.0%})"
    if h.verdict == "DRIFTING":
        if h.status == "retired":
            return f"{rate}, above the fail threshold {fail:.0%}: retired, no longer served"
        if h.status == "deprecated":
            return f"{rate}, above the fail threshold {fail:.0%}: already deprecated"
        return f"{rate}, above the fail threshold {fail:.0%}: `a` deprecates it (an alert)"
    if h.verdict == "DEGRADING":
        return f"{rate}, above the warn threshold {warn:.0%} (fail at {fail:.0%})"
    return f"{rate}, at or below the warn threshold {warn:.0%}"


class HealthDetail(VerticalScroll, can_focus=True):
    """Shows one `SkillHealth`, its recent `Outcome`s (None while they load) and the
    health settings; call `show`."""

    DEFAULT_CSS = """
    HealthDetail { padding: 0 1; background: $surface; }
    HealthDetail > Static { width: 1fr; }
    """

    def __init__(
        self, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._health: SkillHealth | None = None
        self._outcomes: list[Outcome] | None = None
        self._settings: dict[str, float] = {}
        self._trend: tuple[float, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(Text(EMPTY, style="dim"), id="health-detail-body")

    @property
    def health(self) -> SkillHealth | None:
        return self._health

    @property
    def outcomes(self) -> list[Outcome] | None:
        return self._outcomes

    def show(
        self,
        health: SkillHealth | None,
        outcomes: Sequence[Outcome] | None = None,
        settings: Mapping[str, float] | None = None,
        trend: tuple[float, ...] | None = None,
    ) -> None:
        """Show `health` (its `trend`, when given, replaces the row's: the trends may come
        later than the rows), its recent `outcomes` (None: loading) and the `settings`."""
        same = (
            health is not None
            and self._health is not None
            and health.skill_id == self._health.skill_id
        )
        self._health = health
        self._trend = trend if trend is not None else (health.trend if health else ())
        self._outcomes = None if outcomes is None else list(outcomes)
        if settings is not None:
            self._settings = dict(settings)
        if self.is_mounted:
            self.query_one("#health-detail-body", Static).update(hanging(self.renderable()))
            if not same:
                self.scroll_home(animate=False, immediate=True)

    def renderable(self) -> RenderableType:
        h = self._health
        if h is None:
            return Text(EMPTY, style="dim")
        parts: list[RenderableType] = [
            Text.assemble(
                (h.verdict, verdict_style(h.verdict)),
                "  ",
                (one_line(h.name, 120), "bold"),
                "  ",
                (h.status, status_style(h.status)),
                f"  v{h.version_no}",
            ),
            Text(verdict_reason(h, self._settings)),
            self._trend_line(h),
            *self._served(h),
            Text(""),
            Text(f"Runs by version in the last {window_days(self._settings)}", style="bold"),
            self._versions(h),
            *self._flags(h),
            Text(""),
            *self._runs(),
            Text(""),
            self._thresholds(),
        ]
        return Group(*parts)

    def _trend_line(self, h: SkillHealth) -> Text:
        text = Text("weekly failure rate (8 weeks, oldest first): ", style="dim")
        for char, empty in sparkline(self._trend):
            text.append(char, "dim" if empty else verdict_style(h.verdict))
        if not self._trend:
            text.append(" counting…", style="dim")
        return text

    def _served(self, h: SkillHealth) -> list[RenderableType]:
        """The version served (judged) and the candidate proving itself, or its fate."""
        c = h.candidate
        if c is None:
            return []
        lines: list[RenderableType] = [Text(""), Text("Served and candidate versions", "bold")]
        served = h.served_version or h.version_no
        lines.append(Text(f"serving v{served}: suggested, served to agents and judged above"))
        tone = {"set_aside": "bold yellow", "promoted": "green"}.get(c.status, "")
        line = Text(one_line(c.describe(), 300), style=tone)
        if c.open:
            line.append(
                f"  (v{c.version_no} as the candidate, all its runs: {runs(c.runs)},"
                f" {c.failures} failed, {c.verdict})",
                style=verdict_style(c.verdict),
            )
        lines.append(line)
        if c.open:
            lines.append(
                Text(
                    f"it takes over after {c.needed} clean runs in a row, and is set aside if it"
                    " drifts",
                    style="dim",
                )
            )
        return lines

    def _versions(self, h: SkillHealth) -> RenderableType:
        if not h.versions:
            return Text("No runs of any version in the window.", style="dim")
        table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
        for title in ("version", "runs", "failures", "rate", "verdict"):
            table.add_column(title, justify="left" if title in ("version", "verdict") else "right")
        candidate = h.candidate.version_no if h.candidate and h.candidate.open else 0
        for v in reversed(h.versions):
            current = (
                " (served)"
                if v.version_no == h.version_no
                else " (candidate)"
                if v.version_no == candidate
                else ""
            )
            table.add_row(
                f"v{v.version_no}{current}",
                f"{v.runs:,}",
                f"{v.failures:,}",
                f"{v.failure_rate:.0%}",
                Text(v.verdict, style=verdict_style(v.verdict)),
            )
        return table

    def _flags(self, h: SkillHealth) -> list[RenderableType]:
        if not h.flags:
            return []
        lines: list[RenderableType] = [Text(""), Text("Flags", style="bold")]
        for flag in h.flags:
            meaning = FLAG_HELP.get(flag.split(":", 1)[0].split(" ", 1)[0], "")
            lines.append(Text.assemble(("! ", "bold yellow"), one_line(flag, 200)))
            if meaning:
                lines.append(Text(f"  {meaning}", style="dim"))
        return lines

    def _runs(self) -> list[RenderableType]:
        if self._outcomes is None:
            return [Text("Recent runs: loading…", style="dim")]
        if not self._outcomes:
            return [Text("No runs recorded.", style="dim")]
        failed = sum(not o.success for o in self._outcomes)
        lines: list[RenderableType] = [
            Text(
                f"Recorded runs, every version, any age: the last {runs(len(self._outcomes))}"
                f" ({failed} failed), newest first",
                style="bold",
            )
        ]
        for o in self._outcomes:
            mark = ("✓ ", "green") if o.success else ("✗ ", "bold red")
            where = f" session {o.session_id[:8]}" if o.session_id else ""
            inferred = " (inferred)" if o.inferred else ""
            line = Text.assemble(mark, f"{o.ts[:16]}  v{o.version_no}{where}{inferred}")
            if o.detail:
                line.append(f"  {one_line(o.detail, 160)}", style="dim")
            lines.append(line)
        return lines

    def _thresholds(self) -> Text:
        s = self._settings
        if not s:
            return Text("")
        return Text(
            f"Thresholds ([health] in config.toml): window {s['window_days']:g} days · warn >"
            f" {s['warn']:.0%} · fail > {s['fail']:.0%} (then deprecated) · at least"
            f" {s['min_runs']:g} runs · idle after {s['idle_days']:g} days · promoted after"
            f" {s['promote_after']:g} clean runs",
            style="dim",
        )
