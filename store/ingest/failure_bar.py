"""The precision bar for failures (issue 11; `store.ingest.shapes` has the shapes): why a
dead end or a solution the episodes made is no lesson a reviewer would keep — work in
progress (an error in code the session itself had written), an environment slip retyping got
past, a check of the state, the agent's own test expecting the wrong thing, its own slip,
housekeeping a linter asks, a fix the error's own output dictated, a retry that only ran a
narrower target.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from store.ingest import reviewer_rules, shapes, snippets
from store.ingest.actions import (
    _SHELLS,
    _SPEAKER,
    EDIT_TOOLS,
    Action,
    Episode,
    _installs,
    _program_of,
)
from store.ingest.candidates import Candidate
from store.ingest.changes import _names_package, needed


@dataclass(frozen=True, slots=True)
class _Write:
    """A file the session wrote or edited, and when."""

    stream: int
    pos: int
    index: int
    timestamp: str
    content: str  # what it put there (new text), as far as the tool input was kept


def _written(found: Sequence[Action]) -> dict[str, list[_Write]]:
    """Every file the session wrote or edited successfully (any stream), by file name."""
    out: dict[str, list[_Write]] = {}
    for a in found:
        if a.tool.name in EDIT_TOOLS and not a.failed:
            fields = snippets.inputs(a.tool)
            content = fields.get("new_string") or fields.get("content") or ""
            out.setdefault(snippets.file_name(a.target), []).append(
                _Write(a.stream, a.pos, a.call.index, a.done.timestamp, content)
            )
    return out


def _before(w: _Write, action: Action) -> bool:
    """Whether the write happened before the action was called (timestamps across streams:
    a subagent's file is read after the main file)."""
    if w.stream == action.stream:
        return w.pos < action.pos
    if w.timestamp and action.call.timestamp:
        return w.timestamp <= action.call.timestamp
    return w.index < action.call.index


#: The name of a failing test in a runner's output.
_FAILED_TEST = re.compile(
    r"(?m)^[ \t]*(?:--- FAIL: (?P<go>\w+)|FAILED\s+\S*::(?P<py>\w+)|[×✕✗●]\s+(?P<js>[^\n]+?)"
    r"(?:\s+\[?\d+(?:\.\d+)?\s?m?s\]?)?[ \t]*$)"
)
_FILE_IN_TEXT = re.compile(r"[\w@+-][\w.@+-]*\.[A-Za-z]\w{0,7}\b")


def _fresh(failure: Action, gist: str, written: dict[str, list[_Write]]) -> bool:
    """Whether the failure is in code the session itself had written or edited before it:
    its error names such a file, or every failing test it names is one the session wrote."""
    mine = {name for name, writes in written.items() if any(_before(w, failure) for w in writes)}
    if not mine:
        return False
    if any(name in mine for name in _FILE_IN_TEXT.findall(gist)):
        return True
    view = snippets.quiet(failure.result.text[:20_000])
    tests = [
        (m.group("go") or m.group("py") or m.group("js") or "").strip()
        for m in _FAILED_TEST.finditer(view)
    ]
    tests = [t for t in tests if len(t) >= 6]
    if not tests:
        return False
    contents = [w.content for writes in written.values() for w in writes if _before(w, failure)]
    return all(any(_test_words(t) in c for c in contents) for t in tests)


def _test_words(name: str) -> str:
    """What of a test's printed name its source holds (a js test prints "suite > name")."""
    return name.rsplit(" > ", 1)[-1].strip()


def _unproven(
    run: Episode,
    dead: Candidate,
    episode: Episode,
    written: dict[str, list[_Write]],
) -> str:
    """Why a dead end has none of the shapes of a failure reviewers approve ("" when it has
    one): a stated cause that explains it, a missing dependency, another program answering
    for the one called, or the same informative error on three attempts that never passed.
    Without a cause, what fixed it is the lesson: its SOLUTION carries the error too. An
    environment slip (a program not installed, a wrong folder, a typo'd path) that retyping
    got past is routine."""
    first = run.failures[0]
    output = first.result.text
    span = snippets.error_gist(output)
    gist = output[span[0] : span[1]] if span else ""
    if reviewer_rules.down(gist):
        return reviewer_rules.SERVICE_DOWN
    missing = shapes.missing_package(gist)
    if missing and not _installed(missing, episode):
        return ""  # the environment lacks a dependency, whoever wrote the import
    if _fresh(first, gist, written):
        return "an error in code the session itself had written or edited (work in progress)"
    if reviewer_rules.own_message(gist, [w.content for ws in written.values() for w in ws
                                         if _before(w, first)]):  # fmt: skip
        return reviewer_rules.OWN_MESSAGE
    slipped = _environment_slip(gist, first.command)
    if _alias(gist, first.target, first.command) and not shapes.NOT_INSTALLED.search(gist):
        return ""  # the machine itself speaks: another program answers for the one called
    if slipped and not _really_changed(episode) and not _flag_fixed(slipped, episode):
        return f"an environment slip ({slipped}) {_SLIP_END[episode.success is not None]}"
    if _observes(first.command):
        return "a check of the state that saw the problem, not an attempt at something"
    if shapes.explains(dead.cause):
        return ""
    if shapes.bare_gist(gist):
        return "the error says only that it failed, and the session states no cause"
    if shapes.guessed(gist):
        return "a name the agent guessed that the project does not have (no cause stated)"
    if len(run.failures) >= 3 and episode.success is None and not shapes.refused(gist):
        return ""
    wrote = [w.content for ws in written.values() for w in ws if _before(w, first)]
    if reviewer_rules.broken_before(gist, wrote):
        return ""  # the project was broken before the session touched the file
    return NO_CAUSE


_SEVERAL_STEPS = "a command line of several steps: which one failed is not clear"
_SEVERAL_STEPS_FIX = (
    "the failing command line ran several steps: what the change fixed is not clear"
)
#: Why a dead end with no cause stays out of the queue.
NO_CAUSE = "a failure with no stated cause: its error alone is not a lesson"
_SLIP_END = {
    True: "that the agent got past by retyping the command",
    False: "and no fix in the session",
}


def _flag_fixed(slipped: str, episode: Episode) -> bool:
    """Whether a path that was not there was found by an option the working command added
    with a path for its value (`alembic -c db/alembic.ini upgrade`): the option says where
    the tool looks, which is worth knowing; a `cd`, another path retyped or an option that
    skips a check (`--no-verify`) is not."""
    if episode.success is None or slipped != shapes.MISSING_PATH_SLIP:
        return False
    _, before = snippets.command_tokens(episode.failures[0].command)
    _, after = snippets.command_tokens(episode.success.command)
    for i, word in enumerate(after):
        if not word.startswith("-") or len(word) < 2 or word in before:
            continue
        value = word.partition("=")[2] or (after[i + 1] if i + 1 < len(after) else "")
        if _PATH_VALUE.search(value) and value not in before:
            return True  # an option that says where to look (not one that skips a check)
    return False


#: An option's value that names a path (`db/alembic.ini`, `./config`, `settings.toml`).
_PATH_VALUE = re.compile(r"/|\.[A-Za-z]{1,8}$")


def _environment_slip(gist: str, command: str) -> str:
    """`shapes.slip`, except for a program missing where the command runs another (`kubectl
    exec … -- curl`, `docker run img curl`): what a container or a host lacks is a fact about
    the project's infrastructure, not the agent's typing."""
    slipped = shapes.slip(gist)
    missing = shapes.missing_program(gist) if slipped else ""
    if missing and command:
        steps = re.split(r"\s*(?:&&|\|\||;|\n|\|)\s*", snippets.HEREDOC_BODY.sub("", command))
        local = {_program_of(step) for step in steps}
        if missing not in local and re.search(rf"(?<![\w./-]){re.escape(missing)}\b", command):
            return ""
    return slipped


def _really_changed(episode: Episode) -> bool:
    """Whether something other than the command line changed before the success: a file
    edited, a package installed."""
    return episode.success is not None and any(
        a.tool.name in EDIT_TOOLS or _installs(a) for a in episode.changes
    )


def _alias(output: str, target: str, command: str = "") -> bool:
    """The error comes from another program than the one called, and one the command line
    never names (`tree` answered by `lsd`): a fact about the machine."""
    view = snippets.quiet(output[:4000])
    called = next(iter(target.split()), "")
    speaker = _SPEAKER.match(view)
    if speaker is None or speaker.group(1) in _SHELLS or speaker.group(1) == called:
        return False
    if reviewer_rules.exception_name(speaker.group(1)):
        return False  # an exception's class path, not another program
    return not re.search(rf"(?<![\w.-]){re.escape(speaker.group(1))}\b", command)


#: Subcommands that only look at the state of something (`kubectl rollout status`,
#: `docker compose ps`, `gh pr view`): their failure is the problem seen, not a lesson.
_OBSERVING = frozenset("status get describe list ls show view top inspect info ps logs".split())


def _observes(command: str) -> bool:
    """Whether the command's working stage only looks at the state of something."""
    stages = snippets.pipeline(command)
    words = stages[-1] if stages else []
    return any(w in _OBSERVING for w in snippets.positional(words[1:])[:3])


def _installed(package: str, episode: Episode) -> bool:
    """Whether the episode installed the package (then its solution says it all)."""
    return any(_installs(a) and package in a.command for a in episode.changes)


def _unproven_fix(
    episode: Episode, runs: Sequence[Episode], written: dict[str, list[_Write]]
) -> str:
    """Why a solution has no shape reviewers approve ("" when it has one): it fixes the
    session's own work in progress, or the retry only ran less (a narrower target)."""
    first = episode.failures[0]
    span = snippets.error_gist(first.result.text)
    gist = first.result.text[span[0] : span[1]] if span else ""
    slipped = _environment_slip(gist, first.command)
    alias = _alias(gist, first.target, first.command) and not shapes.NOT_INSTALLED.search(gist)
    if slipped and not alias and not _really_changed(episode) and not _flag_fixed(slipped, episode):
        return f"retyped after an environment slip ({slipped}): nothing about the project changed"
    edits = [a for a in episode.changes if a.tool.name in EDIT_TOOLS]
    if edits and all(snippets.edit_gist(a.tool) == "rewrote it" for a in edits):
        return "the only change rewrote a file whole: it says nothing concrete"
    last = runs[-1].failures[0] if runs else first
    span = snippets.error_gist(last.result.text)
    if _fresh(last, last.result.text[span[0] : span[1]] if span else "", written):
        return "it fixes code the session itself had written or edited (work in progress)"
    for change in episode.changes:
        if change.tool.name in EDIT_TOOLS and any(
            _before(w, first) for w in written.get(snippets.file_name(change.target), ())
        ):
            return "it edits code the session itself had written or edited before the failure"
    return ""


#: Options whose value picks which tests or packages run.
_SELECTORS = frozenset("-run -k -t -m -p --testNamePattern --grep --filter --only --test".split())
_PATHLIKE = re.compile(r"^(?:\.{1,2}/|/)?[\w@.*-]+(?:/[\w@.*-]+)*/?(?:\.\.\.)?$")
_TEST_NAME = re.compile(r"\.(?:test|spec)\.\w+$|_test\.\w+$|^test_\w+\.py$|::")


def _narrowed(failed: str, worked: str) -> bool:
    """Whether the command that worked only picks other or fewer tests, packages or files
    than the one that failed (a path, a test name, a `-run` filter added or swapped)."""
    _, before = snippets.command_tokens(failed)
    _, after = snippets.command_tokens(worked)
    added = [(i, w) for i, w in enumerate(after) if w not in before]
    dropped = [w for w in before if w not in after]
    if not added and not dropped:
        return False
    return all(_selects(w, after[i - 1] if i else "") for i, w in added) and all(
        _selects(w, "") or w in _SELECTORS or not w.startswith("-") for w in dropped
    )


def _selects(word: str, previous: str) -> bool:
    if previous in _SELECTORS or word in _SELECTORS:
        return True
    if "://" in word or "$" in word or "=" in word:
        return False
    return bool(_TEST_NAME.search(word)) or ("/" in word and bool(_PATHLIKE.match(word)))


_TEST_FILE = re.compile(r"(?:^|[_.-])(?:test|tests|spec)(?:[_.-]|$)|^test_", re.IGNORECASE)
_ASSERTED = re.compile(
    r"\bassert|\bexpect(?:ed|ation)?\b|\bto(?:Be|Equal|Match|Contain|Have)\w*\b", re.IGNORECASE
)


def _edited(found: Sequence[Action]) -> dict[tuple[int, str], int]:
    """Where each file was first edited or written, by (stream, path)."""
    first: dict[tuple[int, str], int] = {}
    for action in found:
        if action.tool.name in EDIT_TOOLS and not action.failed:
            first.setdefault((action.stream, action.target), action.pos)
    return first


def _own_tests_only(episode: Episode, edited: dict[tuple[int, str], int]) -> bool:
    """Whether every change before the success rewrote, whole, a test file the agent had
    already written or changed before the first failure: the solution could only say
    "rewrote it" (an edit of its own test says what the test needed, and is kept)."""
    first = episode.failures[0]
    edits = [a for a in episode.changes if a.tool.name in EDIT_TOOLS]
    return (
        bool(edits)
        and len(edits)
        == len([a for a in episode.changes if a.tool.name in EDIT_TOOLS or a.command])
        and all(
            a.tool.name == "Write"
            and _TEST_FILE.search(snippets.file_name(a.target))
            and edited.get((a.stream, a.target), first.pos) < first.pos
            for a in edits
        )
    )


def _own_test(episode: Episode, edited: dict[tuple[int, str], int]) -> str:
    """Why the episode is the agent's own test asserting the wrong thing ("" when it is not):
    a test file the agent had written or changed earlier in the session fails an assertion,
    and the only changes before it passes are to that test. What the test expected was the
    agent's guess, not a fact about the project."""
    first = episode.failures[0]
    if episode.success is None:
        return ""
    tests = {
        path
        for (stream, path), pos in edited.items()
        if stream == first.stream
        and pos < first.pos
        and _TEST_FILE.search(snippets.file_name(path))
        and snippets.file_name(path) in first.result.text
    }
    edits = [a.target for a in episode.changes if a.tool.name in EDIT_TOOLS]
    if not tests or not edits or not set(edits) <= tests:
        return ""
    span = snippets.error_gist(first.result.text)
    if span is None or not _ASSERTED.search(first.result.text[span[0] : span[1]]):
        return ""
    return "the agent's own new test expected the wrong thing (it passed once the test changed)"


#: The agent owning the failure as its own slip ("caught a bug in my keyset cursor", "I
#: forgot to import", "my typo").
_OWN_SLIP = re.compile(
    r"\b(?:(?:bug|mistake|typo|slip) in my\b|my (?:own )?(?:mistake|bad|typo|bug)\b"
    r"|i (?:forgot|mistyped|misnamed|misspelled)\b|i used the wrong\b|oops\b)",
    re.IGNORECASE,
)


def _slip(episode: Episode) -> str:
    """Why the episode is a slip in the agent's own fresh code, as the agent says right
    after the failure ("" when it does not)."""
    for failure in episode.failures:
        said = failure.said_next.text[:400] if failure.said_next else ""
        owned = _OWN_SLIP.search(said) if said else None
        if owned is None:
            continue
        # "My mistake: … `DROP INDEX CONCURRENTLY` can't run in a transaction" owns the slip
        # but states a rule of the tool in the same sentence: a lesson all the same.
        start = max(said.rfind(". ", 0, owned.start()) + 1, 0)
        stop = said.find(". ", owned.end())
        if not _CONSTRAINT.search(said[start : stop if stop >= 0 else len(said)]):
            return "a slip in code the agent had just written (it says so)"
    return ""


#: Housekeeping a linter or compiler asks of fresh code: an unused import or variable, an
#: unchecked error, a redeclaration, formatting. In a file the agent itself had just edited,
#: it is the agent's slip, not a fact about the project.
_HYGIENE = re.compile(
    r"\b(?:imported and not used|declared and not used|declared but (?:its value is )?never"
    r" (?:used|read)|(?:defined|assigned|imported) but never used|never (?:used|read)\b"
    r"|unused (?:import|variable|parameter|argument|local)|no new variables on left side"
    r"|is not checked|redeclared|already (?:been )?declared|consider merging|would reformat"
    r"|not (?:properly )?formatted|F401|F841|E501|W291|no-unused-vars|unused-imports?)",
    re.IGNORECASE,
)


def _hygiene(run: Episode, edited: dict[tuple[int, str], int], episode: Episode) -> str:
    """Why a run of failures is housekeeping in the agent's own fresh code ("" when it is
    not): its gist is lint or unused code in a file the agent had edited before it, and what
    the episode changed before its success (if anything) includes that file."""
    first = run.failures[0]
    span = snippets.error_gist(first.result.text)
    if span is None or not _HYGIENE.search(first.result.text[span[0] : span[1]]):
        return ""
    gist = first.result.text[span[0] : span[1]]
    mine = {
        path
        for (stream, path), pos in edited.items()
        if stream == first.stream and pos < first.pos and snippets.file_name(path) in gist
    }
    edits = {a.target for a in episode.changes if a.tool.name in EDIT_TOOLS}
    if not mine or (edits and not edits & mine):
        return ""
    return "housekeeping in code the agent had just edited (lint, unused code)"


_CONSTRAINT = re.compile(
    r"\b(?:can'?t|cannot|must|only|requires?|needs? to|not allowed|doesn'?t support"
    r"|won'?t)\b",
    re.IGNORECASE,
)


def _told(episode: Episode) -> str:
    """Why the failure is no lesson when its own output said what to run ("Run 'mix format'
    to fix") and running just that fixed it: the solution says all there is ("" if not)."""
    if episode.success is None or any(a.tool.name in EDIT_TOOLS for a in episode.changes):
        return ""
    ran = [a for a in episode.changes if a.command]
    if not ran:
        return ""
    words = snippets.main_stage(ran[-1].command).split()[:2]
    said = episode.failures[-1].result.text
    if len(words) < 2 or " ".join(words) not in said:
        return ""
    return f"the error said to run `{' '.join(words)}`, and that fixed it"


#: Why a missing dependency installed at once is no lesson.
INSTALLED_AT_ONCE = (
    "a missing package or program that the very next action installed, after which the"
    " command worked (routine set-up)"
)


#: A stated cause that says why something is missing, not only that it is ("`zod` is
#: missing from package.json because the lockfile was regenerated without it").
_WHY_MISSING = re.compile(
    r"\b(?:because|since|due to|caused by|the reason|requires?|needs?|only|instead|rather than"
    r"|without|after|from|declared|listed|pinned|removed|dropped|regenerated)\b",
    re.IGNORECASE,
)


def _installed_at_once(episode: Episode, found: Sequence[Action], cause: str = "") -> str:
    """Why an episode is routine set-up ("" when it is not): its error says a module,
    package or program is missing, the very next action of its stream installs exactly that,
    the next attempt on the target works, no later failure says it is missing again, and
    the cause the agent stated (if any) only restates the absence. A fix that was no install
    (running inside a virtualenv or a container) stays a lesson, and so does a cause that
    says why the dependency was missing."""
    first, success = episode.failures[0], episode.success
    if success is None or len(episode.failures) != 1 or _WHY_MISSING.search(cause):
        return ""
    missing = needed(first.result.text)
    if not missing:
        return ""
    after = [a for a in found if a.stream == first.stream and a.pos > first.pos]
    following = next((a for a in after if a.harness is None), None)
    if (
        following is None
        or following.failed
        or not (
            (_installs(following) and _names_package(following.command, missing))
            or reviewer_rules.installs_missing(following.command, missing)
        )
    ):
        return ""
    runs = [a for a in after if a.command and not _installs(a) and a.pos < success.pos]
    if any(a.target == first.target for a in runs):
        return ""  # the target was tried again in between: more than the install happened
    again = (a for a in found if a.failed and (a.stream, a.pos) > (success.stream, success.pos))
    if any(needed(a.result.text) == missing for a in again):
        return ""  # it recurs: the environment keeps losing it
    return INSTALLED_AT_ONCE
