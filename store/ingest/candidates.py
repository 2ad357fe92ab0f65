"""A node the warm tier proposes, while it is still tied to its messages (shared by the
strategies in `episodes`, `statements` and the orchestration in `warm`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar, cast

from store.models import TranscriptMessage
from store.models.quick import quick_init

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    _D = TypeVar("_D", bound=DataclassInstance)


@quick_init  # a few thousand per session: built through the instance dict (no slots)
@dataclass(frozen=True, eq=False)
class Candidate:
    """One proposed node: where it is (stream, position, lines), what it quotes, how sure the
    rules are (`confidence`), its summary, and — when the bar keeps it out of the queue —
    why (`suppressed`)."""

    strategy: str
    type: str
    message: TranscriptMessage  # the message it is anchored on (orders nodes)
    stream: int
    pos: int  # position of `message` in its stream
    anchor: int  # offset of the trigger in the message's text: orders nodes within it
    evidence: str  # verbatim transcript text
    confidence: float
    summary: str
    line_start: int
    line_end: int
    #: Why the action it reports is routine or agent mechanics ("" when it is not).
    routine: str = ""
    informativeness: float = 0.0
    suppressed: str = ""  # why it is kept out of the pending queue ("" = it passes)
    #: A dead end's cause as the agent stated it right after (its summary ends with it).
    cause: str = ""
    #: Why it has none of the shapes reviewers approve (the precision bar, `store.ingest.
    #: shapes`), "" when it has one: checked after the knowledge bar, so narration and the
    #: like keep their own reason.
    unproven: str = ""

    @property
    def file(self) -> str:
        return self.message.file

    @property
    def key(self) -> str:
        return f"warm:{self.strategy}:{self.file}:{self.line_start}-{self.line_end}:{self.type}"


_NAMES = frozenset(f.name for f in fields(Candidate))


def changed(c: Candidate, **changes: Any) -> Candidate:
    """`dataclasses.replace(c, **changes)` at a fraction of its cost (the bar makes a few of
    these per candidate): the instance dict copied, as the frozen `__init__` would fill it."""
    if not changes.keys() <= _NAMES:
        raise TypeError(f"Candidate has no field {sorted(changes.keys() - _NAMES)[0]!r}")
    new = object.__new__(Candidate)
    state = vars(new)
    state.update(vars(c))
    state.update(changes)
    return new


def replace(obj: _D, /, **changes: Any) -> _D:
    """`dataclasses.replace`, through `changed` for a candidate (the rules copy each one a
    few times, and `dataclasses.replace` walks the fields every time)."""
    if isinstance(obj, Candidate) and type(obj) is Candidate:
        return cast("_D", changed(obj, **changes))
    return dataclasses.replace(obj, **changes)
