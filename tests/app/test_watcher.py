"""With `watch=True`, a SKILL.md created under a skill root shows up without a keypress."""

from __future__ import annotations

import time
from pathlib import Path

from app.factory import make_app
from app.screenshots import settle
from store.library import Library
from widgets.skill_table import SkillTable

NEW_SKILL = """---
name: dns-cutover
description: Move a service's DNS to a new load balancer with a low TTL first and a rollback plan.
---

# DNS cutover

Lower the TTL a day ahead, switch the record, watch the error rate, keep the old target warm.
"""


async def test_watcher_adds_a_new_skill_to_the_table(demo_library: Library) -> None:
    (root,) = [r.path for r in demo_library.configured_roots()]
    app = make_app(demo_library, watch=True, warm=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        await pilot.press("3")  # the demo has pending nodes, so the app opens on review
        await settle(pilot)
        table = app.screen.query_one(SkillTable)
        before = len(table.rows)

        folder = Path(root) / "dns-cutover"
        folder.mkdir()
        (folder / "SKILL.md").write_text(NEW_SKILL, encoding="utf-8")

        deadline = time.monotonic() + 10
        while len(table.rows) == before and time.monotonic() < deadline:
            await pilot.pause()  # the watcher debounces for 0.5 s, then scans
            await settle(pilot)
        assert len(table.rows) == before + 1
        assert "dns-cutover" in [r.name for r in table.rows]
