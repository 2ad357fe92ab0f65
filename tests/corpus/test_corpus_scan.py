"""The whole corpus through the real library: every skill is loaded or reported with a
reason, what the library stores matches the files, and the library verifies."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.events import stepping_clock
from store.library import Library
from store.skills.parser import parse_skill_md
from store.verify import verify

pytestmark = pytest.mark.corpus


def test_corpus_scans_completely(
    corpus_dir: Path,
    tmp_path: Path,
    _embedder: FastEmbedder,  # noqa: PT019 - the shared model is used, not just set up
) -> None:
    skills_root = corpus_dir / "skills"
    files = sorted(p.resolve() for p in skills_root.rglob("SKILL.md"))
    with Library(tmp_path / "lib", embedder=_embedder, clock=stepping_clock()) as library:
        report = library.scan([skills_root])
        loaded = {row.fs_path: row for row in library.list_skills()}
        skipped = {s.path: s for s in report.skipped}
        for path in files:
            assert str(path) in loaded or str(path) in skipped, path
        assert all(s.reason for s in skipped.values())
        assert report.installed == len(loaded) == len(files) - len(skipped)
        for path in files[:: max(len(files) // 25, 1)]:
            expected = parse_skill_md(path.read_bytes(), path.parent.name)
            detail = library.get_skill(loaded[str(path)].skill_id)
            assert [w.code for w in detail.warnings] == [w.code for w in expected.warnings]
            assert detail.manifest["description"] == expected.description
        names = [name for name, _ in report.collisions]
        assert "skill-creator" in names
        assert verify(library).ok
        assert library.scan([skills_root]).unchanged == len(loaded)
