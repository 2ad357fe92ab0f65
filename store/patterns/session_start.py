"""What the library knows about the project a Claude Code session opens in: the context the
SessionStart hook injects (FORMATS §3.3, DESIGN §7).

The context is a few factual lines, never instructions: the pitfalls recorded for the
project (and team-wide), most severe first, then the skills its sessions used. Every field
shown goes through `_clean`, which masks secrets (`redact`) before anything is cut: a skill
description or a pattern with a token in it never reaches the agent in clear. Relevance
comes from the session log alone, without the embedding model, so the hook process stays
well under a second: this module imports only the standard library, `store.text` and
`store.ingest.redact` at the top; the event log (`store.events`) and the config are imported
when the hook runs.

Every injection is a logged retrieval (tool `session-start`), so what the hook shows counts
towards graduation like any other retrieval. The hook never fails the session: on any
problem `run_hook` returns "" and the caller prints nothing.
"""

from __future__ import annotations

import json
import posixpath
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from store import events
from store.chain_head import Head, HeadFile
from store.config import Config
from store.identity import resolve_actor
from store.ingest.redact import redact
from store.patterns.retrieval_log import RetrievalLog
from store.text import one_line

if TYPE_CHECKING:
    from store.kernel import Kernel

TOOL = "session-start"
HOOK_EVENT = "SessionStart"
#: How long the hook waits for another process's lock before skipping (seconds).
BUSY_TIMEOUT = 0.3
#: Claude Code saves hook output longer than this to a file and shows only a preview.
OUTPUT_CAP = 10_000
#: The first schema version with the pattern and retrieval tables.
PATTERNS_SCHEMA = 4
#: The first schema version that records why a pattern is not served (`patterns.flaw`).
FLAW_SCHEMA = 12
#: The first schema version that tells the served version of a skill from its newest one
#: (a candidate proving itself is not served: store/lifecycle/candidates.py).
SERVED_SCHEMA = 14
#: Stdin beyond this is not a hook input (the real one is a few hundred bytes).
MAX_INPUT = 1_000_000

Hit = tuple[str, str, int, float]


@dataclass(frozen=True)
class Settings:
    """The `[session_start]` budget and the `patterns.min_confidence` floor."""

    max_chars: int = 4000
    skills: int = 5
    pitfalls: int = 5
    min_confidence: float = 0.4

    @classmethod
    def from_config(cls, config: Config) -> Settings:
        def number(key: str, default: float, kind: type[int] | type[float]) -> Any:
            try:
                value = kind(config.get(key, default))
            except (TypeError, ValueError):
                return default
            return max(value, kind(0))

        return cls(
            max_chars=min(number("session_start.max_chars", cls.max_chars, int), OUTPUT_CAP),
            skills=number("session_start.skills", cls.skills, int),
            pitfalls=number("session_start.pitfalls", cls.pitfalls, int),
            min_confidence=number("patterns.min_confidence", cls.min_confidence, float),
        )


@dataclass(frozen=True)
class SkillFact:
    name: str
    status: str
    description: str
    sessions: int  # sessions that used it: in this project, or (fallback) anywhere
    uses: int  # recorded `skill.applied` outcomes
    in_project: bool


@dataclass(frozen=True)
class PitfallFact:
    pattern_id: str
    title: str
    resolution: str
    severity: str
    scope: str
    project: str
    sessions: int
    confidence: float


@dataclass(frozen=True)
class Context:
    """The text to inject, and the items in it as retrieval hits (kind, id, rank, score)."""

    project: str
    text: str
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class Request:
    cwd: str
    session_id: str
    source: str


# -- relevance ----------------------------------------------------------------------------------


def normal_cwd(path: str) -> str:
    """A working directory from hook or MCP input (or a project recorded from a transcript),
    normalised lexically, without touching the filesystem: `.` and `..` segments, repeated
    and trailing slashes folded. "" when nothing can be matched against it: empty, relative,
    or the root itself (which contains every project and names none)."""
    path = path.strip()
    if not path.startswith("/"):
        return ""
    folded = posixpath.normpath(path).lstrip("/")  # normpath keeps a leading "//"
    return "/" + folded if folded else ""


