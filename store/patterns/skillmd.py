"""Write a spec-valid SKILL.md for a pattern: only the six spec keys, the name it is given
(`store.patterns.naming`), a description that says what and when, provenance in `metadata`,
and a body whose every step cites the nodes and transcript lines it came from.

All frontmatter scalars are written as JSON strings, which are valid YAML double-quoted
scalars: no character in untrusted text can end the string, start a new key or close the
frontmatter. Body text is folded to single printable lines (no escape sequences, no `---`
line can appear). The result is parsed back with the librarian's own parser before it is
accepted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from store.models import PATTERN_KIND_LABELS, Citation, Pattern, Step
from store.models.governance import RegressionCase
from store.patterns.regressions import body_section
from store.text import one_line

SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
MAX_DESCRIPTION = 1024


def _clean(text: str, limit: int) -> str:
    return one_line(text, limit).replace("<", "‹").replace(">", "›")


def description(pattern: Pattern) -> str:
    """What the skill is and when to use it; ≤ 1024 characters, no angle brackets."""
    title = pattern.title.rstrip(" .")
    what = {
        "pitfall": f"Avoids a recurring pitfall: {title}.",
        "strategy": f"A diagnostic strategy: {title}.",
        "insight": f"Architectural knowledge: {title}.",
    }[pattern.kind]
    when = pattern.trigger or pattern.title
    text = f"{what} Use when {when[:1].lower() + when[1:]}"
    text = text if text.endswith(".") else text + "."
    return _clean(text, MAX_DESCRIPTION)


def render(
    pattern: Pattern,
    name: str,
    steps: Sequence[Step],
    sessions: Sequence[str],
    nodes: Sequence[str],
    license_name: str = "Proprietary",
    regressions: Sequence[RegressionCase] = (),
) -> tuple[str, list[Citation]]:
    """The SKILL.md text and its citations ([1], [2], ... in step order)."""
    citations: list[Citation] = []
    markers: dict[str, str] = {}

    def cite(step: Step) -> str:
        if step.node_id not in markers:
            markers[step.node_id] = f"[{len(markers) + 1}]"
            citations.append(
                Citation(
                    marker=markers[step.node_id],
                    node_id=step.node_id,
                    session_id=step.session_id,
                    file=step.file,
                    line_start=step.line_start,
                    line_end=step.line_end,
                )
            )
        return markers[step.node_id]

    metadata = {
        "generated-by": "skill-librarian",
        "librarian-pattern": pattern.pattern_id,
        "librarian-kind": pattern.kind,
        "librarian-sessions": ",".join(sessions),
        "librarian-nodes": ",".join(nodes),
    }
    front = [
        "---",
        f"name: {json.dumps(name, ensure_ascii=False)}",
        f"description: {json.dumps(description(pattern), ensure_ascii=False)}",
    ]
    front.append(f"license: {json.dumps(_clean(license_name, 100) or 'Proprietary')}")
    front.append("metadata:")
    front += [
        f"  {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in metadata.items()
    ]
    front.append("---")
    body = [
        f"# {_clean(pattern.title, 120)}",
        "",
        f"{PATTERN_KIND_LABELS[pattern.kind]} consolidated by skill-librarian from"
        f" {pattern.sessions} sessions ({pattern.members} approved reasoning nodes). Every step"
        " cites the node and transcript lines it came from.",
        "",
        "## When to use",
        "",
        _clean(pattern.trigger or pattern.title, 400),
        "",
    ]
    heading = {
        "pitfall": "## How to avoid it",
        "strategy": "## Steps",
        "insight": "## What to know",
    }
    body += [heading[pattern.kind], ""]
    for i, step in enumerate(steps, start=1):
        body.append(f"{i}. {_clean(step.text, 300)} {cite(step)}")
    if pattern.kind == "pitfall" and pattern.resolution and not steps:
        body.append(f"- Resolution: {_clean(pattern.resolution, 300)}")
    body += ["", *body_section(regressions)]
    body += ["## Evidence", ""]
    for c in citations:
        where = f"lines {c.line_start}–{c.line_end}" if c.line_end else "lines unknown"
        source = _clean(c.file.rsplit("/", 1)[-1], 80) if c.file else "transcript"
        body.append(f"- {c.marker} node `{c.node_id}`, session `{c.session_id}`, {source} {where}")
    return "\n".join(front) + "\n\n" + "\n".join(body).rstrip() + "\n", citations


def draft_steps(pattern: Pattern, members: Sequence[Step]) -> list[Step]:
    """The steps a draft lists, each citing its node. A pitfall starts with what to watch for
    (one step per member: the recurrence is the evidence), then how it was resolved; other
    kinds use the pattern's ordered steps, else the members themselves."""
    if pattern.kind == "pitfall":
        seen: set[str] = set()
        watch: list[Step] = []
        for m in members:
            text = f"Watch for: {m.text}"
            if text.lower() not in seen:
                seen.add(text.lower())
                watch.append(Step(text, m.node_id, m.session_id, m.file, m.line_start, m.line_end))
        fix = [
            Step(f"Then: {s.text}", s.node_id, s.session_id, s.file, s.line_start, s.line_end)
            for s in pattern.steps
        ]
        return (watch[:3] + fix)[:7]
    return list(pattern.steps) or list(members[:7])
