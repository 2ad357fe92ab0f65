"""`librarian bench`'s measurements in a process of their own (`librarian bench-child NAME
ARGS…`, see `tooling.bench.common.run_child`). The app-level ones are here, so `store` and
`tooling` stay headless: `app-skills LIBRARY`, seconds from process start to an interactive
Skills screen (rows drawn, keys answered); `app-review LIBRARY`, the review queue;
`app-screen MODE LIBRARY [NOW]`, one lifecycle screen (graph, health, lineage, runbook) from
`action_view` to `loaded`, with the library's clock held at NOW; `app-team-review LIBRARY`,
the review queue on the team source. Every other name is a headless measurement of
`tooling.bench.children`."""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import asyncio  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable, Coroutine, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402


async def measure(library_dir: Path) -> dict[str, Any]:
    from app.factory import make_app
    from store.library import Library
    from widgets.skill_table import SkillTable

    with Library(library_dir) as library:
        app = make_app(library, watch=False, warm=True)
        async with app.run_test(size=(160, 48)) as pilot:
            await app.action_view("skills")
            table = app.screen.query_one(SkillTable)
            while not table.rows:
                await pilot.pause(0.01)
            ready = time.perf_counter() - STARTED
            during_warm_up = await keys_ms(pilot)
            await app.workers.wait_for_complete()
            steady = await keys_ms(pilot)
            rows = len(table.rows)
    rss = peak_rss_mb()
    return {
        "interactive_seconds": round(ready, 3),
        "rows": rows,
        "key_ms_pilot_during_model_load": during_warm_up,
        "key_ms_pilot": steady,
        "peak_rss_mb": round(rss, 1),
    }