def project_for(conn: sqlite3.Connection, cwd: str) -> str:
    """The known session project that equals or contains `cwd`, the longest one when several
    do ("" when none). Both sides are compared normalised, so `..` cannot climb out of a
    project into it, and a project recorded as `/` (or with `..`) does not swallow others."""
    where = normal_cwd(cwd)
    if not where:
        return ""
    best, best_len = "", 0
    for (project,) in conn.execute("SELECT DISTINCT project FROM sessions ORDER BY project"):
        root = normal_cwd(project or "")
        if root and (where == root or where.startswith(root + "/")) and len(root) > best_len:
            best, best_len = project, len(root)
    return best


#: A skill row that is the one a name resolves to (collision precedence, as `suggest` does),
#: usable (stable or proposed) and not on the denylist.
_USABLE = """
    s.status IN ({statuses})
    AND s.name NOT IN (SELECT name FROM denylist)
    AND NOT EXISTS (
        SELECT 1 FROM skills o WHERE o.name = s.name AND o.status != 'uninstalled'
        AND (o.scope_rank, o.root_rank, o.fs_path) < (s.scope_rank, s.root_rank, s.fs_path)
    )
"""


def relevant_skills(conn: sqlite3.Connection, project: str, limit: int) -> list[SkillFact]:
    """Skills this project's sessions used (most sessions, then most recent first); when
    fewer than `limit`, the most used stable skills of the whole library fill the rest."""
    if limit <= 0:
        return []
    (schema,) = conn.execute("PRAGMA user_version").fetchone()
    served = "served_version" if int(schema) >= SERVED_SCHEMA else "current_version"
    rows = conn.execute(
        f"""
        SELECT s.name, s.status, v.description, u.sessions, s.use_count
        FROM (
            SELECT us.skill_name AS name, count(DISTINCT us.session_id) AS sessions,
                   max(se.started_at) AS last_seen
            FROM skill_uses us JOIN sessions se ON se.session_id = us.session_id
            WHERE se.project = ?
            GROUP BY us.skill_name
        ) u
        JOIN skills s ON s.name = u.name
        JOIN skill_versions v ON v.skill_id = s.skill_id AND v.version_no = s.{served}
        WHERE {_USABLE.format(statuses="'stable', 'proposed'")}
        ORDER BY u.sessions DESC, u.last_seen DESC, s.name
        LIMIT ?
        """,
        (project, limit),
    ).fetchall()
    found = [SkillFact(r[0], r[1], r[2], int(r[3]), int(r[4]), True) for r in rows]
    if len(found) >= limit:
        return found
    taken = [f.name for f in found]
    rows = conn.execute(
        f"""
        SELECT name, status, description, sessions, use_count FROM (
            SELECT s.name, s.status, v.description, s.use_count, s.last_used_at,
                   (SELECT count(DISTINCT session_id) FROM skill_uses
                    WHERE skill_name = s.name) AS sessions
            FROM skills s
            JOIN skill_versions v ON v.skill_id = s.skill_id AND v.version_no = s.{served}
            WHERE {_USABLE.format(statuses="'stable'")}
            AND s.name NOT IN ({",".join("?" * len(taken))})
        )
        WHERE use_count > 0 OR sessions > 0
        ORDER BY use_count DESC, sessions DESC, last_used_at DESC, name
        LIMIT ?
        """,
        (*taken, limit - len(found)),
    ).fetchall()
    return found + [SkillFact(r[0], r[1], r[2], int(r[3]), int(r[4]), False) for r in rows]


def relevant_pitfalls(
    conn: sqlite3.Connection, project: str, limit: int, min_confidence: float
) -> list[PitfallFact]:
    """Live pitfalls of this project or of the team that pass the pattern bar, at or above
    the confidence floor; most severe first, then the most sessions, then the most
    confident. (A library the hook finds before migration 12 has judged no pattern yet.)"""
    if limit <= 0:
        return []
    (schema,) = conn.execute("PRAGMA user_version").fetchone()
    served = "AND flaw = ''" if int(schema) >= FLAW_SCHEMA else ""
    rows = conn.execute(
        f"""
        SELECT pattern_id, title, resolution, severity, scope, project, sessions, confidence
        FROM patterns
        WHERE kind = 'pitfall' AND status IN ('active', 'graduated') AND confidence >= ?
          AND (project = ? OR scope = 'TEAM') {served}
        ORDER BY CASE severity WHEN 'high' THEN 0 WHEN 'medium' THEN 1 WHEN 'low' THEN 2
                 ELSE 3 END, sessions DESC, confidence DESC, pattern_id
        LIMIT ?
        """,
        (min_confidence, project, limit),
    ).fetchall()
    return [PitfallFact(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), float(r[7])) for r in rows]


