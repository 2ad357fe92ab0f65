"""Enrichment of thin skills (issue 16): a proposed rewrite of the discovery frontmatter —
description, when to use, triggers, tags — that waits in the review queue as a diff.

A skill is *thin* when its description is short (`enrich.min_description`, 80 characters)
or nothing says when to use it ("use when…" language in the description, a `when_to_use`, or
triggers). The proposal comes from the configured LLM (the real anthropic client, one forced
tool call) or, without one, from rules: the body's own "When to use" section and the usage
contexts mined from the transcripts where the skill was used (the task the session opened
with, what the agent said it wanted right before the `Skill` call). Either way it is
checked — description ≤ 1024 characters without angle brackets, short triggers and tags,
the security lint — and rendered into the SKILL.md by a round-trip edit of the frontmatter
(`store.skills.frontmatter_edit`), so the reviewer sees exactly the diff that approval writes.

Approving writes that text atomically (refusing when the file changed since, or when the
result no longer parses, gains a spec warning or a lint finding), records the previous
content and the folder's hashes (`skill.enrichment_approved`), and the rescan that follows
records it as a new version, served at once: a reviewer approved exactly this text.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import re
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from store import catalog
from store.errors import LibrarianError
from store.ingest.redact import redact
from store.models import ParsedSkill
from store.models.events import EventType
from store.models.governance import Enrichment, ThinSkill
from store.ports import Ledger
from store.projections import blob_text, store_blob
from store.skills.frontmatter_edit import FrontmatterEditError, edit
from store.skills.lint import lint_text
from store.skills.parser import parse_skill_md
from store.skills.writeback import folder_hashes, read_text, write_atomic
from store.text import one_line

MIN_DESCRIPTION = 80
MAX_DESCRIPTION = 1024
MAX_WHEN = 500
MAX_TRIGGERS = 6
MAX_TAGS = 6
#: Usage contexts mined per skill at most (the newest sessions).
MAX_CONTEXTS = 5
_WHEN = re.compile(
    r"(?i)\b(use (?:it |this |this skill )?(?:when|whenever|for|if|to)|when (?:you|a|an|the|"
    r"your)|whenever|if you)\b"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z][a-z0-9+-]{2,}")
_STOP = frozenset(
    """the and for with that this from your you are was were when what into then than have
    has had not but use using used can will would should could about after before over under
    again more most some such only also just very like each every other our their there here
    they them its it's doesn't don't isn't can't while where which who how why all any one
    two let's lets now new need needs make makes made get gets got see seen show shows""".split()
)
_TAG = re.compile(r"[^a-z0-9-]+")
TOOL_NAME = "propose_frontmatter"
PROMPT_VERSION = "enrich-1"
SYSTEM = (
    "You improve the discovery frontmatter of an Agent Skill (a SKILL.md) so that a coding"
    " agent picks it for the right tasks. Write plainly and specifically, from what the skill"
    " body says and from the situations it was used in. Never invent capabilities the body"
    " does not describe, never include secrets, host names, user names, paths or ticket ids"
    " from the usage contexts, and never use angle brackets. The description says what the"
    " skill does and, in a 'Use when …' sentence, when to use it (at most 1024 characters)."
)


class EnrichmentError(LibrarianError):
    """An enrichment that cannot be proposed, approved or rejected."""


class ToolCaller(Protocol):
    """The one LLM call enrichment makes (`AnthropicClient.tool_call`)."""

    model: str

    def tool_call(
        self, system: str, content: str, name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any]: ...


@dataclass(frozen=True)
class UsageContext:
    """Where a skill was used: the task of the session and what the agent wanted."""

    session_id: str
    started_at: str
    task: str
    purpose: str


# -- which skills are thin ------------------------------------------------------------------


def thin_reasons(
    description: str, when_to_use: str, triggers: Sequence[str], minimum: int = MIN_DESCRIPTION
) -> list[str]:
    """Why a skill's frontmatter is thin (empty: it is not)."""
    reasons = []
    if len(description.strip()) < minimum:
        reasons.append(
            f"the description is {len(description.strip())} characters (under {minimum})"
        )
    if not (_WHEN.search(description) or when_to_use.strip() or list(triggers)):
        reasons.append("nothing says when to use it (no 'use when', when_to_use or triggers)")
    return reasons


