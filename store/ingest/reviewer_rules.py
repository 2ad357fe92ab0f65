"""Rules from what independent judges rejected on sessions nobody here had read (issue 11,
rounds 12 and 13): each one is about the structure of a transcript or the language of an agent,
never about the strings of any session, and each has a positive and a negative test
(`tests/store/test_reviewer_rules.py`).

1. **An install in the same command line** (`installs_missing`). A missing module the very
   next command line installs — as one step of it (`pip install click && python -m app`),
   or through a launcher (`python -m pip install`, `conda run -n env pip install`, `uv pip
   install`), or under the distribution name of a well-known import name (`cv2` is
   `opencv-python`) — is routine set-up like an install on its own line.
2. **The error line the cause names** (`line_the_cause_names`). When the agent's stated
   cause names something (`bootstrap/cache`) that the chosen error line does not and another
   error-ish line of the same output does, that line carries the failure: a script's early
   complaint it went past (a warning printed as `fatal:`) is not it.
3. **The turn's root cause wins** (`later_root_cause`). A cause the agent stated is not its
   final belief when, before the user speaks again, it sums up with "the root cause was …"
   naming none of the things the first one named: the summary is the belief kept.
4. **Whole steps** (`command_steps`). A command line is cut into steps at `&&`, `||`, `;`
   and newlines outside quotes only: `python3 -c "import torch; print(1)"` is one step, so a
   summary never quotes a command cut off inside its own quotes.
5. **A permission hiccup got past by a standard flag** (`permission_hiccup`). A refusal for
   permission or ownership (`Permission denied`, `EACCES`, `EPERM`, an externally managed
   Python, git's dubious ownership) that the retry got past only by adding `sudo` or a
   standard flag that installs elsewhere or allows it (`--user`, `--break-system-packages`,
   `--prefix DIR`, `--allow-root`, `--unsafe-perm`, `--no-sandbox`), nothing edited or
   installed in between, is routine environment noise: neither the failure nor its "fix" is
   about the project.
6. **The project was broken before the session touched it** (`broken_before`). A
   compiler's or type checker's error at a file, line and column (`suite_test.go:41:148: not
   enough arguments in call to NewController`, `page.tsx(309,33): error TS18047: …`) in a file
   the session had not written or edited before is a fact about the project's state at the
   start, even with no cause stated: a dead end worth keeping — unless a name the message
   quotes or spells like code (`NewController`) is in what the session had written before
   (a signature it changed breaks callers it never touched). Errors in files the session had
   written are its work in progress, kept out by `failure_bar._fresh`.

Round 13 (the same kind of judges' reasons, on a fresh set of sessions):

7. **A line of the agent's summary of its work** (`work_summary`). A statement shaped like a
   list item — a code span, then a dash or a colon and what was done to it or what it does
   (`` `a.go`: added a guard; fixed A → B ``, `` `x` - gets the value ``) — work reported
   done in the passive ("has been resolved by: …"), a run of work with no subject ("Built
   the image, ran a container, confirmed …") or a change named only by what it touched
   ("the `x.js` change broke …") is no failure fixed and no fact learned.
8. **A correction that asks or points** (`unsettled_correction`). A user's words that ask
   the agent something ("wait what? What do you mean …?") or point at what they do not name
   ("change the wording on that proto") are not a self-contained lesson.
9. **A local service not running** (`service_down`, `down`). A refused connection to this
   machine's address or port, or a daemon that is not there, is routine environment state:
   the failure and starting the service alike.
10. **An edit's gist shows the difference** (`store.ingest.edit_gists`). `old → new` is cut
   around where the two lines differ, not from their start (where both read the same); of
   the lines an edit added, the one shown is code that does something, not an import or a
   comment (`sys.path.insert(…)`, not `import sys`).
11. **An import of a module that is nowhere** (`own_bad_import`). A missing module that the
   session's own earlier edit imported as an alias (`import a as x`) or as a submodule
   (`import x.y`), with nothing before showing it exists (no such file or folder touched, no
   path of it in tool output, no command that worked naming it), is the session's slip. A
   plain top-level name may be a dependency the environment lacks; a module that exists and
   was not found is about how the code was run — both stay lessons.
12. **A fix taken back** (`taken_back`). A solution whose every added line a later edit of
   the same file removes again credits the wrong change: the session's final belief is that
   it was not the fix.
13. **Two error codes are two errors** (`error_numbers`). Attempts are one dead end when
   their error lines match with numbers blanked out — except the numbers that tell errors
   apart: a code after "error", "errno" or "code", or any number of a line of four words or
   fewer ("Error 5." then "Error 1376." are two dead ends, not two attempts at one).
14. **An error the session wrote** (`own_message`). When an error's message (four words or
   more) is word for word in what the session had written before — its own `raise`, `RAISE
   EXCEPTION` or assertion — the failure is its own check, work in progress.
15. **An exception's class path is not a program** (`exception_name`). An error line that
   starts `asyncpg.exceptions.RaiseError: …` names the error's class, not another program
   answering for the one called (which would make it a fact about the machine).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from store.ingest import snippets, statements
from store.ingest.actions import EDIT_TOOLS, Action, Episode
from store.ingest.candidates import Candidate
from store.ingest.context import _Context
from store.ingest.output import trimmed

# --------------------------------------------------------------------------- 1. installs

#: The install verbs of package managers, after any launcher prefix is dropped.
_INSTALL_STEP = re.compile(
    r"^(?:npm (?:install|i|add)|pnpm (?:add|install|i)|yarn add|bun (?:add|install)"
    r"|pip3? install|uv (?:add|pip install)|poetry add|pipenv install|cargo add|go get"
    r"|gem install|bundle add|composer require|apt(?:-get)? install|brew install"
    r"|conda install|mamba install)\b"
)

#: What runs a package manager for another interpreter or environment: `python3 -m`,
#: `conda run -n env`, `uv run`, `poetry run`, `pipenv run`, a path to a venv's binary.
_LAUNCHER = re.compile(
    r"^(?:(?:\S*/)?python[\d.]*\s+-m\s+|(?:conda|mamba|micromamba)\s+run\s+(?:(?:-n|--name"
    r"|-p|--prefix)\s+\S+\s+|--no-capture-output\s+|--live-stream\s+)*|(?:uv|poetry|pipenv)"
    r"\s+run\s+)"
)

#: Import names whose distribution is named otherwise (the Python ecosystem's well-known
#: ones); the install names the distribution.
_DISTRIBUTION = {
    "cv2": ("opencv",),
    "pil": ("pillow",),
    "yaml": ("pyyaml",),
    "sklearn": ("scikit-learn",),
    "skimage": ("scikit-image",),
    "bs4": ("beautifulsoup4",),
    "dateutil": ("python-dateutil",),
    "dotenv": ("python-dotenv",),
    "jwt": ("pyjwt",),
    "magic": ("python-magic",),
    "serial": ("pyserial",),
    "usb": ("pyusb",),
    "crypto": ("pycryptodome",),
    "google": ("google-",),
    "attr": ("attrs",),
    "docx": ("python-docx",),
    "fitz": ("pymupdf",),
    "git": ("gitpython",),
}


def _steps(command: str) -> list[str]:
    """The steps of a command line (`&&`, `||`, `;`, newlines), pipes kept within a step."""
    steps: list[list[str]] = [[]]
    for word in snippets.shell_words(command):
        if word in snippets._SEPARATORS:
            steps.append([])
        elif word == "|":
            steps[-1].append("|")
        else:
            steps[-1].append(word)
    return [" ".join(s).split(" | ")[0] for s in steps if s]


def _unlaunched(step: str) -> str:
    """A step without leading `sudo`, `FOO=1` assignments and launcher prefixes."""
    words = step.split()
    while words and (words[0] == "sudo" or ("=" in words[0] and not words[0].startswith("-"))):
        words = words[1:]
    step = " ".join(words)
    launched = _LAUNCHER.match(step)
    return step[launched.end() :] if launched else step


def installs_missing(command: str, missing: str) -> bool:
    """Whether a step of a command line installs the missing module or package: directly,
    through a launcher, or under its distribution's name (see the module's rule 1)."""
    if not command or not missing:
        return False
    top = missing if missing.startswith("@") else re.split(r"[./]", missing)[0]
    want = top.lower().replace("_", "-")
    if len(want) < 2:
        return False
    wanted = (want, *_DISTRIBUTION.get(want, ()))
    for step in _steps(command):
        step = _unlaunched(step)
        if not _INSTALL_STEP.match(step):
            continue
        words = step.lower().replace("_", "-").split()[2:]
        names = [re.split(r"[=<>~^!\[]|@(?=\d|\^|~|latest)", w)[0] for w in words]
        names = [n for n in names if n and not n.startswith("-")]
        if any(w == n or (len(w) >= 3 and w in n) for w in wanted for n in names):
            return True
    return False


# --------------------------------------------------------------------------- 2. error line

_NAMED = re.compile(r"`([^`\n]{3,80})`")

#: Words of a line that says something is wrong (one of them is enough here: the line must
#: also hold what the agent's cause names).
_WRONG = re.compile(
    r"\b(?:must|cannot|can't|could not|couldn't|not|no such|missing|error|failed|fails"
    r"|denied|unable|invalid|required|requires|refused|unknown|undefined)\b",
    re.IGNORECASE,
)

_SCAN_CHARS = 32_000  # of an output's end, where the failure is printed


def line_the_cause_names(text: str, span: tuple[int, int], cause: str) -> tuple[int, int] | None:
    """Another line of `text` that carries the failure the agent's cause names, when the
    chosen line (`span`) names none of it (see the module's rule 2); None to keep `span`."""
    names = [n.strip().strip("/") for n in _NAMED.findall(cause)]
    names = [n for n in names if len(n) >= 3]
    if not names or any(n in text[span[0] : span[1]] for n in names):
        return None
    start = max(0, len(text) - _SCAN_CHARS)
    view = snippets.quiet(text)
    for name in names:
        at = view.find(name, start)
        while at >= 0:
            lo = view.rfind("\n", 0, at) + 1
            hi = view.find("\n", at)
            hi = len(view) if hi < 0 else hi
            if lo != span[0] and _WRONG.search(view, lo, hi):
                return trimmed(view, lo, hi)
            at = view.find(name, hi)
    return None


# --------------------------------------------------------------------------- 3. root cause

#: The agent summing up the cause ("The root cause was …", "Root cause: …").
_ROOT_CAUSE = re.compile(r"\broot cause\b", re.IGNORECASE)

#: A statement that gives a cause ("the problem is …", "… because …", "caused by …").
_STATES_CAUSE = re.compile(
    r"\b(?:the (?:issue|problem|cause|bug|culprit) (?:is|was)|because|caused by|due to"
    r"|(?:issue|problem) is (?:twofold|that))\b",
    re.IGNORECASE,
)

_ROOT_WINDOW = 80  # messages after a stated cause in which the turn's summary may come

REPLACED_BY_ROOT_CAUSE = (
    "the agent later summed up another root cause before the user spoke (superseded)"
)


def later_root_cause(c: Candidate, context: _Context, named: Sequence[str]) -> str:
    """Why a stated cause is not the turn's final belief ("" when it is): a later message of
    the agent's, before the user's next prompt, says "root cause" and names none of the
    things the cause names (`named`, its files, code and identifiers)."""
    if not named or _ROOT_CAUSE.search(c.summary):
        return ""
    messages = context.streams[c.stream]
    said_at = messages[c.pos].text[:1500] if c.pos < len(messages) else c.evidence
    if not (_STATES_CAUSE.search(c.summary) or _STATES_CAUSE.search(said_at)):
        return ""  # a fact, not a cause: a root cause found later does not replace it
    for later in messages[c.pos + 1 : c.pos + 1 + _ROOT_WINDOW]:
        if statements.is_prompt(later):
            return ""
        if later.role != "assistant" or not later.text:
            continue
        text = later.text[:3000]
        found = _ROOT_CAUSE.search(text)
        if found is None:
            continue
        end = text.find("\n\n", found.end())
        said = text[found.start() : min(found.start() + 400, len(text) if end < 0 else end)]
        if _NAMED.search(said) and not any(n.lower() in said.lower() for n in named):
            return REPLACED_BY_ROOT_CAUSE
    return ""


# --------------------------------------------------------------------------- 4. steps

_SEPARATOR = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")


def command_steps(text: str) -> list[str]:
    """The steps of a command line, split at `&&`, `||`, `;` and newlines outside single
    and double quotes (see the module's rule 4)."""
    if "'" not in text and '"' not in text:
        return _SEPARATOR.split(text)
    out: list[str] = []
    start = at = 0
    quote = ""
    while at < len(text):
        ch = text[at]
        if quote:
            if ch == "\\" and quote == '"':
                at += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        else:
            cut = _SEPARATOR.match(text, at)
            if cut is not None and cut.end() > at and cut.group().strip():
                out.append(text[start:at])
                start = at = cut.end()
                continue
        at += 1
    out.append(text[start:])
    return out


# --------------------------------------------------------------------------- 5. permissions

_PERMISSION = re.compile(
    r"permission denied|\beacces\b|\beperm\b|operation not permitted|externally[- ]managed"
    r"|dubious ownership|must be run as root|are you root|access is denied"
    r"|requires? (?:root|superuser|administrator)"
)

#: Flags that only put an install elsewhere or allow what a permission refused.
_PRIVILEGE_FLAGS = frozenset(
    {
        "--user",
        "--break-system-packages",
        "--prefix",
        "--allow-root",
        "--unsafe-perm",
        "--no-sandbox",
    }
)
_TAKES_VALUE = frozenset({"--prefix"})

PERMISSION_HICCUP = (
    "a permission or ownership refusal got past by adding a standard flag or sudo"
    " (routine environment noise)"
)


def permission_hiccup(episode: Episode) -> str:
    """Why an episode is routine environment noise ("" when it is not): see the module's
    rule 5."""
    first, success = episode.failures[0], episode.success
    if success is None or episode.changes or not first.command or not success.command:
        return ""
    span = snippets.error_gist(first.result.text)
    if span is None or not _PERMISSION.search(first.result.text[span[0] : span[1]].lower()):
        return ""
    failed = snippets.shell_words(first.command)
    worked = snippets.shell_words(success.command)
    if set(failed) - set(worked):
        return ""  # something was dropped or replaced: more than a flag added
    had = set(failed)
    added = 0
    for i, word in enumerate(worked):
        if word in had:
            continue
        flag = word.split("=", 1)[0]
        value_of = worked[i - 1] if i else ""
        if flag in _PRIVILEGE_FLAGS or word == "sudo":
            added += 1
        elif value_of not in _TAKES_VALUE:
            return ""
    return PERMISSION_HICCUP if added else ""


# --------------------------------------------------------------------------- 6. broken before

#: A compiler's or type checker's error at a place in a file: `a/b.go:41:148: message`,
#: `src/x.tsx(309,33): error TS18047: message`, `x.c:3:5: error: message` (not a warning or a
#: note, and not a linter's rule code like `F401`), with the message after it.
_LOCATED_ERROR = re.compile(
    r"^[ \t]*(?:\.{1,2}/)?[\w@+-][\w./@+-]*\.[A-Za-z]{1,6}(?::\d+:\d+:|\(\d+,\d+\):)"
    r"(?![ \t]*(?:warning|note|info|hint)\b|[ \t]*[A-Z]{1,4}\d{2,5}\b)[ \t]*"
    r"(?:(?:fatal )?error(?:[ \t]*TS\d{3,5}|\[\w+\])?:[ \t]*)?"
    r"(?P<message>[^\n]+)"
)
_MESSAGE_WORD = re.compile(r"[A-Za-z]{2,}")


#: Names in a compiler's message: quoted (`'landmarks'`, `` `x` ``) or shaped like code
#: (`NewController`, `fmt.Errorf`, `max_len`).
_CODE_NAME = re.compile(
    r"'([^'\s]{3,60})'|`([^`\s]{3,60})`|\"([^\"\s]{3,60})\"|\b([A-Za-z_]\w*[A-Z_.]\w*)\b"
)
_BUILTIN_NAMES = frozenset(
    {"null", "undefined", "string", "number", "boolean", "object", "any", "void", "never",
     "true", "false", "None", "nil", "self", "this", "unknown", "int", "str", "error"}
)  # fmt: skip


def broken_before(gist: str, wrote: Sequence[str]) -> bool:
    """Whether a located compiler error is the project's own state, not the session's work
    (see the module's rule 6): no name its message quotes or spells like code is in what the
    session had written before (`wrote`: the new text of its edits and writes) — changing a
    signature breaks the callers in files it never touched."""
    m = _LOCATED_ERROR.match(gist)
    if m is None or len(_MESSAGE_WORD.findall(m.group("message"))) < 3:
        return False
    names = {
        next(g for g in found.groups() if g) for found in _CODE_NAME.finditer(m.group("message"))
    }
    names -= _BUILTIN_NAMES
    return not any(name in text for name in names for text in wrote)


# --------------------------------------------------------------------------- 7. work summary

#: A line of a list taken out of it: a code span or path, then a dash or a colon and what
#: was done to it or what it does (`` `a.go`: added a guard ``, `` `x` - gets the value ``).
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]\s+)?`[^`\n]{1,160}`\s*(?::|\s[-–—])\s+\S")
#: Work reported as done in the passive ("… has been resolved by: …").
_DONE_BY = re.compile(
    r"\b(?:has|have) been (?:resolved|fixed|addressed|updated|implemented|changed|added"
    r"|removed|handled|applied)\b|\bresolved by:",
    re.IGNORECASE,
)
_WORK_VERBS = (
    r"built|ran|run|added|created|updated|confirmed|verified|tested|implemented|fixed|removed"
    r"|changed|deployed|installed|refactored|moved|renamed|wrote|replaced|rebuilt|restarted"
    r"|generated|started|checked|ensured|cleaned"
)
#: A sentence that opens with work done, no subject, and goes on to more of it ("Built the
#: image, ran a container, confirmed …").
_WORK_OPENING = re.compile(rf"^(?:{_WORK_VERBS})\b", re.IGNORECASE)
_MORE_WORK = re.compile(rf"[,;]\s*(?:and\s+)?(?:{_WORK_VERBS})\b", re.IGNORECASE)
#: "The `x` change broke `y`": a change named by what it touched, not by what it was.
_UNSAID_CHANGE = re.compile(
    r"^(?:the|this|that|my|our)\s+(?:`[^`\n]+`|\S+)\s+(?:change|edit|update|refactor|commit"
    r"|rewrite|fix)\s+(?:broke|breaks|caused|causes|introduced|regressed)\b",
    re.IGNORECASE,
)

