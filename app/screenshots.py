"""`python -m app.screenshots [--out screenshots]`: SVG screenshots of the app's screens.

Deterministic: the demo library is rebuilt with a stepping clock in a temporary home folder
of its own (`HOME` points there while shooting, and the app shows paths under the home as
`~/…`), the app's clock stands still, durations are kept off the screen and the terminal
size is fixed. Run it whenever a screen changes and commit the result.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.pilot import Pilot
from textual.worker import WorkerState

from app.factory import make_app
from app.librarian_app import LibrarianApp
from app.screens.skills import DETAIL_DELAY
from store.events import stepping_clock
from store.library import Library
from tooling.demo.build import build_demo

SIZE = (140, 42)
#: The app's "now": a day after the demo was built, frozen.
NOW = "2026-11-03T09:00:00+00:00"
REVIEWER = {"reviewer.name": "Dana Reviewer", "reviewer.email": "dana@example.com"}
TASK = "roll back the bad deploy of the payments service"
FINDING_SKILL = "terraform-plan-review"
DRIFTING_SKILL = "kubernetes-rollout"
#: The demo skill with the most relations around it (the graph screenshot's centre).
GRAPH_SKILL = "incident-triage"
OVERLAP_SKILL = "release-notes"
OVERLAP_COPY = "release-notes-copy"
#: Longer than any debounce in the app (the detail panes wait for the cursor to rest; the
#: skills screen's `DETAIL_DELAY` is the longest).
QUIET = DETAIL_DELAY + 0.02

Steps = Callable[[Pilot[Any]], Awaitable[None]]


async def settle(pilot: Pilot[Any], rounds: int = 200) -> None:
    """Wait until messages are handled and no worker but the file watcher is busy.

    Calm is trusted only after `QUIET` seconds without work, so debounced loads (a timer
    that starts a worker) have fired.
    """
    app = pilot.app
    quiet = False
    for _ in range(rounds):
        await pilot.pause()
        busy = [w for w in app.workers if w.group != "watch" and not w.is_finished]
        if busy:
            quiet = False
            running = [w for w in busy if w.state == WorkerState.RUNNING]
            # Failures and cancellations are the app's business (it turns them into notices).
            await asyncio.gather(*(w.wait() for w in running), return_exceptions=True)
        elif quiet:
            return
        else:
            await pilot.pause(QUIET)
            quiet = True
    raise TimeoutError("the app did not settle")


async def paste(pilot: Pilot[Any], text: str) -> None:
    """Paste `text` into the focused widget, as a terminal does."""
    focused = pilot.app.focused
    assert focused is not None, "nothing has focus"
    focused.post_message(events.Paste(text))
    await pilot.pause()


async def skills(pilot: Pilot[Any]) -> None:
    """Settle, then the Skills screen (the app opens on the review queue when nodes wait)."""
    await settle(pilot)
    await pilot.press("3")
    await settle(pilot)


async def overview(pilot: Pilot[Any]) -> None:
    await skills(pilot)


async def filtered(pilot: Pilot[Any]) -> None:
    await skills(pilot)
    await pilot.press("slash", *"migration", "enter")
    await settle(pilot)


async def suggested(pilot: Pilot[Any]) -> None:
    await skills(pilot)
    await pilot.press("t")
    await paste(pilot, TASK)  # one ranking instead of one per keystroke
    await settle(pilot)
    await pilot.press("enter")  # into the suggestions: the best one is explained in the detail
    await settle(pilot)


async def finding(pilot: Pilot[Any]) -> None:
    await skills(pilot)
    app = pilot.app
    assert isinstance(app, LibrarianApp)
    await app.show_skill(app.library.get_skill(FINDING_SKILL).summary.skill_id)
    await settle(pilot)


async def budget(pilot: Pilot[Any]) -> None:
    """The budget panel: Claude Code's listing of the demo project against its budget."""
    await skills(pilot)
    await pilot.press("b")
    await settle(pilot)


async def overlap(pilot: Pilot[Any]) -> None:
    """A teammate copies release-notes under another name; `r` rescans, and the detail flags
    the duplicate. Shot last: it adds a skill to the demo."""
    await skills(pilot)
    app = pilot.app
    assert isinstance(app, LibrarianApp)
    _copy_skill(Path(app.library.get_skill(OVERLAP_SKILL).summary.fs_path), OVERLAP_COPY)
    await pilot.press("r")
    await settle(pilot)
    await app.show_skill(app.library.get_skill(OVERLAP_SKILL).summary.skill_id)
    await settle(pilot)


