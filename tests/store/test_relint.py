"""Unchanged skills are linted again when the lint rules are newer than their findings:
a `skill.relinted` event, replayed like any other (verify stays green), once."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.library import Library
from store.models import LintFinding
from store.skills import reconcile, relint
from store.verify import verify
from tests.store.conftest import HashEmbedder, write_skill


def events_of(library: Library, type_: str) -> int:
    with library.db.read() as conn:
        return int(conn.execute("SELECT count(*) FROM events WHERE type=?", (type_,)).fetchone()[0])


def test_newer_rules_relint_unchanged_skills_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploys the app.")
    with Library(tmp_path / "lib", embedder=HashEmbedder()) as library:
        library.scan([root])
        assert library.get_skill("deploy").findings == ()
        assert events_of(library, "skill.relinted") == 0

        # a new rule arrives with a newer LINT_VERSION
        newer = relint.LINT_VERSION + 1
        extra = LintFinding("reverse_shell", "high", "a new rule's finding", "SKILL.md", 3, "x")
        original = reconcile.lint_skill
        monkeypatch.setattr(
            reconcile, "lint_skill", lambda files, tools=(): [*original(files, tools), extra]
        )
        monkeypatch.setattr(relint, "LINT_VERSION", newer)

        report = library.scan([root])
        assert report.changed == 0  # the files did not change: no new version
        detail = library.get_skill("deploy")
        assert detail.findings == (extra,)
        assert detail.summary.version_no == 1
        assert detail.summary.max_severity == "high"
        assert events_of(library, "skill.relinted") == 1
        library.scan([root])
        assert events_of(library, "skill.relinted") == 1  # up to date now: nothing more
        assert verify(library).ok