WORK_SUMMARY = "a line of the agent's summary of its work, not a failure it fixed or a fact"
UNSAID_CHANGE = "says a change broke something but not what the change was"


def work_summary(summary: str) -> str:
    """Why a statement is a line of the agent's account of its work ("" when it is not): a
    list item (`` `file` - Added X ``, `` `x`: added a guard; fixed A → B ``), work reported
    done in the passive ("has been resolved by: …"), a run of work done with no subject
    ("Built …, ran …, confirmed …"), or a change named only by what it touched ("the `x`
    change broke …"). See the module's rule 7."""
    if _LIST_ITEM.match(summary) or _DONE_BY.search(summary):
        return WORK_SUMMARY
    if _WORK_OPENING.match(summary) and _MORE_WORK.search(summary):
        return WORK_SUMMARY
    return UNSAID_CHANGE if _UNSAID_CHANGE.match(summary) else ""


# --------------------------------------------------------------------------- 8. corrections

#: A demonstrative pointing at something the words do not name ("that proto", "this
#: function"); not "that is", "this way", a conjunction's "that we".
_POINTS_AT = re.compile(
    r"\b(?:that|this|these|those)\s+(?!(?:is|was|are|were|will|would|should|could|can|does"
    r"|did|has|had|way|one|time|case|said|if|when|we|you|i|it|they|he|she|the|a|an|to|in"
    r"|on|of|for|and|or|but|not|all|much|many|there|here|point|means?|works?|part|repo"
    r"|repository|project|codebase|team|company)\b)"
    r"[a-z][a-z-]+\b(?![`'\"])",
    re.IGNORECASE,
)
_ASKS = re.compile(r"\?(?:\s|$)")