def thin_skills(ledger: Ledger) -> list[ThinSkill]:
    """Installed, not retired skills whose current version is thin, by name."""
    minimum = _minimum(ledger)
    with ledger.db.read() as conn:
        rows = conn.execute(
            "SELECT s.skill_id, s.name, s.current_version, v.description, v.when_to_use,"
            " v.triggers FROM skills s JOIN skill_versions v ON v.skill_id = s.skill_id"
            " AND v.version_no = s.current_version WHERE s.status NOT IN ('uninstalled',"
            " 'retired') ORDER BY s.name, s.skill_id"
        ).fetchall()
    found = []
    for sid, name, version, description, when, triggers in rows:
        reasons = thin_reasons(description, when, json.loads(triggers), minimum)
        if reasons:
            found.append(ThinSkill(int(sid), name, int(version), description, tuple(reasons)))
    return found


def _minimum(ledger: Ledger) -> int:
    try:
        return max(1, int(ledger.config.get("enrich.min_description", MIN_DESCRIPTION)))
    except (TypeError, ValueError):
        return MIN_DESCRIPTION


# -- usage contexts from transcripts ------------------------------------------------------------


def usage_contexts(conn: sqlite3.Connection, name: str) -> list[UsageContext]:
    """The newest sessions that used the skill, each with its task and the agent's purpose
    right before the skill was launched; redacted, one line each."""
    sessions = conn.execute(
        "SELECT u.session_id, s.started_at FROM skill_uses u JOIN sessions s USING(session_id)"
        " WHERE u.skill_name=? ORDER BY s.started_at DESC, u.session_id LIMIT ?",
        (name, MAX_CONTEXTS),
    ).fetchall()
    found = []
    for session_id, started in sessions:
        task = conn.execute(
            "SELECT text FROM session_messages WHERE session_id=? AND kind='prompt'"
            " ORDER BY idx LIMIT 1",
            (session_id,),
        ).fetchone()
        launch = conn.execute(
            "SELECT idx FROM session_messages WHERE session_id=? AND (text LIKE ? OR text LIKE ?)"
            " ORDER BY idx LIMIT 1",
            (session_id, f"%Launching skill: {name}%", f"%Base directory for this skill:%/{name}%"),
        ).fetchone()
        purpose = None
        if launch is not None:
            purpose = conn.execute(
                "SELECT text FROM session_messages WHERE session_id=? AND idx < ?"
                " AND role='assistant' AND kind='text' ORDER BY idx DESC LIMIT 1",
                (session_id, int(launch[0])),
            ).fetchone()
        found.append(
            UsageContext(
                session_id=str(session_id),
                started_at=str(started),
                task=_first_sentences(task[0] if task else "", 1, 220),
                purpose=_last_sentence(purpose[0] if purpose else ""),
            )
        )
    return found


def _prose(text: str) -> str:
    """The prose of an archived message: the text before the first merged tool line."""
    kept = []
    for line in text.splitlines():
        if line.startswith("[") and "]" in line[:40]:
            break
        kept.append(line)
    return redact(" ".join(kept)).replace("**", "").replace("`", "")


def _first_sentences(text: str, count: int, limit: int) -> str:
    parts = _SENTENCE.split(_prose(text).strip())
    return one_line(" ".join(parts[:count]), limit)


def _last_sentence(text: str) -> str:
    parts = [p for p in _SENTENCE.split(_prose(text).strip()) if p.strip()]
    return one_line(parts[-1], 220) if parts else ""


# -- proposing --------------------------------------------------------------------------------


