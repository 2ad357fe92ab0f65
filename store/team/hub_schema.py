"""The hub's schema as numbered migrations: tables, roles, row-level security and the
functions every client goes through (`librarian team init` applies them).

Who may do what is the database's business, not the client's:

- `librarian_contributor` (every member) may register its own library, stage, revise and
  withdraw its own items (`librarian.push`), and read what is published (approved at least
  once) plus its own items; it has no INSERT, UPDATE or DELETE on any table.
- `librarian_reviewer` (a contributor too) may also read every staged item and decide
  (`librarian.decide`: approve, reject, edit, re-scope) — never an item it authored.
- `librarian_owner` (NOLOGIN) owns everything; the write functions run as it
  (SECURITY DEFINER, fixed `search_path`) and record `session_user`, the login role, as the
  actor, which a client cannot choose.
- `events` and `heads` are append-only for everyone, the owner included: triggers refuse
  UPDATE, DELETE and TRUNCATE. `items` is a projection of `events` (`librarian._apply`),
  checked by `librarian.verify_items()` replaying the log inside a rolled-back block.

Event ids are the hub's order: every writer takes one transaction-level advisory lock before
it draws ids, so ids are handed out in commit order and a reader's cursor never skips a row
committed later with a smaller id. Each event is hash-chained to the one before it.

Compatibility: `meta.schema` is the hub's version and `meta.min_client` the oldest client
schema that may use it. Every function takes the client's schema number first and refuses
(SQLSTATE LB001) a client the hub is too new for; `schema_version()` keeps its signature in
every version.
"""

from __future__ import annotations

from store.models.team import CLIENT_SCHEMA
from store.team.hub_api import V1_API, V2_PULL

#: The hub schema this librarian writes and reads.
HUB_SCHEMA = CLIENT_SCHEMA
#: Raised by the hub's functions: the client is older than the hub allows.
TOO_OLD = "LB001"
#: Raised by the hub's functions: a refused request (permission, state, bad value).
REFUSED = "LB002"
#: The advisory lock every hub writer holds until it commits.
WRITE_LOCK = 7262601
ROLES = ("librarian_owner", "librarian_contributor", "librarian_reviewer")

#: Created once per cluster, before the migrations (role names are cluster-wide).
ROLES_SQL = """
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'librarian_owner') THEN
        CREATE ROLE librarian_owner NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'librarian_contributor') THEN
        CREATE ROLE librarian_contributor NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'librarian_reviewer') THEN
        CREATE ROLE librarian_reviewer NOLOGIN IN ROLE librarian_contributor;
    END IF;
END $$;
"""

