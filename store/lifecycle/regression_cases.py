"""A skill's regression cases in the retirement runbook: step 5 lists them for a repair, step
7 adds the incident's case to the skill that carries on, for good.

The cases a skill has are those in its folder's checklist (`references/regression-cases.md`,
written when a draft is approved and by step 7), those of its graduation draft, and the
regression cases of incidents recorded against it. Step 7 appends one line to the checklist
of the repaired skill (or the successor, or — without either — the retired skill itself),
atomically, and records the folder's hashes: the next scan serves that version at once,
because the librarian wrote it on the runbook's say (a stable successor does not have to prove
a checklist line as a candidate).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from store.ingest.redact import redact
from store.models.governance import RegressionCase
from store.patterns.regressions import REFERENCE, checklist, read_checklist
from store.projections import store_blob
from store.skills.writeback import folder_hashes, read_text, write_atomic
from store.text import one_line

#: Cases listed by step 5 at most.
LISTED = 20


def skill_cases(conn: sqlite3.Connection, skill_id: int, name: str, folder: str) -> list[str]:
    """Every regression case a skill has, one line each, in a stable order."""
    found = read_checklist(Path(folder)) if folder else []
    row = conn.execute(
        "SELECT d.regressions FROM drafts d JOIN patterns p USING(pattern_id)"
        " WHERE p.skill_name=? AND d.status='approved' ORDER BY d.decided_at DESC LIMIT 1",
        (name,),
    ).fetchone()
    if row is not None:
        for case in json.loads(row[0] or "[]"):
            found.append(RegressionCase(**case).line())
    for regression, incident in conn.execute(
        "SELECT regression, incident_id FROM incidents WHERE skill_id=? AND regression != ''"
        " ORDER BY recorded_at, incident_id",
        (skill_id,),
    ):
        found.append(f"{one_line(regression, 600)} (incident {incident})")
    seen: set[str] = set()
    unique = []
    for line in found:
        key = line.split(" (")[0].strip().lower()
        if key not in seen:
            seen.add(key)
            unique.append(line)
    return unique


def carrier(conn: sqlite3.Connection, run_skill: int, mode: str, successor: str) -> Any:
    """The skill the incident's case goes to: the successor when there is one, else the
    (repaired or retired) skill itself; its row (skill_id, name, dir, fs_path, status)."""
    if mode == "successor" and successor:
        row = conn.execute(
            "SELECT skill_id, name, dir, fs_path, status FROM skills WHERE name=?"
            " AND status != 'uninstalled' ORDER BY scope_rank, root_rank, fs_path LIMIT 1",
            (successor,),
        ).fetchone()
        if row is not None:
            return row
    return conn.execute(
        "SELECT skill_id, name, dir, fs_path, status FROM skills WHERE skill_id=?", (run_skill,)
    ).fetchone()


def case_line(incident_id: str, cause: str, regression: str) -> str:
    """The checklist line: one line, secrets masked (it goes into a file people share)."""
    text = f"{one_line(regression, 600)} (incident {incident_id}: {one_line(cause, 200)})"
    return redact(text).replace("<", "‹").replace(">", "›")


def append_case(conn: sqlite3.Connection, skill: Any, line: str) -> dict[str, Any]:
    """Append one case to the skill's checklist (creating it); the step's payload: the file,
    its previous content (a blob) and the folder's hashes as written."""
    folder = Path(str(skill["dir"]))
    path = folder / REFERENCE
    before = read_text(path)
    if line.split(" (incident")[0] in before:
        return {"regression_file": str(path), "regression_added": False}
    text = before if before else checklist(str(skill["name"]), ())
    text = text.rstrip("\n") + f"\n- [ ] {line}\n"
    write_atomic(path, text)
    content_hash, files_hash = folder_hashes(Path(str(skill["fs_path"])))
    return {
        "regression_file": str(path),
        "regression_added": True,
        "regression_skill": str(skill["name"]),
        "previous_hash": store_blob(conn, before),
        "wrote": {
            "skill_id": int(skill["skill_id"]),
            "content_hash": content_hash,
            "files_hash": files_hash,
        },
    }
