"""Episodes from the tool structure (issue 11): dead ends and solutions come from what the
agent ran, not from what it said.

A failing action starts an episode: a result flagged `is_error`, or output that shows a
failure (a non-zero exit, failing tests, a compiler error, a traceback, a prompt the command
stopped at). The following attempts on the same target (the same command family, e.g.
`npx tsc` or `npm run build`) are its steps; the attempt that then succeeds closes it. The
episode gives one DEAD_END (what was tried, the error's gist, how many attempts) and, when it
closed, one SOLUTION that says what changed between the first failing attempt and the one
that worked: the flags or arguments that differ, the edits made in between (file and the gist
of old → new), the dependencies installed. The two are joined by `resolved`.

What is not an episode: a success that ended no failure (never a node), the agent harness's
own tool errors (`store.ingest.harness`), and routine commands whose failures say nothing
about the project (listing, reading, searching, moving around): those failures are kept as
suppressed candidates with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from store.ingest import bar, shapes, snippets, statements
from store.ingest.candidates import Candidate
from store.ingest.harness import HarnessError, harness_error
from store.models import ToolResult, ToolUse, TranscriptMessage

CONFIDENCE = 0.60
#: Tools whose calls are never episodes: reading and searching, planning, subagents (their
#: own failures are in the subagent's stream).
QUIET_TOOLS = frozenset(
    "Read Glob Grep LS NotebookRead TodoWrite TodoRead Task Agent ExitPlanMode WebSearch"
    " BashOutput KillBash KillShell Skill SlashCommand".split()
)
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
#: Programs run to look around, not to build, test or change the project.
ROUTINE_PROGRAMS = frozenset(
    "ls cat head tail less more find fd grep egrep rg ag tree pwd cd echo printf which whereis"
    " type wc file stat du df env printenv date whoami id uname hostname ps sleep true false"
    " clear history mkdir touch cp mv rm rmdir ln chmod chown open code realpath dirname"
    " basename readlink sort uniq cut tr awk sed jq diff cmp test lsd eza exa bat".split()
)
#: An interpreter given the program inline (`python3 -c "…"`, `node -e …`).
_INLINE_SCRIPT = re.compile(r"^(?:python[\d.]*|node|ruby|perl|deno|bun|php)\s+(?:-\S+\s+)*-[ceE]\b")
#: An interpreter reading its program from a heredoc or a pipe (`python3 <<'EOF'`, `… |
#: python3 -`): a script the agent wrote for the moment, often over its own output.
_SCRIPT_ON_STDIN = re.compile(
    r"(?:^|[\n;&|(]\s*)(?:\w+=\S*\s+)*(?:\S*/)?(?:python[\d.]*|node|ruby|perl|deno|bun|php)"
    r"(?:\s+-[\w-]+)*\s*(?:-\s*)?(?:<<|$|\n)",
)
#: Tools that run the project's commands; every other tool is the agent's own.
SHELL_TOOLS = frozenset({"Bash"})
#: Version-control reads and bookkeeping: what they print or refuse is about the working copy
#: (an upstream not set, a path ignored), not the project. `git commit` is not here: its
#: hooks enforce the project's own rules.
_GIT_BOOKKEEPING = frozenset(
    "status log diff show branch remote rev-parse ls-files blame add push pull fetch checkout"
    " switch stash restore reset tag worktree".split()
)
_INSTALL = re.compile(
    r"^(?:npm (?:install|i|add)|pnpm (?:add|install|i)|yarn add|bun (?:add|install)"
    r"|pip3? install|uv (?:add|pip install)|poetry add|pipenv install|cargo add|go get"
    r"|gem install|bundle add|composer require|apt(?:-get)? install|brew install)\b"
)
_SUCCESS_LINE = re.compile(
    r"(?im)^[ \t]*(?:success\b|successfully\b|done in\b|[✓✔][ \t]*(?:compiled|built|done|ready)"
    r"|compiled successfully|build succeeded|all (?:\d+ )?tests? passed)"
)


@dataclass(frozen=True, slots=True)
class Action:
    """One tool call with its result, in one stream."""

    stream: int
    pos: int  # position of the call's message in the stream
    call: TranscriptMessage
    done: TranscriptMessage  # the message holding the result
    done_pos: int
    tool: ToolUse
    result: ToolResult
    command: str  # the shell command ("" for other tools)
    target: str  # what it acts on: a command family, or a file
    failed: bool
    harness: HarnessError | None
    routine: bool
    wanted: str = ""  # why the failure was what the agent wanted ("" when it was not)
    said_next: TranscriptMessage | None = None  # what the agent said right after a failure
    #: What the agent said in the turns after a failure, before the user spoke again (where
    #: a cause found later is stated).
    said_later: tuple[TranscriptMessage, ...] = ()


@dataclass
class Episode:
    target: str
    failures: list[Action]
    changes: list[Action] = field(default_factory=list)  # edits and installs after the first
    success: Action | None = None


def actions(streams: Sequence[Sequence[TranscriptMessage]]) -> list[Action]:
    """Every tool call that got a result, stream by stream, in call order."""
    found: list[Action] = []
    for stream, messages in enumerate(streams):
        calls: dict[str, tuple[int, TranscriptMessage, ToolUse]] = {}
        for pos, message in enumerate(messages):
            for tool in message.tool_uses:
                calls[tool.id] = (pos, message, tool)
            for result in message.tool_results:
                called = calls.pop(result.tool_use_id, None)
                if called is not None:
                    action = _action(stream, called, pos, message, result)
                    if action.failed:
                        action = replace(
                            action,
                            wanted=_wanted(messages, pos),
                            said_next=_next(messages, pos),
                            said_later=_later(messages, pos),
                        )
                    found.append(action)
    return sorted(found, key=lambda a: (a.stream, a.pos, a.done_pos))


#: What an agent says about a failure it wanted to see.
_EXPECTED = re.compile(
    r"^\W*(?:(?:good|great|perfect|excellent|nice)\b[^.!\n]{0,40}(?:fail|reproduc|red\b|error)"
    r"|(?:as expected|that'?s expected|this is expected|expected(?:ly)?[,:]? (?:it|the test|this)"
    r"\s+fails?|(?:reproduced|confirmed|confirms)\b|(?:the|this) (?:test|check) fails? as "
    r"(?:it should|expected)))",
    re.IGNORECASE,
)


#: The same said about the failure in the first sentence back ("That failure is exactly what
#: we want: …", "This failure is the behaviour change I intended, not a regression").
_INTENDED = re.compile(
    r"\b(?:exactly what (?:we|I) (?:want|wanted|expected|hoped)|what (?:we|I) wanted to see"
    r"|(?:change|behaviou?r|result|outcome) (?:that )?(?:I|we) intended|not a regression"
    r"|as intended|as designed|(?:that'?s|that is|which is) the point|(?:proves|shows|confirms)"
    r" (?:that )?the (?:guard|check|timeout|limit|lock|validation|test)\w* (?:works|holds|fires))"
    # the agent appraising the failing output as what it was after ("The error handling works
    # correctly", "Done. The output now follows the brew style")
    r"|\bworks (?:correctly|as expected|as intended)\b|^\W*done\b[.!]"
    r"|\b(?:output|message|error) now (?:follows|shows|matches|reads|looks)\b",
    re.IGNORECASE,
)


def _wanted(messages: Sequence[TranscriptMessage], pos: int) -> str:
    """Why a failure was wanted, from what the agent says right after it ("" if it does not
    say so): a reproduction, a test red before its fix, a guard shown to work, a behaviour
    change it made on purpose."""
    for later in messages[pos + 1 : pos + 7]:
        if statements.is_prompt(later) or (
            any(u.name in EDIT_TOOLS for u in later.tool_uses) and not later.text
        ):
            return ""  # the agent set about fixing it, or the user spoke first
        if later.role == "assistant" and later.text:
            first = later.text.lstrip()[:240]
            first = first[: _first_stop(first)]
            said = _EXPECTED.search(later.text) or _INTENDED.search(first)
            return "a failure the agent wanted (it says so)" if said else ""
    return ""


def _next(messages: Sequence[TranscriptMessage], pos: int) -> TranscriptMessage | None:
    """The agent's text right after the result at `pos` (None when it acts first)."""
    for later in messages[pos + 1 : pos + 3]:
        if later.role == "assistant" and later.text:
            return later
    return None