UNSETTLED_CORRECTION = (
    "a correction that asks or points at something it does not name (not self-contained)"
)


def unsettled_correction(words: str) -> str:
    """Why a user's correction is no lesson on its own ("" when it may be): it asks the agent
    something ("wait what? What do you mean …?") or points at something it does not name
    ("change the wording on that proto"). See the module's rule 8."""
    if _ASKS.search(words) or _POINTS_AT.search(words):
        return UNSETTLED_CORRECTION
    return ""


# --------------------------------------------------------------------------- 9. service down

#: A service on this machine that is not running: a refused connection to a local address
#: or port, or a daemon's socket that is not there.
_SERVICE_DOWN = re.compile(
    r"(?:connection refused|econnrefused|could not connect|can't connect|cannot connect"
    r"|failed to connect|connect(?:ion)? failed)[^\n]{0,160}?(?:localhost|127\.0\.0\.1|\[?::1\]?"
    r"|0\.0\.0\.0|port \d{2,5})"
    r"|(?:localhost|127\.0\.0\.1|::1|0\.0\.0\.0)[^\n]{0,120}?(?:connection refused|econnrefused"
    r"|failed: could not receive|is the server running)"
    r"|is the (?:docker )?(?:server|daemon) running|cannot connect to the docker daemon",
    re.IGNORECASE,
)

