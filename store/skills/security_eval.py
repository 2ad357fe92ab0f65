"""How well the security lint does on the labelled set in the project's `tests/security/`
(skills written for the project: malicious ones with the rule that must catch each, benign
ones that must stay quiet) and how quiet it is on real skills (the corpus).

A malicious skill is caught when one of its expected rules finds something at medium or
high severity outside an illustrative example; a benign skill is a false positive when any
rule does."""

from __future__ import annotations

import time
import tomllib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from store.skills.ci.check import Issue, check_paths

#: The labelled set ships with the source (tests/), not with the wheel.
SECURITY_SET = Path(__file__).resolve().parents[2] / "tests" / "security"
ALARMING = frozenset({"high", "medium"})


def alarming(issue: Issue) -> bool:
    """A security finding a reviewer must look at: medium or high, not illustrative."""
    return issue.kind == "security" and issue.severity in ALARMING and not issue.context


#: split -> (folder under the set, table of expected.toml). The held-out skills were written
#: after the rules were frozen and measured without changing the rules afterwards.
SPLITS = {
    "dev": (".", "malicious"),
    "heldout": ("heldout", "heldout"),
    "heldout2": ("heldout2", "heldout2"),
}


def measure(split: str = "dev", root: Path = SECURITY_SET) -> dict[str, Any]:
    """Recall on `malicious/`, false positives on `benign/`, per skill, for one split."""
    folder, table = SPLITS[split]
    labels = tomllib.loads((root / "expected.toml").read_text(encoding="utf-8"))
    expected: dict[str, list[str]] = labels[table]
    root = root / folder
    started = time.perf_counter()
    caught: list[str] = []
    missed: list[str] = []
    for name, rules in sorted(expected.items()):
        issues = check_paths([root / "malicious" / name], root).issues
        hit = any(alarming(i) and i.rule in rules for i in issues)
        (caught if hit else missed).append(name)
    benign = sorted(p.name for p in (root / "benign").iterdir() if p.is_dir())
    flagged: dict[str, list[str]] = {}
    for name in benign:
        loud = [i for i in check_paths([root / "benign" / name], root).issues if alarming(i)]
        if loud:
            flagged[name] = [f"{i.rule}/{i.severity} {i.path}:{i.line}" for i in loud]
    return {
        "malicious": len(expected),
        "benign": len(benign),
        "recall": round(len(caught) / max(len(expected), 1), 4),
        "missed": missed,
        "false_positive_rate": round(len(flagged) / max(len(benign), 1), 4),
        "false_positives": flagged,
        "seconds": round(time.perf_counter() - started, 3),
    }


def corpus_report(skills: Path, new_rules: Sequence[str] = ()) -> dict[str, Any]:
    """Every finding on the real skills under `skills`, counted by rule and severity, the
    alarming ones listed, and the time the whole lint took."""
    started = time.perf_counter()
    result = check_paths([skills], skills)
    seconds = time.perf_counter() - started
    security = [i for i in result.issues if i.kind == "security"]
    loud = [i for i in security if alarming(i)]
    counts = Counter(
        f"{i.rule}/{i.severity}" + ("/illustrative" if i.context else "") for i in security
    )
    return {
        "skills": len(result.skills),
        "seconds": round(seconds, 3),
        "findings": dict(sorted(counts.items())),
        "alarming": [f"{i.rule}/{i.severity} {i.path}:{i.line} {i.message}" for i in loud],
        "alarming_new_rules": sum(1 for i in loud if i.rule in new_rules),
        "spec_info": sum(1 for i in result.issues if i.kind == "spec" and i.severity == "info"),
        "spec_warnings": sum(1 for i in result.issues if i.kind == "spec" and i.severity != "info"),
    }
