"""`librarian lint` output: text for people, JSON for scripts, SARIF 2.1.0 for code-scanning
services. Every suppressed issue is in every format, with its reason."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from store.skills.ci.baseline import Applied, Problem
from store.skills.ci.check import (
    SEVERITIES,
    SPEC_PREFIX,
    CheckResult,
    Issue,
    at_or_above,
    spec_severity,
)
from store.skills.lint import LINT_RULES
from store.skills.parser import MAX_DESCRIPTION_CHARS
from store.text import one_line

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"
TOOL_NAME = "skill-librarian"
INFORMATION_URI = "https://agentskills.io/specification"
#: SARIF result levels by severity.
LEVELS = {"high": "error", "medium": "warning", "low": "note", "info": "note"}


@dataclass(frozen=True)
class Outcome:
    """What `librarian lint` concluded: the issues, the baseline's verdict, the exit status."""

    result: CheckResult
    applied: Applied
    fail_on: str  # a severity, or "never"
    tool_version: str

    @property
    def failing(self) -> list[Issue]:
        if self.fail_on == "never":
            return []
        return [i for i in self.applied.open if at_or_above(i.severity, self.fail_on)]

    @property
    def fatal(self) -> list[Problem]:
        return [p for p in self.applied.problems if p.fatal]

    @property
    def exit_code(self) -> int:
        return 1 if self.failing or self.fatal else 0


def text(outcome: Outcome) -> str:
    lines: list[str] = []
    for issue in sorted(outcome.applied.open, key=_order):
        lines.append(_issue_line(issue))
    for issue, entry in sorted(outcome.applied.suppressed, key=lambda p: _order(p[0])):
        lines.append(f"{_issue_line(issue)}  [suppressed: {one_line(entry.reason, 120)}]")
    for skipped in outcome.result.unreadable:
        lines.append(f"{one_line(skipped.path, 200)}: not read: {skipped.code}: {skipped.reason}")
    for problem in outcome.applied.problems:
        lines.append(("error: " if problem.fatal else "warning: ") + one_line(problem.message, 300))
    lines.append(_summary(outcome))
    return "\n".join(lines)


def _issue_line(issue: Issue) -> str:
    where = f"{one_line(issue.path, 200)}:{issue.line}" if issue.line else one_line(issue.path, 200)
    marked = " (illustrative)" if issue.context else ""
    return f"{where}: {issue.severity}: {issue.rule}{marked}: {one_line(issue.message, 300)}"


def _summary(outcome: Outcome) -> str:
    counts = Counter(i.severity for i in outcome.applied.open)
    shown = ", ".join(f"{counts[s]} {s}" for s in SEVERITIES if counts[s]) or "no issues"
    suppressed = len(outcome.applied.suppressed)
    verdict = "FAIL" if outcome.exit_code else "ok"
    threshold = "" if outcome.fail_on == "never" else f" (fails on {outcome.fail_on} and above)"
    return (
        f"{len(outcome.result.skills)} skills checked: {shown}; {suppressed} suppressed"
        f" by the baseline — {verdict}{threshold}"
    )


def _order(issue: Issue) -> tuple[str, int, str]:
    return (issue.path, issue.line, issue.rule)


def json_data(outcome: Outcome) -> dict[str, Any]:
    return {
        "skills": outcome.result.skills,
        "issues": [{**asdict(i), "kind": i.kind, "suppressed": None} for i in outcome.applied.open]
        + [
            {**asdict(i), "kind": i.kind, "suppressed": {"reason": e.reason, "entry": e.index}}
            for i, e in outcome.applied.suppressed
        ],
        "unreadable": [asdict(s) for s in outcome.result.unreadable],
        "baseline_problems": [asdict(p) for p in outcome.applied.problems],
        "fail_on": outcome.fail_on,
        "failed": bool(outcome.exit_code),
        "exit_code": outcome.exit_code,
    }


def sarif(outcome: Outcome) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run (required fields per the OASIS schema: `version` and
    `runs`; `tool.driver.name`; each result's `message.text`; each rule's `id`; each
    suppression's `kind`; each invocation's `executionSuccessful`)."""
    issues = [(i, None) for i in outcome.applied.open] + list(outcome.applied.suppressed)
    rule_ids = sorted({i.rule for i, _ in issues})
    index = {rule: n for n, rule in enumerate(rule_ids)}
    results = [
        _result(issue, entry, index[issue.rule])
        for issue, entry in sorted(issues, key=lambda p: _order(p[0]))
    ]
    notifications = [
        {"level": "error" if p.fatal else "warning", "message": {"text": p.message}}
        for p in outcome.applied.problems
    ] + [
        {"level": "warning", "message": {"text": f"{s.path}: not read: {s.code}: {s.reason}"}}
        for s in outcome.result.unreadable
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": outcome.tool_version,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(rule) for rule in rule_ids],
                    }
                },
                "originalUriBaseIds": {
                    "SRCROOT": {"description": {"text": "The folder `librarian lint` ran in."}}
                },
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "exitCode": outcome.exit_code,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "results": results,
            }
        ],
    }


def _rule(rule: str) -> dict[str, Any]:
    if rule.startswith(SPEC_PREFIX):
        code = rule[len(SPEC_PREFIX) :]
        severity = spec_severity(code)
        text = f"Agent Skills spec: {code.replace('_', ' ')}"
        if code == "description_too_long":
            text += f" (over {MAX_DESCRIPTION_CHARS} characters)"
    else:
        severity, text = LINT_RULES.get(rule, ("medium", rule))
    return {
        "id": rule,
        "name": "".join(part.capitalize() for part in rule.replace(".", "_").split("_")),
        "shortDescription": {"text": text},
        "defaultConfiguration": {"level": LEVELS[severity]},
        "properties": {
            "severity": severity,
            "kind": "spec" if rule.startswith(SPEC_PREFIX) else "security",
        },
    }


def _artifact(path: str) -> dict[str, str]:
    """A relative path is a URI reference against SRCROOT; an absolute one a file URI."""
    if path.startswith("/"):
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path), "uriBaseId": "SRCROOT"}


def _result(issue: Issue, entry: Any, rule_index: int) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": issue.line} if issue.line else {}
    if issue.excerpt and region:
        region["snippet"] = {"text": issue.excerpt}
    location: dict[str, Any] = {"artifactLocation": _artifact(issue.path)}
    if region:
        location["region"] = region
    result: dict[str, Any] = {
        "ruleId": issue.rule,
        "ruleIndex": rule_index,
        "level": LEVELS.get(issue.severity, "warning"),
        "message": {"text": issue.message},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {"librarianFingerprint/v1": issue.fingerprint},
        "properties": {"severity": issue.severity, "skill": issue.skill, "context": issue.context},
    }
    if entry is not None:
        result["suppressions"] = [
            {"kind": "external", "status": "accepted", "justification": entry.reason}
        ]
    return result