SERVICE_DOWN = (
    "a local service (a database, a server, a daemon) was not running: routine environment"
    " state, failure and start alike"
)


def service_down(episode: Episode) -> str:
    """Why an episode is a local service that was not running ("" when it is not): its error
    is a refused connection to this machine's address or port, or a daemon not there (see
    the module's rule 9)."""
    first = episode.failures[0]
    span = snippets.error_gist(first.result.text)
    return down(first.result.text[span[0] : span[1]]) if span else ""


def down(gist: str) -> str:
    """`SERVICE_DOWN` when an error line is a local service not running, else ""."""
    return SERVICE_DOWN if _SERVICE_DOWN.search(gist) else ""


# --------------------------------------------------------------------------- 11. own import

_NO_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")

OWN_BAD_IMPORT = (
    "an import the session itself wrote of a module that is nowhere (a name it made up or a"
    " submodule that does not exist): its own slip"
)


def own_bad_import(episode: Episode, found: Sequence[Action]) -> str:
    """Why a missing module is the session's own slip ("" when it is not): an import the
    session wrote before the failure names it as an alias (`import a as x`) or, for a
    submodule, whole (`import x.y`, `from x.y import`) — a plain top-level name may be a
    dependency the environment lacks — and nothing before shows it exists: no file or
    folder of that name in what the session touched, no path of it in any tool output, no
    command that worked naming it. A module that exists and was not found is about how the
    code is run: a lesson (see the module's rule 11)."""
    first = episode.failures[0]
    span = snippets.error_gist(first.result.text)
    m = _NO_MODULE.search(first.result.text[span[0] : span[1]]) if span else None
    if m is None:
        return ""
    name = m.group(1).rstrip(".")
    earlier = [a for a in found if a.stream == first.stream and a.pos < first.pos]
    named = re.escape(name)
    alias = rf"import\s+[\w.]+\s+as\s+{named}\b"
    if "." in name:  # a submodule: imported whole or from
        alias += rf"|import\s+{named}\b(?!\.)|from\s+{named}\s+import\b"
    imports = re.compile(rf"(?m)^\s*(?:{alias})")
    wrote = [
        str(snippets.inputs(a.tool).get("new_string") or snippets.inputs(a.tool).get("content"))
        for a in earlier
        if a.tool.name in EDIT_TOOLS and not a.failed
    ]
    if not any(imports.search(text) for text in wrote):
        return ""
    path = re.compile(rf"(?<![\w.-]){re.escape(name.replace('.', '/'))}(?:/|\.py\b)")
    word = re.compile(rf"(?<![\w.]){named}(?![\w])")
    for a in earlier:
        if path.search(a.target) or path.search(a.result.text[:20_000]):
            return ""  # it is there: the failure is about how the code was run
        if a.command and not a.failed and word.search(a.command):
            return ""  # a command that worked named it
    return OWN_BAD_IMPORT