#: A sentence that states what is (not what the agent will do).
_STATES = re.compile(
    r"\b(?:is|are|was|were|returns?|needs?|requires?|expects?|can'?t|cannot|doesn'?t|does not"
    r"|isn'?t|aren'?t|has|have|must|only|lacks?|holds?|runs?|uses?)\b",
    re.IGNORECASE,
)


#: Messages after a failure in which a cause the agent finds later is looked for.
_LATER = 16


def _later(messages: Sequence[TranscriptMessage], pos: int) -> tuple[TranscriptMessage, ...]:
    """The agent's text messages after the result at `pos`, up to the user's next prompt."""
    found: list[TranscriptMessage] = []
    for later in messages[pos + 1 : pos + 1 + _LATER]:
        if statements.is_prompt(later):
            break
        if later.role == "assistant" and later.text:
            found.append(later)
    return tuple(found)


#: A sentence that states why something failed ("… fails because …", "The failure is a live
#: ClickHouse e2e test", "the root cause was …").
_CAUSE_SAID = re.compile(
    r"\b(?:because|root cause|caused by|due to|the reason|(?:failure|failing \w+|error|issue"
    r"|problem) (?:is|was|comes from)|requires?|needs? (?:a|an|the)|only (?:works|runs)"
    r"|(?:is|was) (?:a|an) (?:live|pre-existing|known|flaky|e2e|integration)\b)",
    re.IGNORECASE,
)
#: Words too common in commands and errors to tie a later sentence to a failure.
_GENERIC = frozenset(
    "test tests run runs error errors fail fails failed failing failure code exit file files"
    " line command output result npm npx bun go uv mise cargo python node".split()
)


