"""Pure text for the Lineage screen and `librarian lineage`: one-line event summaries, a diff
coloured line by line, the status history, runs and incidents.

Everything that comes from a skill, a transcript or a reviewer is untrusted: it goes through
`one_line` / `neutralise` and into `Text` objects (never markup), so `[bold]` in a reason is
shown as typed and control characters become visible escapes.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from store.models import Event, Incident, Lineage, Run, StatusChange
from store.models.events import EventType
from store.text import home_relative, neutralise, one_line

#: Status → the colour it is drawn in (Rich colour names; the theme's are not reachable here).
STATUS_STYLES: dict[str, str] = {
    "proposed": "cyan",
    "stable": "green",
    "deprecated": "yellow",
    "retired": "red",
    "uninstalled": "bright_black",
}
#: Diff line kinds → style, by the line's first characters.
DIFF_STYLES: dict[str, str] = {
    "header": "bold",
    "hunk": "cyan",
    "added": "green",
    "removed": "red",
    "context": "",
    "note": "dim italic",
}


def when(ts: str) -> str:
    """An ISO timestamp as `YYYY-MM-DD HH:MM` (what a person needs of it)."""
    return f"{ts[:10]} {ts[11:16]}".strip() if ts else ""


def event_summary(event: Event, limit: int = 160) -> str:
    """What an event did, in one line (the payload's reason, detail, version, ...)."""
    p = event.payload
    kind = event.type
    if kind in (EventType.SKILL_INSTALLED, EventType.SKILL_CHANGED):
        text = f"v{p.get('version_no', '?')} {home_relative(str(p.get('fs_path', '')))}"
    elif kind == EventType.SKILL_OUTCOME_RECORDED:
        result = "success" if p.get("success") else "failure"
        session = str(p.get("session_id", "") or "")
        text = f"{result} v{p.get('version_no', '?')}"
        text += f" in session {session[:8]}" if session else ""
        text += " (inferred)" if p.get("inferred") else ""
        text += f": {p.get('detail')}" if p.get("detail") else ""
    elif kind.startswith("relation."):
        text = f"{p.get('type', '?')} {p.get('target_name', '?')} ({p.get('origin', 'manual')})"
    elif kind == EventType.RUNBOOK_STARTED:
        text = f"run {p.get('run_id', '?')}: {p.get('reason', '')}"
    elif kind == EventType.RUNBOOK_STEP:
        text = f"run {p.get('run_id', '?')} step {p.get('step', '?')} {p.get('name', '')}"
        text += f": {p.get('summary')}" if p.get("summary") else ""
    elif kind == EventType.INCIDENT_RECORDED:
        text = f"incident {p.get('incident_id', '?')}: {p.get('cause', '')}"
    else:
        text = str(p.get("reason") or p.get("detail") or "")
        if p.get("from"):
            text = f"from {p['from']}: {text}" if text else f"from {p['from']}"
        if p.get("alert"):
            text = f"ALERT {p['alert']}: {text}"
    return one_line(str(text), limit)


def status_text(status: str) -> Text:
    return Text(one_line(status, 20), style=STATUS_STYLES.get(status, ""))


def transition(change: StatusChange) -> Text:
    """`stable → deprecated`, each side in its colour (`installed` for the first)."""
    text = Text()
    if change.from_status:
        text.append_text(status_text(change.from_status))
        text.append(" → ", style="dim")
    text.append_text(status_text(change.to_status))
    return text


def diff_kind(line: str) -> str:
    if line.startswith(("--- ", "+++ ")):
        return "header"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "added"
    if line.startswith("-"):
        return "removed"
    if line.startswith(("… ", "(only")):
        return "note"
    return "context"


def diff_text(diff: str, styles: Mapping[str, str | Style] | None = None) -> Text:
    """A unified diff, one line per line, coloured by kind; every line shown literally."""
    chosen = {**DIFF_STYLES, **(styles or {})}
    text = Text(no_wrap=True, overflow="ellipsis")
    for number, line in enumerate(diff.splitlines()):
        if number:
            text.append("\n")
        text.append(neutralise(line, keep_newlines=False), style=chosen[diff_kind(line)])
    return text


def history_table(history: tuple[StatusChange, ...]) -> Table:
    """The status history, newest first: when, event, from → to, who, why."""
    table = Table(box=None, expand=True, show_edge=False, pad_edge=False, header_style="bold")
    for title, ratio in (("when", 0), ("event", 0), ("status", 0), ("v", 0), ("by", 0)):
        table.add_column(title, no_wrap=True, ratio=ratio or None)
    table.add_column("reason", ratio=1)
    for change in history:
        reason = Text(one_line(change.reason, 400))
        if change.alert:
            reason = Text.assemble(
                (f"ALERT {one_line(change.alert, 40)} ", "bold red"), one_line(change.reason, 400)
            )
        table.add_row(
            Text(when(change.ts), style="dim"),
            Text(change.event.removeprefix("skill."), style="bold"),
            transition(change),
            Text(f"v{change.version_no}" if change.version_no else "", style="dim"),
            Text(one_line(change.actor, 40)),
            reason,
        )
    return table


def runs_renderable(lineage: Lineage) -> RenderableType:
    """Succession, runbook runs (with their steps) and incidents of a skill."""
    parts: list[RenderableType] = []
    parts.append(_succession(lineage))
    parts.append(Text("Runbook runs", style="bold underline"))
    if not lineage.runs:
        parts.append(
            Text("  none: the skill was never taken through the retirement runbook", "dim")
        )
    parts += [_run(run) for run in lineage.runs]
    parts.append(Text(""))
    parts.append(Text("Incidents", style="bold underline"))
    if not lineage.incidents:
        parts.append(Text("  none recorded", style="dim"))
    parts += [_incident(incident) for incident in lineage.incidents]
    return Group(*parts)


def _succession(lineage: Lineage) -> Text:
    text = Text()
    if lineage.superseded_by:
        text.append("Superseded by ", style="bold")
        text.append(", ".join(one_line(n, 60) for n in lineage.superseded_by))
        text.append("\n")
    if lineage.supersedes:
        text.append("Supersedes ", style="bold")
        text.append(", ".join(one_line(n, 60) for n in lineage.supersedes))
        text.append("\n")
    return text


def _run(run: Run) -> Text:
    text = Text("  ")
    text.append(one_line(run.run_id, 40), style="bold")
    text.append(f"  {run.status}", style="yellow" if run.status == "open" else "green")
    text.append(f"  step {run.step}/7  started {when(run.started_at)} by ")
    text.append(one_line(run.actor, 40))
    text.append(f"  v{run.version_no}", style="dim")
    if run.successor:
        text.append("  successor ")
        text.append(one_line(run.successor, 60), style="bold")
    text.append("\n    why: ", style="dim")
    text.append(one_line(run.reason, 300))
    for step in run.steps:
        mark, style = ("✓", "green") if step.done else ("·", "dim")
        text.append(f"\n    {mark} {step.step} {step.title}", style=style)
        if step.done and step.summary:
            text.append(": ")
            text.append(one_line(step.summary, 200))
    return text


def _incident(incident: Incident) -> Text:
    text = Text("  ")
    text.append(one_line(incident.incident_id, 40), style="bold")
    text.append(f"  v{incident.version_no}  {when(incident.recorded_at)} by ")
    text.append(one_line(incident.actor, 40))
    for label, value in (
        ("cause", incident.cause),
        ("scope", incident.scope),
        ("regression case", incident.regression),
        ("successor", incident.successor),
    ):
        if value:
            text.append(f"\n    {label}: ", style="dim")
            text.append(one_line(value, 400))
    return text
