"""The app on a library it cannot change: it opens for browsing, says it is read-only, and
refuses each change with a message; on a damaged library it does not open at all."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot

from app.factory import make_app, open_for_app
from app.screenshots import settle
from store.db import LibraryDatabaseError
from store.embed import FastEmbedder
from store.library import Library
from store.paths import LibraryPaths
from tests.store.conftest import snapshot


@pytest.fixture
def reader(demo_library: Library, _embedder: FastEmbedder) -> Iterator[Library]:
    root = demo_library.paths.root
    demo_library.close()
    library = Library(root, embedder=_embedder, read_only=True)
    yield library
    library.close()


@pytest.fixture
async def pilot(reader: Library) -> AsyncIterator[Pilot[int]]:
    app = make_app(reader, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        yield pilot


def messages(pilot: Pilot[int]) -> list[str]:
    return [n.message for n in pilot.app._notifications]


async def test_the_app_browses_a_read_only_library_and_refuses_changes(
    pilot: Pilot[int], reader: Library
) -> None:
    before = snapshot(reader.paths.root)
    assert pilot.app.sub_title == "read-only"
    assert any("read-only" in m for m in messages(pilot))
    assert pilot.app.screen.name == "review"  # the demo has pending nodes: they are shown
    pending = [n.node_id for n in reader.nodes(status="pending")]
    await pilot.press("a")  # approve
    await settle(pilot)
    assert any("approve failed: the library is open read-only" in m for m in messages(pilot))
    assert [n.node_id for n in reader.nodes(status="pending")] == pending
    await pilot.press("3")
    await settle(pilot)
    assert pilot.app.screen.name == "skills"
    assert snapshot(reader.paths.root) == before


def test_a_library_this_user_cannot_change_opens_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_for_app(tmp_path / "lib") as library:
        assert not library.read_only
    monkeypatch.setattr(LibraryPaths, "writable", lambda self: False)
    with open_for_app(tmp_path / "lib") as library:
        assert library.read_only


def test_a_damaged_library_does_not_open(tmp_path: Path) -> None:
    with open_for_app(tmp_path / "lib"):
        pass
    (tmp_path / "lib" / "library.db").write_bytes(b"\x00not sqlite" * 500)
    with pytest.raises(LibraryDatabaseError, match="cannot be read"):
        open_for_app(tmp_path / "lib")