# --------------------------------------------------------------------------- 12. taken back

TAKEN_BACK = "a later edit took the credited change back out: it was not the fix"


def _lines(text: str) -> set[str]:
    return {x.strip() for x in text.splitlines() if len(x.strip()) >= 6}


def taken_back(episode: Episode, found: Sequence[Action]) -> str:
    """Why a solution credits the wrong change ("" when it does not): every line its edits
    added was removed again by a later edit of the same file — the session's final belief is
    that it was not the fix (see the module's rule 12)."""
    success = episode.success
    edits = [a for a in episode.changes if a.tool.name in EDIT_TOOLS and not a.failed]
    if success is None or not edits:
        return ""
    added: set[str] = set()
    for a in edits:
        fields = snippets.inputs(a.tool)
        added |= _lines(str(fields.get("new_string") or "")) - _lines(
            str(fields.get("old_string") or "")
        )
    if not added:
        return ""
    files = {a.target for a in edits}
    removed: set[str] = set()
    for a in found:
        if a.stream != success.stream or a.pos <= success.pos or a.target not in files:
            continue
        if a.tool.name in EDIT_TOOLS and not a.failed:
            fields = snippets.inputs(a.tool)
            removed |= _lines(str(fields.get("old_string") or "")) - _lines(
                str(fields.get("new_string") or "")
            )
    return TAKEN_BACK if added <= removed else ""