def propose_fields_by_rules(
    name: str, description: str, body: str, contexts: Sequence[UsageContext]
) -> tuple[dict[str, str], list[str]]:
    """(fields, what they rest on) from the body's "When to use" section and the usage
    contexts; no network."""
    when_items = _when_section(body)
    uses = [c.purpose for c in contexts if c.purpose] + [c.task for c in contexts if c.task]
    basis = []
    if when_items:
        basis.append(f"the body's 'When to use' section ({len(when_items)} items)")
    if contexts:
        basis.append(f"{len(contexts)} session(s) that used it")
    situations = [_clause(w) for w in when_items[:3]]
    if not situations:
        situations = [_clause(u) for u in uses[:2]]
    situations = [s for s in situations if s]
    what = description.strip().rstrip(".") or name.replace("-", " ")
    text = f"{what}."
    if situations:
        text += " Use when " + _join(situations) + "."
    when = "; ".join(_clause(w) for w in when_items[:4])
    if contexts:
        seen = "; ".join(_clause(c.task) for c in contexts[:2] if c.task)
        if seen:
            when = f"{when}; seen in use: {seen}" if when else f"seen in use: {seen}"
    triggers = _triggers([c.task for c in contexts if c.task], when_items)
    tags = _tags(name, description, body, uses)
    return {
        "description": _bounded(text, MAX_DESCRIPTION),
        "when_to_use": _bounded(when, MAX_WHEN),
        "triggers": ", ".join(triggers),
        "tags": ", ".join(tags),
    }, basis


def _when_section(body: str) -> list[str]:
    """The bullets of a "When to use" (or "Use this when") section of the body."""
    lines = body.splitlines()
    items: list[str] = []
    inside = False
    for line in lines:
        heading = line.lstrip("#").strip().lower()
        if line.startswith("#"):
            inside = heading.startswith(("when to use", "use this when", "use when"))
            continue
        if inside and line.strip().startswith(("-", "*")):
            items.append(one_line(line.strip()[1:].strip(), 200))
    return items


def _clause(text: str) -> str:
    """A situation as a clause that follows "Use when": no trailing stop, no emphasis marks,
    the first word in lower case unless it is a name or an acronym ("CPU", "PgBouncer")."""
    text = one_line(text.replace("*", ""), 200).strip().rstrip(".;:")
    first = text.split(" ", 1)[0]
    if first[:1].isupper() and (len(first) == 1 or first[1:].islower()):
        text = text[0].lower() + text[1:]
    return text.replace("<", "‹").replace(">", "›")


def _join(parts: Sequence[str]) -> str:
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + ", or " + parts[-1]


def _triggers(tasks: Sequence[str], when_items: Sequence[str]) -> list[str]:
    """Short phrases a person might say: the clauses of the when-to-use items, then of the
    tasks the sessions opened with; 3–9 words each, none about the agent itself."""
    found: list[str] = []
    for text in [*when_items, *tasks]:
        for clause in re.split(r"[,;:()]|\band\b|\bso\b", text.replace("*", "")):
            words = clause.strip().rstrip(".").split()
            if not 3 <= len(words) <= 9 or words[0].lower() in _AGENT_TALK:
                continue
            phrase = _clause(" ".join(words))
            if "skill" not in phrase and phrase.lower() not in (f.lower() for f in found):
                found.append(one_line(phrase, 80))
    return found[:MAX_TRIGGERS]


#: A clause that opens with one of these is the agent talking about itself, not a task.
_AGENT_TALK = frozenset({"to", "i", "i'll", "i'm", "i've", "let", "let's", "using", "we'll"})


def _tags(name: str, description: str, body: str, uses: Sequence[str]) -> list[str]:
    """Words the skill is about: those of its description (weighted 3), its headings (2) and
    its prose (1, code dropped), with the usage contexts tipping ties; the name's own words
    first when the body uses them."""
    prose = re.sub(r"```.*?```", " ", body, flags=re.S).lower()
    counts: Counter[str] = Counter(w for w in _WORD.findall(prose) if w not in _STOP)
    headings = " ".join(line for line in body.splitlines() if line.startswith("#")).lower()
    for text, weight in ((description.lower(), 3), (headings, 2)):
        for word in _WORD.findall(text):
            if word not in _STOP:
                counts[word] += weight
    for text in uses:
        counts.update(w for w in _WORD.findall(text.lower()) if w in counts)
    tags = [p for p in name.split("-") if len(p) > 3 and p in counts]
    for word, _count in sorted(counts.items(), key=lambda c: (-c[1], c[0])):
        tag = _TAG.sub("-", word).strip("-")
        if len(tags) >= MAX_TAGS:
            break
        if tag and not any(tag == t or tag in t.split("-") for t in tags):
            tags.append(tag)
    return tags[:MAX_TAGS]