_V1_TABLES = """
CREATE SCHEMA librarian AUTHORIZATION librarian_owner;
SET LOCAL search_path = librarian, pg_temp;

CREATE TABLE librarian.meta(key text PRIMARY KEY, value text NOT NULL);
INSERT INTO librarian.meta VALUES ('schema', '1'), ('min_client', '1');
CREATE TABLE librarian.migrations(
    version int PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now(),
    applied_by text NOT NULL DEFAULT session_user
);

CREATE TABLE librarian.libraries(
    library_id text PRIMARY KEY CHECK (library_id ~ '^[0-9a-f]{32}$'),
    name text NOT NULL,
    owner text NOT NULL,
    registered_at timestamptz NOT NULL DEFAULT now(),
    pushed_seq bigint NOT NULL DEFAULT 0,
    pushed_at timestamptz,
    pulled_at timestamptz
);

CREATE TABLE librarian.heads(
    library_id text NOT NULL REFERENCES librarian.libraries,
    events bigint NOT NULL CHECK (events >= 0),
    hash text NOT NULL CHECK (hash ~ '^[0-9a-f]{64}$'),
    at timestamptz NOT NULL DEFAULT now(),
    actor text NOT NULL DEFAULT session_user,
    PRIMARY KEY (library_id, events)
);

CREATE SEQUENCE librarian.event_ids;
CREATE TABLE librarian.events(
    id bigint PRIMARY KEY,
    gid text NOT NULL UNIQUE,
    item_id text NOT NULL,
    library_id text,
    kind text NOT NULL CHECK (kind IN
        ('stage', 'revise', 'withdraw', 'approve', 'reject', 'edit', 'rescope')),
    actor text NOT NULL,
    at timestamptz NOT NULL,
    base bigint,
    applied boolean NOT NULL,
    overruled_by bigint,
    body jsonb NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL UNIQUE
);
CREATE INDEX events_item ON librarian.events(item_id, id);
CREATE INDEX events_actor ON librarian.events(actor, at, kind);

CREATE TABLE librarian.items(
    item_id text PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('node', 'draft')),
    library_id text NOT NULL,
    author text NOT NULL,
    developer text NOT NULL,
    project text NOT NULL,
    scope text NOT NULL CHECK (scope IN ('PROJECT', 'TEAM')),
    type text NOT NULL,
    summary text NOT NULL,
    rank real NOT NULL,
    status text NOT NULL CHECK (status IN ('staged', 'approved', 'rejected', 'withdrawn')),
    published boolean NOT NULL DEFAULT false,
    staged_at timestamptz NOT NULL,
    decided_by text NOT NULL DEFAULT '',
    decided_at timestamptz,
    reason text NOT NULL DEFAULT '',
    last_event bigint NOT NULL,
    body jsonb NOT NULL
);
CREATE INDEX items_queue ON librarian.items(status, rank DESC, staged_at, item_id);
CREATE INDEX items_library ON librarian.items(library_id, status);
-- What waits for a reviewer, counted and listed by project from the index alone.
CREATE INDEX items_waiting ON librarian.items(status, kind, author, project);

-- What readers may pull besides their own items: every event after the stage on an item that
-- was published when it happened (a projection of `events`, like `items`), with whom it is
-- for: the whole team when the item was TEAM-scoped before or after it, else its project's.
CREATE TABLE librarian.feed(
    id bigint PRIMARY KEY,
    item_id text NOT NULL,
    team boolean NOT NULL,
    project text NOT NULL
);

-- History is append-only, for the owner too.
CREATE FUNCTION librarian.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'librarian.% is append-only: history cannot be changed', TG_TABLE_NAME
        USING ERRCODE = 'LB002';
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON librarian.events
    FOR EACH ROW EXECUTE FUNCTION librarian.refuse_change();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON librarian.events
    FOR EACH STATEMENT EXECUTE FUNCTION librarian.refuse_change();
CREATE TRIGGER heads_append_only BEFORE UPDATE OR DELETE ON librarian.heads
    FOR EACH ROW EXECUTE FUNCTION librarian.refuse_change();
CREATE TRIGGER heads_no_truncate BEFORE TRUNCATE ON librarian.heads
    FOR EACH STATEMENT EXECUTE FUNCTION librarian.refuse_change();
"""