def _copy_skill(source: Path, name: str) -> None:
    """A copy of a skill folder's SKILL.md under another name, beside it."""
    copy = source.parent.with_name(name) / "SKILL.md"
    copy.parent.mkdir(exist_ok=True)
    text = source.read_text(encoding="utf-8")
    copy.write_text(text.replace(f"name: {source.parent.name}", f"name: {name}"), encoding="utf-8")


async def review(pilot: Pilot[Any]) -> None:
    """The review queue as it opens: pending nodes, the first one's evidence and transcript."""
    await settle(pilot)
    await pilot.press("1")
    await settle(pilot)


async def review_detail(pilot: Pilot[Any]) -> None:
    """Nodes about failures, two marked, the detail pane focused on a failed command."""
    await review(pilot)
    await pilot.press("slash")
    await paste(pilot, "failed with")
    await pilot.press("enter", "m", "m", "d")
    await settle(pilot)


async def review_suppressed(pilot: Pilot[Any]) -> None:
    """The nodes the knowledge bar kept out, each with its reason, grouped by session."""
    await review(pilot)
    await pilot.press("S", "G")
    await settle(pilot)


async def sessions(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    await pilot.press("2")
    await settle(pilot)


async def session_dag(pilot: Pilot[Any]) -> None:
    """The session with the most nodes: its DAG with the dead end → solution arcs lit."""
    await sessions(pilot)
    app = pilot.app
    assert isinstance(app, LibrarianApp)
    biggest = max(app.library.sessions(), key=lambda s: (s.node_count, s.session_id))
    await app.open_session(biggest.session_id)
    await settle(pilot)
    await pilot.press("H", "down", "down", "right")
    await settle(pilot)


async def patterns(pilot: Pilot[Any]) -> None:
    """Patterns by kind; the first one's graduation checklist, draft and member nodes."""
    await settle(pilot)
    await pilot.press("6")
    await settle(pilot)


async def review_draft(pilot: Pilot[Any]) -> None:
    """The review queue switched to the drafts: a graduated pattern's SKILL.md to decide on."""
    await review(pilot)
    await pilot.press("D")
    await settle(pilot)


async def review_enrichment(pilot: Pilot[Any]) -> None:
    """The review queue switched to enrichment proposals: a thin skill's proposed frontmatter,
    why, and the diff approval would write."""
    await review(pilot)
    await pilot.press("E")
    await settle(pilot)


async def graph(pilot: Pilot[Any]) -> None:
    """incident-triage, the demo skill with the most relations: what it requires (a retired
    skill, pinned by hand), the skills it complements and enables, and the two that need it
    (reached from the graph's default skill, which `backspace` goes back to)."""
    await settle(pilot)
    await pilot.press("4")
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, LibrarianApp)
    await app.open_skill_screen("graph", GRAPH_SKILL)
    await settle(pilot)


async def health(pilot: Pilot[Any]) -> None:
    """Skills worst first: the drifting rollout, its versions, trends and flags."""
    await settle(pilot)
    await pilot.press("5")
    await settle(pilot)


async def health_candidate(pilot: Pilot[Any]) -> None:
    """kubernetes-rollout on the Health screen: v1 served and judged, v2 set aside when it
    drifted as the candidate (an alert)."""
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, LibrarianApp)
    await app.open_skill_screen("health", DRIFTING_SKILL)
    await settle(pilot)


async def lineage(pilot: Pilot[Any]) -> None:
    """The skill graduated from a pattern: versions, status history, provenance chain."""
    await settle(pilot)
    await pilot.press("7")
    await settle(pilot)


async def runbook(pilot: Pilot[Any]) -> None:
    """The finished retirement of k8s-rollback-v1: seven steps and the incident."""
    await settle(pilot)
    await pilot.press("8")
    await settle(pilot)


async def team(pilot: Pilot[Any]) -> None:
    """The Team screen as the demo has it: no hub set yet, the push queue counted."""
    await settle(pilot)
    await pilot.press("9")
    await settle(pilot)


