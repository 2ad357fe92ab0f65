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
    t.say(
        f"That didn't work. I found that the key pair with secret {AWS_SECRET} was revoked,"
        f" and the registry token {GITLAB} expired with it."
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
