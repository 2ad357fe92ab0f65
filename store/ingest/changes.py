"""What changed between the failing attempt and the one that worked (issue 11): the flags
and arguments that differ, what feeds the command, the files edited in between with the gist
of old → new, the packages installed, the last project command run; and how a solution names
the error it fixed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from store.ingest import snippets
from store.ingest.actions import EDIT_TOOLS, ROUTINE_PROGRAMS, Action, Episode, _installs
from store.ingest.candidates import Candidate


def _was(failed_with: str, whole: bool = False) -> str:
    """How the solution names the error it fixed: its code or class, or (`whole`, when no
    dead end beside it reaches the queue) the gist of the error line itself."""
    error = snippets.error_gist(failed_with)
    if error is None:
        return ""
    line = failed_with[error[0] : error[1]]
    if whole:
        gist = snippets.error_line(line, 110)
        return f" (it had failed with {gist.rstrip('.')})" if gist else ""
    named = _ERROR_NAME.search(line)
    return f" (it had failed with {named.group(0)})" if named else ""


def _with_symptom(fix: Candidate, episode: Episode) -> Candidate:
    """The solution as the whole lesson — the error, then what changed — when the dead end
    beside it stays out of the queue."""
    failed_with = episode.failures[-1].result.text
    short, whole = _was(failed_with), _was(failed_with, whole=True)
    if not whole or short == whole:
        return fix
    head = fix.summary.rstrip(".")
    if short and head.endswith(short):
        head = head[: -len(short)]
    if fix.summary.endswith("…"):
        return fix  # no room left: the dead end's own summary is in the session's view
    return replace(fix, summary=snippets.fit(head.rstrip(".") + whole))


#: Options that change how a command reports, never whether it works.
_OUTPUT_FLAGS = re.compile(
    r"^-(?:q|v|vv|vvv|s|x|qq)$|^--(?:quiet|verbose|silent|color|colour|no-colou?r|tb|reporter"
    r"|format|json|progress|no-progress|summary|durations|show-\w+|log-level|loglevel)(?:=.*)?$"
)


def output_only(failed: str, worked: str) -> bool:
    """Whether the working command differs from the failing one only by options that change
    how it reports (`-q`, `--tb=short`, `--verbose`…): such a retry fixed nothing."""
    _, before = snippets.command_tokens(failed)
    _, after = snippets.command_tokens(worked)
    added = [w for w in after if w not in before]
    dropped = [w for w in before if w not in after]
    return bool(added or dropped) and all(_OUTPUT_FLAGS.match(w) for w in added + dropped)


def _command_changes(failed: str, worked: str) -> list[str]:
    """How the working command differs from the failing one: flags and arguments added or
    dropped, and what feeds it (a pipe in front of it)."""
    if not failed or not worked:
        return []
    feed_before, before = snippets.command_tokens(failed)
    feed_after, after = snippets.command_tokens(worked)
    changes: list[str] = []
    swapped = _swapped(before, after)
    # Free text (a commit message, an inline script, a query) is not a flag that changed.
    added = [w for w in after if w not in before and _token(w)]
    dropped = [w for w in before if w not in after and _token(w)]
    if swapped:
        changes.append(swapped)
    else:
        if added:
            changes.append("adding " + ", ".join(_code(w) for w in added[:4]))
        if dropped:
            changes.append("dropping " + ", ".join(_code(w) for w in dropped[:3]))
    if feed_after and feed_after != feed_before:
        changes.append(f"piping {_code(' '.join(_shown(w) for w in feed_after))} into it")
    return changes


def _swapped(before: Sequence[str], after: Sequence[str]) -> str:
    """How the command changed when, where the two first differ, a word that is not a flag
    took another's place: one argument replaced ("with `x` instead of `y`"), or the program
    run from there on ("running `python -c …` instead of `curl -s …`"); "" otherwise."""
    at = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), None)
    if at is None or any(w.startswith("-") or "=" in w for w in (before[at], after[at])):
        return ""  # a flag, or a setting put in front (`KEY=value cmd`): added or dropped
    if list(before[at + 1 :]) == list(after[at + 1 :]):
        return f"passing {_code(after[at])} instead of {_code(before[at])}"
    return f"running {_lead(after[at:])} instead of {_lead(before[at:])}"


def _lead(words: Sequence[str]) -> str:
    """The first words of a command, as typed (free text stops it)."""
    shown: list[str] = []
    for word in words[:3]:
        if not _token(word):
            break
        shown.append(_shown(word))
    more = " …" if len(words) > len(shown) else ""
    return f"`{snippets.clean(' '.join(shown), 40)}{more}`"


def _token(word: str) -> bool:
    return len(word) <= 60 and not any(ch.isspace() for ch in word)


def _shown(word: str) -> str:
    """A shell word as it would be typed (an empty argument is `""`)."""
    return word if word and not any(c.isspace() for c in word) else f'"{word}"'


def _code(word: str) -> str:
    return f"`{snippets.clean(word, 40)}`"


def _edit_changes(changes: Sequence[Action], failed_with: str = "") -> list[str]:
    """The files edited in between, each with its last edit that added something (the one
    that held; removing a leftover is tidying, not the fix): first the files the failure
    named, then the most recently edited."""
    edits = [a for a in changes if a.tool.name in EDIT_TOOLS]
    if not edits:
        return []
    files: dict[str, Action] = {}
    for edit in reversed(edits):
        name = snippets.file_name(edit.target)
        if name not in files or (_tidying(files[name]) and not _tidying(edit)):
            files[name] = edit
    order = sorted(files, key=lambda name: name not in failed_with)  # stable: latest first
    named = [f"editing `{name}` ({snippets.edit_gist(files[name].tool)})" for name in order]
    more = f" and {len(named) - 2} more files" if len(named) > 2 else ""
    return [", ".join(named[:2]) + more]


def _tidying(edit: Action) -> bool:
    return snippets.edit_gist(edit.tool).startswith(("removed ", "edited it"))


def _install_changes(changes: Sequence[Action]) -> list[str]:
    return [
        f"running `{snippets.clean(snippets.main_stage(a.command), 70)}`"
        for a in changes
        if a.command and _installs(a)
    ][:2]


#: Subcommands that only read (`kubectl get`, `git log`, `alembic heads`, `docker ps`).
_READS = frozenset(
    "get describe logs list ls show status top view inspect info explain version history"
    " heads current ps images search diff".split()
)


def _looks(changes: Sequence[Action]) -> bool:
    """Whether the last project command run in between only read something."""
    ran = [a for a in changes if a.command]
    words = snippets.main_stage(ran[-1].command).split() if ran else []
    return bool(words) and (words[0] in ROUTINE_PROGRAMS or any(w in _READS for w in words[1:6]))


#: Programs and subcommands that only check (a type-check, a linter, a test run, a dry run):
#: running one in between changes nothing a later success could owe to it.
_CHECK_WORDS = frozenset(
    "tsc eslint biome prettier ruff mypy pyright flake8 pylint black pytest vitest jest mocha"
    " test tests lint typecheck type-check check vet clippy --noemit --check --dry-run"
    " --list-files".split()
)


def _only_checks(command: str) -> bool:
    words = [w.lower() for w in snippets.main_stage(command).split()[:6]]
    return any(w in _CHECK_WORDS for w in words)


def _last_command(changes: Sequence[Action]) -> list[str]:
    """The project command run last before the success (a rollback, a migration, a deploy);
    none when it only checked something (`npx tsc --noEmit` fixes nothing)."""
    ran = [a for a in changes if a.command]
    if not ran or _only_checks(ran[-1].command):
        return []
    return [f"running `{snippets.clean(snippets.main_stage(ran[-1].command), 70)}`"]


_ERROR_NAME = re.compile(
    r"\b(?:error[ \t]*(?:TS|CS|C)\d{3,5}|E\d{4}|[A-Z]\w*(?:Error|Exception))\b"
    r"|\bE(?!RRORS?\b)[A-Z]{3,}\b"
)


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