def _late_cause(failure: Action, gist: str) -> str:
    """The cause the agent states later (after the sentence right after the failure, before
    the user speaks again): the first sentence that says why, is not a guess, narration or a
    question, and names something the error names."""
    tied = {w for w in bar.content_words(gist) if w not in _GENERIC and len(w) > 4}
    if not tied:
        return ""
    for message in failure.said_later:
        if message is failure.said_next:
            continue
        for count, (lo, hi) in enumerate(snippets.sentence_spans(message.text)):
            if count >= 6:
                break
            sentence = _FULL_STOP.split(statements.clause(message.text[lo:hi]), maxsplit=1)[0]
            if (
                20 <= len(sentence) <= 220
                and _CAUSE_SAID.search(sentence)
                and not sentence.endswith(("?", ":"))
                and not bar.is_narration(sentence)
                and not statements.HEDGE.search(sentence)
                and not bar.DANGLING.match(sentence)
                and tied & set(bar.content_words(sentence))
            ):
                return snippets.clean(sentence, 220)
    return ""


_FULL_STOP = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _diagnosis(message: TranscriptMessage | None) -> str:
    """The cause the agent states right after a failure ("The LiveView runs in a separate
    process that can't access the test sandbox."): the first of its first three sentences
    that states something specific, is not narration, a plan, a question or a guess."""
    if message is None:
        return ""
    for count, (lo, hi) in enumerate(snippets.sentence_spans(message.text)):
        if count >= 3:
            break
        clause = _FULL_STOP.split(statements.clause(message.text[lo:hi]), maxsplit=1)[0]
        if (
            20 <= len(clause) <= 220
            and not clause.endswith(("?", ":"))
            and not bar.is_narration(clause)
            and not statements.HEDGE.search(clause)
            and _STATES.search(clause)
            and bar.entities(clause)
            and not bar.DANGLING.match(clause)
        ):
            return snippets.clean(clause, 220)
    return ""


