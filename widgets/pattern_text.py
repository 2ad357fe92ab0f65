"""Pure rendering helpers shared by the pattern and draft widgets: a pattern's state word, the
graduation checklist and a drafted SKILL.md with its citations.

Titles, summaries and SKILL.md text are untrusted: they go into `Text` (never markup) after
their control characters are neutralised. Styles come from the calling widget's component
classes through `StyleOf` (a suffix such as "met" → that widget's `…--met` style).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text

from store.models import Draft, GraduationCheck, Pattern
from store.text import neutralise, one_line

StyleOf = Callable[[str], Style]

#: Characters of a SKILL.md shown in a preview (drafts are a few KB; this is a guard).
MAX_DRAFT_CHARS = 20_000
#: The state words of a pattern row, most pressing first (see `pattern_state`).
STATES: tuple[str, ...] = ("re-validate", "draft", "eligible", "graduated", "active", "decayed")
CRITERION_TITLES = {
    "bar": "Bar",
    "sessions": "Sessions",
    "retrieval": "Retrieval",
    "ratified": "Ratified",
    "confidence": "Confidence",
}


def pattern_state(pattern: Pattern, check: GraduationCheck | None) -> str:
    """One word for where the pattern stands on the way to a skill (one of `STATES`)."""
    if check is not None and check.revalidate:
        return "re-validate"
    if pattern.status == "graduated":
        return "graduated"
    if check is not None and check.draft is not None and check.draft.status == "pending":
        return "draft"
    if check is not None and check.eligible:
        return "eligible"
    return "decayed" if pattern.status == "decayed" else "active"


def retrieval_rate(check: GraduationCheck | None) -> float | None:
    """The retrieval criterion's value (None until the check is known)."""
    if check is None:
        return None
    return next((c.value for c in check.criteria if c.name == "retrieval"), None)


def criteria_met(check: GraduationCheck | None) -> str:
    """`3/4`, or `…` until the check is known."""
    if check is None:
        return "…"
    return f"{sum(c.met for c in check.criteria)}/{len(check.criteria)}"


def verdict(pattern: Pattern, check: GraduationCheck) -> str:
    """What the checklist adds up to, in one sentence."""
    state = pattern_state(pattern, check)
    skill = one_line(pattern.skill_name, 80)
    if state == "re-validate":
        return f"Re-validate: graduated into {skill or 'a skill'}, but the pattern has decayed."
    if state == "graduated":
        return f"Graduated into the skill {skill}." if skill else "Graduated."
    if state == "draft":
        return "A drafted SKILL.md waits for a reviewer in the review queue."
    if state == "eligible":
        return "Eligible: graduate drafts a SKILL.md into the review queue."
    unmet = [CRITERION_TITLES.get(c.name, c.name).lower() for c in check.criteria if not c.met]
    if unmet:
        return "Not eligible yet: " + ", ".join(unmet) + " not met."
    return f"Not eligible while the pattern is {one_line(pattern.status, 20)}."