_V1_CORE = r"""
CREATE FUNCTION librarian.schema_version() RETURNS int LANGUAGE sql STABLE
    SET search_path = librarian, pg_temp AS $$
    SELECT value::int FROM librarian.meta WHERE key = 'schema'
$$;

CREATE FUNCTION librarian._check_client(p_client int) RETURNS void LANGUAGE plpgsql STABLE
    SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    v_schema int := (SELECT value::int FROM librarian.meta WHERE key = 'schema');
    v_min int := (SELECT value::int FROM librarian.meta WHERE key = 'min_client');
BEGIN
    IF p_client IS NULL OR p_client < v_min THEN
        RAISE EXCEPTION 'the hub has schema % and needs a librarian that knows schema % or newer'
            ' (this one knows %)', v_schema, v_min, p_client USING ERRCODE = 'LB001';
    END IF;
END $$;

CREATE FUNCTION librarian._refuse(p_message text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', p_message USING ERRCODE = 'LB002';
END $$;

CREATE FUNCTION librarian.is_reviewer() RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT pg_has_role(session_user, 'librarian_reviewer', 'MEMBER')
$$;

-- The hash of one event: SHA-256 over the previous hash and the event's fields.
CREATE FUNCTION librarian.event_hash(e librarian.events) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT encode(sha256(convert_to(concat_ws(E'\x1f', e.prev_hash, e.id::text, e.gid,
        e.item_id, coalesce(e.library_id, ''), e.kind, e.actor,
        to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'),
        coalesce(e.base::text, ''), e.applied::text, coalesce(e.overruled_by::text, ''),
        e.body::text), 'UTF8')), 'hex')
$$;

-- Append one event (the caller holds the write lock) and project it onto `items`.
CREATE FUNCTION librarian._record(p_gid text, p_item text, p_library text, p_kind text,
    p_base bigint, p_applied boolean, p_overruled bigint, p_body jsonb)
    RETURNS librarian.events LANGUAGE plpgsql AS $$
DECLARE
    e librarian.events;
BEGIN
    e.id := nextval('librarian.event_ids');
    e.gid := coalesce(p_gid, 'hub:' || e.id);
    e.item_id := p_item;
    e.library_id := p_library;
    e.kind := p_kind;
    e.actor := session_user;
    e.at := date_trunc('microseconds', clock_timestamp());
    e.base := p_base;
    e.applied := p_applied;
    e.overruled_by := p_overruled;
    e.body := p_body;
    e.prev_hash := coalesce((SELECT hash FROM librarian.events ORDER BY id DESC LIMIT 1),
                            repeat('0', 64));
    e.hash := librarian.event_hash(e);
    INSERT INTO librarian.events VALUES (e.*);
    PERFORM librarian._project(e);
    RETURN e;
END $$;

-- Everything an event changes besides the log: its item (when applied), and the feed.
CREATE FUNCTION librarian._project(e librarian.events) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_before text := (SELECT i.scope FROM librarian.items i WHERE i.item_id = e.item_id);
    it librarian.items;
BEGIN
    IF e.applied THEN
        PERFORM librarian._apply(e);
    END IF;
    IF e.kind <> 'stage' THEN
        SELECT * INTO it FROM librarian.items i WHERE i.item_id = e.item_id;
        IF it.published THEN
            INSERT INTO librarian.feed(id, item_id, team, project) VALUES (e.id, e.item_id,
                it.scope = 'TEAM' OR v_before = 'TEAM', it.project);
        END IF;
    END IF;
END $$;

-- The projection: what an applied event does to its item. `body.status` is the status after
-- the event (decided by the writer); `body.item` a staged item's content.
CREATE FUNCTION librarian._apply(e librarian.events) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_item jsonb := e.body -> 'item';
    v_status text := e.body ->> 'status';
BEGIN
    IF e.kind = 'stage' THEN
        INSERT INTO librarian.items AS i (item_id, kind, library_id, author, developer, project,
            scope, type, summary, rank, status, published, staged_at, last_event, body)
        VALUES (e.item_id, e.body ->> 'kind', e.library_id, e.actor, v_item ->> 'developer',
            v_item ->> 'project', v_item ->> 'scope', v_item ->> 'type', v_item ->> 'summary',
            (v_item ->> 'rank')::real, v_status, v_status = 'approved', e.at, e.id, v_item)
        ON CONFLICT (item_id) DO UPDATE SET developer = excluded.developer,
            project = excluded.project, scope = excluded.scope, type = excluded.type,
            summary = excluded.summary, rank = excluded.rank, status = excluded.status,
            staged_at = CASE WHEN i.status = excluded.status THEN i.staged_at ELSE e.at END,
            decided_by = CASE WHEN excluded.status = 'approved' THEN i.decided_by ELSE '' END,
            decided_at = CASE WHEN excluded.status = 'approved' THEN i.decided_at END,
            reason = '', last_event = e.id, body = excluded.body;
    ELSE
        UPDATE librarian.items SET
            status = coalesce(v_status, status),
            published = published OR coalesce(v_status, status) = 'approved',
            summary = coalesce(e.body ->> 'summary', summary),
            scope = coalesce(e.body ->> 'scope', scope),
            body = body || jsonb_strip_nulls(jsonb_build_object(
                'summary', e.body ->> 'summary', 'scope', e.body ->> 'scope')),
            decided_by = CASE WHEN e.kind IN ('approve', 'reject') THEN e.actor ELSE decided_by END,
            decided_at = CASE WHEN e.kind IN ('approve', 'reject') THEN e.at ELSE decided_at END,
            reason = CASE WHEN e.kind IN ('approve', 'reject', 'withdraw')
                THEN coalesce(e.body ->> 'reason', '') ELSE reason END,
            last_event = e.id
        WHERE item_id = e.item_id;
    END IF;
END $$;

-- A staged item's content, checked: every field present with its type and within bounds.
CREATE FUNCTION librarian._valid_item(p_kind text, p_item jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $$
DECLARE
    k text;
BEGIN
    IF jsonb_typeof(p_item) IS DISTINCT FROM 'object' THEN
        PERFORM librarian._refuse('a staged item must be an object');
    END IF;
    FOREACH k IN ARRAY ARRAY['developer', 'project', 'scope', 'type', 'summary'] LOOP
        IF jsonb_typeof(p_item -> k) IS DISTINCT FROM 'string' THEN
            PERFORM librarian._refuse(format('a staged %s needs a text %s', p_kind, k));
        END IF;
    END LOOP;
    IF jsonb_typeof(p_item -> 'rank') IS DISTINCT FROM 'number' THEN
        PERFORM librarian._refuse(format('a staged %s needs a number rank', p_kind));
    END IF;
    IF p_item ->> 'scope' NOT IN ('PROJECT', 'TEAM') THEN
        PERFORM librarian._refuse('scope must be PROJECT or TEAM');
    END IF;
    IF length(p_item ->> 'summary') NOT BETWEEN 1 AND 2000 THEN
        PERFORM librarian._refuse('a summary has 1 to 2000 characters');
    END IF;
    IF length(p_item::text) > 262144 THEN
        PERFORM librarian._refuse('a staged item is at most 256 KB');
    END IF;
    IF p_kind = 'node' AND jsonb_typeof(p_item -> 'evidence') IS DISTINCT FROM 'string' THEN
        PERFORM librarian._refuse('a staged node needs a text evidence');
    END IF;
    IF p_kind = 'draft' AND jsonb_typeof(p_item -> 'content') IS DISTINCT FROM 'string' THEN
        PERFORM librarian._refuse('a staged draft needs its SKILL.md content');
    END IF;
    RETURN p_item;
END $$;
"""

