"""The detail pane: one skill's manifest, warnings, findings, relations, versions and body.

Every string from the skill is untrusted: it goes into `Text` (never markup) after its
control characters are neutralised.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from store.models import SkillDetail, Suggestion
from store.models.overlap import OverlapPair
from store.models.skills import FITS_WELL
from store.text import home_relative, neutralise, one_line
from widgets.hanging import hanging

MAX_BODY_CHARS = 200_000
SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}
SUGGESTION_LABEL = {"retire_one": "retire one", "merge": "merge", "sharpen": "sharpen one"}


class SkillDetailView(VerticalScroll, can_focus=True):
    """Shows a `SkillDetail`; set `detail` (and optionally `suggestion`) to update."""

    DEFAULT_CSS = """
    SkillDetailView { padding: 0 1; background: $surface; }
    SkillDetailView > Static { width: 1fr; }
    """

    detail: reactive[SkillDetail | None] = reactive(None)
    suggestion: reactive[Suggestion | None] = reactive(None)
    #: The skill's overlaps: (skill_id, pairs); None while they are being checked.
    overlaps: reactive[tuple[int, tuple[OverlapPair, ...]] | None] = reactive(None)

    def compose(self) -> ComposeResult:
        yield Static(Text("Select a skill to see its details.", style="dim"), id="detail-body")

    def watch_detail(self) -> None:
        self._render_detail()

    def watch_suggestion(self) -> None:
        self._render_detail()

    def watch_overlaps(self) -> None:
        self._render_detail(keep_scroll=True)

    def _render_detail(self, keep_scroll: bool = False) -> None:
        if not self.is_mounted:
            return
        body = self.query_one("#detail-body", Static)
        if self.detail is None:
            body.update(Text("Select a skill to see its details.", style="dim"))
            return
        sid = self.detail.summary.skill_id
        pairs = self.overlaps[1] if self.overlaps and self.overlaps[0] == sid else None
        body.update(hanging(detail_text(self.detail, self.suggestion, pairs)))
        if not keep_scroll:
            self.scroll_home(animate=False)


def detail_text(
    detail: SkillDetail,
    suggestion: Suggestion | None = None,
    overlaps: tuple[OverlapPair, ...] | None = (),
) -> Text:
    """The whole pane as one `Text`; `overlaps` None: still being checked."""
    out = Text()
    _title(out, detail)
    _overlap_flag(out, detail, overlaps)
    if suggestion is not None and suggestion.skill_id == detail.summary.skill_id:
        _why(out, suggestion)  # first: it is what you look for while going down the ranking
        out.append("\n")
    _fields(out, detail)
    _warnings(out, detail)
    _findings(out, detail)
    _relations(out, detail)
    _versions(out, detail)
    _section(out, "Frontmatter")
    out.append(neutralise(json.dumps(detail.frontmatter, indent=2, ensure_ascii=False)[:20_000]))
    out.append("\n")
    _section(out, "Body (shown literally)")
    body = detail.body
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS]
        out.append(f"[body truncated at {MAX_BODY_CHARS:,} characters]\n", style="italic dim")
    out.append(neutralise(body) or "(empty)")
    return out


def _section(out: Text, title: str) -> None:
    out.append(f"\n{title}\n", style="bold underline")


def _field(out: Text, label: str, value: str, limit: int = 2000) -> None:
    if value:
        out.append(f"{label}: ", style="bold")
        out.append(one_line(value, limit) + "\n")


def _title(out: Text, detail: SkillDetail) -> None:
    s = detail.summary
    out.append(one_line(s.name, 80), style="bold")
    out.append(f"  {s.status}  v{s.version_no}", style="dim")
    out.append("\n")


def _fields(out: Text, detail: SkillDetail) -> None:
    s, m = detail.summary, detail.manifest
    _field(out, "Description", str(m.get("description", "")), 4000)
    _field(out, "When to use", str(m.get("when_to_use", "")))
    _field(out, "Triggers", ", ".join(m.get("triggers", [])))
    _field(out, "Tags", ", ".join(m.get("tags", [])))
    _field(out, "Role", str(m.get("role", "")))
    _field(out, "Version label", str(m.get("version", "")))
    _field(out, "License", str(m.get("license", "")))
    _field(out, "Allowed tools", " ".join(m.get("allowed_tools", [])))
    _field(out, "Path", home_relative(s.fs_path))
    _field(out, "Root", f"{home_relative(s.root)} ({s.scope})")
    _field(out, "Graduated from", detail.pattern_id)
    if detail.revalidate:
        out.append("Re-validate: ", style="bold yellow")
        out.append(one_line(detail.revalidate, 300) + "\n")
    if s.shadowed:
        out.append("Shadowed by: ", style="bold yellow")
        out.append(one_line(detail.shadowed_by, 300) + "\n")
    _governance(out, detail)


def _governance(out: Text, detail: SkillDetail) -> None:
    """The version served and the candidate, uses and importance, approval and provenance."""
    m = detail.manifest
    if detail.served_version and detail.served_version != detail.summary.version_no:
        _field(out, "Serving", f"v{detail.served_version} (v{detail.summary.version_no} on disk)")
    if detail.candidate is not None:
        _field(out, "Candidate", detail.candidate.describe())
    last = str(m.get("last_used_at") or "never")[:16]
    uses = m.get("use_count", 0)
    _field(out, "Uses", f"{uses} (last {last}), importance {float(m.get('importance', 0)):.2f}")
    _field(out, "Approved by", str(m.get("approved_by", "")))
    provenance = m.get("provenance") or {}
    if provenance.get("patterns"):
        drafts = provenance.get("drafts") or []
        _field(
            out,
            "Provenance",
            f"pattern {provenance['patterns'][0]}"
            + (f", draft {drafts[0]}" if drafts else "")
            + f", {len(provenance.get('sessions', []))} sessions,"
            f" {len(provenance.get('nodes', []))} nodes",
        )


def _why(out: Text, hit: Suggestion) -> None:
    _section(out, "Why it was suggested")
    out.append(
        f"fit {hit.relevance:.2f} (the task against its card and use text; well from"
        f" {FITS_WELL:.2f}) · rank score {hit.score:.3f} = lexical {hit.lexical:.2f}, dense"
        f" {hit.dense:.2f}, importance {hit.importance:.2f} (relative to the other hits)\n"
    )
    if hit.matched_terms:
        out.append("matched terms: ", style="bold")
        out.append(one_line(", ".join(hit.matched_terms), 300) + "\n")
    if hit.reasons:
        out.append("; ".join(hit.reasons) + "\n", style="dim")


#: Spec findings that are information, not warnings (the spec makes `license` optional).
INFO_CODES = frozenset({"license_missing"})


def _warnings(out: Text, detail: SkillDetail) -> None:
    warnings = [w for w in detail.warnings if w.code not in INFO_CODES]
    notes = [w for w in detail.warnings if w.code in INFO_CODES]
    _section(out, f"Spec warnings ({len(warnings)})" + (f" · {len(notes)} info" if notes else ""))
    if not warnings and not notes:
        out.append("none\n", style="dim")
    for w in warnings:
        out.append(f"{w.code}: ", style="yellow")
        out.append(one_line(w.message, 400) + "\n")
    for w in notes:
        out.append(f"info {w.code}: {one_line(w.message, 400)}\n", style="dim")


def _overlap_flag(out: Text, detail: SkillDetail, overlaps: tuple[OverlapPair, ...] | None) -> None:
    """A flag under the title: the skills routing confuses with this one, and what to do."""
    if overlaps is None:
        out.append("checking overlaps…\n", style="dim italic")
        return
    me = detail.summary.name
    for pair in overlaps:
        other = pair.b if pair.a == me else pair.a
        mine, theirs = (pair.a_to_b, pair.b_to_a) if pair.a == me else (pair.b_to_a, pair.a_to_b)
        kind = "exact duplicate of" if pair.kind == "duplicate" else "routing confuses it with"
        out.append("⚠ ", style="bold yellow")
        out.append(f"{kind} ", style="yellow")
        out.append(one_line(other, 80), style="bold yellow")
        out.append(f" — {SUGGESTION_LABEL.get(pair.suggestion, pair.suggestion)}\n", style="yellow")
        out.append(
            f"  on its own description {one_line(other, 60)} scores {mine:.0%} of it"
            f" ({theirs:.0%} the other way); card cosine {pair.cosine:.2f};"
            f" bodies {pair.body_similarity:.0%} alike\n",
            style="dim",
        )
        out.append(f"  {one_line(pair.reason, 300)}\n", style="dim")


def _findings(out: Text, detail: SkillDetail) -> None:
    _section(out, f"Security findings ({len(detail.findings)})")
    if not detail.findings:
        out.append("none\n", style="dim")
    for f in detail.findings:
        out.append(f"[{f.severity}] {f.rule} ", style=SEVERITY_STYLE.get(f.severity, ""))
        where = f"{one_line(f.file, 120)}:{f.line}" if f.line else one_line(f.file, 120)
        if f.context:
            out.append(f"({f.context}) ", style="italic dim")
        out.append(f"{where}  {one_line(f.message, 300)}\n")
        if f.excerpt:
            out.append(f"    {one_line(f.excerpt, 300)}\n", style="dim")


def _relations(out: Text, detail: SkillDetail) -> None:
    _section(out, f"Relations ({len(detail.relations)} out, {len(detail.dependents)} in)")
    for r in detail.relations:
        out.append(f"{r.type} → {one_line(r.target, 80)}" + (f"@{r.pin}" if r.pin else ""))
        out.append(
            f"  ({r.origin}{', dangling' if r.dangling else ''})\n",
            style="red" if r.dangling else "dim",
        )
    for r in detail.dependents:
        pinned = f" (pinned to v{r.pin})" if r.pin else ""
        out.append(f"{one_line(r.source, 80)} {r.type} this skill{pinned}\n")
    for u in detail.unproven:
        out.append(f"! {one_line(u.reason, 300)}\n", style="bold yellow")
    for cycle in detail.cycles:
        out.append(
            "cycle: " + " → ".join(one_line(n, 60) for n in (*cycle, cycle[0])) + "\n", style="red"
        )
    if not (detail.relations or detail.dependents):
        out.append("none\n", style="dim")


def _versions(out: Text, detail: SkillDetail) -> None:
    _section(out, f"Versions ({len(detail.versions)})")
    for v in detail.versions:
        out.append(f"v{v.version_no}  {v.created_at[:19]}  {v.event}  {v.content_hash[:12]}\n")
