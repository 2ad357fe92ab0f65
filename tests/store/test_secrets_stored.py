"""The permanent log keeps no secret: after ingesting a session that leaks credentials in
prose, commands and tool output, no table of the library (messages, nodes, events, blobs,
search indexes) holds any of them, and memory search returns none."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from store.library import Library
from tests.store.test_ingest import Transcript

AWS_SECRET = "q8Zr3Vt+Lm2Wx9Kp/Yn4Bc7Ds1Fg6Hj0Qa5Ze8Rt"
GITLAB = "gl" + "pat-Xk3mQ9zR7vT2wL5nB8cD"
SLACK_HOOK = "T04AB7XKQ/B05CD9ZLM/q8ZkL2mN9xW4vR7tY1uI3oP5"
PASSWORD = "Tr0ub4dor&3x"
DB_PASSWORD = "W9x!Lq2zTe"
SECRETS = (AWS_SECRET, GITLAB, SLACK_HOOK, PASSWORD, DB_PASSWORD)


def leaking_session(folder: Path, sid: str) -> None:
    t = Transcript(folder / f"{sid}.jsonl", sid, "/work/payments")
    t.prompt(f"Deploys fail since yesterday. The staging password is {PASSWORD} if you need it.")
    t.tool(
        "Bash",
        f"mysql -u root -p{DB_PASSWORD} shop -e 'select 1'",
        "ERROR 1045 (28000): Access denied for user 'root'@'10.0.0.4'",
        is_error=True,
    )
    t.say(  # a stated cause: the precision bar keeps a refusal only with one (issue 11)
        f"`mysql` is refused because the key pair with secret {AWS_SECRET} was revoked. The"
        f" registry token {GITLAB} expired with it."
    )
    t.tool(
        "Bash",
        f"curl -X POST https://hooks.slack.com/services/{SLACK_HOOK} -d @alert.json",
        "ok",
    )
    t.say(
        f"The root cause was the revoked key pair (secret {AWS_SECRET}); rotating it and"
        f" {GITLAB} fixed the deploy: tests pass now."
    )


def every_text(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        chunks = []
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                chunks += [
                    v if isinstance(v, str) else v.decode("utf-8", "replace")
                    for v in row
                    if isinstance(v, str | bytes)
                ]
        return "\n".join(chunks)
    finally:
        conn.close()


def test_no_table_keeps_a_secret_and_memory_search_returns_none(
    make_library: Callable[..., Library], tmp_path: Path
) -> None:
    library = make_library()
    for sid in ("s1", "s2", "s3"):
        leaking_session(tmp_path / "projects", sid)
    report = library.ingest([tmp_path / "projects"])
    assert report.ingested == 3
    assert report.nodes_added > 0
    nodes = library.nodes(status="pending")
    library.review("approve", [n.node_id for n in nodes])
    library.consolidate()
    hits = library.search_memory("revoked key pair secret registry token", limit=20)
    assert hits
    served = "\n".join(f"{h.title} {h.detail}" for h in hits)
    stored = every_text(library.paths.db)
    assert "Access denied for user" in stored  # what is not secret is kept
    assert "[REDACTED" in stored
    for secret in SECRETS:
        assert secret not in stored, secret
        assert secret not in served, secret


def test_what_people_and_agents_type_is_kept_masked(
    make_library: Callable[..., Library], tmp_path: Path
) -> None:
    """A reviewer, a maintainer or an agent quotes a token in what they type: an edited
    summary, a reason, an outcome's detail, a search an agent runs on the error it is stuck
    on. Each is kept, with the token masked, in the log, the blobs and every table."""
    from tests.store.conftest import write_skill

    library = make_library()
    write_skill(tmp_path / "skills", "registry-push", "Push images to the registry safely.")
    library.scan([tmp_path / "skills"])
    leaking_session(tmp_path / "projects", "s1")
    library.ingest([tmp_path / "projects"])
    first, second = (n.node_id for n in library.nodes()[:2])
    library.review("edit", [first], summary=f"The push failed until {GITLAB} was rotated")
    library.review("reject", [second], reason=f"quotes the key, secret {AWS_SECRET}")
    library.record_outcome("registry-push", False, detail=f"401 with token {GITLAB}")
    library.change_status("registry-push", "skill.deprecated", f"leaked {GITLAB} in a run")
    run = library.start_run("registry-push", f"retire: the password is {PASSWORD}")
    library.abandon_run(run.run_id, f"wrong skill; token {GITLAB}")
    library.search_memory(f"curl -u deploy:{DB_PASSWORD} returns 401", limit=5)
    library.suggest_logged(f"push with {GITLAB} is denied")
    library.forget("text", "registry token", reason=f"it quoted {GITLAB}")

    stored = every_text(library.paths.db)
    assert "[REDACTED" in stored
    assert "rotated" in stored  # the rest of what they wrote is kept
    assert "returns 401" in stored
    for secret in SECRETS:
        assert secret not in stored, secret