# -- the text -----------------------------------------------------------------------------------


def _clean(text: str, limit: int) -> str:
    """One printable line, secrets masked (before the cut, so no part of one is left);
    angle brackets made inert so no tag-like text reaches the agent."""
    return one_line(redact(text), limit).replace("<", "‹").replace(">", "›")


def _first_sentence(text: str) -> str:
    """The description's first sentence (its "Use when…" part is for the skill loader)."""
    text = " ".join(text.split())
    cut = text.find(". ", 40)
    return text[: cut + 1] if cut > 0 else text


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _sentence(text: str) -> str:
    """`text` ending as a sentence (not doubled after a "…" or a full stop)."""
    text = text.rstrip()
    return text if not text or text[-1] in ".!?…" else text + "."


def pitfall_line(p: PitfallFact, project: str) -> str:
    kind = "Team-wide pitfall" if p.scope == "TEAM" else "Pitfall"
    severity = f" ({_clean(p.severity, 20)} severity)" if p.severity else ""
    where = "of this project" if p.project == project else "of other projects"
    title = _sentence(_clean(p.title, 200) or p.pattern_id)
    resolution = _sentence(_clean(p.resolution, 240))
    outcome = (
        f"It was resolved by: {resolution}" if resolution else "No resolution has been recorded."
    )
    return f"- {kind}{severity} seen in {_plural(p.sessions, 'session')} {where}: {title} {outcome}"


def skill_line(s: SkillFact) -> str:
    name = _clean(s.name, 80).replace("`", "'")
    head = f"- Skill `{name}` ({_clean(s.status, 20)})"
    if s.in_project:
        usage = f"has been used in {_plural(s.sessions, 'session')} of this project"
    elif s.sessions and s.uses:
        usage = (
            f"has been used in {_plural(s.sessions, 'session')} of other projects"
            f" and has {_plural(s.uses, 'recorded use')}"
        )
    elif s.sessions:
        usage = f"has been used in {_plural(s.sessions, 'session')} of other projects"
    else:
        usage = f"has {_plural(s.uses, 'recorded use')} across the library"
    description = _clean(_first_sentence(s.description), 160)
    return f"{head} {usage}" + (f": {description}" if description else ".")


def render(
    project: str,
    session_count: int,
    pitfalls: list[PitfallFact],
    skills: list[SkillFact],
    max_chars: int,
) -> tuple[str, tuple[Hit, ...]]:
    """The context text within `max_chars` (cut at a line boundary, keeping rank order) and
    the items it shows as hits, ranked in the order shown."""
    header = (
        f"skill-librarian records for the project {_clean(project, 200)}"
        f" ({_plural(session_count, 'ingested session')})."
    )
    sections: list[tuple[str, list[tuple[str, tuple[str, str, float]]]]] = [
        (
            "Recorded pitfalls, most severe first:",
            [(pitfall_line(p, project), ("pattern", p.pattern_id, p.confidence)) for p in pitfalls],
        ),
        (
            "Skills with a recorded use:",
            [
                (skill_line(s), ("skill", s.name, float(s.sessions if s.in_project else s.uses)))
                for s in skills
            ],
        ),
    ]
    lines = [header]
    used = len(header)
    hits: list[Hit] = []
    full = used > max_chars
    for heading, items in sections:
        opened = False
        for line, (kind, item, score) in items:
            cost = len(line) + 1 + (0 if opened else len(heading) + 1)
            if full or used + cost > max_chars:
                full = True
                break
            if not opened:
                lines.append(heading)
                opened = True
            lines.append(line)
            used += cost
            hits.append((kind, item, len(hits) + 1, round(score, 4)))
    if not hits:
        return "", ()
    return "\n".join(lines), tuple(hits)


