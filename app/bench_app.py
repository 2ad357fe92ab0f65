"""`python -m app.bench_app LIBRARY`: seconds from process start to an interactive Skills
screen (rows drawn, keys answered), for `librarian bench`."""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import asyncio  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


async def measure(library_dir: Path) -> dict[str, Any]:
    from app.factory import make_app
    from store.library import Library
    from widgets.skill_table import SkillTable

    with Library(library_dir) as library:
        app = make_app(library, watch=False, warm=True)
        async with app.run_test(size=(160, 48)) as pilot:
            table = app.screen.query_one(SkillTable)
            while not table.rows:
                await pilot.pause(0.01)
            ready = time.perf_counter() - STARTED
            during_warm_up = await keys_ms(pilot)
            await app.workers.wait_for_complete()
            steady = await keys_ms(pilot)
            rows = len(table.rows)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "interactive_seconds": round(ready, 3),
        "rows": rows,
        "key_ms_pilot_during_model_load": during_warm_up,
        "key_ms_pilot": steady,
        "peak_rss_mb": round(rss, 1),
    }


async def keys_ms(pilot: Any) -> float:
    """Mean milliseconds per cursor key through Pilot (which adds ~80 ms of idle waiting)."""
    keys = ("down", "down", "pagedown", "end", "home", "up")
    before = time.perf_counter()
    await pilot.press(*keys)
    return round((time.perf_counter() - before) / len(keys) * 1000, 1)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(measure(Path(sys.argv[1])))))
