"""Uses (issue 16): a `Skill` call seen in a transcript counts as a use (use_count,
last_used_at), once per call however often the session is re-ingested; importance starts at
0.7, decays 0.99 per idle day to a floor of 0.3, configurable."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from store.library import Library
from store.models.events import EVENT_TYPES
from store.projectors import HANDLERS as _HANDLERS
from store.skills.usage import ImportanceRule
from store.verify import verify
from tests.store.conftest import write_skill
from tests.store.test_inferred_outcomes import Session


@pytest.fixture
def lib(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    library = make_library()
    root = tmp_path / "skills"
    write_skill(root, "deploy", "Deploy the API with a canary.")
    write_skill(root, "rollback", "Roll the API back to the last good release.")
    library.scan([root])
    return library


def uses(lib: Library, name: str) -> tuple[int, str]:
    m = lib.get_skill(name).manifest
    return int(m["use_count"]), str(m["last_used_at"])


def test_skill_calls_in_transcripts_are_uses_counted_once(lib: Library, tmp_path: Path) -> None:
    s = Session(tmp_path / "projects" / "s-1.jsonl").prompt()
    s.skill("deploy")
    s.bash("make deploy").say("Deployed.")
    s.prompt("Again, please.")
    second = s.skill("deploy")
    s.skill("no-such-skill")
    s.skill("rollback", ok=False)  # never launched: no use
    lib.ingest([tmp_path / "projects"])
    assert uses(lib, "deploy") == (2, second)
    assert uses(lib, "rollback") == (0, "None")
    lib.ingest([tmp_path / "projects"])  # unchanged: nothing counted again
    s.prompt("Roll back.")
    third = s.skill("rollback")
    lib.ingest([tmp_path / "projects"])  # grown: only the new call
    assert uses(lib, "deploy") == (2, second)
    assert uses(lib, "rollback") == (1, third)
    with lib.db.read() as conn:
        rows = conn.execute("SELECT skill_id, calls FROM skill_calls ORDER BY skill_id").fetchall()
    assert [tuple(r) for r in rows] == [(1, 2), (2, 1)]
    assert verify(lib).ok


def test_importance_starts_decays_and_floors() -> None:
    rule = ImportanceRule()
    now = datetime(2026, 11, 3, tzinfo=UTC)
    fresh = now.isoformat()
    assert rule.score(None, fresh, 0, now) == pytest.approx(0.7)
    ten_days = (now - timedelta(days=10)).isoformat()
    assert rule.score(ten_days, fresh, 0, now) == pytest.approx(0.7 * 0.99**10)
    old = (now - timedelta(days=400)).isoformat()
    assert rule.score(old, old, 0, now) == pytest.approx(0.3)
    assert rule.score(fresh, fresh, 20, now) == pytest.approx(0.7 + 0.05 * 3.0445, abs=1e-3)
    assert rule.score(fresh, fresh, 10**9, now) == 1.0


def test_importance_is_configurable_and_shown(lib: Library, tmp_path: Path) -> None:
    assert lib.get_skill("deploy").manifest["importance"] == pytest.approx(0.7, abs=0.01)
    lib.config.set("importance.start", "0.9")
    lib.config.set("importance.floor", "0.5")
    lib.config.set("importance.decay", "2")  # out of range: the default is kept
    rule = ImportanceRule.from_config(lib.config)
    assert (rule.start, rule.floor, rule.decay) == (0.9, 0.5, 0.99)
    assert lib.get_skill("deploy").manifest["importance"] == pytest.approx(0.9, abs=0.01)
    assert lib.suggest("deploy the api")[0].importance == pytest.approx(0.9, abs=0.01)


def test_every_projected_event_type_is_registered() -> None:
    assert set(_HANDLERS) <= set(EVENT_TYPES)
    for new in (
        "skill.candidate_promoted",
        "skill.candidate_set_aside",
        "skill.used",
        "pattern.draft_revised",
        "skill.enrichment_proposed",
        "skill.enrichment_approved",
        "skill.enrichment_rejected",
    ):
        assert new in _HANDLERS
        assert new in EVENT_TYPES
