"""Reviewer rules of round 14 (issue 11; rules 1–15 are in `store.ingest.reviewer_rules`):
what two independent judges rejected on a third fresh set of sessions, again about the
structure of a transcript and the language of an agent only, each with a positive and a
negative test (`tests/store/test_reviewer_rules.py`).

16. **An install that failed is no change** (`install_failed`). An install whose output
   reports an error (a line opening `Error:`, `ERROR:`, `E:`, `npm ERR!`, `npm error`) and
   no success of its own, its exit status lost in a pipe (`brew install x 2>&1 | tail`), did
   not happen: a later success is never credited to it.
17. **Running a file the session wrote** (`runs_own_file`). A command that runs or tests a
   file the session itself had written or edited before (`./hooks/plan.sh`, `mvn test
   -Dtest=WidgetIT` for `WidgetIT.java`) and fails with an error naming no other file is its
   work in progress (a script's own escaping, a red test while the feature is built), like a
   compiler's error in such a file (`failure_bar._fresh`).
18. **A cause that points back** (`points_back`). A stated cause that says "this version",
   "that release", "this MC build" leans on the conversation for the very thing it is about:
   it is not self-contained, and the dead end carries no cause.
19. **A finding that says nothing checkable** (`vague_statement`). "X has a different
   approach to overrides" (a difference not said), "`x.exe` is bundled with Y" (no path, no
   version) and "… is now generating …" (the session's work changing under it) name things
   but state no fact a teammate could check or use.
"""

from __future__ import annotations

import re

from store.ingest import snippets
from store.ingest.actions import Action
from store.ingest.reviewer_rules import _INSTALL_STEP, _unlaunched

# --------------------------------------------------------------------------- 16. failed installs

#: A package manager's line reporting that it failed (Homebrew, pip, apt, npm).
_INSTALL_ERROR = re.compile(r"(?m)^(?:Error:|ERROR:|E:|npm ERR!|npm error)\s")
#: A package manager's line reporting that it installed something.
_INSTALL_DONE = re.compile(
    r"(?mi)^(?:Successfully installed|added \d+ packages?|🍺|Setting up|Installed\b|==> Pouring"
    r"|\+ [\w@/.-]+@\d|up to date)"
)


def install_failed(action: Action) -> bool:
    """Whether an install that no flag marked as failed reports in its output that it
    failed (its exit status lost in a pipe): then it changed nothing."""
    if not action.command or not _INSTALL_STEP.match(
        _unlaunched(snippets.main_stage(action.command))
    ):
        return False
    tail = action.result.text[-8000:]
    return bool(_INSTALL_ERROR.search(tail)) and not _INSTALL_DONE.search(tail)


# --------------------------------------------------------------------------- 17. own files run

_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
#: A file's name in an error (`plan.sh`, `app.test.ts`), not a dotted class path
#: (`com.example.PathNotFoundException`): its extension is short, lower case and last.
_FILE_WORD = re.compile(r"[\w@+-][\w.@+-]*\.[a-z][a-z0-9]{0,4}(?![\w.])")
_MIN_STEM = 8  # a bare name (a test class) must be this long to stand for a file's stem


def _named_files(command: str) -> list[str]:
    """The file names and bare names a command line passes (quoted strings left out): the
    last part of each path, an option's value after `=`."""
    body = _QUOTED.sub(" ", snippets.HEREDOC_BODY.sub("", command))
    out = []
    for word in body.split():
        value = word.rpartition("=")[2].rstrip(";|&)")
        name = value.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
        if name and not name.startswith("-"):
            out.append(name)
    return out


RUNS_OWN_FILE = (
    "it ran a script or a test the session itself had written or edited (work in progress)"
)


def runs_own_file(command: str, gist: str, mine: set[str]) -> bool:
    """Whether the failing command runs or tests a file the session itself had written
    (`mine`, file names) and its error names no file outside them."""
    if not command or not mine:
        return False
    stems = {name.rsplit(".", 1)[0]: name for name in mine if "." in name}
    hit = False
    for name in _named_files(command):
        if name in mine or ("." not in name and len(name) >= _MIN_STEM and name in stems):
            hit = True
            break
    if not hit:
        return False
    return all(name in mine for name in _FILE_WORD.findall(gist))


# --------------------------------------------------------------------------- 18. points back

_POINTS_BACK = re.compile(
    r"\b(?:this|that|these|those)\s+(?:[A-Z][\w.-]{0,12}\s+)?(?:version|release|edition"
    r"|variant|build|branch|platform|toolchain|runtime|SDK|API)s?\b"
)


def points_back(cause: str) -> bool:
    """Whether a stated cause names what it is about only by pointing back ("removed in
    this MC version")."""
    return bool(_POINTS_BACK.search(cause))


# --------------------------------------------------------------------------- 19. vague

_UNSAID_DIFFERENCE = re.compile(
    r"\b(?:has|have|uses|use|takes|take|follows|needs|is|are)\s+(?:a\s+|an\s+)?(?:different"
    r"|another|its own|their own|new|special|separate)\s+(?:approach|way|mechanism|behaviou?r"
    r"|handling|strategy|pattern|method|model|system|logic|style)\b(?:\s+(?:to|for|of|in)\s+"
    r"[\w`.-]+(?:\s+[\w`.-]+){0,2})?\s*[.!]?\s*$",
    re.IGNORECASE,
)
#: "… is now generating …": a gerund after "is now" (not a noun ending so: `string`, `thing`).
_NOW_DOING = re.compile(
    r"\b(?:is|are)\s+now\s+(?!(?:string|thing|nothing|something|everything|anything|spring"
    r"|ring|king|wing|ping)\b)[a-z]+ing\b",
    re.IGNORECASE,
)
_BUNDLED = re.compile(
    r"\b(?:is|are)\s+(?:bundled|shipped|included|packaged)\s+(?:with|in|into|inside)\s+"
    r"(?:the\s+)?[\w .+-]{1,40}[.!]?\s*$",
    re.IGNORECASE,
)
_PATH_LIKE = re.compile(r"[/\\]")

UNSAID_DIFFERENCE = "says something differs but not how (no checkable fact)"
NOW_DOING = "an observation of the session's work changing as it goes, not a lasting fact"
BUNDLED = "says a program comes with another but not where (no path, no version)"


def vague_statement(summary: str) -> str:
    """Why a statement names things but states no checkable fact ("" when it states one)."""
    text = summary.strip()
    if _UNSAID_DIFFERENCE.search(text):
        return UNSAID_DIFFERENCE
    if _NOW_DOING.search(text):
        return NOW_DOING
    if _BUNDLED.search(text) and not _PATH_LIKE.search(text):
        return BUNDLED
    return ""
