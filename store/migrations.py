"""Schema as code: each migration runs once, in order, tracked by `PRAGMA user_version`."""

from __future__ import annotations

import sqlite3

MIGRATIONS: tuple[str, ...] = (
    # 1: the event log, content blobs, the skill catalog projections, search, embeddings
    """
    CREATE TABLE events(
        seq INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        type TEXT NOT NULL,
        actor TEXT NOT NULL,
        subject TEXT NOT NULL,
        payload TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE
    );
    CREATE INDEX events_subject ON events(subject);
    CREATE INDEX events_type ON events(type);
    CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;

    CREATE TABLE blobs(hash TEXT PRIMARY KEY, text TEXT NOT NULL);

    CREATE TABLE skills(
        skill_id INTEGER PRIMARY KEY,
        fs_path TEXT NOT NULL UNIQUE,
        dir TEXT NOT NULL,
        name TEXT NOT NULL,
        root TEXT NOT NULL,
        scope TEXT NOT NULL,
        scope_rank INTEGER NOT NULL,
        root_rank INTEGER NOT NULL,
        status TEXT NOT NULL,
        current_version INTEGER NOT NULL,
        installed_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        last_used_at TEXT,
        use_count INTEGER NOT NULL DEFAULT 0,
        success_count INTEGER NOT NULL DEFAULT 0,
        failure_count INTEGER NOT NULL DEFAULT 0,
        last_success_at TEXT,
        last_failure_at TEXT,
        owner_scope TEXT NOT NULL DEFAULT 'TEAM',
        approved_by TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX skills_name ON skills(name);
    CREATE INDEX skills_status ON skills(status);

    CREATE TABLE skill_versions(
        skill_id INTEGER NOT NULL,
        version_no INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        files_hash TEXT NOT NULL,
        source_hash TEXT NOT NULL,
        body_hash TEXT NOT NULL,
        name TEXT NOT NULL,
        declared_name TEXT,
        description TEXT NOT NULL,
        when_to_use TEXT NOT NULL,
        triggers TEXT NOT NULL,
        tags TEXT NOT NULL,
        role TEXT NOT NULL,
        version_label TEXT NOT NULL,
        license TEXT NOT NULL,
        compatibility TEXT NOT NULL,
        allowed_tools TEXT NOT NULL,
        frontmatter TEXT NOT NULL,
        warnings TEXT NOT NULL,
        findings TEXT NOT NULL,
        warning_count INTEGER NOT NULL,
        finding_count INTEGER NOT NULL,
        max_severity TEXT NOT NULL,
        created_at TEXT NOT NULL,
        event_seq INTEGER NOT NULL,
        event_type TEXT NOT NULL,
        PRIMARY KEY(skill_id, version_no)
    );

    CREATE TABLE relations(
        source_id INTEGER NOT NULL,
        type TEXT NOT NULL,
        target_name TEXT NOT NULL,
        origin TEXT NOT NULL,
        added_at TEXT NOT NULL,
        PRIMARY KEY(source_id, type, target_name, origin)
    );
    CREATE INDEX relations_target ON relations(target_name);

    CREATE TABLE denylist(
        name TEXT PRIMARY KEY,
        skill_id INTEGER,
        reason TEXT NOT NULL,
        added_at TEXT NOT NULL
    );

    CREATE TABLE skill_texts(
        label INTEGER PRIMARY KEY,
        skill_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        text_hash TEXT NOT NULL
    );
    CREATE INDEX skill_texts_skill ON skill_texts(skill_id);

    CREATE VIRTUAL TABLE skills_fts USING fts5(
        name, description, extra, body,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );

    CREATE TABLE embeddings(
        model TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY(model, text_hash)
    );
    """,
    # 2: list order and collision precedence come from one index (the skills screen at 10k+)
    """
    CREATE INDEX skills_order ON skills(name, scope_rank, root_rank, fs_path);
    """,
    # 3: sessions, their archived messages, the reasoning DAG, review audit
    """
    CREATE TABLE sessions(
        session_id TEXT PRIMARY KEY,
        project TEXT NOT NULL,
        branch TEXT NOT NULL,
        client_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT NOT NULL,
        turns INTEGER NOT NULL,
        tool_calls INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        compactions INTEGER NOT NULL,
        skills_used TEXT NOT NULL,
        skipped TEXT NOT NULL,
        developer TEXT NOT NULL,
        messages_hash TEXT NOT NULL,
        ingested_at TEXT NOT NULL,
        ingest_count INTEGER NOT NULL
    );
    CREATE INDEX sessions_project ON sessions(project, started_at);

    CREATE TABLE session_files(
        session_id TEXT NOT NULL,
        path TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        PRIMARY KEY(session_id, path)
    );
    CREATE INDEX session_files_path ON session_files(path);

    CREATE TABLE session_messages(
        session_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        file TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        role TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        ts TEXT NOT NULL,
        is_error INTEGER NOT NULL,
        PRIMARY KEY(session_id, idx)
    );

    CREATE TABLE skill_uses(
        session_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        PRIMARY KEY(session_id, skill_name)
    );
    CREATE INDEX skill_uses_skill ON skill_uses(skill_name);

    CREATE TABLE nodes(
        node_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        project TEXT NOT NULL,
        type TEXT NOT NULL,
        summary TEXT NOT NULL,
        evidence TEXT NOT NULL,
        file TEXT NOT NULL,
        line_start INTEGER NOT NULL,
        line_end INTEGER NOT NULL,
        confidence REAL NOT NULL,
        scope TEXT NOT NULL,
        tier TEXT NOT NULL,
        strategy TEXT NOT NULL,
        status TEXT NOT NULL,
        developer TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        decided_at TEXT NOT NULL DEFAULT '',
        decided_by TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT '',
        merged_into TEXT NOT NULL DEFAULT '',
        retrieval_count INTEGER NOT NULL DEFAULT 0,
        last_retrieved_at TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX nodes_queue ON nodes(status, created_at, node_id);
    CREATE INDEX nodes_session ON nodes(session_id, line_start);
    CREATE INDEX nodes_project ON nodes(project, status);

    CREATE TABLE edges(
        source_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        type TEXT NOT NULL,
        PRIMARY KEY(source_id, target_id, type)
    );
    CREATE INDEX edges_target ON edges(target_id);

    CREATE TABLE audit(
        seq INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        node_id TEXT NOT NULL,
        before TEXT NOT NULL,
        after TEXT NOT NULL,
        reason TEXT NOT NULL,
        batch TEXT NOT NULL
    );
    CREATE INDEX audit_node ON audit(node_id);
    CREATE INDEX audit_actor ON audit(actor, seq);
    """,
    # 4: patterns consolidated from approved nodes, the retrieval log, graduation drafts
    """
    CREATE TABLE patterns(
        pattern_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        polarity TEXT NOT NULL,
        title TEXT NOT NULL,
        summary TEXT NOT NULL,
        trigger TEXT NOT NULL,
        steps TEXT NOT NULL,
        resolution TEXT NOT NULL,
        severity TEXT NOT NULL,
        scope TEXT NOT NULL,
        project TEXT NOT NULL,
        classifier TEXT NOT NULL,
        base_confidence REAL NOT NULL,
        confidence REAL NOT NULL,
        members INTEGER NOT NULL,
        sessions INTEGER NOT NULL,
        developers INTEGER NOT NULL,
        first_seen TEXT NOT NULL,
        last_seen TEXT NOT NULL,
        status TEXT NOT NULL,
        retrieval_count INTEGER NOT NULL DEFAULT 0,
        last_retrieved_at TEXT NOT NULL DEFAULT '',
        skill_name TEXT NOT NULL DEFAULT '',
        fingerprint TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX nodes_status_updated ON nodes(status, updated_at);
    CREATE INDEX patterns_kind ON patterns(status, kind, confidence);
    CREATE INDEX patterns_project ON patterns(project, status);

    CREATE TABLE pattern_members(
        pattern_id TEXT NOT NULL,
        node_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY(pattern_id, node_id)
    );
    CREATE INDEX pattern_members_node ON pattern_members(node_id);

    CREATE TABLE retrievals(
        seq INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        actor TEXT NOT NULL,
        tool TEXT NOT NULL,
        query TEXT NOT NULL,
        project TEXT NOT NULL,
        session_id TEXT NOT NULL
    );
    CREATE TABLE retrieval_hits(
        seq INTEGER NOT NULL,
        rank INTEGER NOT NULL,
        kind TEXT NOT NULL,
        item_id TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY(seq, rank)
    );
    CREATE INDEX retrieval_hits_item ON retrieval_hits(kind, item_id);

    CREATE TABLE drafts(
        draft_id TEXT PRIMARY KEY,
        pattern_id TEXT NOT NULL,
        name TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        citations TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        decided_at TEXT NOT NULL DEFAULT '',
        decided_by TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT '',
        path TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX drafts_status ON drafts(status, created_at);
    CREATE INDEX drafts_pattern ON drafts(pattern_id);

    CREATE TABLE outcomes(
        seq INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        actor TEXT NOT NULL,
        skill_id INTEGER NOT NULL,
        version_no INTEGER NOT NULL,
        success INTEGER NOT NULL,
        session_id TEXT NOT NULL,
        detail TEXT NOT NULL,
        inferred INTEGER NOT NULL
    );
    CREATE INDEX outcomes_skill ON outcomes(skill_id, ts);

    -- A cache (not a projection): the last clustering, so new approvals can join it.
    CREATE TABLE cluster_cache(
        node_id TEXT PRIMARY KEY,
        text_hash TEXT NOT NULL,
        label INTEGER NOT NULL
    );
    """,
    # 5: the retirement runbook (runs, their steps, incidents), co-usage relation proposals,
    # outcomes by version
    """
    CREATE TABLE runs(
        run_id TEXT PRIMARY KEY,
        skill_id INTEGER NOT NULL,
        skill_name TEXT NOT NULL,
        status TEXT NOT NULL,
        step INTEGER NOT NULL,
        reason TEXT NOT NULL,
        actor TEXT NOT NULL,
        version_no INTEGER NOT NULL,
        successor TEXT NOT NULL DEFAULT '',
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX runs_skill ON runs(skill_id, started_at);
    CREATE INDEX runs_status ON runs(status, updated_at);

    CREATE TABLE run_steps(
        run_id TEXT NOT NULL,
        step INTEGER NOT NULL,
        name TEXT NOT NULL,
        summary TEXT NOT NULL,
        payload TEXT NOT NULL,
        actor TEXT NOT NULL,
        ts TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY(run_id, step)
    );

    CREATE TABLE incidents(
        incident_id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        skill_id INTEGER NOT NULL,
        skill_name TEXT NOT NULL,
        version_no INTEGER NOT NULL,
        cause TEXT NOT NULL,
        scope TEXT NOT NULL,
        regression TEXT NOT NULL,
        successor TEXT NOT NULL,
        actor TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    );
    CREATE INDEX incidents_skill ON incidents(skill_id, recorded_at);

    CREATE TABLE relation_proposals(
        source_name TEXT NOT NULL,
        target_name TEXT NOT NULL,
        shared INTEGER NOT NULL,
        sessions TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        proposed_at TEXT NOT NULL,
        decided_at TEXT,
        decided_by TEXT NOT NULL DEFAULT '',
        PRIMARY KEY(source_name, target_name)
    );
    CREATE INDEX relation_proposals_status ON relation_proposals(status, shared);

    CREATE INDEX outcomes_version ON outcomes(skill_id, version_no, ts);
    CREATE INDEX outcomes_ts ON outcomes(ts);
    """,
    # 6: health counts read this index alone, in group order (store/lifecycle/health.py)
    """
    CREATE INDEX outcomes_health ON outcomes(skill_id, version_no, ts, success);
    """,
    # 7: a session may be recorded in several main files: each file row names the main file
    # it was read for (source) and what messages call it (label). Rows from earlier events
    # had one main file, the first of their files, and labels relative to its folder
    # (`rtrim(x, replace(x, '/', ''))` is x up to its last slash).
    """
    ALTER TABLE session_files ADD COLUMN source TEXT NOT NULL DEFAULT '';
    ALTER TABLE session_files ADD COLUMN label TEXT NOT NULL DEFAULT '';
    UPDATE session_files SET source = coalesce((SELECT json_extract(e.payload, '$.files[0].path')
        FROM events e WHERE e.subject = 'session:' || session_files.session_id
        AND e.type = 'session.ingested' ORDER BY e.seq DESC LIMIT 1), path);
    UPDATE session_files SET label = CASE
        WHEN substr(path, 1, length(rtrim(source, replace(source, '/', ''))))
            = rtrim(source, replace(source, '/', ''))
        THEN substr(path, length(rtrim(source, replace(source, '/', ''))) + 1)
        ELSE path END;
    CREATE INDEX session_files_source ON session_files(source);
    """,
    # 8: repeats of a retrieval rolled up into it (store/patterns/retrieval_log.py): how many
    # calls it stands for, and when the last of them was made ('' without repeats)
    """
    ALTER TABLE retrievals ADD COLUMN calls INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE retrievals ADD COLUMN last_at TEXT NOT NULL DEFAULT '';
    """,
    # 9: forgetting (store/forget/). Quoted text lives in blobs that can be erased: an
    # erased blob stays as a tombstone (no content; when, why, which event). An event from
    # before this schema that carried text inline can be redacted once a later, chained
    # `blob.erased` event records it (`redactions`); every other change to an event is refused.
    """
    ALTER TABLE blobs ADD COLUMN erased_at TEXT NOT NULL DEFAULT '';
    ALTER TABLE blobs ADD COLUMN erased_seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE blobs ADD COLUMN erased_reason TEXT NOT NULL DEFAULT '';
    ALTER TABLE blobs ADD COLUMN replaced_by TEXT NOT NULL DEFAULT '';

    CREATE TABLE redactions(
        seq INTEGER PRIMARY KEY,
        hash TEXT NOT NULL,
        redacted_hash TEXT NOT NULL,
        by_seq INTEGER NOT NULL
    );

    DROP TRIGGER events_append_only_update;
    CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
        WHEN NEW.seq IS NOT OLD.seq OR NEW.ts IS NOT OLD.ts OR NEW.type IS NOT OLD.type
            OR NEW.actor IS NOT OLD.actor OR NEW.subject IS NOT OLD.subject
            OR NEW.prev_hash IS NOT OLD.prev_hash OR NEW.hash IS NOT OLD.hash
            OR NOT EXISTS (SELECT 1 FROM redactions r WHERE r.seq = OLD.seq AND r.hash = OLD.hash)
        BEGIN SELECT RAISE(ABORT, 'events are append-only'); END;
    """,
    # 10: the knowledge bar (store/ingest/bar.py): how informative a node's summary is, and
    # why a candidate below the bar is kept out of the queue (status 'suppressed')
    """
    ALTER TABLE nodes ADD COLUMN informativeness REAL NOT NULL DEFAULT 0;
    ALTER TABLE nodes ADD COLUMN suppressed_reason TEXT NOT NULL DEFAULT '';
    """,
    # 11: the cold tier over sessions already read (store/ingest/upgrade.py): a pending or
    # suppressed warm node a cold node restated is `superseded` and points at it; which
    # model and prompt version last read each session, and which transcript content
    """
    ALTER TABLE nodes ADD COLUMN superseded_by TEXT NOT NULL DEFAULT '';
    CREATE TABLE cold_extractions(
        session_id TEXT PRIMARY KEY,
        digest TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        extracted_at TEXT NOT NULL,
        windows INTEGER NOT NULL,
        failed_windows INTEGER NOT NULL,
        nodes_added INTEGER NOT NULL,
        superseded INTEGER NOT NULL,
        runs INTEGER NOT NULL
    );
    """,
    # 12: the pattern bar (store/patterns/bar.py): why a pattern is not served ('' = it is)
    """
    ALTER TABLE patterns ADD COLUMN flaw TEXT NOT NULL DEFAULT '';
    """,
    # 13: which version of the lint rules produced a skill version's findings (0: before the
    # rules were versioned); a scan lints unchanged skills again when the rules are newer
    # (`skill.relinted`, store/skills/relint.py)
    """
    ALTER TABLE skill_versions ADD COLUMN lint_version INTEGER NOT NULL DEFAULT 0;
    """,
    # 14: the team library (store/team/): this library's id and cursors (`team_state`), and
    # the items it pushed to or pulled from the hub with their team status (`team_items`;
    # `own` = staged by this library)
    """
    CREATE TABLE team_state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE team_items(
        item_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        own INTEGER NOT NULL,
        origin TEXT NOT NULL,
        author TEXT NOT NULL,
        status TEXT NOT NULL,
        decided_by TEXT NOT NULL DEFAULT '',
        decided_at TEXT NOT NULL DEFAULT '',
        project TEXT NOT NULL DEFAULT '',
        scope TEXT NOT NULL DEFAULT '',
        hub_id INTEGER NOT NULL DEFAULT 0,
        conflicts INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX team_items_status ON team_items(own, status);
    """,
    # 15: governance (issue 16). The version the librarian serves while a new version of a
    # stable skill proves itself as the candidate (store/lifecycle/candidates.py), and each
    # candidate's fate; version pins on relations (0 = follow the served version); `Skill`
    # calls seen in transcripts, per session (store/skills/usage.py); what the librarian
    # wrote into a skill folder on a reviewer's say (an approved enrichment, a regression
    # case), so the next scan serves it at once; the write gate of drafts (parameters,
    # kept literals, regression cases); enrichment proposals for thin skills.
    """
    ALTER TABLE skills ADD COLUMN served_version INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE skills ADD COLUMN candidate_version INTEGER NOT NULL DEFAULT 0;
    UPDATE skills SET served_version = current_version;
    CREATE TABLE skill_candidates(
        skill_id INTEGER NOT NULL,
        version_no INTEGER NOT NULL,
        base_version INTEGER NOT NULL,
        status TEXT NOT NULL,
        opened_at TEXT NOT NULL,
        decided_at TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT '',
        alert TEXT NOT NULL DEFAULT '',
        PRIMARY KEY(skill_id, version_no)
    );
    CREATE INDEX skill_candidates_status ON skill_candidates(status, skill_id);

    ALTER TABLE relations ADD COLUMN pin INTEGER NOT NULL DEFAULT 0;

    CREATE TABLE skill_calls(
        session_id TEXT NOT NULL,
        skill_id INTEGER NOT NULL,
        calls INTEGER NOT NULL,
        first_at TEXT NOT NULL,
        last_at TEXT NOT NULL,
        PRIMARY KEY(session_id, skill_id)
    );
    CREATE INDEX skill_calls_skill ON skill_calls(skill_id, last_at);

    CREATE TABLE librarian_writes(
        skill_id INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        files_hash TEXT NOT NULL,
        kind TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY(skill_id, content_hash, files_hash)
    );

    ALTER TABLE drafts ADD COLUMN literal_hash TEXT NOT NULL DEFAULT '';
    ALTER TABLE drafts ADD COLUMN parameters TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE drafts ADD COLUMN kept TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE drafts ADD COLUMN regressions TEXT NOT NULL DEFAULT '[]';

    CREATE TABLE enrichments(
        proposal_id TEXT PRIMARY KEY,
        skill_id INTEGER NOT NULL,
        skill_name TEXT NOT NULL,
        version_no INTEGER NOT NULL,
        source TEXT NOT NULL,
        fields TEXT NOT NULL,
        before_hash TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        reasons TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        decided_at TEXT NOT NULL DEFAULT '',
        decided_by TEXT NOT NULL DEFAULT '',
        reason TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX enrichments_status ON enrichments(status, created_at);
    CREATE INDEX enrichments_skill ON enrichments(skill_id, created_at);
    """,
)