SHOTS: dict[str, Steps] = {
    "skills.svg": overview,
    "skills-filter.svg": filtered,
    "skills-suggest.svg": suggested,
    "skills-finding.svg": finding,
    "review.svg": review,
    "review-detail.svg": review_detail,
    "review-suppressed.svg": review_suppressed,
    "sessions.svg": sessions,
    "session-dag.svg": session_dag,
    "patterns.svg": patterns,
    "review-draft.svg": review_draft,
    "review-enrichment.svg": review_enrichment,
    "graph.svg": graph,
    "health.svg": health,
    "health-candidate.svg": health_candidate,
    "lineage.svg": lineage,
    "runbook.svg": runbook,
    "team.svg": team,
    "skills-budget.svg": budget,
    "skills-overlap.svg": overlap,  # last: it installs a copy of a demo skill
}


def open_demo(target: Path) -> Library:
    """Rebuild the demo at `target` and open it with the frozen clock.

    The reviewer is fixed too (else it is git's user: node "developer" lines would differ
    between machines)."""
    if target.exists():
        shutil.rmtree(target)
    with Library(target) as library:
        for key, value in REVIEWER.items():
            library.config.set(key, value)
    build_demo(target, clock=stepping_clock())
    return Library(target, clock=stepping_clock(NOW, step_seconds=0))


async def shoot(library: Library, steps: Steps, size: tuple[int, int] = SIZE) -> str:
    """Run the app headless over `library`, play `steps`, return the screen as SVG."""
    app = make_app(library, watch=False, warm=False, show_timings=False)
    async with app.run_test(size=size) as pilot:
        await steps(pilot)
        await pilot.wait_for_scheduled_animations()
        return plain_spaces(app.export_screenshot(title="Skill Librarian"))


def plain_spaces(svg: str) -> str:
    """The SVG as every renderer draws it. Textual writes a row as runs of text stretched to
    a `textLength`, blanks as no-break spaces; a renderer that ignores `textLength` (librsvg)
    draws them at its fallback font's advance, so the columns drifted and coloured cells
    stood apart from the rest of their row. Each run is split where two blanks meet (between
    columns) and each part placed at its own cell."""
    svg = _TEXT_RUN.sub(_split_run, svg)
    return svg.replace("<svg ", '<svg xml:space="preserve" ', 1)  # the blanks inside runs


_TEXT_RUN = re.compile(
    r'<text (?P<before>[^>]*?)x="(?P<x>[\d.]+)"(?P<middle>[^>]*?)textLength="(?P<length>[\d.]+)"'
    r"(?P<after>[^>]*)>(?P<body>[^<]*)</text>"
)
#: Words, and words joined by single blanks (a heading stays one underlined run).
_WORD = re.compile("[^ \u00a0]+(?:[ \u00a0][^ \u00a0]+)*")


def _split_run(match: re.Match[str]) -> str:
    """One text run as one `<text>` per word, at the word's cell ("" when it is blank)."""
    text = html.unescape(match["body"])
    cells = cell_len(text)
    if not cells:
        return ""
    width = float(match["length"]) / cells
    x = float(match["x"])
    return "".join(
        f'<text {match["before"]}x="{x + cell_len(text[: w.start()]) * width:.2f}"'
        f'{match["middle"]}textLength="{cell_len(w[0]) * width:.2f}"{match["after"]}>'
        f"{html.escape(w[0].replace(chr(0xA0), ' '), quote=False)}</text>"
        for w in _WORD.finditer(text)
    )


#: Shots taken at another terminal size than `SIZE`: the demo's dependency graph is small
#: (seven skills around its busiest one), so its screen is shown in a shorter terminal rather
#: than mostly blank.
SIZES: dict[str, tuple[int, int]] = {"graph.svg": (SIZE[0], 26)}


async def shoot_all(library: Library) -> dict[str, str]:
    """Every screenshot in `SHOTS`, by file name."""
    return {
        filename: await shoot(library, steps, SIZES.get(filename, SIZE))
        for filename, steps in SHOTS.items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.screenshots", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("screenshots"), help="output folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="librarian-screenshots-") as scratch:
        home = Path(scratch) / "home"
        os.environ["HOME"] = str(home)  # paths under it are drawn as ~/demo/…
        with open_demo(home / "demo") as library:
            shots = asyncio.run(shoot_all(library))
    args.out.mkdir(parents=True, exist_ok=True)
    for filename, svg in shots.items():
        path = args.out / filename
        path.write_text(svg, encoding="utf-8", newline="\n")
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
