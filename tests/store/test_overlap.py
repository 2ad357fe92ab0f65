"""Overlaps and collisions (issue 15, item 2): exact duplicates under different names, and
pairs the ranking confuses — decided by `suggest`'s relevance, not by cosine alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from store.library import Library
from store.skills.overlap import body_similarity
from tests.store.conftest import write_skill

ROLLBACK = (
    "# Rollback\n\n1. Find the last good revision with `kubectl rollout history`.\n"
    "2. Run `kubectl rollout undo deployment/NAME --to-revision=N`.\n"
    "3. Watch `kubectl rollout status` until it is done.\n"
)


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory, _embedder: object) -> Iterator[Library]:
    root = tmp_path_factory.mktemp("overlap") / "skills"
    write_skill(
        root,
        "k8s-rollback",
        "Roll back a broken Kubernetes deployment to its last good revision. Use when a"
        " release fails its health checks.",
        body=ROLLBACK,
    )
    write_skill(
        root,
        "kubernetes-undo-release",
        "Roll back a broken Kubernetes deployment to the last good revision. Use when a"
        " release fails health checks.",
        body=ROLLBACK.replace("Rollback", "Undo a release"),
    )
    write_skill(
        root,
        "k8s-canary-rollout",
        "Roll out a Kubernetes deployment gradually with a canary. Use when a release needs"
        " a careful, health-checked rollout.",
        body="# Canary\n\n1. Create a canary at 5%.\n2. Compare error rates.\n3. Promote.\n",
    )
    notes = "Write customer-facing release notes from a changelog and merged pull requests."
    body = "# Notes\n\nGroup changes by feature; link the PRs.\n"
    write_skill(root, "release-notes", notes, body=body)
    write_skill(
        root,
        "changelog-to-notes",
        notes,
        body="# NOTES\n\nGroup changes  by feature; link the PRs.\n",
    )
    write_skill(
        root,
        "pdf-extract-text",
        "Extract text and tables from PDF files with pdfplumber. Use when a user needs the"
        " contents of a PDF.",
        body="# PDF\n\nOpen the file with pdfplumber and read each page; tables become CSV.\n",
    )
    write_skill(
        root,
        "pdf-reader",
        "Extract text and tables from PDF files. Use when a user needs the contents of a PDF.",
        body="# Reading PDFs\n\nUse pypdf: split the document, OCR scanned pages with tesseract.\n",
    )
    write_skill(
        root,
        "postgres-vacuum",
        "Tune autovacuum on busy PostgreSQL tables. Use when bloat grows or queries slow down.",
    )
    library = Library(root.parent / "lib", embedder=_embedder)  # type: ignore[arg-type]
    library.scan([root])
    yield library
    library.close()


def pairs_by_names(library: Library) -> dict[tuple[str, str], object]:
    return {(p.a, p.b): p for p in library.overlaps()}


def test_exact_duplicates_under_two_names_retire_one(catalog: Library) -> None:
    pair = pairs_by_names(catalog)[("changelog-to-notes", "release-notes")]
    assert pair.kind == "duplicate"  # type: ignore[attr-defined]
    assert pair.suggestion == "retire_one"  # type: ignore[attr-defined]
    assert "retire" in pair.reason  # type: ignore[attr-defined]


def test_same_instructions_under_two_descriptions_merge(catalog: Library) -> None:
    pair = pairs_by_names(catalog)[("k8s-rollback", "kubernetes-undo-release")]
    assert pair.kind == "confusable"  # type: ignore[attr-defined]
    assert pair.suggestion == "merge"  # type: ignore[attr-defined]
    assert min(pair.a_to_b, pair.b_to_a) >= 0.85  # type: ignore[attr-defined]
    assert "kubernetes" in pair.shared_terms  # type: ignore[attr-defined]


def test_different_instructions_routing_confuses_sharpen(catalog: Library) -> None:
    pair = pairs_by_names(catalog)[("pdf-extract-text", "pdf-reader")]
    assert pair.suggestion == "sharpen"  # type: ignore[attr-defined]
    assert pair.body_similarity < 0.5  # type: ignore[attr-defined]
    assert "sharpen pdf-reader's description" in pair.reason  # type: ignore[attr-defined]
    assert "pypdf" in pair.reason  # type: ignore[attr-defined]


def test_close_by_cosine_but_apart_by_ranking_is_no_overlap(catalog: Library) -> None:
    found = pairs_by_names(catalog)
    assert ("k8s-canary-rollout", "k8s-rollback") not in found
    assert not any("postgres-vacuum" in key for key in found)


def test_one_skill_s_pairs(catalog: Library) -> None:
    mine = catalog.overlaps("k8s-rollback")
    assert [(p.a, p.b) for p in mine] == [("k8s-rollback", "kubernetes-undo-release")]
    assert catalog.overlaps("postgres-vacuum") == []


def test_body_similarity() -> None:
    assert body_similarity("a b c d e", "a b c d e") == 1.0
    assert body_similarity("one two three four", "five six seven eight") == 0.0
    assert body_similarity("", "") == 1.0


def test_overlap_finder_follows_catalog_changes(tmp_path: Path, embedder: object) -> None:
    root = tmp_path / "skills"
    text = "Write customer-facing release notes from a changelog and merged pull requests."
    write_skill(root, "notes-a", text)
    library = Library(tmp_path / "lib", embedder=embedder)  # type: ignore[arg-type]
    try:
        library.scan([root])
        assert library.overlaps() == []
        write_skill(root, "notes-b", text)
        library.scan([root])
        assert [(p.a, p.b, p.kind) for p in library.overlaps()] == [
            ("notes-a", "notes-b", "duplicate")
        ]
    finally:
        library.close()
