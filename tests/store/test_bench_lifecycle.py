"""The lifecycle bench library: written through the event log (replay == live), shaped as
planned (exact relation count, hubs, chains, cycles, dangling references, drifting skills,
two versions), cached, and installed exactly as `scan` would have."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.library import Library
from store.skills.parser import parse_skill_md
from store.verify import verify
from tooling.bench.lifecycle import Spec, measure_blast, measure_health, parsed_skill, plan
from tooling.bench.phases import lifecycle_library

SIZE = {"skills": 400, "relations": 1600, "outcomes": 8000}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    work = tmp_path_factory.mktemp("bench")
    return lifecycle_library(work, SIZE)


def test_the_fast_frontmatter_reader_agrees_with_the_parser() -> None:
    catalog = plan(Spec(400, 1600, 0))
    assert any("requires:" in t for t in catalog.texts)
    assert any("scripts/check.sh" in t for t in catalog.texts)
    for name, text in zip(catalog.names, catalog.texts, strict=True):
        data = text.encode()
        assert parsed_skill(data) == parse_skill_md(data, name), name


def test_the_library_replays_to_its_projections(built: tuple[Path, dict[str, object]]) -> None:
    library, marker = built
    assert marker["built"] is True
    with Library(library) as lib:
        checks = {c.name: c for c in verify(lib).checks}
        counts = {
            table: lib.db.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("skills", "relations", "outcomes", "sessions")
        }
        versions = lib.db.conn.execute("SELECT max(version_no) FROM outcomes").fetchone()[0]
        demoted = lib.db.conn.execute(
            "SELECT count(*) FROM skills WHERE status='deprecated'"
        ).fetchone()[0]
    # no embeddings on purpose: only the vector index check is left out
    assert all(checks[n].ok for n in ("integrity", "hash_chain", "replay", "blobs"))
    assert counts == {"skills": 400, "relations": 1600, "outcomes": 8000, "sessions": 16}
    assert versions == 2
    assert demoted >= 3  # `health --apply` demoted the drifting skills


def test_the_schema_is_the_usual_one(built: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    """Indexes dropped for the bulk load are all back, as the migrations made them."""
    query = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    with Library(built[0]) as lib, Library(tmp_path / "fresh") as fresh:
        assert lib.db.conn.execute(query).fetchall() == fresh.db.conn.execute(query).fetchall()


def test_installing_matches_a_real_scan(built: tuple[Path, dict[str, object]]) -> None:
    library, _ = built
    skills = library.with_name("lifecycle-skills-400")
    with Library(library) as lib:
        events = lib.last_seq()
        report = lib.scan([skills], embed=False)
        assert (report.installed, report.changed, report.unchanged) == (0, 0, 400)
        assert lib.last_seq() == events  # nothing new to record
        assert report.cycles
        assert report.dangling


def test_the_cache_is_reused(built: tuple[Path, dict[str, object]]) -> None:
    library, marker = built
    again, second = lifecycle_library(library.parent, SIZE)
    assert again == library
    assert second["built"] is False
    assert second["now"] == marker["now"]


def test_measurements_see_hubs_chains_and_drift(built: tuple[Path, dict[str, object]]) -> None:
    library, marker = built
    now = str(marker["now"])
    blast = measure_blast(library, now, randoms=20)
    assert blast["widest"]["dependents"] >= 20
    assert blast["deepest"]["depth"] >= 5
    assert 0 < blast["p50_ms"] <= blast["p95_ms"] <= blast["max_ms"]
    health = measure_health(library, now)
    assert health["skills"] == 400
    assert health["outcomes"] == 8000
    assert health["verdicts"]["DRIFTING"] >= 3
    assert health["verdicts"]["IDLE"] > 0
    assert health["verdicts"]["HEALTHY"] > 0
    assert health["flagged"] > 0  # idle skills and missing cited scripts