def _bounded(text: str, limit: int) -> str:
    return one_line(text, limit).replace("<", "‹").replace(">", "›")


def llm_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "description": {"type": "string", "maxLength": MAX_DESCRIPTION},
            "when_to_use": {"type": "string", "maxLength": MAX_WHEN},
            "triggers": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_TRIGGERS},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_TAGS},
        },
        "required": ["description", "when_to_use", "triggers", "tags"],
    }


def llm_content(
    name: str, frontmatter: dict[str, Any], body: str, contexts: Sequence[UsageContext]
) -> str:
    """The user message: the skill and where it was used (already redacted)."""
    used = "\n".join(f"- task: {c.task}\n  wanted: {c.purpose or '-'}" for c in contexts)
    return (
        f"Skill name: {name}\n"
        f"Current frontmatter (JSON): {json.dumps(frontmatter, ensure_ascii=False)[:3000]}\n\n"
        f"Body (first 6000 characters):\n{redact(body[:6000])}\n\n"
        f"Sessions that used it:\n{used or '- none recorded'}\n\n"
        f"Call {TOOL_NAME} with the improved description, when to use it, up to"
        f" {MAX_TRIGGERS} triggers (phrases a user would say) and up to {MAX_TAGS} tags."
    )


def propose_fields_by_llm(
    client: ToolCaller,
    name: str,
    frontmatter: dict[str, Any],
    body: str,
    contexts: Sequence[UsageContext],
) -> dict[str, str]:
    """The LLM's proposal, checked and bounded (raises `EnrichmentError` on a bad answer)."""
    answer = client.tool_call(
        SYSTEM,
        llm_content(name, frontmatter, body, contexts),
        TOOL_NAME,
        "Propose the skill's discovery frontmatter.",
        llm_schema(),
    )
    description = answer.get("description")
    when = answer.get("when_to_use", "")
    triggers = answer.get("triggers", [])
    tags = answer.get("tags", [])
    if not isinstance(description, str) or not description.strip():
        raise EnrichmentError("the LLM proposed no description")
    if not isinstance(when, str) or not isinstance(triggers, list) or not isinstance(tags, list):
        raise EnrichmentError("the LLM's proposal has fields of the wrong type")
    clean_tags = [_TAG.sub("-", str(t).lower()).strip("-")[:32] for t in tags]
    return {
        "description": _bounded(redact(description), MAX_DESCRIPTION),
        "when_to_use": _bounded(redact(when), MAX_WHEN),
        "triggers": ", ".join(
            one_line(redact(str(t)).replace(",", " "), 80) for t in triggers[:MAX_TRIGGERS]
        ),
        "tags": ", ".join(t for t in clean_tags[:MAX_TAGS] if t),
    }


def propose(ledger: Ledger, key: str | int, client: ToolCaller | None = None) -> Enrichment:
    """Propose an enrichment for one skill (thin or not: a person asked) into the review
    queue; by `client` when given, else by rules."""
    with ledger.db.read() as conn:
        sid = catalog.resolve(conn, key)
        if sid is None:
            raise EnrichmentError(f"no skill named {key!r}")
        row = conn.execute(
            "SELECT s.name, s.status, s.current_version, s.fs_path, v.description,"
            " v.when_to_use, v.triggers, v.frontmatter, v.body_hash, v.source_hash,"
            " v.warnings, v.findings FROM skills s JOIN skill_versions v"
            " ON v.skill_id = s.skill_id AND v.version_no = s.current_version"
            " WHERE s.skill_id=?",
            (sid,),
        ).fetchone()
        if row["status"] in ("retired", "uninstalled"):
            raise EnrichmentError(f"{row['name']} is {row['status']}: nothing to enrich")
        body = blob_text(conn, row["body_hash"])
        before = blob_text(conn, row["source_hash"])
        contexts = usage_contexts(conn, row["name"])
    name = str(row["name"])
    reasons = thin_reasons(
        row["description"], row["when_to_use"], json.loads(row["triggers"]), _minimum(ledger)
    )
    if client is not None:
        fields = propose_fields_by_llm(client, name, json.loads(row["frontmatter"]), body, contexts)
        source = f"llm:{client.model}"
        basis = [f"the LLM ({client.model}) read the body and {len(contexts)} usage context(s)"]
    else:
        fields, basis = propose_fields_by_rules(name, row["description"], body, contexts)
        source = "rules"
    after = render(before, fields)
    folder = Path(str(row["fs_path"])).parent.name
    check(folder, before, after, json.loads(row["warnings"]), json.loads(row["findings"]))
    with ledger.db.write() as conn:
        current = conn.execute(
            "SELECT current_version FROM skills WHERE skill_id=?", (sid,)
        ).fetchone()
        if int(current[0]) != int(row["current_version"]):
            raise EnrichmentError(f"{name} changed while the proposal was made: try again")
        proposal_id = (
            "e_" + hashlib.sha256(f"{sid}\0{after}\0{ledger.clock()}".encode()).hexdigest()[:12]
        )
        ledger.append_event(
            conn,
            EventType.SKILL_ENRICHMENT_PROPOSED,
            f"skill:{name}",
            {
                "proposal_id": proposal_id,
                "skill_id": sid,
                "skill_name": name,
                "version_no": int(row["current_version"]),
                "source": source,
                "prompt_version": PROMPT_VERSION if client is not None else "",
                "fields": fields,
                "before_hash": store_blob(conn, before),
                "content_hash": store_blob(conn, after),
                "reasons": [*reasons, *(f"from {b}" for b in basis)],
            },
        )
    return get(ledger, proposal_id)


