"""`librarian demo --team`: the team story on a real local hub gives the demo library's Team
screen and the review queue's team source real content: what two developers pushed and a
colleague decided, what waits for the demo's reviewer, a team skill installed at the pull."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from textual.widgets import Static

from app.factory import make_app
from app.screens.review import ReviewScreen
from app.screens.team import TeamScreen
from app.screenshots import settle
from store.embed import FastEmbedder
from store.library import Library
from store.team import server
from store.team.review import TeamQueue
from store.team.status import team_status, team_verify
from store.verify import verify
from tooling.demo.team import DEMO_USER, build_team
from widgets.draft_table import DraftTable
from widgets.node_table import NodeTable


async def test_the_demo_team_story_fills_the_team_screen_and_the_team_queue(
    demo_library: Library, model: FastEmbedder
) -> None:
    target = demo_library.paths.root
    folder = Path(tempfile.mkdtemp(prefix="librarian-test-demo-hub-"))
    try:
        story = build_team(target, demo_library, folder=folder)
        assert story["installed"] == ["release-pool-before-http"]
        assert story["problems"] == []
        assert story["pulled"] > 0
        assert story["pushed"] > 0
        skill = target / "team-skills" / "release-pool-before-http" / "SKILL.md"
        assert skill.is_file()
        assert demo_library.get_skill("release-pool-before-http").summary.status == "proposed"
        # the colleague's approved TEAM lessons from alex and jordan are nodes here now
        pulled = {n.node_id: n for n in demo_library.nodes(status="approved", limit=None)}
        assert {"n_alex0", "n_alex1", "n_jordan0"} <= set(pulled)
        assert pulled["n_alex1"].summary.startswith("Commit and release the pooled connection")
        assert "n_alex3" not in pulled  # rejected by the colleague

        status = team_status(demo_library)
        assert status.reachable
        assert status.reviewer
        assert status.user == DEMO_USER
        assert status.waiting_for_me == 4  # three nodes and a draft
        assert verify(demo_library).ok
        assert team_verify(demo_library).ok
        for path in map(Path, story["developers"]):
            with Library(path, embedder=model) as lib:
                assert verify(lib).ok, [c for c in verify(lib).checks if not c.ok]
                assert team_verify(lib).ok
        assert build_team(target, demo_library, folder=folder) == story  # built once

        app = make_app(demo_library, watch=False, warm=False, show_timings=False)
        async with app.run_test(size=(160, 45)) as pilot:
            await settle(pilot)
            await pilot.press("9")
            await settle(pilot)
            assert isinstance(pilot.app.screen, TeamScreen)
            await pilot.press("1")
            await settle(pilot)
            screen = pilot.app.screen
            assert isinstance(screen, ReviewScreen)
            await pilot.press("T")
            await settle(pilot)
            waiting = sorted(n.node_id for n in screen.query_one(NodeTable).rows)
            assert waiting == ["n_alex2", "n_jordan1", "n_jordan2"]
            status_line = str(screen.query_one("#review-status", Static).content)
            assert "3 waiting for you" in status_line
            await pilot.press("D")
            await settle(pilot)
            names = [d.name for d in screen.query_one(DraftTable).rows]
            assert names == ["concurrent-index-builds"]
        queue = TeamQueue(demo_library.config.get("team.hub"), kind="draft")
        try:
            assert queue.drafts()[0].created_by.startswith("jordan")
        finally:
            queue.close()
    finally:
        server.stop(folder, immediate=True)
        shutil.rmtree(folder, ignore_errors=True)