def _first_stop(text: str) -> int:
    """Where the first sentence ends (a full stop or a line break), or the text's length."""
    m = re.search(r"[.!?](?:\s|$)|\n", text)
    return m.end() if m else len(text)


def _action(
    stream: int,
    called: tuple[int, TranscriptMessage, ToolUse],
    done_pos: int,
    done: TranscriptMessage,
    result: ToolResult,
) -> Action:
    pos, call, tool = called
    fields = snippets.inputs(tool)
    command = fields.get("command", "") if tool.name == "Bash" else ""
    if command:
        target = snippets.program(command)
    else:
        target = fields.get("file_path") or fields.get("notebook_path") or tool.name
    harness = harness_error(result.text) if result.is_error else None
    looked_around = _routine(tool, target, command)
    # Routine commands are only read for their flagged failures (their output is data).
    failed = result.is_error or (
        bool(command)
        and not looked_around
        and not snippets.inspects_output(command)
        and _output_failed(result.text)
    )
    routine = looked_around and not (failed and _environment(result.text, target))
    routine = routine or (failed and _quota(result.text))
    return Action(
        stream, pos, call, done, done_pos, tool, result, command, target, failed, harness,
        routine,
    )  # fmt: skip


def _output_failed(output: str) -> bool:
    """A command not flagged as an error whose output still shows it did not work, unless it
    also says it succeeded (a wizard that asked questions and then finished). A prompt it
    printed counts only when the output ends there (the command stopped at it): a test that
    answered a prompt printed it too."""
    failed = snippets.shows_failure(output)
    if failed == "asked" and not snippets.ends_at_prompt(output):
        return False
    if not failed:
        return False
    view = snippets.quiet(output)
    return not _SUCCESS_LINE.search(view) and not _all_passed(view[-4000:])


#: A test runner's closing count (`5 passed in 0.3s`, `Tests: 12 passed, 12 total`,
#: `test result: ok.`, `ok  pkg  0.2s`, `# fail 0`) and a count of failures in it.
_PASS_COUNT = re.compile(
    r"(?im)^[^\n]*?(?:\b\d+ (?:passed|passing)\b|\btest result: ok\b|^ok[ \t]+\S+[ \t]+[\d.]+s"
    r"|^#[ \t]*pass[ \t]+\d+|\bTests?:[ \t]+\d+ passed)"
)
_FAIL_COUNT = re.compile(
    r"(?i)\b[1-9]\d* (?:failed|failing|failures?|errors?)\b|^[ \t]*FAIL\b|^#[ \t]*fail[ \t]+[1-9]"
    r"|^[ \t]*--- FAIL|\bFAILED\b",
    re.MULTILINE,
)


def _all_passed(tail: str) -> bool:
    """The output ends with a test run's count of passes and no failure anywhere near it:
    errors logged by tests that passed are not the run failing."""
    return bool(_PASS_COUNT.search(tail)) and not _FAIL_COUNT.search(tail)


_SHELLS = frozenset({"bash", "sh", "zsh", "fish", "dash", "(eval)", "eval", "error", "fatal"})
_SPEAKER = re.compile(r"^[ \t]*([a-z][\w.+-]{1,30}):[ \t]")


def _environment(output: str, target: str) -> bool:
    """A failure that tells something about the machine rather than a wrong path: the
    command is not installed, or the error comes from another program than the one called
    (an alias: `tree` answered by `lsd`)."""
    view = snippets.quiet(output[:4000])
    if re.search(r"command not found|not recognized as an internal", view, re.IGNORECASE):
        return True
    called = target.split()[0] if target else ""
    speaker = _SPEAKER.match(view)
    if speaker is None:
        return False
    return speaker.group(1) not in _SHELLS and speaker.group(1) != called