#: Tables rebuilt by replaying events; `verify` compares them with a scratch replay.
PROJECTION_TABLES: dict[str, str] = {
    "skills": "skill_id",
    "skill_versions": "skill_id, version_no",
    "relations": "source_id, type, target_name, origin",
    "denylist": "name",
    "skill_texts": "label",
    "skills_fts": "rowid",
    "sessions": "session_id",
    "session_files": "session_id, path",
    "session_messages": "session_id, idx",
    "skill_uses": "session_id, skill_name",
    "nodes": "node_id",
    "edges": "source_id, target_id, type",
    "audit": "seq",
    "patterns": "pattern_id",
    "pattern_members": "pattern_id, node_id",
    "retrievals": "seq",
    "retrieval_hits": "seq, rank",
    "drafts": "draft_id",
    "outcomes": "seq",
    "runs": "run_id",
    "run_steps": "run_id, step",
    "incidents": "incident_id",
    "relation_proposals": "source_name, target_name",
    "redactions": "seq",
    "cold_extractions": "session_id",
    "team_state": "key",
    "team_items": "item_id",
    "skill_candidates": "skill_id, version_no",
    "skill_calls": "session_id, skill_id",
    "librarian_writes": "skill_id, content_hash, files_hash",
    "enrichments": "proposal_id",
}


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date; returns the new schema version."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return len(MIGRATIONS)


def _statements(script: str) -> list[str]:
    """Split a script on statement ends (trigger bodies keep their inner semicolons)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
