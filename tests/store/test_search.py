"""`suggest`: fusion, status and importance weighting, exclusions, explanations, batches."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from store.library import Library
from store.search import fts_query, importance, query_terms
from tests.store.conftest import write_skill

SKILLS = {
    "kubernetes-rollback": "Roll a broken Kubernetes deployment back to the previous release.",
    "release-notes": "Write customer-facing release notes from a finished changelog.",
    "flaky-tests": "Find and fix tests that pass and fail at random without code changes.",
    "postgres-migrations": "Change a live Postgres schema without long locks or downtime.",
    "sentry-triage": "Group, assign and close new Sentry error issues for a service.",
}


@pytest.fixture
def library(make_library, tmp_path: Path) -> Library:
    root = tmp_path / "skills"
    for name, description in SKILLS.items():
        write_skill(root, name, description)
    lib = make_library()
    lib.scan([root])
    return lib


def test_query_terms_drop_stopwords_and_repeats() -> None:
    assert query_terms("How do I fix the FLAKY tests, the flaky ones?") == ["fix", "flaky", "tests"]
    assert fts_query(["a", 'b"c']) == '"a" OR "b"c"'.replace('b"c', 'b"c')


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ("the deploy went bad, undo it on the cluster", "kubernetes-rollback"),
        ("our CI suite fails intermittently and nobody can reproduce it", "flaky-tests"),
        ("add a column to the users table in prod without an outage", "postgres-migrations"),
        ("draft the announcement of what changed in version 2.3 for customers", "release-notes"),
    ],
)
@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_suggest_ranks_the_right_skill_first(library: Library, context: str, expected: str) -> None:
    assert library.suggest(context)[0].name == expected


def test_hits_explain_themselves(library: Library) -> None:
    hit = library.suggest("roll back the kubernetes deployment")[0]
    assert hit.name == "kubernetes-rollback"
    assert {"roll", "kubernetes", "deployment"} <= set(hit.matched_terms)
    assert hit.lexical > 0
    assert hit.dense > 0
    assert any(r.startswith("name:") for r in hit.reasons)
    assert hit.score > 0


def test_retired_and_denylisted_never_appear(library: Library) -> None:
    library.change_status("kubernetes-rollback", "skill.retired", "caused an outage")
    names = [h.name for h in library.suggest("roll back the kubernetes deployment", limit=10)]
    assert "kubernetes-rollback" not in names
    assert library.suggest_many(["kubernetes rollback"] * 3)[2] == [] or all(
        h.name != "kubernetes-rollback" for h in library.suggest("kubernetes rollback")
    )


@pytest.fixture
def twins(make_library, tmp_path: Path) -> Library:
    """Two skills with the same description: only status or importance can separate them."""
    root = tmp_path / "twins"
    text = "Rotate the database password stored in Vault and restart the service."
    write_skill(root, "rotate-a", text)
    write_skill(root, "rotate-b", text)
    library = make_library()
    library.scan([root])
    return library


def test_deprecated_ranks_below_an_equal_skill(twins: Library) -> None:
    library = twins
    library.change_status("rotate-a", "skill.deprecated", "old")
    hits = library.suggest("rotate the vault database password")
    assert [h.name for h in hits[:2]] == ["rotate-b", "rotate-a"]
    assert "deprecated: ranked below equals" in hits[1].reasons


def test_drifting_and_degrading_rank_below_a_healthy_equal_and_say_why(twins: Library) -> None:
    """Issue 14: a DRIFTING skill ranked first with no warning."""
    library = twins
    query = "rotate the vault database password"
    healthy = {h.name: h.score for h in library.suggest(query)}
    for ok in (False, False, False, True):
        library.record_outcome("rotate-a", ok, detail="vault token expired")
    for _ in range(4):
        library.record_outcome("rotate-b", True)
    hits = library.suggest(query)
    assert [(h.name, h.health) for h in hits[:2]] == [("rotate-b", ""), ("rotate-a", "DRIFTING")]
    assert hits[1].reasons[0] == "drifting: 3 of 4 recent runs failed; ranked below equals"
    assert hits[1].score == pytest.approx(healthy["rotate-a"] * 0.8, rel=1e-3)

    library.record_outcome("rotate-a", True)
    library.record_outcome("rotate-a", True)
    library.record_outcome("rotate-a", True)  # 3 of 7 failed: above the warning rate only
    hits = library.suggest(query)
    assert [(h.name, h.health) for h in hits[:2]] == [("rotate-b", ""), ("rotate-a", "DEGRADING")]
    assert hits[1].score == pytest.approx(healthy["rotate-a"] * 0.9, rel=1e-3)


def test_importance_decays_with_idleness_and_has_a_floor() -> None:
    now = datetime(2026, 11, 22, tzinfo=UTC)
    assert importance(None, "2026-11-22T00:00:00+00:00", 0, now) == pytest.approx(0.7)
    assert importance(None, "2026-10-23T00:00:00+00:00", 0, now) == pytest.approx(0.7 * 0.99**30)
    assert importance(None, "2020-01-01T00:00:00+00:00", 0, now) == pytest.approx(0.3)
    assert importance(None, "2026-10-23T00:00:00+00:00", 50, now) > 0.7 * 0.99**30
    assert importance(None, "not a date", 0, now) == 1.0


def test_idle_skill_ranks_below_an_equal_fresh_one(twins: Library) -> None:
    library = twins
    library.db.conn.execute(
        "UPDATE skills SET installed_at='2026-01-01T00:00:00+00:00' WHERE name='rotate-b'"
    )
    hits = library.suggest("rotate the vault database password")
    assert [h.name for h in hits[:2]] == ["rotate-a", "rotate-b"]
    assert hits[1].importance < hits[0].importance


def test_batch_answers_each_context_in_order(library: Library) -> None:
    results = library.suggest_many(["undo a bad kubernetes deploy", "", "triage sentry errors"])
    assert results[0][0].name == "kubernetes-rollback"
    assert results[1] == []
    assert results[2][0].name == "sentry-triage"


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_lexical_only_when_nothing_is_indexed(make_library, tmp_path: Path) -> None:
    root = tmp_path / "skills"
    write_skill(root, "sentry-triage", SKILLS["sentry-triage"])
    library = make_library()
    library.scan([root], embed=False)
    hit = library.suggest("sentry issues")[0]
    assert hit.name == "sentry-triage"