def checklist(pattern: Pattern, check: GraduationCheck, style: StyleOf) -> list[RenderableType]:
    """The criteria, each met (✓) or not (✗) with its numbers, then the verdict."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column(style=style("label"), no_wrap=True, min_width=10)
    grid.add_column(ratio=1)
    for criterion in check.criteria:
        mark = Text("✓", style("met")) if criterion.met else Text("✗", style("unmet"))
        title = CRITERION_TITLES.get(criterion.name, one_line(criterion.name, 20))
        grid.add_row(mark, title, Text(one_line(criterion.detail, 400)))
    state = pattern_state(pattern, check)
    tone = {"eligible": "met", "draft": "met", "re-validate": "warning"}.get(state, "dim")
    return [grid, Text(verdict(pattern, check), style(tone))]


def section(title: str) -> Text:
    return Text(f"\n{title}", "bold underline")


def literal(text: str, limit: int = 4000) -> Text:
    """Multi-line untrusted text, neutralised and cut at `limit` characters."""
    cut = len(text) > limit
    out = Text(neutralise(text[:limit]))
    if cut:
        out.append(" […]", "dim")
    return out


def lines(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}–{end}"


def when(stamp: str) -> str:
    """`2026-11-02 09:00` from an ISO timestamp (shown as given when it is not one)."""
    text = one_line(stamp, 40)
    if len(text) >= 16 and text[10] == "T":
        return f"{text[:10]} {text[11:16]}"
    return text or "?"


def draft_heading(draft: Draft, style: StyleOf) -> Text:
    """`pending · name · drafted 2026-11-03 09:00 by Dana` (+ the decision, when made)."""
    out = Text()
    tone = {"pending": "warning", "approved": "met", "rejected": "unmet"}.get(draft.status, "dim")
    out.append(one_line(draft.status, 20), style(tone) + Style(bold=True))
    out.append(" · ")
    out.append(one_line(draft.name, 80), Style(bold=True))
    out.append(f" · {one_line(draft.draft_id, 40)}", style("dim"))
    out.append(
        f"\ndrafted {when(draft.created_at)} by {one_line(draft.created_by, 120) or 'unknown'}",
        style("dim"),
    )
    if draft.decided_at:
        by = one_line(draft.decided_by, 120) or "unknown"
        out.append(f"\n{draft.status} {when(draft.decided_at)} by {by}", style("dim"))
    if draft.reason:
        out.append(f"\nreason: {one_line(draft.reason, 1000)}", style("dim"))
    if draft.path:
        out.append(f"\nwritten to {one_line(draft.path, 300)}", style("dim"))
    return out


def draft_body(draft: Draft, style: StyleOf) -> list[RenderableType]:
    """The SKILL.md exactly as it would be written (shown literally), then its citations."""
    content = draft.content[:MAX_DRAFT_CHARS]
    body = Text(neutralise(content), style("code"))
    parts: list[RenderableType] = [Padding(body, (0, 0, 0, 2))]
    if len(draft.content) > MAX_DRAFT_CHARS:
        cut = f"[preview cut at {MAX_DRAFT_CHARS:,} characters]"
        parts.append(Padding(Text(cut, "italic dim"), (0, 0, 0, 2)))
    parts.append(section(f"Citations ({len(draft.citations)})"))
    if not draft.citations:
        parts.append(Text("no citations", style("dim")))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style=style("label"), no_wrap=True)
    grid.add_column(ratio=1)
    for citation in draft.citations:
        grid.add_row(
            one_line(citation.marker, 12),
            Text(
                f"node {one_line(citation.node_id, 40)} · session"
                f" {one_line(citation.session_id, 60)} · {one_line(citation.file, 200)}"
                f" {lines(citation.line_start, citation.line_end)}"
            ),
        )
    if draft.citations:
        parts.append(grid)
    return parts


def write_gate(draft: Draft, style: StyleOf, diff: str) -> list[RenderableType]:
    """The draft's write gate: each transient literal and the parameter that replaced it (or
    kept on purpose), the diff that shows every replacement, and its regression cases."""
    parts: list[RenderableType] = [section(f"Parameters ({len(draft.parameters)})")]
    if not draft.parameters:
        parts.append(Text("nothing transient found: the draft is as learned", style("dim")))
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style=style("label"), no_wrap=True)
    grid.add_column(no_wrap=True)
    grid.add_column(ratio=1)
    for r in draft.parameters:
        state = Text("kept", style("warning")) if r.kept else Text("replaces", style("dim"))
        grid.add_row(
            one_line(r.parameter, 40),
            state,
            Text(f"{one_line(r.literal, 200)}  ({one_line(r.kind, 20)}, {r.count}×)"),
        )
    if draft.parameters:
        parts.append(grid)
    if diff:
        parts.append(section("What the parameters change (as learned → as written)"))
        parts.append(Padding(diff_text(diff, style), (0, 0, 0, 2)))
    parts.append(section(f"Regression cases ({len(draft.regressions)})"))
    if not draft.regressions:
        parts.append(Text("no dead end on record for this pattern", style("dim")))
    for number, case in enumerate(draft.regressions, start=1):
        out = Text()
        out.append(f"{number}. ", style("label"))
        out.append(f"situation: {one_line(case.situation, 400)}")
        out.append(f"\n   wrong move: {one_line(case.wrong, 400)}", style("unmet"))
        out.append(f"\n   right move: {one_line(case.expected, 400)}", style("met"))
        if case.source:
            out.append(f"  ({one_line(case.source, 60)})", style("dim"))
        parts.append(out)
    return parts


def diff_text(diff: str, style: StyleOf, limit: int = 400) -> Text:
    """A unified diff shown literally: added lines in the `met` style, removed in `unmet`."""
    out = Text()
    rows = diff.splitlines()
    for row in rows[:limit]:
        tone = ""
        if row.startswith("+") and not row.startswith("+++"):
            tone = "met"
        elif row.startswith("-") and not row.startswith("---"):
            tone = "unmet"
        elif row.startswith("@@"):
            tone = "dim"
        out.append(neutralise(row, keep_newlines=False) + "\n", style(tone) if tone else Style())
    if len(rows) > limit:
        out.append(f"… {len(rows) - limit} more lines", style("dim"))
    return out


def retrieval_lines(
    check: GraduationCheck, style: StyleOf, limit: int = 12
) -> list[RenderableType]:
    """The retrievals that returned the pattern: which counted for graduation (an agent's own
    requests), which not, and why."""
    if not check.retrievals:
        return []
    counted = sum(r.calls for r in check.retrievals if r.counted)
    parts: list[RenderableType] = [
        Text(
            f"retrievals: {counted} counted, "
            f"{sum(r.calls for r in check.retrievals) - counted} not (newest last)",
            style("dim"),
        )
    ]
    for r in check.retrievals[-limit:]:
        mark = Text()
        mark.append("✓ " if r.counted else "· ", style("met") if r.counted else style("dim"))
        mark.append(f"{when(r.ts)}  rank {r.rank}{f' ×{r.calls}' if r.calls > 1 else ''}  ")
        mark.append(one_line(r.why, 80), style("label") if r.counted else style("dim"))
        mark.append(f"  {one_line(r.query, 120)}", style("dim"))
        parts.append(mark)
    return parts
