"""Rendering of retirement runbook runs: the run's header and progress, one line per step,
and a done step's record (blast radius, demotions, the audit, the repair, the incident).

Everything from the library is untrusted text: it goes into `Text` objects literally,
through `one_line`, never as markup.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from store.models import Incident, Run, RunStep, StepPlan
from store.text import one_line

STATUS_STYLE = {
    "stable": "green",
    "proposed": "cyan",
    "deprecated": "yellow",
    "retired": "red",
    "uninstalled": "dim",
}
RUN_STYLE = {"open": "bold yellow", "done": "bold green", "abandoned": "dim"}
BAR = 21  # progress bar cells (3 per step)


def progress(run: Run) -> Text:
    filled = run.step * BAR // 7
    text = Text()
    text.append("█" * filled, style="green" if run.status == "done" else "yellow")
    text.append("░" * (BAR - filled), style="dim")
    text.append(f" {run.step}/7")
    return text


def run_header(run: Run, incident: Incident | None = None) -> Text:
    text = Text()
    text.append(one_line(run.skill_name, 60), style="bold")
    text.append("  ")
    text.append(run.status, style=RUN_STYLE.get(run.status, ""))
    text.append("  ")
    text.append_text(progress(run))
    text.append(f"\n{run.run_id} · started {run.started_at[:16].replace('T', ' ')} by ")
    text.append(one_line(run.actor, 50))
    text.append("\nreason: ", style="dim")
    text.append(one_line(run.reason, 300))
    if run.successor:
        text.append("\nsuccessor: ", style="dim")
        text.append(one_line(run.successor, 80), style="green")
    if incident is not None:
        text.append("\nincident ", style="dim")
        text.append(incident.incident_id, style="bold red")
        text.append(f" recorded {incident.recorded_at[:16].replace('T', ' ')}")
    return text


def step_line(run: Run, step: RunStep, plan: StepPlan | None) -> Text:
    """One step in the checklist: ✓ done (its summary), → next (waiting?), or to do."""
    text = Text()
    if step.done:
        text.append(" ✓ ", style="green")
    elif step.step == run.next_step:
        text.append(" → ", style="bold yellow")
    else:
        text.append("   ")
    text.append(f"{step.step} {step.title:<25}", style="bold" if step.done else "")
    if step.done:
        text.append(one_line(step.summary, 120))
    elif step.step == run.next_step and plan is not None and plan.step == step.step:
        if plan.waiting:
            text.append(one_line(plan.waiting.split(":")[0], 60), style="yellow")
        else:
            text.append("next: press r to see what it does and do it", style="dim")
    elif run.status == "abandoned":
        text.append("abandoned", style="dim")
    return text


def step_detail(run: Run, step: RunStep, plan: StepPlan | None, incident: Incident | None) -> Text:
    """What a done step recorded, or what the next step will do."""
    text = Text()
    text.append(f"Step {step.step}/7 · {step.title}\n", style="bold")
    if not step.done:
        if plan is not None and plan.step == step.step:
            for action in plan.actions:
                text.append("  will: ", style="dim")
                text.append(one_line(action, 300) + "\n")
            if plan.waiting:
                text.append("  " + one_line(plan.waiting, 300) + "\n", style="yellow")
                text.append("  press r to give it\n", style="dim")
        elif run.status == "open":
            text.append(f"  after step {step.step - 1}\n", style="dim")
        else:
            text.append(f"  not done: the run is {run.status}\n", style="dim")
        return text
    text.append(f"  {step.ts[:19].replace('T', ' ')} by ", style="dim")
    text.append(one_line(step.actor, 60) + "\n", style="dim")
    text.append("  " + one_line(step.summary, 300) + "\n")
    _RENDER.get(step.name, _nothing)(text, step.payload)
    if step.name == "incident" and incident is not None:
        _incident(text, incident)
    return text


def _nothing(text: Text, payload: dict[str, Any]) -> None:
    return None


def _status(text: Text, name: str, status: str) -> None:
    text.append(one_line(name, 60))
    text.append(f" ({status})", style=STATUS_STYLE.get(status, "dim"))


def _blast(text: Text, p: dict[str, Any]) -> None:
    dependents = p.get("dependents", [])
    if dependents:
        text.append("\n  dependents\n", style="bold")
    for d in dependents[:60]:
        text.append("    " + "  " * (int(d.get("depth", 1)) - 1))
        _status(text, str(d.get("name", "")), str(d.get("status", "")))
        text.append(f" {d.get('relation', '')}, depth {d.get('depth', '')}\n", style="dim")
    more = int(p.get("dependent_count", 0)) - min(60, len(dependents))
    if more > 0:
        text.append(f"    … and {more} more\n", style="dim")
    for label, key in (("sessions", "sessions"), ("patterns", "patterns"), ("drafts", "drafts")):
        values = p.get(key, [])
        if values:
            shown = ", ".join(one_line(str(v), 40)[:12] for v in values[:12])
            text.append(f"  {label}: ", style="bold")
            text.append(shown + (" …" if len(values) > 12 else "") + "\n")


def _demote(text: Text, p: dict[str, Any]) -> None:
    for d in p.get("demoted", [])[:60]:
        text.append("    ")
        _status(text, str(d.get("name", "")), "deprecated")
        text.append(f" was {d.get('was', '')}\n", style="dim")


def _audit(text: Text, p: dict[str, Any]) -> None:
    text.append(
        f"\n  {p.get('runs', 0)} run{'' if p.get('runs', 0) == 1 else 's'},"
        f" {p.get('failures', 0)} failed"
        f" ({p.get('inferred', 0)} inferred) since {str(p.get('since', ''))[:10]}\n",
        style="bold",
    )
    for f in p.get("failed", [])[:10]:
        text.append(
            f"    ✗ {str(f.get('ts', ''))[:16].replace('T', ' ')} v{f.get('version_no')}",
            style="red",
        )
        text.append(" inferred" if f.get("inferred") else "", style="dim")
        text.append("  " + one_line(str(f.get("detail", "")), 120) + "\n")
    for s in p.get("sessions", [])[:10]:
        text.append(f"  session {str(s.get('session_id', ''))[:8]}", style="bold")
        text.append(
            f"  {str(s.get('started_at', ''))[:16].replace('T', ' ')}  "
            f"{one_line(str(s.get('project', '')), 40)}  {s.get('errors', 0)} errors\n",
            style="dim",
        )
        for move in s.get("actions", [])[:6]:
            style = "red" if str(move).startswith("error:") else ""
            text.append("      " + one_line(str(move), 120) + "\n", style=style)


def _repair(text: Text, p: dict[str, Any]) -> None:
    mode = p.get("mode", "")
    if mode == "successor":
        text.append("  successor: ", style="dim")
        text.append(one_line(str(p.get("successor", "")), 80) + "\n", style="green")
    elif mode == "repaired":
        text.append(f"  repaired version: v{p.get('version_no')}\n", style="dim")
    if p.get("note"):
        text.append("  note: ", style="dim")
        text.append(one_line(str(p["note"]), 300) + "\n")


def _repromote(text: Text, p: dict[str, Any]) -> None:
    for name in p.get("proposed", [])[:60]:
        text.append("    ")
        _status(text, str(name), "proposed")
        text.append("\n")


def _incident(text: Text, incident: Incident) -> None:
    text.append("\n  Incident ", style="bold")
    text.append(incident.incident_id + "\n", style="bold red")
    for label, value in (
        ("cause", incident.cause),
        ("scope", incident.scope),
        ("regression case", incident.regression),
        ("successor", incident.successor or "none"),
        ("version", f"v{incident.version_no}"),
        ("recorded by", incident.actor),
    ):
        text.append(f"  {label}: ", style="dim")
        text.append(one_line(value, 400) + "\n")


_RENDER = {
    "blast": _blast,
    "demote": _demote,
    "audit": _audit,
    "repair": _repair,
    "repromote": _repromote,
}
