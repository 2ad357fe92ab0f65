"""The UserPromptSubmit hook's answer when the resident ranker is not up: the library's FTS5
index alone (no model), opened read-only with a short lock wait.

Candidates are the skills bm25 ranks first for the prompt's words (`suggest`'s column
weights and its rule for dropping words most skills share); a skill is added when its name,
description and when-to-use text cover at least `lexical_floor` of the prompt's words,
weighted by how rare each word is in the catalog (inverse document frequency), and at least
three of them. Measured like the ranker's floor (`prompt_rank`): at 0.30, 65% of the
evaluation tasks bring up their skill and none of the 40 unrelated prompts anything.
Retired, denylisted, uninstalled and shadowed skills are never served, and every text is
masked for secrets (`store.ingest.redact`) before it is shown."""

from __future__ import annotations

import contextlib
import math
import re
import sqlite3
import tomllib
from pathlib import Path

from store import events
from store.chain_head import Head, HeadFile
from store.identity import resolve_actor
from store.ingest.redact import redact
from store.models.events import EventType
from store.patterns import session_start
from store.query_terms import fts_query, query_terms, stem
from store.skills.prompt_context import TOOL, Pick, Request, Settings, hook_output, render

#: bm25 column weights (name, description, use, body), as `suggest` uses them.
BM25_WEIGHTS = (1.0, 1.0, 1.0, 0.4)
#: Words in more than this share of the skills (and at least COMMON_MIN_DOCS) carry no
#: evidence: `suggest` drops them too.
COMMON_SHARE = 0.4
COMMON_MIN_DOCS = 500
CANDIDATES = 12
#: A skill must share at least this many of the prompt's words ("latest version" is not a task).
MIN_MATCHED = 3
BUSY_TIMEOUT = 0.3
LOGGED_QUERY_CHARS = 300
_USABLE = """
    s.status IN ('stable', 'proposed', 'deprecated')
    AND s.name NOT IN (SELECT name FROM denylist)
    AND NOT EXISTS (SELECT 1 FROM skills o WHERE o.name = s.name AND o.status != 'uninstalled'
        AND (o.scope_rank, o.root_rank, o.fs_path) < (s.scope_rank, s.root_rank, s.fs_path))
"""


def connect(db: Path) -> sqlite3.Connection:
    uri = db.resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)


def lexical_picks(conn: sqlite3.Connection, prompt: str, settings: Settings) -> list[Pick]:
    """The skills the prompt's words fit, best first."""
    words = query_terms(prompt)
    (documents,) = conn.execute("SELECT count(*) FROM skills_fts").fetchone()
    if not words or not documents:
        return []
    rarity = _rarity(conn, words, int(documents))
    if not rarity:
        return []
    b = BM25_WEIGHTS
    rows = conn.execute(
        f"SELECT f.rowid, f.name, f.description, f.extra FROM skills_fts f"
        f" WHERE skills_fts MATCH ? ORDER BY bm25(skills_fts, {b[0]}, {b[1]}, {b[2]}, {b[3]})"
        f" LIMIT {CANDIDATES}",
        (fts_query(list(rarity)),),
    ).fetchall()
    total = sum(rarity.values())
    scored = []
    for sid, name, description, extra in rows:
        text = f"{name} {description} {extra}".lower()
        matched = [w for w in rarity if re.search(rf"\b{re.escape(stem(w))}", text)]
        cover = sum(rarity[w] for w in matched) / total
        if cover >= settings.lexical_floor and len(matched) >= MIN_MATCHED:
            scored.append((int(sid), round(cover, 3), tuple(matched)))
    return _usable(conn, scored)[: settings.skills]


def _rarity(conn: sqlite3.Connection, words: list[str], documents: int) -> dict[str, float]:
    """Inverse document frequency of each word the catalog holds (common ones dropped)."""
    out: dict[str, float] = {}
    for word in words:
        (found,) = conn.execute(
            "SELECT count(*) FROM skills_fts WHERE skills_fts MATCH ?", (f'"{word}"',)
        ).fetchone()
        if 0 < found <= max(COMMON_SHARE * documents, COMMON_MIN_DOCS):
            out[word] = math.log(1 + documents / found)
    return out


def _usable(
    conn: sqlite3.Connection, scored: list[tuple[int, float, tuple[str, ...]]]
) -> list[Pick]:
    if not scored:
        return []
    marks = ",".join("?" * len(scored))
    rows = {
        int(r[0]): (r[1], r[2])
        for r in conn.execute(
            f"SELECT s.skill_id, s.name, v.description FROM skills s JOIN skill_versions v"
            f" ON v.skill_id = s.skill_id AND v.version_no = s.current_version"
            f" WHERE s.skill_id IN ({marks}) AND {_USABLE}",
            [sid for sid, _, _ in scored],
        )
    }
    picks = [
        Pick(redact(rows[sid][0]), redact(rows[sid][1]), cover, matched, "lexical", sid)
        for sid, cover, matched in scored
        if sid in rows
    ]
    return sorted(picks, key=lambda p: (-p.relevance, p.name))


def lexical_output(root: Path, request: Request, settings: Settings) -> str:
    """The hook's stdout from the index alone ("" when nothing clears the floor); what it
    served is logged as a retrieval, as the ranker logs it."""
    conn = connect(root / "library.db")
    try:
        picks = lexical_picks(conn, request.prompt, settings)
    finally:
        conn.close()
    output = hook_output(render(picks, settings.max_chars))
    if picks:
        with contextlib.suppress(Exception):  # a busy library: the context still goes out
            log_picks(root, request, picks)
    return output


def log_picks(root: Path, request: Request, picks: list[Pick]) -> None:
    """A `retrieval.logged` event for what was served (the prompt masked and cut), in its
    own short write transaction; the chain head follows."""
    conn = session_start.connect(root / "library.db")
    try:
        hits = [("skill", p.name, rank, p.relevance) for rank, p in enumerate(picks, start=1)]
        query = redact(" ".join(request.prompt.split()))[:LOGGED_QUERY_CHARS]
        project = session_start.project_for(conn, request.cwd) if request.cwd else ""
        payload = events.retrieval_payload(TOOL, query, hits, project, request.session_id)
        actor = _actor(root)
        conn.execute("BEGIN IMMEDIATE")
        try:
            event = events.append(
                conn, EventType.RETRIEVAL_LOGGED, f"retrieval:{TOOL}", payload, actor
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        HeadFile(root / "head.json").advance(conn, Head(event.seq, event.hash))
    finally:
        conn.close()


def _actor(root: Path) -> str:
    try:
        reviewer = tomllib.loads((root / "config.toml").read_text(encoding="utf-8")).get(
            "reviewer", {}
        )
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        reviewer = {}
    name = reviewer.get("name", "") if isinstance(reviewer, dict) else ""
    email = reviewer.get("email", "") if isinstance(reviewer, dict) else ""
    return resolve_actor(str(name or ""), str(email or ""))
