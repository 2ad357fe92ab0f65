"""A session as the warm tier reads it (issue 11): its streams (a thread of one file: the
main agent, a subagent file, inline sidechains), the candidates the strategies found, the
tool calls with their results, and per stream the evidence the precision bar checks a
statement against — what tool output showed (never the agent's own edits echoed back), what
the agent edited (its work in progress), where a shell command ran.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from store.ingest import snippets, statements
from store.ingest.actions import EDIT_TOOLS, Action, still_fails
from store.ingest.actions import actions as tool_calls
from store.ingest.candidates import Candidate
from store.models import TranscriptMessage


@dataclass
class _Context:
    """The session cut into streams."""

    streams: tuple[tuple[TranscriptMessage, ...], ...]
    found: list[Candidate] = field(default_factory=list)
    resolved: list[tuple[Candidate, Candidate]] = field(default_factory=list)
    _actions: list[Action] | None = None
    _evidence: dict[int, _Evidence] = field(default_factory=dict)

    _reports: frozenset[str] | None = None

    @property
    def reports(self) -> frozenset[str]:
        """The openings of what subagents handed back (the results of the calls that
        started them)."""
        if self._reports is None:
            self._reports = frozenset(
                _head(a.result.text) for a in self.actions if a.tool.name in _SUBAGENT_TOOLS
            )
        return self._reports

    @property
    def actions(self) -> list[Action]:
        if self._actions is None:
            self._actions = tool_calls(self.streams)
        return self._actions

    def evidence(self, stream: int) -> _Evidence:
        """What the stream's tool calls showed and changed, for the precision bar."""
        if stream not in self._evidence:
            self._evidence[stream] = _Evidence.of([a for a in self.actions if a.stream == stream])
        return self._evidence[stream]

    def walk(self) -> Iterator[tuple[int, int, TranscriptMessage]]:
        for stream, messages in enumerate(self.streams):
            for pos, message in enumerate(messages):
                yield stream, pos, message


#: Tools that start a subagent: their result is the subagent's report.
_SUBAGENT_TOOLS = frozenset({"Task", "Agent"})


#: Tools whose output is the agent's own words or edits echoed back, not evidence.
_NOT_EVIDENCE = EDIT_TOOLS | {"TodoWrite", "TodoRead", "Task", "Agent", "ExitPlanMode"}


_OUTPUT_CHARS = 8_000  # of each end of a tool's output, searched for what a statement names


_EVIDENCE_WINDOW = 40  # messages before a statement whose tool output may bear it out


_WORK_WINDOW = 30  # messages before a statement whose edits count as work in progress


@dataclass(frozen=True)
class _Evidence:
    """One stream's tool calls, as the precision bar reads them: what each call's output
    and command said (lowercased, by the position of its result), what the agent's edits
    put in or took out (by position), and which results closed an earlier failure."""

    outputs: tuple[tuple[int, str], ...]
    runs: dict[int, Action]  # result position -> a shell command's action
    edits: tuple[tuple[int, str], ...]
    closed: frozenset[int]  # result positions of a command that passed after failing
    edited: tuple[tuple[int, str], ...] = ()  # (position, file name) of each edit

    @classmethod
    def of(cls, actions: Sequence[Action]) -> _Evidence:
        outputs: list[tuple[int, str]] = []
        edits: list[tuple[int, str]] = []
        edited: list[tuple[int, str]] = []
        runs: dict[int, Action] = {}
        failed: dict[str, str] = {}  # target -> the output it last failed with
        closed: set[int] = set()
        for a in actions:
            if a.tool.name in EDIT_TOOLS:
                fields = snippets.inputs(a.tool)
                said = " ".join(fields.get(k, "") for k in ("old_string", "new_string", "content"))
                edits.append((a.pos, said.lower()))
                edited.append((a.pos, snippets.file_name(a.target).lower()))
                continue
            if a.tool.name in _NOT_EVIDENCE:
                continue
            text = a.result.text
            if len(text) > 2 * _OUTPUT_CHARS:
                text = text[:_OUTPUT_CHARS] + "\n" + text[-_OUTPUT_CHARS:]
            outputs.append((a.done_pos, f"{a.command}\n{text}".lower()))
            if a.command:
                runs[a.done_pos] = a
                if a.failed and not a.routine:
                    failed[a.target] = a.result.text
                elif a.target in failed and not still_fails(a, failed[a.target]):
                    del failed[a.target]
                    closed.add(a.done_pos)
        return cls(tuple(outputs), runs, tuple(edits), frozenset(closed), tuple(edited))

    def shown(self, named: Sequence[str], before: int) -> bool:
        """Whether a tool's output shortly before `before` shows one of `named`."""
        return any(
            e in text
            for pos, text in self.outputs
            if before - _EVIDENCE_WINDOW <= pos < before
            for e in named
        )

    def worked_on(self, named: Sequence[str], before: int) -> bool:
        """Whether the agent's own edits shortly before `before` put in or took out one of
        `named` (the statement is about its work in progress)."""
        return any(
            e in said
            for pos, said in self.edits
            if before - _WORK_WINDOW <= pos < before
            for e in named
        )

    def changing(self, named: Sequence[str], before: int) -> str:
        """The file among `named` the agent edited shortly before `before` ("" if none)."""
        files = {e.rsplit("/", 1)[-1] for e in named if "." in e}
        return next(
            (
                name
                for pos, name in self.edited
                if before - _WORK_WINDOW <= pos < before and name in files
            ),
            "",
        )

    def last_run(self, messages: Sequence[TranscriptMessage], pos: int) -> int | None:
        """Position of the shell command's result the message at `pos` is the agent's first
        text after (None when the agent said something else in between, or it follows no
        command)."""
        for back in range(pos - 1, max(-1, pos - 8), -1):
            prior = messages[back]
            if prior.kind == "tool_result":
                return back if back in self.runs else None
            if statements.is_prompt(prior) or (prior.role == "assistant" and prior.text):
                return None
        return None


def _head(text: str) -> str:
    return " ".join(text.split())[:160]
