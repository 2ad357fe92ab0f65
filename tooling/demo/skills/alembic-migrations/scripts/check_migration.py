#!/usr/bin/env python3
"""Flag risky operations in Alembic revision files.

Usage: python scripts/check_migration.py PATH [PATH ...]

Reads each file as text and prints one line per finding. Exits 1 if anything
was found, 0 otherwise. It never connects to a database.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CHECKS = [
    (
        re.compile(r"op\.create_index\((?![^)]*postgresql_concurrently=True)", re.S),
        "index built without postgresql_concurrently=True",
    ),
    (
        re.compile(r"nullable=False(?![^)]*server_default)", re.S),
        "NOT NULL column without a server_default",
    ),
    (
        re.compile(r"op\.alter_column\([^)]*type_=", re.S),
        "column type change; prefer add, backfill, switch",
    ),
    (
        re.compile(r"op\.execute\(\s*[\"'](UPDATE|INSERT)", re.I),
        "data change inside a migration; use a backfill job",
    ),
]


def check_file(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    hits = []
    for pattern, message in CHECKS:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            hits.append((line, message))
    return [f"{path}:{line}: {message}" for line, message in sorted(hits)]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip())
        return 2
    findings: list[str] = []
    for name in argv:
        findings.extend(check_file(Path(name)))
    for finding in findings:
        print(finding)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