#: A service's quota or rate limit: the state of an account at that moment.
_QUOTA = re.compile(
    r"\b(?:rate limit(?:ed)?|quota|too many requests|exceeded (?:the |your )?(?:\w+ )?limit"
    r"|limit of \d+ \w+|\b429\b)",
    re.IGNORECASE,
)


def _quota(output: str) -> bool:
    span = snippets.error_gist(output)
    return span is not None and bool(_QUOTA.search(output[span[0] : span[1]]))


def _routine(tool: ToolUse, target: str, command: str = "") -> bool:
    if tool.name in QUIET_TOOLS or tool.name in EDIT_TOOLS or tool.name not in SHELL_TOOLS:
        return True  # reading, editing, or the agent's own tools (MCP servers, a browser)
    if command and (
        _INLINE_SCRIPT.search(snippets.main_stage(command)) or _SCRIPT_ON_STDIN.search(command)
    ):
        return True  # the agent's own throwaway script: its bugs are not the project's
    words = target.split()
    if not words:
        return True
    if words[0] in ROUTINE_PROGRAMS or words[0].endswith("grep"):
        return True  # looking around (any `…grep` is a search)
    return words[0] == "git" and len(words) > 1 and words[1] in _GIT_BOOKKEEPING


def episodes(found: Sequence[Action]) -> Iterator[Episode]:
    """Episodes in the order they started; each failing project action opens or extends the
    episode of its target, edits and installs are the changes of every open episode of their
    stream, and a success on the target closes it."""
    open_: dict[tuple[int, str], Episode] = {}
    started: list[Episode] = []
    for action in found:
        if action.harness is not None:
            continue
        key = (action.stream, action.target)
        if not action.failed and (action.tool.name in EDIT_TOOLS or not action.routine):
            # An edit, an install or another project action that worked: a change for every
            # other open episode of the stream (a deploy, a rollback, a migration, a config).
            for (stream, target), episode in open_.items():
                if stream == action.stream and target != action.target:
                    episode.changes.append(action)
        if action.tool.name in EDIT_TOOLS or action.routine:
            continue
        if action.failed:
            if key in open_:
                open_[key].failures.append(action)
            else:
                open_[key] = Episode(action.target, [action])
                started.append(open_[key])
        elif key in open_:
            open_.pop(key).success = action
    yield from started


def _installs(action: Action) -> bool:
    return bool(action.command) and bool(_INSTALL.match(snippets.main_stage(action.command)))


# --------------------------------------------------------------------------- candidates


def candidates(
    found: Sequence[Action],
) -> tuple[list[Candidate], list[tuple[Candidate, Candidate]]]:
    """DEAD_END and SOLUTION candidates, and the (dead end, solution) pairs to join. Failures
    of routine actions and harness errors are candidates too, marked routine (suppressed)."""
    out: list[Candidate] = []
    pairs: list[tuple[Candidate, Candidate]] = []
    edited = _edited(found)
    written = _written(found)
    for episode in episodes(found):
        runs = _runs(episode)
        made = [(run, dead_end(run)) for run in runs]
        dead_ends = [
            replace(d, routine=d.routine or _hygiene(run, edited, episode))
            for run, d in made
            if d is not None
        ]
        if not dead_ends:
            continue
        fix = solution(episode)
        if fix is not None and not fix.routine and _own_tests_only(episode, edited):
            fix = replace(fix, routine="the agent rewrote its own test until it passed")
        if fix is not None and _hygiene(runs[-1], edited, episode):
            fix = replace(fix, routine=fix.routine or _hygiene(runs[-1], edited, episode))
        why = _own_test(episode, edited)
        why = why or _told(episode)
        if why:  # the failure is no lesson; what made it pass may still be one
            dead_ends = [replace(d, routine=d.routine or why) for d in dead_ends]
        slip = _slip(episode)
        if slip:  # neither the failure nor its fix is a lesson
            dead_ends = [replace(d, routine=d.routine or slip) for d in dead_ends]
            fix = replace(fix, routine=fix.routine or slip) if fix is not None else None
        # The precision bar: what is left must have a shape reviewers approve.
        kept = [run for run, d in made if d is not None]
        if fix is not None:
            fix = replace(fix, unproven=fix.unproven or _unproven_fix(episode, kept, written))
        dead_ends = [
            replace(d, unproven=d.unproven or _unproven(run, d, episode, written))
            for run, d in zip(kept, dead_ends, strict=True)
        ]
        if (
            fix is not None
            and dead_ends[-1].unproven == _SEVERAL_STEPS
            and not _really_changed(episode)
        ):  # the retyped line's difference may be in a step that never failed
            fix = replace(fix, unproven=fix.unproven or _SEVERAL_STEPS_FIX)
        if fix is not None and (dead_ends[-1].unproven or dead_ends[-1].routine):
            fix = _with_symptom(fix, episode)
        out += dead_ends
        if fix is not None:
            out.append(fix)
            pairs.append((dead_ends[-1], fix))
    out += [_mechanics(a) for a in found if a.failed and (a.harness or a.routine)]
    return out, pairs