# --------------------------------------------------------------------------- 13. error codes

#: A number that is the error itself: the code after "error", "errno" or "code".
_ERROR_CODE = re.compile(r"(?i)\b(?:error|errno|code)\s*[:#]?\s*(\d+)\b")
_WORD = re.compile(r"[^\W\d_]{2,}")


def error_numbers(gist: str) -> tuple[str, ...]:
    """The numbers that tell one error from another in an error line: a code after "error",
    "errno" or "code", or every number of a line of four words or fewer ("Error de sistema
    5." and "… 1376." are two errors, not two attempts at one; see the module's rule 13)."""
    if len(_WORD.findall(gist)) <= 4:
        return tuple(re.findall(r"\d+", gist))
    return tuple(_ERROR_CODE.findall(gist))


# --------------------------------------------------------------------------- 14. own message

#: The message of an error line: what follows its last "Error:"-like prefix.
_MESSAGE = re.compile(
    r"(?:^|[\s.])(?:[A-Za-z_.]*(?:Error|Exception|Failure)|error|fatal)\s*:\s*(.+)$"
)

OWN_MESSAGE = (
    "the error is a message the session itself wrote (its own check or assertion failing):"
    " work in progress"
)


def own_message(gist: str, wrote: Sequence[str]) -> str:
    """Why a failure is the session's own check failing ("" when it is not): the message of
    its error line, four words or more, is word for word in what the session had written
    before it (a `raise …("…")`, a `RAISE EXCEPTION '…'`, an assertion's message). What the
    check found is what the session was building, not a fact about the project (see the
    module's rule 14)."""
    m = _MESSAGE.search(gist.strip())
    message = (m.group(1) if m else gist).strip().strip("'\"").rstrip(".!")
    if len(_WORD.findall(message)) < 4:
        return ""
    return OWN_MESSAGE if any(message in text for text in wrote) else ""


# --------------------------------------------------------------------------- 15. error class

#: A dotted name that ends in an exception's class (`asyncpg.exceptions.RaiseError`,
#: `requests.exceptions.HTTPError`, `pydantic_core._pydantic_core.ValidationError`).
_EXCEPTION_PATH = re.compile(r"^[a-z_][\w]*(?:\.[\w]+)*\.[A-Z]\w*(?:Error|Exception|Warning|Exit)$")


def exception_name(speaker: str) -> bool:
    """Whether what an error line starts with (`name: …`) is an exception's dotted class
    path, not a program that answered for the one called (see the module's rule 15)."""
    return bool(_EXCEPTION_PATH.match(speaker))
