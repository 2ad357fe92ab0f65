"""The suppression baseline: a checked-in TOML file of findings a person has looked at and
accepted, each with the reason and, optionally, the date it stops holding.

```toml
[[suppress]]
rule = "pipe_to_shell"                      # required: a lint rule or spec.<code>
path = "skills/uv/SKILL.md"                 # required: the file (glob patterns allowed)
fingerprint = "3f1c0a9e5b7d2c4a"           # optional: this finding only (else every one
line = 58                                   #   of the rule in the file, or on this line)
reason = "astral.sh's official installer"   # required, non-empty
expires = 2026-12-31                        # optional: after this day the entry fails
```

Nothing is suppressed silently: every suppressed issue is still reported with its entry's
reason. An entry without a reason is an error, and so is an expired one — the check fails
until someone renews or removes it. Entries that match nothing are reported as unused."""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from store.errors import LibrarianError
from store.skills.ci.check import Issue

DEFAULT_NAME = ".librarian-baseline.toml"
_KEYS = frozenset({"rule", "path", "fingerprint", "line", "reason", "expires"})


class BaselineError(LibrarianError):
    """The baseline file cannot be read at all (not TOML, wrong shape)."""


@dataclass(frozen=True)
class Suppression:
    """One entry of the baseline."""

    index: int  # 1-based position in the file, for messages
    rule: str
    path: str
    reason: str
    fingerprint: str = ""
    line: int = 0
    expires: date | None = None

    def matches(self, issue: Issue) -> bool:
        if self.rule != issue.rule or not fnmatch.fnmatchcase(issue.path, self.path):
            return False
        if self.fingerprint and self.fingerprint != issue.fingerprint:
            return False
        return not self.line or self.line == issue.line

    def expired(self, today: date) -> bool:
        return self.expires is not None and self.expires < today

    def describe(self) -> str:
        what = f"{self.rule} in {self.path}"
        return what + (f" (fingerprint {self.fingerprint})" if self.fingerprint else "")


@dataclass(frozen=True)
class Problem:
    """Something wrong with the baseline itself; `fatal` problems fail the check."""

    message: str
    fatal: bool


@dataclass(frozen=True)
class Applied:
    """Issues split by the baseline, and what is wrong with it."""

    open: list[Issue]
    suppressed: list[tuple[Issue, Suppression]]
    problems: list[Problem]


def load(path: Path) -> tuple[list[Suppression], list[Problem]]:
    """The entries of a baseline file, and the problems of entries that cannot be used."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot read the baseline ({exc})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise BaselineError(f"{path}: not valid TOML ({exc})") from exc
    raw = data.get("suppress", [])
    if not isinstance(raw, list) or not all(isinstance(e, dict) for e in raw):
        raise BaselineError(f"{path}: `suppress` must be an array of tables ([[suppress]])")
    entries: list[Suppression] = []
    problems: list[Problem] = []
    for index, entry in enumerate(raw, start=1):
        parsed = _entry(index, entry)
        if isinstance(parsed, Problem):
            problems.append(parsed)
        else:
            entries.append(parsed)
    return entries, problems


def _entry(index: int, entry: dict[str, Any]) -> Suppression | Problem:
    where = f"baseline entry {index}"
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        return Problem(f"{where}: unknown keys {', '.join(unknown)}", True)
    rule, path, reason = entry.get("rule"), entry.get("path"), entry.get("reason")
    if not isinstance(rule, str) or not rule or not isinstance(path, str) or not path:
        return Problem(f"{where}: `rule` and `path` are required", True)
    if not isinstance(reason, str) or not reason.strip():
        return Problem(f"{where} ({rule} in {path}): a suppression needs a `reason`", True)
    expires = entry.get("expires")
    if expires is not None and not isinstance(expires, date):
        return Problem(f"{where}: `expires` must be a TOML date (2026-12-31)", True)
    line = entry.get("line", 0)
    fingerprint = entry.get("fingerprint", "")
    if not isinstance(line, int) or not isinstance(fingerprint, str):
        return Problem(f"{where}: `line` must be a number and `fingerprint` a string", True)
    return Suppression(index, rule, path, reason.strip(), fingerprint, line, expires)


def apply(issues: Sequence[Issue], entries: Sequence[Suppression], today: date) -> Applied:
    """Split issues into open and suppressed. An expired entry suppresses nothing and is a
    fatal problem; an entry that matched nothing is a warning."""
    problems: list[Problem] = []
    live = []
    for entry in entries:
        if entry.expired(today):
            message = (
                f"baseline entry {entry.index} expired on {entry.expires}: {entry.describe()}"
                f" — renew it with a new date and reason, or remove it"
            )
            problems.append(Problem(message, True))
        else:
            live.append(entry)
    open_issues: list[Issue] = []
    suppressed: list[tuple[Issue, Suppression]] = []
    used: set[int] = set()
    for issue in issues:
        match = next((e for e in live if e.matches(issue)), None)
        if match is None:
            open_issues.append(issue)
        else:
            suppressed.append((issue, match))
            used.add(match.index)
    for entry in live:
        if entry.index not in used:
            problems.append(
                Problem(f"baseline entry {entry.index} matches nothing: {entry.describe()}", False)
            )
    return Applied(open_issues, suppressed, problems)


def template(issues: Sequence[Issue]) -> str:
    """Baseline entries for `issues`, with an empty reason each: they fail until someone
    writes why the finding is acceptable."""
    blocks = []
    for issue in issues:
        blocks.append(
            "[[suppress]]\n"
            f"rule = {_toml_string(issue.rule)}\n"
            f"path = {_toml_string(issue.path)}\n"
            f"fingerprint = {_toml_string(issue.fingerprint)}\n"
            f"# line {issue.line}: {_comment(issue.message)}\n"
            'reason = ""\n'
        )
    return "\n".join(blocks)


def _toml_string(value: str) -> str:
    escaped = "".join(
        c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in value
    )
    return f'"{escaped}"'


def _comment(text: str) -> str:
    return " ".join(text.split())[:120].encode("ascii", "replace").decode("ascii")