# --------------------------------------------------------------------------- the precision bar


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
    missing = shapes.missing_package(gist)
    if missing and not _installed(missing, episode):
        return ""  # the environment lacks a dependency, whoever wrote the import
    if _fresh(first, gist, written):
        return "an error in code the session itself had written or edited (work in progress)"
    slipped = _environment_slip(gist, first.command)
    if _alias(gist, first.target, first.command) and not shapes.NOT_INSTALLED.search(gist):
        return ""  # the machine itself speaks: another program answers for the one called
    if slipped and not _really_changed(episode):
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
    return NO_CAUSE


_SEVERAL_STEPS = "a command line of several steps: which one failed is not clear"
_SEVERAL_STEPS_FIX = (
    "the failing command line ran several steps: what the change fixed is not clear"
)
#: Why a dead end with no cause stays out of the queue.
NO_CAUSE = "a failure with no stated cause: its error alone is not a lesson"
_SLIP_END = {
    True: "that the agent got past by retyping the command",
    False: "with no stated cause the session confirms and no fix",
}


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
    called = target.split()[0] if target else ""
    speaker = _SPEAKER.match(view)
    if speaker is None or speaker.group(1) in _SHELLS or speaker.group(1) == called:
        return False
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
    if slipped and not alias and not _really_changed(episode):
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


def _runs(episode: Episode) -> list[Episode]:
    """The episode's failures cut where the error changes: fixing one error often uncovers
    the next, and each is its own dead end (the solution resolves the last)."""
    runs: list[Episode] = []
    last_gist: str | None = None
    for failure in episode.failures:
        gist = _gist_text(failure.result.text)
        if runs and gist == last_gist:
            runs[-1].failures.append(failure)
        else:
            runs.append(Episode(episode.target, [failure]))
        last_gist = gist
    return runs


def _gist_text(output: str) -> str:
    span = snippets.error_gist(output)
    return re.sub(r"\d+", "#", output[span[0] : span[1]]) if span else ""