def peak_rss_mb() -> float:
    """This process's own peak RSS (`VmHWM`): on Linux `ru_maxrss` of a child starts at its
    parent's peak (the bench parent may have just built a big library)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def keys_ms(
    pilot: Any, keys: tuple[str, ...] = ("down", "down", "pagedown", "end", "home", "up")
) -> float:
    """Mean milliseconds per cursor key through Pilot (which adds ~80 ms of idle waiting)."""
    before = time.perf_counter()
    await pilot.press(*keys)
    return round((time.perf_counter() - before) / len(keys) * 1000, 1)


async def measure_review(library_dir: Path, decisions: int = 20) -> dict[str, Any]:
    """Review queue (best first): time to interactive, and approve key -> next node shown
    (median); then grouped by session: time until the groups are drawn, and approve again."""
    import statistics

    from app.factory import make_app
    from store.library import Library
    from widgets.node_detail import NodeDetailView
    from widgets.node_table import NodeTable

    with Library(library_dir) as library:
        app = make_app(library, watch=False, warm=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await app.action_view("review")
            # The screen may still be composing when the action returns (a loaded machine).
            while not (found := app.screen.query(NodeTable)) or not found.first().rows:
                await pilot.pause(0.01)
            table = found.first()
            ready = time.perf_counter() - STARTED
            detail = app.screen.query_one(NodeDetailView)
            await pilot.pause(0.3)
            latencies = []
            for _ in range(decisions):
                latencies.append(await _approve_latency(pilot, table, detail))
            pending = len(table.rows)
            started = time.perf_counter()
            await pilot.press("G")  # grouped by session: headers between the rows
            while not table.grouped:
                await pilot.pause(0.005)
            grouped = time.perf_counter() - started
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            in_groups = [await _approve_latency(pilot, table, detail) for _ in range(decisions)]
    return {
        "interactive_seconds": round(ready, 3),
        "rows": pending,
        "approve_to_next_ms_median": round(statistics.median(latencies), 1),
        "approve_to_next_ms_max": round(max(latencies), 1),
        "grouped_seconds": round(grouped, 3),
        "grouped_approve_to_next_ms_median": round(statistics.median(in_groups), 1),
    }


async def _approve_latency(pilot: Any, table: Any, detail: Any) -> float:
    """Milliseconds from the approve key until the next node is under the cursor and shown in
    the detail pane (a poller sees it; Pilot's own idle waiting is not counted)."""
    before = table.current.node_id
    seen: list[float] = []

    async def watch() -> None:
        while True:
            current = table.current
            shown = detail.node
            if (
                current is not None
                and current.node_id != before
                and shown is not None
                and shown.node_id == current.node_id
            ):
                seen.append(time.perf_counter())
                return
            await asyncio.sleep(0.0005)

    watcher = asyncio.create_task(watch())
    started = time.perf_counter()
    await pilot.press("a")
    await asyncio.wait_for(watcher, timeout=10)
    await pilot.pause()
    return (seen[0] - started) * 1000


#: Cursor keys pressed on a lifecycle screen once it is interactive.
SCREEN_KEYS = ("down", "down", "down", "up", "pagedown", "home")
SCREEN_TIMEOUT = 60.0


async def measure_team_review(library_dir: Path) -> dict[str, Any]:
    """The review queue on the team source (the hub's staged items): seconds from process
    start, and from the switch key, until its first rows are drawn and keys are answered."""
    from app.factory import make_app
    from app.screens.review import ReviewScreen
    from store.library import Library
    from widgets.node_table import NodeTable

    with Library(library_dir) as library:
        app = make_app(library, watch=False, warm=False)
        async with app.run_test(size=(160, 48)) as pilot:
            await app.action_view("review")
            screen = app.screen
            assert isinstance(screen, ReviewScreen)
            await app.workers.wait_for_complete()  # the screen is up: now the reviewer asks
            switched = time.perf_counter()
            screen.action_toggle_source()
            table = screen.query_one(NodeTable)
            while not table.rows:
                await pilot.pause(0.01)
            ready = time.perf_counter()
            keys = await keys_ms(pilot)
            await app.workers.wait_for_complete()
            rows = len(table.rows)
    return {
        "interactive_seconds": round(ready - switched, 3),
        "from_start_seconds": round(ready - STARTED, 3),
        "rows": rows,
        "key_ms_pilot": keys,
        "peak_rss_mb": peak_rss_mb(),
    }


async def measure_screen(library_dir: Path, mode: str, now: str = "") -> dict[str, Any]:
    """Seconds from `action_view(mode)` until the screen says it is `loaded` (first data
    drawn, keys answered), in an app whose first screen has settled (as when a person
    presses the screen's number key), then the mean latency of a few cursor keys through
    Pilot. A mode the app does not have yet is reported as missing; a screen that fails
    is reported with the error (and how far it got)."""
    from app.factory import make_app
    from app.librarian_app import VIEWS
    from store.events import now_iso
    from store.library import Library

    if mode not in {m for _, m, _ in VIEWS}:
        return {"mode": mode, "missing": True}
    result: dict[str, Any] = {"mode": mode}
    with Library(library_dir, clock=(lambda: now) if now else now_iso) as library:
        events_before = library.last_seq()
        try:
            await _open_screen(make_app(library, watch=False, warm=False), mode, result)
        except Exception as error:  # a screen's own failure: reported, not raised
            result["error"] = f"{type(error).__name__}: {error}"
        result["events_written"] = library.last_seq() - events_before
    result["peak_rss_mb"] = peak_rss_mb()
    return result


async def _open_screen(app: Any, mode: str, result: dict[str, Any]) -> None:
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()  # the first screen, chosen and loaded
        await pilot.pause()
        started = time.perf_counter()
        await app.action_view(mode)
        while not getattr(app.screen, "loaded", False):
            if time.perf_counter() - started > SCREEN_TIMEOUT:
                raise TimeoutError(f"not loaded after {SCREEN_TIMEOUT:g} s")
            await pilot.pause(0.005)
        result["interactive_seconds"] = round(time.perf_counter() - started, 3)
        result["screen"] = type(app.screen).__name__
        result["key_ms_pilot"] = await keys_ms(pilot, SCREEN_KEYS)


async def _screen(mode: str, library_dir: str, now: str = "") -> dict[str, Any]:
    return await measure_screen(Path(library_dir), mode, now)


#: The app-level measurements, by the name `librarian bench-child` takes.
CHILDREN: dict[str, Callable[..., Coroutine[Any, Any, dict[str, Any]]]] = {
    "app-skills": lambda library: measure(Path(library)),
    "app-review": lambda library: measure_review(Path(library)),
    "app-team-review": lambda library: measure_team_review(Path(library)),
    "app-screen": _screen,
}


def run_child(argv: Sequence[str]) -> int:
    """`librarian bench-child NAME ARGS…`: run one measurement, print its JSON on one line."""
    if not argv:
        print("librarian: error: bench-child needs a measurement's name", file=sys.stderr)
        return 2
    name, *args = argv
    if name in CHILDREN:
        result: dict[str, Any] = asyncio.run(CHILDREN[name](*args))
    else:
        from tooling.bench.children import CHILDREN as HEADLESS  # the headless measurements

        if name not in HEADLESS:
            print(f"librarian: error: no bench measurement {name!r}", file=sys.stderr)
            return 2
        result = HEADLESS[name](*args)
    print(json.dumps(result))
    return 0
