"""Version 1 of the hub's API: the security-definer functions through which contributors
stage, reviewers decide and everyone reads what is approved (`store.team.hub_schema` puts it
between the core tables and the grants)."""

from __future__ import annotations

# The whole API is one SQL script, run inside the migration's transaction.
V1_API = r"""
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

# Version 2: `pull` as version 1 answers it, planned for each call's values. Inside a
# function PostgreSQL soon reuses a generic plan, which cannot know that a library that never
# pushed has no items of its own: it walked every event after the cursor looking for them
# (2.5 s a page on a hub of 1,000,000 events). A library without items now reads the feed
# alone; one with items runs the two-stream query through EXECUTE, planned with its values.
V2_PULL = r"""
SET LOCAL search_path = librarian, pg_temp;
CREATE OR REPLACE FUNCTION librarian.pull(p_client int, p_library text, p_cursor bigint,
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
    IF v_own IS NULL OR NOT EXISTS (SELECT 1 FROM librarian.items oi
                                    WHERE oi.library_id = v_own) THEN
        RETURN QUERY
            SELECT e.id, e.gid, e.kind, e.item_id, e.actor, e.at, e.applied, e.overruled_by,
                e.body - 'item', i.kind, i.library_id, i.author, i.status, i.published,
                i.summary, i.scope, i.decided_by, i.decided_at, i.reason, i.last_event, i.body
            FROM (SELECT f.id FROM librarian.feed f
                  WHERE f.id > p_cursor AND (f.team OR f.project = ANY(p_projects))
                  ORDER BY f.id LIMIT p_limit) picked
            JOIN librarian.events e ON e.id = picked.id
            JOIN librarian.items i ON i.item_id = e.item_id
            ORDER BY e.id;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE $q$
        SELECT e.id, e.gid, e.kind, e.item_id, e.actor, e.at, e.applied, e.overruled_by,
            e.body - 'item', i.kind, i.library_id, i.author, i.status, i.published, i.summary,
            i.scope, i.decided_by, i.decided_at, i.reason, i.last_event, i.body
        FROM (
            (SELECT f.id FROM librarian.feed f
             WHERE f.id > $1 AND (f.team OR f.project = ANY($2))
               AND NOT EXISTS (SELECT 1 FROM librarian.items fi
                               WHERE fi.item_id = f.item_id AND fi.library_id = $3)
             ORDER BY f.id LIMIT $4)
            UNION ALL
            (SELECT oe.id FROM librarian.items oi JOIN librarian.events oe USING (item_id)
             WHERE oi.library_id = $3 AND oe.id > $1
             ORDER BY oe.id LIMIT $4)
            ORDER BY 1 LIMIT $4
        ) picked JOIN librarian.events e ON e.id = picked.id
        JOIN librarian.items i ON i.item_id = e.item_id
        ORDER BY e.id $q$ USING p_cursor, p_projects, v_own, p_limit;
END $$;
"""