def build_context(conn: sqlite3.Connection, cwd: str, settings: Settings) -> Context:
    """The context for a session in `cwd`; empty text when the project is unknown or the
    library has nothing recorded for it."""
    project = project_for(conn, cwd)
    if not project:
        return Context("", "", ())
    pitfalls = relevant_pitfalls(conn, project, settings.pitfalls, settings.min_confidence)
    skills = relevant_skills(conn, project, settings.skills)
    (count,) = conn.execute(
        "SELECT count(*) FROM sessions WHERE project = ?", (project,)
    ).fetchone()
    text, hits = render(project, int(count), pitfalls, skills, settings.max_chars)
    return Context(project, text, hits)


def session_context(
    library: Kernel, cwd: str, session_id: str = "", *, log: bool = True
) -> Context:
    """`build_context` for an open library; the injection is logged as a retrieval."""
    with library.db.read() as conn:
        context = build_context(conn, cwd, Settings.from_config(library.config))
    if log and context.hits:
        library.service(RetrievalLog).record(
            TOOL, cwd, context.hits, project=context.project, session_id=session_id
        )
    return context


# -- the hook -----------------------------------------------------------------------------------


def parse_request(raw: str) -> Request | None:
    """The fields the hook needs from Claude Code's JSON input; None when it is not one."""
    try:
        data = json.loads(raw) if raw.strip() else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    event = data.get("hook_event_name", HOOK_EVENT)
    cwd = data.get("cwd")
    if event != HOOK_EVENT or not isinstance(cwd, str) or not cwd.strip():
        return None
    session_id = data.get("session_id")
    source = data.get("source")
    return Request(
        cwd=cwd,
        session_id=session_id if isinstance(session_id, str) else "",
        source=source if isinstance(source, str) else "",
    )


def hook_output(text: str) -> str:
    """The JSON Claude Code reads from a SessionStart hook's stdout."""
    output = {"hookSpecificOutput": {"hookEventName": HOOK_EVENT, "additionalContext": text}}
    return json.dumps(output, ensure_ascii=True)


def connect(db: Path, timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """The library's database, never created, waiting at most `timeout` for a lock."""
    conn = sqlite3.connect(
        db.resolve().as_uri() + "?mode=rw", uri=True, timeout=timeout, isolation_level=None
    )
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def log_injection(
    conn: sqlite3.Connection,
    context: Context,
    *,
    query: str,
    session_id: str,
    actor: str,
    head: Path | None = None,
) -> int:
    """Append the `retrieval.logged` event for an injection (as `Library.log_retrieval`);
    returns its seq, and moves the chain head file `head` forward. Raises
    `sqlite3.OperationalError` when the library stays busy."""
    payload = events.retrieval_payload(TOOL, query, context.hits, context.project, session_id)
    conn.execute("BEGIN IMMEDIATE")
    try:
        event = events.append(conn, "retrieval.logged", f"retrieval:{TOOL}", payload, actor)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    if head is not None:
        HeadFile(head).advance(conn, Head(event.seq, event.hash))
    return event.seq


def run_hook(root: Path, raw: str) -> str:
    """`librarian hook session-start`: the stdout for one hook input, "" when there is
    nothing to inject or anything goes wrong (no input, unknown project, no library, a busy
    or broken database). Never raises an `Exception`."""
    try:
        request = parse_request(raw[:MAX_INPUT])
        db = root / "library.db"
        if request is None or not db.is_file():
            return ""
        config = Config(root / "config.toml")
        conn = connect(db)
        try:
            (schema,) = conn.execute("PRAGMA user_version").fetchone()
            if int(schema) < PATTERNS_SCHEMA:
                return ""
            context = build_context(conn, request.cwd, Settings.from_config(config))
            if not context.text:
                return ""
            try:
                actor = resolve_actor(
                    str(config.get("reviewer.name") or ""), str(config.get("reviewer.email") or "")
                )
                log_injection(
                    conn,
                    context,
                    query=request.cwd,
                    session_id=request.session_id,
                    actor=actor,
                    head=root / "head.json",
                )
            except Exception:  # a busy library: the context still goes out, unlogged
                pass
        finally:
            conn.close()
        return hook_output(context.text)
    except Exception:
        return ""
