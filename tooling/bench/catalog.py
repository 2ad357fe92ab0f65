"""`librarian bench` parts for catalog health (issue 15): Claude Code's listing budget on
1,000 skills, overlaps on 10,000, the security lint on the corpus (with its recall and false
positives on the labelled set) and the UserPromptSubmit hook process on 10,000 skills.

Each measurement runs in its own process (`librarian bench-child child-…`), on the bench's
cached synthetic libraries (`tooling.bench.common.big_library`)."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from store.process import own_librarian

#: Prompts for the hook: tasks (some fit a synthetic skill, some do not).
HOOK_PROMPTS = (
    "Our postgres slow queries started hurting production, how do I profile them?",
    "Roll back the kubernetes deploy, the release pipeline broke after the upgrade",
    "thanks, that looks good",
    "Set up flaky tests debugging for the pytest suite in CI",
    "write a haiku about autumn",
    "Audit access tokens in the vault service before the security review",
)
NEW_RULES = (
    "decode_execute",
    "reverse_shell",
    "persistence",
    "registry_redirect",
    "broad_permissions",
    "data_exfiltration",
)


# -- budget -------------------------------------------------------------------------------------


def child_budget(library_dir: str, skills: str, work: str) -> dict[str, Any]:
    """The listing of a folder whose personal skills folder is the 1,000 synthetic skills."""
    from store.library import Library

    home = Path(work) / "budget-home"
    personal = home / ".claude" / "skills"
    personal.parent.mkdir(parents=True, exist_ok=True)
    if not personal.is_symlink():
        personal.symlink_to(Path(skills).resolve(), target_is_directory=True)
    os.environ["HOME"] = str(home)
    folder = Path(work) / "budget-project"
    folder.mkdir(exist_ok=True)
    with Library(Path(library_dir)) as library:  # writable: a cached library is migrated
        started = time.perf_counter()
        report = library.listing(folder)
        seconds = time.perf_counter() - started
    return {
        "skills_listed": sum(1 for e in report.entries if e.state in ("full", "dropped")),
        "dropped": len(report.dropped),
        "used_chars": report.used_chars,
        "full_chars": report.full_chars,
        "seconds": round(seconds, 3),
    }


def child_budget_routing(corpus_skills: str, work: str) -> dict[str, Any]:
    """The routing evaluation with every description and with the default budget's cut."""
    from store.library import Library
    from store.skills.listing.routing import routing_loss
    from store.skills.listing.settings import DEFAULT_MAX_DESC_CHARS

    if not Path(corpus_skills).is_dir():
        return {"skipped": f"no corpus skills at {corpus_skills}"}
    folder = Path(work) / "budget-routing"
    started = time.perf_counter()
    result = routing_loss(Library, Path(corpus_skills), folder, [8000], DEFAULT_MAX_DESC_CHARS)
    shutil.rmtree(folder, ignore_errors=True)
    return {**result, "seconds": round(time.perf_counter() - started, 1)}


# -- overlap ------------------------------------------------------------------------------------


def child_overlap(library_dir: str) -> dict[str, Any]:
    from store.library import Library

    with Library(Path(library_dir)) as library:  # writable: a cached library is migrated
        started = time.perf_counter()
        pairs = library.overlaps()
        seconds = time.perf_counter() - started
        one = time.perf_counter()
        if pairs:
            library.overlaps(pairs[0].a_id)
        single = time.perf_counter() - one
    kinds: dict[str, int] = {}
    for pair in pairs:
        key = f"{pair.kind}/{pair.suggestion}"
        kinds[key] = kinds.get(key, 0) + 1
    return {
        "seconds": round(seconds, 2),
        "one_skill_ms": round(single * 1000, 1),
        "pairs": len(pairs),
        "by_kind": kinds,
    }


# -- lint ---------------------------------------------------------------------------------------


def child_lint(corpus_skills: str) -> dict[str, Any]:
    from store.skills.security_eval import SECURITY_SET, corpus_report, measure

    out: dict[str, Any] = {}
    if Path(corpus_skills).is_dir():
        report = corpus_report(Path(corpus_skills), NEW_RULES)
        out.update(
            corpus_skills=report["skills"],
            corpus_seconds=report["seconds"],
            corpus_findings=report["findings"],
            corpus_alarming=report["alarming"],
            corpus_alarming_new_rules=report["alarming_new_rules"],
            corpus_license_missing_info=report["spec_info"],
        )
    if (SECURITY_SET / "expected.toml").is_file():
        for split in ("dev", "heldout", "heldout2"):
            out[split] = measure(split)
        out["recall"] = out["dev"]["recall"]
        out["false_positive_rate"] = out["dev"]["false_positive_rate"]
    return out


# -- the UserPromptSubmit hook -------------------------------------------------------------------


def child_prompt_hook(library_dir: str, runs: str) -> dict[str, Any]:
    """Hook processes against a running ranker (the warm path), and the first prompt before
    the ranker is up (the cold path, which answers from the index and starts the ranker)."""
    from store.skills.prompt_context import ranker_paths

    library = Path(library_dir)
    run_dir = Path(tempfile.mkdtemp(prefix="lrb-", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["XDG_RUNTIME_DIR"] = str(run_dir)
    paths = ranker_paths(library, env)
    if paths is None:
        return {"error": "no private runtime folder"}
    try:
        started = time.perf_counter()
        cold = _hook_ms(library, env, HOOK_PROMPTS[0])
        up = _wait_for(paths[0], 180)
        ranker_start = time.perf_counter() - started
        if not up:
            return {"error": "the ranker did not come up", "cold_ms": cold}
        warm: list[float] = []
        answered = 0
        for i in range(int(runs)):
            prompt = HOOK_PROMPTS[i % len(HOOK_PROMPTS)]
            ms, out = _hook(library, env, prompt)
            warm.append(ms)
            answered += bool(out)
        warm.sort()
        return {
            "runs": len(warm),
            "warm_p50_ms": round(statistics.median(warm), 1),
            "warm_p95_ms": round(warm[max(0, int(len(warm) * 0.95) - 1)], 1),
            "warm_max_ms": round(warm[-1], 1),
            "with_context": answered,
            "cold_ms": round(cold, 1),
            "ranker_ready_seconds": round(ranker_start, 1),
            # a process's wall time on a shared 2-core machine depends on what else runs
            "load_average_1min": round(os.getloadavg()[0], 2),
        }
    finally:
        subprocess.run(
            [*own_librarian(), "--library", str(library), "hook", "prompt-stop"],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        time.sleep(0.5)
        shutil.rmtree(run_dir, ignore_errors=True)


def _hook(library: Path, env: dict[str, str], prompt: str) -> tuple[float, str]:
    data = {"hook_event_name": "UserPromptSubmit", "prompt": prompt, "cwd": "/bench"}
    argv = [*own_librarian(), "--library", str(library), "hook", "user-prompt"]
    started = time.perf_counter()
    done = subprocess.run(
        argv,
        input=json.dumps(data),
        text=True,
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    return (time.perf_counter() - started) * 1000, done.stdout


def _hook_ms(library: Path, env: dict[str, str], prompt: str) -> float:
    return _hook(library, env, prompt)[0]


def _wait_for(sock: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if sock.exists():
            return True
        time.sleep(0.2)
    return False


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "child-budget": child_budget,
    "child-budget-routing": child_budget_routing,
    "child-overlap": child_overlap,
    "child-lint": child_lint,
    "child-prompt-hook": child_prompt_hook,
}
