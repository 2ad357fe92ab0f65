"""The tool structure of a session (issue 11): every tool call with its result, whether it
failed (a result flagged `is_error`, or output that shows a failure), what it acts on (a
command family or a file), whether it is routine (looking around, the agent's own tools and
scripts) or the harness's own error, and the episodes they make: a failing action opens one
on its target, further failures are its attempts, edits and installs are its changes, and a
success on the target closes it. `store.ingest.episodes` turns episodes into nodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from store.ingest import shapes, snippets, statements
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
    flagged = result.is_error and not (command and harness is None and _passed(result.text))
    failed = flagged or (
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


def _passed(output: str) -> bool:
    """A flagged result whose output is a test run that passed: the exit code came from
    something else (a pipe, a coverage report), and no line carries a failure."""
    if "pass" not in output.lower() and "ok" not in output.lower():
        return False
    view = snippets.quiet(output)
    span = snippets.error_gist(output)
    gist = view[span[0] : span[1]] if span else ""
    bare = not gist or shapes.bare_gist(gist) or bool(_PASS_COUNT.search(gist))
    return bare and _all_passed(view[-4000:])


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
    called = next(iter(target.split()), "")
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
        elif key in open_ and not still_fails(action, open_[key].failures[-1].result.text):
            open_.pop(key).success = action
    yield from started


def still_fails(action: Action, failed_with: str) -> bool:
    """Whether a run on a failing target that no flag marked as failed still carries the
    failure in its output: its exit status came from the pipe's last stage (`… | tail`,
    `| grep`, `| tee`) or a `|| true`, not from the command. It shows a compiler's, a test
    runner's or a runtime's failure, or the class of the error it had failed with (`error
    TS2307`, `ModuleNotFoundError`) where no closing count of passes says otherwise; then
    it is no success and closes nothing."""
    output = action.result.text
    if _output_failed(output):
        return True
    named = snippets.error_class(failed_with)
    return bool(named) and named in output and not _all_passed(snippets.quiet(output)[-4000:])


def _installs(action: Action) -> bool:
    return bool(action.command) and bool(_INSTALL.match(snippets.main_stage(action.command)))


def _program_of(step: str) -> str:
    words = [w for w in step.split() if "=" not in w or w.startswith("-")]
    return words[0].rsplit("/", 1)[-1] if words else ""
