"""Forks: what the agent did because a file could not be written (issue 11).

The agent harness's own refusals ("File has not been read yet", "String to replace not
found") are never knowledge (`store.ingest.harness`), but what the agent did because of
them can be: when the writes to a file keep failing and the agent writes a *new* file beside
it instead, the project now holds two versions of one thing (two hooks, two configs), and
whatever it wired to the new one no longer uses the old. That is a PIVOT with a consequence
a teammate needs to know, read from the tool structure alone:

- at least two failed writes (Write, Edit, MultiEdit) to one file, with no successful write
  of it in between;
- then, within a few calls and before any successful write of that file, a successful
  Write of a file the session had never touched, in the same folder and with the same
  extension;
- and, when a later edit in the stream names the new file's stem (an import), the file
  that now uses it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from store.ingest import snippets
from store.ingest.actions import EDIT_TOOLS, Action
from store.ingest.candidates import Candidate

CONFIDENCE = 0.6
_WITHIN = 8  # calls after the last failed write in which the new file must be written
_FOLLOW = 12  # calls after the new file in which an edit that uses it is looked for


def forks(found: Sequence[Action]) -> list[Candidate]:
    """PIVOT candidates, one per file the agent gave up writing and replaced."""
    out: list[Candidate] = []
    streams: dict[int, list[Action]] = {}
    for a in found:
        streams.setdefault(a.stream, []).append(a)
    for acts in streams.values():
        out += _stream_forks(acts)
    return out


def _stream_forks(acts: Sequence[Action]) -> list[Candidate]:
    out: list[Candidate] = []
    touched: set[str] = set()  # paths read or written so far
    failed: dict[str, list[Action]] = {}  # path -> failed writes since its last good one
    for i, a in enumerate(acts):
        path = _path(a)
        if a.tool.name in EDIT_TOOLS and path:
            if a.failed:
                failed.setdefault(path, []).append(a)
            else:
                failed.pop(path, None)
                fork = _fork(a, path, touched, failed, acts, i)
                if fork is not None:
                    out.append(fork[0])
                    failed.pop(fork[1], None)
        if path:
            touched.add(path)
    return out


def _fork(
    write: Action,
    path: str,
    touched: set[str],
    failed: dict[str, list[Action]],
    acts: Sequence[Action],
    at: int,
) -> tuple[Candidate, str] | None:
    """The fork `write` makes (and the file it forks from), if it writes a new file beside
    one whose writes kept failing."""
    if write.tool.name != "Write" or path in touched:
        return None
    folder, _, name = path.rpartition("/")
    suffix = name.rpartition(".")[2] if "." in name else ""
    for old, failures in failed.items():
        old_folder, _, old_name = old.rpartition("/")
        if (
            len(failures) >= 2
            and old_folder == folder
            and old_name != name
            and old_name.rpartition(".")[2] == suffix
            and write.pos - failures[-1].pos <= 2 * _WITHIN
        ):
            return _candidate(write, old, failures, acts, at), old
    return None


def _candidate(
    write: Action, old: str, failures: Sequence[Action], acts: Sequence[Action], at: int
) -> Candidate:
    new_name, old_name = snippets.file_name(_path(write)), snippets.file_name(old)
    why = snippets.clean(_first_line(failures[-1].result.text), 60).rstrip(".")
    user = _user_of(new_name, acts[at + 1 : at + 1 + _FOLLOW])
    uses = f"; `{snippets.file_name(_path(user))}` now uses it" if user is not None else ""
    summary = snippets.fit(
        f"Writes to `{old_name}` kept failing ({why}, {len(failures)} attempts), so a second "
        f"file `{new_name}` was written beside it instead{uses}"
    )
    last = user if user is not None else write
    evidence = f"{write.result.text.strip()[:200]}"
    return Candidate(
        "episode", "PIVOT", write.done, write.stream, write.done_pos, 0, evidence, CONFIDENCE,
        summary, failures[0].call.line_start, last.done.line_end,
    )  # fmt: skip


def _user_of(name: str, later: Sequence[Action]) -> Action | None:
    """The first successful edit among `later` whose new text names the file's stem."""
    stem = name.rpartition(".")[0] or name
    pattern = re.compile(rf"\b{re.escape(stem)}\b")
    for a in later:
        if a.tool.name in EDIT_TOOLS and not a.failed:
            fields = snippets.inputs(a.tool)
            if pattern.search(fields.get("new_string", "") or fields.get("content", "")):
                return a
    return None


def _path(a: Action) -> str:
    if a.tool.name not in EDIT_TOOLS and a.tool.name not in ("Read", "NotebookRead"):
        return ""
    fields = snippets.inputs(a.tool)
    return fields.get("file_path") or fields.get("notebook_path") or ""


def _first_line(text: str) -> str:
    clean = re.sub(r"</?tool_use_error>", "", text).strip()
    return clean.split("\n", 1)[0].split(". ", 1)[0]
