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

_V1_API = r"""
-- Register (or greet) a library; only its owner may use it. Anchors the library's chain
-- head when it is further along than the last one anchored, and returns that last one, for
-- the client to check that its log still holds it.
CREATE FUNCTION librarian.hello(p_client int, p_library text, p_name text,
    p_head_events bigint, p_head_hash text)
    RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    lib librarian.libraries;
    last librarian.heads;
    anchored boolean := false;
BEGIN
    PERFORM librarian._check_client(p_client);
    IF p_library !~ '^[0-9a-f]{32}$' THEN
        PERFORM librarian._refuse('a library id is 32 hexadecimal digits');
    END IF;
    SELECT * INTO lib FROM librarian.libraries WHERE library_id = p_library;
    IF lib.library_id IS NULL THEN
        INSERT INTO librarian.libraries(library_id, name, owner)
            VALUES (p_library, left(coalesce(p_name, ''), 200), session_user) RETURNING * INTO lib;
    ELSIF lib.owner <> session_user THEN
        PERFORM librarian._refuse(format('library %s belongs to %s, not to %s',
            p_library, lib.owner, session_user));
    END IF;
    SELECT * INTO last FROM librarian.heads WHERE library_id = p_library
        ORDER BY events DESC LIMIT 1;
    IF p_head_events IS NOT NULL AND p_head_hash ~ '^[0-9a-f]{64}$'
            AND (last.library_id IS NULL OR p_head_events > last.events) THEN
        INSERT INTO librarian.heads(library_id, events, hash)
            VALUES (p_library, p_head_events, p_head_hash) ON CONFLICT DO NOTHING;
        anchored := true;
    END IF;
    RETURN jsonb_build_object(
        'schema', librarian.schema_version(),
        'user', session_user,
        'reviewer', librarian.is_reviewer(),
        'pushed_seq', lib.pushed_seq,
        'anchored', anchored,
        'last_head', CASE WHEN last.library_id IS NULL THEN NULL
            ELSE jsonb_build_object('events', last.events, 'hash', last.hash) END);
END $$;

-- One batch of an author's changes to its own items, all or nothing. Each op has a global
-- id `<library>:<local seq>`; an op the hub already has is skipped (a retried batch).
CREATE FUNCTION librarian.push(p_client int, p_library text, p_through bigint,
    p_head_events bigint, p_head_hash text, p_ops jsonb)
    RETURNS jsonb LANGUAGE plpgsql SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    op jsonb;
    it librarian.items;
    v_kind text;
    v_item text;
    v_other bigint;
    v_mine bigint;
    v_status text;
    v_body jsonb;
    e librarian.events;
    n_applied int := 0;
    n_dup int := 0;
    n_over int := 0;
    n_skip int := 0;
    v_ids jsonb := '{}';
BEGIN
    PERFORM librarian._check_client(p_client);
    IF NOT EXISTS (SELECT 1 FROM librarian.libraries
                   WHERE library_id = p_library AND owner = session_user) THEN
        PERFORM librarian._refuse(format('library %s is not registered to %s',
            p_library, session_user));
    END IF;
    IF jsonb_typeof(p_ops) IS DISTINCT FROM 'array' THEN
        PERFORM librarian._refuse('ops must be an array');
    END IF;
    PERFORM pg_advisory_xact_lock(7262601);
    FOR op IN SELECT value FROM jsonb_array_elements(p_ops) LOOP
        IF jsonb_typeof(op) IS DISTINCT FROM 'object' OR op ->> 'gid' IS NULL
                OR op ->> 'gid' NOT LIKE p_library || ':%' THEN
            PERFORM librarian._refuse('an op needs a gid of this library');
        END IF;
        IF EXISTS (SELECT 1 FROM librarian.events WHERE gid = op ->> 'gid') THEN
            n_dup := n_dup + 1;
            CONTINUE;
        END IF;
        v_kind := op ->> 'op';
        v_item := op ->> 'item_id';
        IF v_item IS NULL OR v_item !~ '^[A-Za-z0-9_.:-]{1,100}$' THEN
            PERFORM librarian._refuse(format('bad item id in op %s', op ->> 'gid'));
        END IF;
        IF v_kind NOT IN ('stage', 'revise', 'withdraw') THEN
            PERFORM librarian._refuse(format('a contributor may stage, revise or withdraw,'
                ' not %s (op %s)', coalesce(v_kind, 'nothing'), op ->> 'gid'));
        END IF;
        SELECT * INTO it FROM librarian.items WHERE item_id = v_item FOR UPDATE;
        IF it.item_id IS NULL AND v_kind <> 'stage' THEN
            n_skip := n_skip + 1;  -- nothing staged to revise or withdraw
            CONTINUE;
        END IF;
        IF it.item_id IS NOT NULL AND it.library_id <> p_library THEN
            n_skip := n_skip + 1;  -- the same item was staged by another library first
            CONTINUE;
        END IF;
        -- A decision by someone else that this library had not seen when it made its change
        -- was first in the hub's order: the change is recorded, overruled.
        v_other := NULL;
        IF it.item_id IS NOT NULL THEN
            v_mine := greatest(coalesce((op ->> 'base')::bigint, 0), coalesce((SELECT max(id)
                FROM librarian.events WHERE item_id = v_item AND library_id = p_library
                AND applied), 0));
            SELECT max(id) INTO v_other FROM librarian.events
                WHERE item_id = v_item AND applied AND actor <> session_user AND id > v_mine;
        END IF;
        IF v_kind = 'stage' THEN
            IF coalesce(op ->> 'kind', '') NOT IN ('node', 'draft') THEN
                PERFORM librarian._refuse('an item is a node or a draft');
            END IF;
            v_body := jsonb_build_object('kind', op ->> 'kind',
                'item', librarian._valid_item(op ->> 'kind', op -> 'item'));
            v_status := CASE WHEN it.item_id IS NOT NULL AND it.status = 'approved'
                AND it.body = v_body -> 'item' THEN 'approved' ELSE 'staged' END;
        ELSIF v_kind = 'revise' THEN
            v_body := jsonb_strip_nulls(jsonb_build_object('summary', op ->> 'summary',
                'scope', op ->> 'scope'));
            IF v_body ? 'scope' AND v_body ->> 'scope' NOT IN ('PROJECT', 'TEAM') THEN
                PERFORM librarian._refuse('scope must be PROJECT or TEAM');
            END IF;
            IF length(coalesce(v_body ->> 'summary', 'x')) NOT BETWEEN 1 AND 2000 THEN
                PERFORM librarian._refuse('a summary has 1 to 2000 characters');
            END IF;
            -- Approved content changed by its author goes back to the reviewers.
            v_status := CASE WHEN it.status = 'approved' THEN 'staged' ELSE it.status END;
        ELSE
            v_body := jsonb_build_object('reason', left(coalesce(op ->> 'reason', ''), 2000));
            v_status := 'withdrawn';
        END IF;
        v_body := v_body || jsonb_build_object('status', v_status);
        e := librarian._record(op ->> 'gid', v_item, p_library, v_kind,
            (op ->> 'base')::bigint, v_other IS NULL, v_other, v_body);
        IF v_other IS NULL THEN n_applied := n_applied + 1; ELSE n_over := n_over + 1; END IF;
        v_ids := v_ids || jsonb_build_object(v_item, e.id);
    END LOOP;
    UPDATE librarian.libraries SET pushed_seq = greatest(pushed_seq, p_through),
        pushed_at = now() WHERE library_id = p_library;
    IF p_head_events IS NOT NULL THEN
        INSERT INTO librarian.heads(library_id, events, hash)
            VALUES (p_library, p_head_events, p_head_hash) ON CONFLICT DO NOTHING;
    END IF;
    RETURN jsonb_build_object('applied', n_applied, 'duplicates', n_dup, 'overruled', n_over,
        'skipped', n_skip, 'ids', v_ids);
END $$;

-- A reviewer's decision on staged (or published) items, made on what the reviewer saw
-- (`p_bases`: each item's last event then). An item that changed since is recorded as an
-- overruled decision: the change first in the hub's order stands.
CREATE FUNCTION librarian.decide(p_client int, p_items text[], p_bases bigint[],
    p_action text, p_values jsonb)
    RETURNS TABLE(item_id text, event_id bigint, applied boolean, status text,
        last_event bigint, summary text, scope text)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    it librarian.items;
    v_body jsonb;
    v_status text;
    v_base bigint;
    e librarian.events;
    n int;
BEGIN
    PERFORM librarian._check_client(p_client);
    IF NOT librarian.is_reviewer() THEN
        PERFORM librarian._refuse(format('%s is not a team reviewer', session_user));
    END IF;
    IF p_action NOT IN ('approve', 'reject', 'edit', 'rescope') THEN
        PERFORM librarian._refuse(format('unknown decision %s', p_action));
    END IF;
    IF cardinality(p_items) IS DISTINCT FROM cardinality(p_bases) THEN
        PERFORM librarian._refuse('one base per item');
    END IF;
    PERFORM pg_advisory_xact_lock(7262601);
    FOR n IN 1 .. coalesce(cardinality(p_items), 0) LOOP
        SELECT * INTO it FROM librarian.items i WHERE i.item_id = p_items[n] FOR UPDATE;
        IF it.item_id IS NULL THEN
            PERFORM librarian._refuse(format('no staged item %s', p_items[n]));
        END IF;
        IF it.author = session_user THEN
            PERFORM librarian._refuse(format('%s authored %s: another reviewer decides it',
                session_user, it.item_id));
        END IF;
        IF it.status = 'withdrawn' THEN
            PERFORM librarian._refuse(format('%s was withdrawn by its author', it.item_id));
        END IF;
        v_status := CASE p_action WHEN 'approve' THEN 'approved' WHEN 'reject' THEN 'rejected'
            ELSE it.status END;
        IF p_action = 'edit' THEN
            IF length(coalesce(p_values ->> 'summary', '')) NOT BETWEEN 1 AND 2000 THEN
                PERFORM librarian._refuse('an edit needs a summary of 1 to 2000 characters');
            END IF;
            v_body := jsonb_build_object('summary', p_values ->> 'summary');
        ELSIF p_action = 'rescope' THEN
            IF coalesce(p_values ->> 'scope', '') NOT IN ('PROJECT', 'TEAM') THEN
                PERFORM librarian._refuse('scope must be PROJECT or TEAM');
            END IF;
            v_body := jsonb_build_object('scope', p_values ->> 'scope');
        ELSE
            v_body := jsonb_build_object('reason', left(coalesce(p_values ->> 'reason', ''), 2000));
        END IF;
        v_body := v_body || jsonb_build_object('status', v_status);
        v_base := p_bases[n];
        e := librarian._record(NULL, it.item_id, NULL, p_action, v_base,
            coalesce(v_base = it.last_event, false), CASE WHEN v_base = it.last_event
            THEN NULL ELSE it.last_event END, v_body);
        SELECT * INTO it FROM librarian.items i WHERE i.item_id = p_items[n];
        item_id := it.item_id;
        event_id := e.id;
        applied := e.applied;
        status := it.status;
        last_event := it.last_event;
        summary := it.summary;
        scope := it.scope;
        RETURN NEXT;
    END LOOP;
END $$;

-- What a library pulls after its cursor: every event on its own items, and the decisions on
-- published items of its projects and of the whole team, each with its item as it is now.
-- It runs as the owner (row-level security would look every row up twice) and applies the
-- same rule itself: a member reads what is published, and its own library's items — a
-- library it registered, never another's.
CREATE FUNCTION librarian.pull(p_client int, p_library text, p_cursor bigint,
    p_projects text[], p_limit int)
    RETURNS TABLE(id bigint, gid text, kind text, item_id text, actor text, at timestamptz,
        applied boolean, overruled_by bigint, body jsonb, item_kind text, origin text,
        author text, status text, published boolean, summary text, scope text,
        decided_by text, decided_at timestamptz, reason text, last_event bigint,
        item_body jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    v_own text := (SELECT l.library_id FROM librarian.libraries l
                   WHERE l.library_id = p_library AND l.owner = session_user);
BEGIN
    PERFORM librarian._check_client(p_client);
    -- Two ordered streams merged up to the limit: the feed of published items (others'),
    -- and every event on this library's own items.
    RETURN QUERY
        SELECT e.id, e.gid, e.kind, e.item_id, e.actor, e.at, e.applied, e.overruled_by,
            e.body - 'item', i.kind, i.library_id, i.author, i.status, i.published, i.summary,
            i.scope, i.decided_by, i.decided_at, i.reason, i.last_event, i.body
        FROM (
            (SELECT f.id FROM librarian.feed f
             WHERE f.id > p_cursor AND (f.team OR f.project = ANY(p_projects))
               AND NOT EXISTS (SELECT 1 FROM librarian.items fi
                               WHERE fi.item_id = f.item_id AND fi.library_id = v_own)
             ORDER BY f.id LIMIT p_limit)
            UNION ALL
            (SELECT oe.id FROM librarian.items oi JOIN librarian.events oe USING (item_id)
             WHERE oi.library_id = v_own AND oe.id > p_cursor
             ORDER BY oe.id LIMIT p_limit)
            ORDER BY 1 LIMIT p_limit
        ) picked JOIN librarian.events e ON e.id = picked.id
        JOIN librarian.items i ON i.item_id = e.item_id
        ORDER BY e.id;
END $$;

CREATE FUNCTION librarian.pulled(p_client int, p_library text) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
BEGIN
    PERFORM librarian._check_client(p_client);
    UPDATE librarian.libraries SET pulled_at = now()
        WHERE library_id = p_library AND owner = session_user;
END $$;

-- `librarian team status` in one round trip.
CREATE FUNCTION librarian.status(p_client int, p_library text) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    lib librarian.libraries;
    last librarian.heads;
    v_reviewer boolean := librarian.is_reviewer();
BEGIN
    PERFORM librarian._check_client(p_client);
    SELECT * INTO lib FROM librarian.libraries WHERE library_id = p_library;
    SELECT * INTO last FROM librarian.heads WHERE library_id = p_library
        ORDER BY events DESC LIMIT 1;
    RETURN jsonb_build_object(
        'schema', librarian.schema_version(),
        'user', session_user,
        'reviewer', v_reviewer,
        'hub_events', coalesce((SELECT max(id) FROM librarian.events), 0),
        'libraries', (SELECT count(*) FROM librarian.libraries),
        'waiting_for_me', CASE WHEN v_reviewer THEN (SELECT count(*) FROM librarian.items
            WHERE status = 'staged' AND author <> session_user) ELSE 0 END,
        'staged', (SELECT count(*) FROM librarian.items WHERE status = 'staged'),
        'mine', (SELECT coalesce(jsonb_object_agg(s, c), '{}') FROM (SELECT status AS s,
            count(*) AS c FROM librarian.items WHERE library_id = p_library GROUP BY status) x),
        'pushed_seq', coalesce(lib.pushed_seq, 0),
        'pushed_at', lib.pushed_at,
        'pulled_at', lib.pulled_at,
        'registered', lib.library_id IS NOT NULL,
        'last_head', CASE WHEN last.library_id IS NULL THEN NULL ELSE jsonb_build_object(
            'events', last.events, 'hash', last.hash, 'at', last.at) END);
END $$;

-- The hash chain, checked row by row against its neighbour (set-based: fast on a big log).
CREATE FUNCTION librarian.verify_chain(p_client int) RETURNS jsonb
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    v_problems jsonb;
BEGIN
    PERFORM librarian._check_client(p_client);
    SELECT coalesce(jsonb_agg(p ORDER BY p), '[]') INTO v_problems FROM (
        SELECT format('hub event %s: %s', x.id, CASE WHEN x.hash <> x.recomputed
            THEN 'hash does not match its content' ELSE 'prev_hash does not match the event'
            ' before it' END) AS p
        FROM (SELECT e.id, e.prev_hash, e.hash, librarian.event_hash(e) AS recomputed,
                lag(e.hash, 1, repeat('0', 64)) OVER (ORDER BY e.id) AS before
              FROM librarian.events e) x
        WHERE x.prev_hash <> x.before OR x.hash <> x.recomputed
        LIMIT 20) found;
    RETURN jsonb_build_object('events', (SELECT count(*) FROM librarian.events),
        'problems', v_problems);
END $$;

-- Replays the log into `items` inside a block that is always rolled back, and compares.
CREATE FUNCTION librarian.verify_items(p_client int) RETURNS jsonb
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = librarian, pg_temp AS $$
DECLARE
    e librarian.events;
    v_problems jsonb := '[]';
BEGIN
    PERFORM librarian._check_client(p_client);
    PERFORM pg_advisory_xact_lock(7262601);
    CREATE TEMP TABLE IF NOT EXISTS live_items (LIKE librarian.items) ON COMMIT DROP;
    CREATE TEMP TABLE IF NOT EXISTS live_feed (LIKE librarian.feed) ON COMMIT DROP;
    DELETE FROM live_items;
    DELETE FROM live_feed;
    INSERT INTO live_items SELECT * FROM librarian.items;
    INSERT INTO live_feed SELECT * FROM librarian.feed;
    BEGIN
        DELETE FROM librarian.items;
        DELETE FROM librarian.feed;
        FOR e IN SELECT * FROM librarian.events ORDER BY id LOOP
            PERFORM librarian._project(e);
        END LOOP;
        SELECT coalesce(jsonb_agg(p), '[]') INTO v_problems FROM (
            SELECT format('hub item %s differs from a replay of the log', item_id) AS p
            FROM ((SELECT * FROM live_items EXCEPT SELECT * FROM librarian.items)
                  UNION (SELECT * FROM librarian.items EXCEPT SELECT * FROM live_items)) d
            GROUP BY item_id
            UNION ALL
            SELECT format('hub feed row %s differs from a replay of the log', id)
            FROM ((SELECT * FROM live_feed EXCEPT SELECT * FROM librarian.feed)
                  UNION (SELECT * FROM librarian.feed EXCEPT SELECT * FROM live_feed)) f
            ORDER BY 1 LIMIT 20) found;
        RAISE EXCEPTION 'roll back' USING ERRCODE = 'LB009';
    EXCEPTION WHEN SQLSTATE 'LB009' THEN
        NULL;  -- the replay is undone; `v_problems` keeps what it found
    END;
    RETURN jsonb_build_object('items', (SELECT count(*) FROM librarian.items),
        'problems', v_problems);
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
#: as the role that owns the schema). Number n is `MIGRATIONS[n - 1]`.
MIGRATIONS: tuple[str, ...] = (_V1_TABLES + _V1_CORE + _V1_API + _V1_GRANTS,)
assert len(MIGRATIONS) == HUB_SCHEMA