def dead_end(episode: Episode) -> Candidate | None:
    """What was tried and the gist of how it failed, with the number of attempts that failed
    the same way. A failure the agent then says it wanted (a reproduction, a red test before
    the fix) is kept out."""
    first, last = episode.failures[0], episode.failures[-1]
    span = snippets.error_gist(first.result.text)
    if span is None:
        return None
    line = first.result.text[span[0] : span[1]]
    tries = len(episode.failures)
    what, unclear = _call(first), ""
    if first.command:
        step = _failed_step(first.command, line)
        if step is None:
            unclear = _SEVERAL_STEPS
        elif step:
            what = f"`{snippets.clean(snippets.short_paths(step), 100)}`"
    gist = snippets.clean(snippets.short_paths(snippets.undecorated(line)), 150)
    again = f" ({tries} attempts)" if tries > 1 else ""
    verb = "stops at" if _is_prompt(line) else "fails with"
    cause = "" if first.wanted else _diagnosis(last.said_next) or _late_cause(last, line)
    if cause and bar.novelty(bar.content_words(cause), set(bar.content_words(gist))) < 0.5:
        cause = ""  # it only repeats the error
    if cause and bar.session_voice(cause):
        cause = ""  # "we are in the wrong folder": the session's voice, not a cause to keep
    if cause:  # room for it: the error's gist is shortened
        gist = snippets.clean(snippets.short_paths(snippets.undecorated(line)), 110)
    why = f" — {cause}" if cause else ""
    summary = snippets.fit(f"{what} {verb} {gist.rstrip('.')}{again}{why}")
    return Candidate(
        "episode", "DEAD_END", first.done, first.stream, first.done_pos, span[0], line,
        CONFIDENCE, summary, first.call.line_start, last.done.line_end,
        routine=first.wanted or _glue(line, first) or _bare(line, cause), cause=cause,
        unproven=unclear,
    )  # fmt: skip


#: Steps of a command line that only glue others together (print, move, wait, set up).
_GLUE_PROGRAMS = frozenset(
    "echo printf cd pushd popd source . export set unset sleep true false wait clear".split()
)
_STEP_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_STEP_WORD = re.compile(r"[A-Za-z][\w.-]{3,}")


def _failed_step(command: str, line: str) -> str | None:
    """The step of a command line that the error line comes from: "" when the line runs
    one step (the call describes it), the step's text when another step than the first
    is the one the error names, None when several steps could have said it."""
    text = snippets.HEREDOC_BODY.sub("", command)
    steps = [s for s in _STEP_SPLIT.split(text) if s.strip()]
    working = [s for s in steps if _program_of(s) not in _GLUE_PROGRAMS]
    if len(working) <= 1:
        return ""
    low = line.lower()
    named = [s for s in working if re.search(rf"(?<![\w-]){re.escape(_program_of(s))}\b", low)]
    if len(named) != 1:
        named = [
            s
            for s in working
            if any(w.lower() in low for w in _STEP_WORD.findall(s.split(None, 1)[-1]))
        ]
    if len(named) != 1:
        return None
    return "" if named[0] is working[0] else named[0].strip()


def _program_of(step: str) -> str:
    words = [w for w in step.split() if "=" not in w or w.startswith("-")]
    return words[0].rsplit("/", 1)[-1] if words else ""


def _glue(line: str, failure: Action) -> str:
    """Why the failure is the agent's shell glue, not the project ("" when it is not): the
    line that carries it is spoken by a looking-around program the command line itself
    runs besides its target (`sleep: invalid time interval` after `npx wrangler … & sleep 5
    && echo …`); an alias answering for the target (`tree` run, `lsd` speaks) is the machine."""
    speaker = _SPEAKER.match(line)
    called = failure.target.split()[0] if failure.target else ""
    name = speaker.group(1) if speaker else ""
    if (
        name in ROUTINE_PROGRAMS
        and name != called
        and re.search(rf"(?:^|[\s;&|(]){re.escape(name)}\b", failure.command)
    ):
        return f"the agent's shell glue failed (`{name}`), not the project"
    return ""


#: An assertion that names no test and no value (`error: expect(received).toBe(expected)`).
_BARE_EXPECT = re.compile(
    r"^\W*(?:\S+:\s+)?(?:error:\s*)?expect\(received\)\.\w+\(expected\)\W*$", re.IGNORECASE
)


def _bare(line: str, cause: str) -> str:
    """Why the dead end says nothing a teammate could use ("" when it does): its gist is an
    assertion with no test or value named, and the agent stated no cause."""
    if not cause and _BARE_EXPECT.match(line.strip()):
        return "a bare assertion: no test, value or cause named"
    return ""