def render(before: str, fields: dict[str, str]) -> str:
    """The SKILL.md with the proposed fields (round trip: everything else kept)."""
    meta = {k: fields.get(k, "") for k in ("when_to_use", "triggers", "tags")}
    try:
        return edit(before, fields["description"], meta)
    except FrontmatterEditError as exc:
        raise EnrichmentError(f"cannot rewrite its frontmatter: {exc}") from exc


def check(
    folder: str,
    before: str,
    after: str,
    old_warnings: Sequence[Sequence[str]],
    old_findings: Sequence[dict[str, Any]],
) -> None:
    """Re-validate and re-lint the rewritten SKILL.md (of the skill in folder `folder`): it
    parses, the description holds the spec's limits, no new spec warning, no new lint
    finding."""
    name = folder
    parsed = parse_skill_md(after.encode("utf-8"), folder)
    if not isinstance(parsed, ParsedSkill):
        raise EnrichmentError(f"the rewritten SKILL.md of {name} does not parse: {parsed.reason}")
    if len(parsed.description) > MAX_DESCRIPTION or any(c in parsed.description for c in "<>"):
        raise EnrichmentError("the proposed description breaks the spec (length or < >)")
    had = {str(w[0]) for w in old_warnings}
    new = sorted({w.code for w in parsed.warnings} - had)
    if new:
        raise EnrichmentError(f"the rewritten SKILL.md of {name} gains spec warnings: {new}")
    had_rules = {(str(f.get("rule")), str(f.get("severity"))) for f in old_findings}
    gained = [
        f
        for f in lint_text("SKILL.md", after)
        if f.severity in ("high", "medium") and (f.rule, f.severity) not in had_rules
    ]
    if gained:
        raise EnrichmentError(
            f"the rewritten SKILL.md of {name} fails the security lint: {gained[0].rule}"
        )
    if after == before:
        raise EnrichmentError(f"the proposal would not change {name}'s SKILL.md")


# -- reviewing --------------------------------------------------------------------------------

_COLUMNS = (
    "proposal_id, skill_id, skill_name, version_no, source, fields, before_hash, content_hash,"
    " reasons, status, created_at, created_by, decided_at, decided_by, reason"
)


def _row(conn: sqlite3.Connection, r: Any) -> Enrichment:
    before, after = blob_text(conn, r[6]), blob_text(conn, r[7])
    found = Enrichment(
        proposal_id=r[0],
        skill_id=int(r[1]),
        skill_name=r[2],
        version_no=int(r[3]),
        source=r[4],
        fields=json.loads(r[5]),
        before=before,
        after=after,
        reasons=tuple(json.loads(r[8])),
        status=r[9],
        created_at=r[10],
        created_by=r[11],
        decided_at=r[12],
        decided_by=r[13],
        reason=r[14],
    )
    return dataclasses.replace(found, diff=diff(found))