_V1_GRANTS = """
REVOKE ALL ON SCHEMA librarian FROM PUBLIC;
GRANT USAGE ON SCHEMA librarian TO librarian_contributor;
REVOKE ALL ON ALL TABLES IN SCHEMA librarian FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA librarian FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA librarian FROM PUBLIC;
GRANT SELECT ON librarian.meta, librarian.libraries, librarian.heads, librarian.items,
    librarian.events TO librarian_contributor;
GRANT EXECUTE ON FUNCTION librarian.schema_version() TO PUBLIC;
GRANT EXECUTE ON FUNCTION librarian._check_client(int), librarian.is_reviewer(),
    librarian.event_hash(librarian.events),
    librarian.hello(int, text, text, bigint, text),
    librarian.push(int, text, bigint, bigint, text, jsonb),
    librarian.pull(int, text, bigint, text[], int), librarian.pulled(int, text),
    librarian.status(int, text), librarian.verify_chain(int), librarian.verify_items(int)
    TO librarian_contributor;
GRANT EXECUTE ON FUNCTION librarian.decide(int, text[], bigint[], text, jsonb)
    TO librarian_reviewer;

ALTER TABLE librarian.items ENABLE ROW LEVEL SECURITY;
ALTER TABLE librarian.events ENABLE ROW LEVEL SECURITY;
CREATE POLICY contributors_read ON librarian.items FOR SELECT TO librarian_contributor
    USING (published OR author = current_user);
CREATE POLICY reviewers_read ON librarian.items FOR SELECT TO librarian_reviewer
    USING (true);
CREATE POLICY events_of_visible_items ON librarian.events FOR SELECT TO librarian_contributor
    USING (EXISTS (SELECT 1 FROM librarian.items i WHERE i.item_id = events.item_id));
"""

#: Hub migrations, applied in order by `librarian team init` (each in its own transaction,
#: as the role that owns the schema). Number n is `MIGRATIONS[n - 1]`. Version 2 changes
#: no signature and no table (a version-1 client keeps working: `min_client` stays 1).
MIGRATIONS: tuple[str, ...] = (_V1_TABLES + _V1_CORE + V1_API + _V1_GRANTS, V2_PULL)
assert len(MIGRATIONS) == HUB_SCHEMA