def solution(episode: Episode) -> Candidate | None:
    """What changed between the first failing attempt and the one that worked; None when
    the episode never closed. A success with nothing changed is kept as routine (a rerun
    that passed says nothing reusable)."""
    success = episode.success
    if success is None:
        return None
    first = episode.failures[0]
    # What was done in between explains the success better than the retried command's own
    # tweaks; those count only when nothing else changed.
    failed_with = episode.failures[-1].result.text
    narrowed = ""
    changes = _edit_changes(episode.changes, failed_with) + _install_changes(episode.changes)
    if not changes:  # no edit, no install: the last project command run in between (a
        # rollback, a deploy), unless it only looked (`kubectl get pods`) and the command
        # itself changed (the pod name it found)
        changes = _last_command(episode.changes)
        tweaked = _command_changes(first.command, success.command)
        if tweaked and (not changes or _looks(episode.changes)):
            changes = tweaked
            if _narrowed(first.command, success.command):
                narrowed = "the retry only ran a narrower or another target: it fixed nothing"
    # The dead end beside it quotes the error; a solution names it only by its code or class.
    was = _was(failed_with)
    edits = sum(a.tool.name in EDIT_TOOLS for a in episode.changes)
    installs = sum(_installs(a) for a in episode.changes)
    routine = "" if changes else "passed again with nothing changed in between"
    if edits + installs > 1:
        # Which change fixed it is a guess; the agent's own account of the fix (a text
        # node) or the dead end's stated cause says it better than a list of edits.
        routine = f"{edits + installs} changes in between: which one fixed it is not clear"
    if _told(episode):
        routine = "ran what the error said to run"
    if narrowed:
        routine = routine or narrowed
    how = " after " + _join(changes) if changes else " on a rerun"
    summary = snippets.fit(f"{_call(success)} succeeds{how}{was}")
    begin = min([success.call.line_start, *(c.call.line_start for c in episode.changes)])
    span = snippets.output_line(success.result.text, last=True)
    evidence = success.result.text[span[0] : span[1]] if span else success.command
    return Candidate(
        "episode", "SOLUTION", success.done, success.stream, success.done_pos,
        span[0] if span else 0, evidence or _call(success), CONFIDENCE, summary, begin,
        success.done.line_end, routine=routine,
    )  # fmt: skip


def _was(failed_with: str, whole: bool = False) -> str:
    """How the solution names the error it fixed: its code or class, or (`whole`, when no
    dead end beside it reaches the queue) the gist of the error line itself."""
    error = snippets.error_gist(failed_with)
    if error is None:
        return ""
    line = failed_with[error[0] : error[1]]
    if whole:
        gist = snippets.clean(snippets.short_paths(snippets.undecorated(line)), 110)
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


def _mechanics(action: Action) -> Candidate:
    """A harness error or a routine command's failure: kept, suppressed, with the reason."""
    span = snippets.error_gist(action.result.text) or (0, min(len(action.result.text), 200))
    line = action.result.text[span[0] : span[1]] or action.tool.name
    if action.harness:
        reason = f"agent mechanics ({action.harness.why})"
    elif action.tool.name not in SHELL_TOOLS:
        reason = (
            f"agent mechanics (the agent's own tool `{action.tool.name}`, not a project command)"
        )
    elif _quota(action.result.text):
        reason = "a service's quota or rate limit (the moment's account state, not the project)"
    else:
        reason = "a routine command (looking around or a throwaway script, not the project)"
    gist = snippets.clean(snippets.short_paths(snippets.undecorated(line)), 120)
    summary = snippets.fit(f"{_call(action)} failed with {gist}")
    return Candidate(
        "episode", "DEAD_END", action.done, action.stream, action.done_pos, span[0], line,
        0.35, summary, action.call.line_start, action.done.line_end, routine=reason,
    )  # fmt: skip


def _call(action: Action) -> str:
    return snippets.describe(action.tool)


def _is_prompt(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("?") or bool(re.search(r"\((?:y/n|yes/no)\)|\[y/n\]", line, re.I))


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