def diff(found: Enrichment) -> str:
    return "\n".join(
        difflib.unified_diff(
            found.before.splitlines(),
            found.after.splitlines(),
            fromfile=f"{found.skill_name} v{found.version_no}",
            tofile=f"{found.skill_name} (enriched)",
            lineterm="",
        )
    )


def listing(ledger: Ledger, status: str | None = "pending") -> list[Enrichment]:
    """Enrichment proposals with `status` (None: all), oldest first."""
    where, params = ("WHERE status=?", (status,)) if status else ("", ())
    with ledger.db.read() as conn:
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM enrichments {where} ORDER BY created_at, proposal_id",
            params,
        ).fetchall()
        return [_row(conn, r) for r in rows]


def get(ledger: Ledger, proposal_id: str) -> Enrichment:
    with ledger.db.read() as conn:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM enrichments WHERE proposal_id=?", (proposal_id,)
        ).fetchone()
        if row is None:
            raise EnrichmentError(f"no enrichment proposal {proposal_id!r}")
        return _row(conn, row)


def write(ledger: Ledger, proposal_id: str) -> Path:
    """Approve a pending proposal: check the file is still the one proposed against, check
    the new text again, write it atomically and record it. Returns the SKILL.md written (the
    caller rescans its root so the new version is recorded)."""
    found = get(ledger, proposal_id)
    if found.status != "pending":
        raise EnrichmentError(f"enrichment {proposal_id} is already {found.status}")
    with ledger.db.read() as conn:
        row = conn.execute(
            "SELECT s.fs_path, s.current_version, v.warnings, v.findings FROM skills s"
            " JOIN skill_versions v ON v.skill_id = s.skill_id"
            " AND v.version_no = s.current_version WHERE s.skill_id=?",
            (found.skill_id,),
        ).fetchone()
    if row is None:
        raise EnrichmentError(f"{found.skill_name} is no longer in the catalog")
    path = Path(str(row[0]))
    try:
        on_disk = read_text(path)
    except OSError as exc:
        raise EnrichmentError(f"cannot read {path}: {exc}") from exc
    if int(row[1]) != found.version_no or on_disk != found.before:
        _decide(ledger, found, "stale", "the SKILL.md changed since it was proposed")
        raise EnrichmentError(
            f"{found.skill_name} changed since this proposal (v{row[1]} now): it is set aside"
            f" as stale; propose again with `librarian enrich {found.skill_name}`"
        )
    check(path.parent.name, found.before, found.after, json.loads(row[2]), json.loads(row[3]))
    try:
        write_atomic(path, found.after)
        content_hash, files_hash = folder_hashes(path)
    except OSError as exc:
        raise EnrichmentError(f"cannot write {path}: {exc}") from exc
    with ledger.db.write() as conn:
        ledger.append_event(
            conn,
            EventType.SKILL_ENRICHMENT_APPROVED,
            f"skill:{found.skill_name}",
            {
                "proposal_id": proposal_id,
                "skill_id": found.skill_id,
                "path": str(path),
                "previous_hash": store_blob(conn, found.before),
                "written": {
                    "skill_id": found.skill_id,
                    "content_hash": content_hash,
                    "files_hash": files_hash,
                },
            },
        )
    return path


def reject(ledger: Ledger, proposal_id: str, reason: str) -> Enrichment:
    """Reject a pending proposal with a reason (kept)."""
    found = get(ledger, proposal_id)
    if found.status != "pending":
        raise EnrichmentError(f"enrichment {proposal_id} is already {found.status}")
    if not reason.strip():
        raise EnrichmentError("a rejection needs a reason")
    _decide(ledger, found, "rejected", reason.strip())
    return get(ledger, proposal_id)


def _decide(ledger: Ledger, found: Enrichment, status: str, reason: str) -> None:
    with ledger.db.write() as conn:
        ledger.append_event(
            conn,
            EventType.SKILL_ENRICHMENT_REJECTED,
            f"skill:{found.skill_name}",
            {
                "proposal_id": found.proposal_id,
                "skill_id": found.skill_id,
                "status": status,
                "reason": one_line(reason, 500),
            },
        )
