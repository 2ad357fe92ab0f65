"""The fast fixtures (issue 12): a test that does not test embeddings gets a real library
that embeds with the hash stand-in; a test marked `model` gets the real model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.library import Library
from tests.conftest import HashEmbedder
from tests.store.conftest import write_skill


def test_the_library_fixture_scans_and_suggests_without_the_model(
    library: Library, tmp_path: Path
) -> None:
    write_skill(tmp_path / "skills", "kubernetes-rollback", "Roll back a bad deploy.")
    report = library.scan([tmp_path / "skills"])
    assert report.installed == 1
    assert isinstance(library.embedder, HashEmbedder)
    assert library.embedder.calls > 0
    assert [s.name for s in library.suggest("roll back the deploy")] == ["kubernetes-rollback"]


def test_make_library_embeds_with_the_stand_in(make_library: Callable[..., Library]) -> None:
    assert isinstance(make_library().embedder, HashEmbedder)


@pytest.mark.model
def test_a_model_test_gets_the_real_model(make_library: Callable[..., Library]) -> None:
    assert isinstance(make_library().embedder, FastEmbedder)
