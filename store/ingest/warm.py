"""Warm tier (DESIGN §6): fast, offline heuristics that propose reasoning nodes for a session.

Three strategies, each run on its own so that one failing never stops the others:

- `keywords`: phrases per node type (`KEYWORDS`, all types found in one pass of a
  precompiled regex) in the agent's own text; confidence `0.35 + 0.1·k` for k distinct
  phrases of that type in the message, capped at 0.70.
- `error_resolution`: a failed tool result followed, within 8 messages of the same stream, by
  a successful result of the same tool on the same target (same command, same file) or by an
  assistant message with SOLUTION phrases: DEAD_END + SOLUTION at 0.60, joined by `resolved`.
- `conclusion`: "I found that…", "the issue was…", "it turns out…" at 0.65; SOLUTION when the
  sentence states a fix, else DISCOVERY.

Nodes of one type on overlapping lines of one file are corroboration: one node is kept, the
higher confidence, plus 0.05 (capped at 0.75) when two different strategies agree. Edges go
forward within a stream: `informed` HYPOTHESIS → next INVESTIGATION and `triggered_pivot`
DEAD_END → next PIVOT (both within 8 messages), `resolved` from the pairing.

What is read, and why:

- Streams: messages are grouped by file and agent (a subagent file, or inline sidechain
  records of old sessions); windows and edges never cross streams. Positions count only the
  messages kept below.
- Compaction summaries, `summary`/`system` records and compaction agents
  (`agent-acompact-*`) are skipped entirely: they retell reasoning already in the file, so
  mining them would duplicate nodes at the wrong lines.
- The six reasoning types come from assistant text only. User prompts state wishes ("make the
  tests pass"), tool output is data (a README saying "maybe"), meta messages are injected
  instructions (skill bodies): none of them is the agent reasoning.
- CONTEXT_LOAD also reads the first line of skill bodies ("Base directory for this skill:")
  and "Launching skill:" tool results.

Evidence is verbatim (before redaction, which the caller applies when storing); summaries
are built from redacted, tag-free, one-line text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from store.ingest.redact import redact
from store.models import (
    NODE_TYPES,
    ExtractedEdge,
    ExtractedNode,
    ParsedSession,
    ToolResult,
    ToolUse,
    TranscriptMessage,
)
from store.text import one_line

#: Phrases per node type (each in one type only), matched case-insensitively on word
#: boundaries, any run of whitespace between words, `'` also matching `’`. A phrase right after
#: "not", "n't", "no" or "never" does not count ("not fixed", "no solution").
KEYWORDS: dict[str, tuple[str, ...]] = {
    "HYPOTHESIS": (
        "i think", "maybe", "might be", "could be", "may be", "my guess", "i guess",
        "hypothesis", "suspect", "perhaps", "possibly", "probably", "i wonder", "i believe",
        "it seems", "seems like", "my theory", "presumably",
    ),
    "INVESTIGATION": (
        "let me check", "let me look", "let me see", "let me examine", "let me inspect",
        "let me search", "let me read", "let me verify", "let me explore", "let me investigate",
        "look into", "looking at", "looking into", "checking", "investigating", "searching for",
        "reading", "grep", "inspecting", "examining", "digging into", "tracing",
    ),
    "DISCOVERY": (
        "found", "turns out", "notice that", "i notice", "noticed", "discovered", "i see",
        "interesting", "root cause", "the culprit", "reveals", "shows that", "confirms",
        "confirmed", "realize", "realized", "the reason",
    ),
    "PIVOT": (
        "instead", "different approach", "another approach", "alternative approach",
        "alternatively", "let's try", "let me try", "try a different", "switch to",
        "switching to", "fall back", "falling back", "workaround", "rather than",
        "another way", "a different way", "go back to", "revert",
    ),
    "DEAD_END": (
        "doesn't work", "didn't work", "does not work", "did not work", "not working",
        "won't work", "still failing", "still fails", "still broken", "still getting",
        "still seeing", "no luck", "same error", "dead end", "didn't help", "did not help",
        "doesn't help", "no effect", "failed again", "not the issue", "not the problem",
        "that wasn't it", "gave up",
    ),
    "SOLUTION": (
        "fixed", "the fix", "works now", "now works", "working now", "resolved", "solved",
        "solution", "tests pass", "tests passed", "tests now pass", "passing now",
        "now passes", "that did it", "that worked", "this worked", "succeeded",
    ),
    "CONTEXT_LOAD": (
        "base directory for this skill:", "launching skill:", "claude.md", "agents.md",
        "skill.md", "read the readme", "reading the readme", "check the readme",
        "read the docs", "reading the docs", "check the docs", "the docs say",
        "read the documentation", "reading the documentation", "check the documentation",
        "the documentation says", "according to the", "per the docs", "project instructions",
        "project conventions", "load the skill", "loaded the skill", "loading the skill",
        "using the skill",
    ),
}  # fmt: skip

#: Openings of an explicit conclusion (strategy `conclusion`).
CONCLUSIONS: tuple[str, ...] = (
    "i found that", "i've found that", "i have found that", "i discovered that",
    "i realized that", "it turns out", "turns out that", "the issue was", "the issue is",
    "the problem was", "the problem is", "the root cause is", "the root cause was",
    "root cause:", "the culprit is", "the culprit was", "the bug was", "the bug is",
    "the reason is", "the reason was", "the fix is", "the fix was", "the solution is",
    "the solution was",
)  # fmt: skip
#: A conclusion sentence with one of these states a fix: SOLUTION, not DISCOVERY.
FIX_WORDS: tuple[str, ...] = (
    "fix", "fixed", "fixes", "fixing", "resolve", "resolved", "resolves", "solved",
    "solution", "works now", "now works", "tests pass", "tests now pass", "passing now",
)  # fmt: skip

_LABELS = {
    "HYPOTHESIS": "Hypothesis",
    "INVESTIGATION": "Investigation",
    "DISCOVERY": "Discovery",
    "PIVOT": "Pivot",
    "DEAD_END": "Dead end",
    "SOLUTION": "Solution",
    "CONTEXT_LOAD": "Context",
}
_TYPE_ORDER = {name: i for i, name in enumerate(NODE_TYPES)}
_STRATEGY_RANK = {"conclusion": 0, "error_resolution": 1, "keywords": 2}  # ties: specific first

_WINDOW = 8  # messages: error → resolution, and HYPOTHESIS/DEAD_END → what follows
_PAIRED = 0.60
_CONCLUDED = 0.65
_KEYWORD_CAP = 0.70
_BONUS, _CORROBORATED_CAP = 0.05, 0.75
_EVIDENCE_CHARS = 400
_SUMMARY_CHARS = 200
_SKILL_BASE = "Base directory for this skill:"
_LAUNCHING = "Launching skill:"

#: The `(follower, edge)` each node type links to when a follower comes next.
_FOLLOWED_BY = {
    "HYPOTHESIS": ("INVESTIGATION", "informed"),
    "DEAD_END": ("PIVOT", "triggered_pivot"),
}


class _Hit(NamedTuple):
    phrase: str  # as listed, whatever the case, spacing or apostrophe in the text
    start: int
    end: int


class _Phrases:
    """A phrase list as one precompiled regex shaped like a trie.

    Python's regex engine tries every alternative at every position, so seven flat
    alternations (one per node type) run at ~3 MB/s; one trie over all phrases, anchored on
    the non-word character before a phrase, runs at ~30 MB/s. Matching is done on
    `" " + lowercased text`, so offsets in that string are text offsets + 1.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        self.listed = frozenset(phrases)
        self.pattern = re.compile(r"\W" + _trie(self.listed))

    def hits(self, padded: str, start: int = 0, end: int | None = None) -> list[_Hit]:
        """Phrases in text[start:end] that are not negated, in text order."""
        stop = len(padded) if end is None else end + 1
        found: list[_Hit] = []
        for m in self.pattern.finditer(padded, start, stop):
            at = m.start()  # the non-word character before the phrase: text offset of it + 1
            if padded[max(0, at - 5) : at + 1].endswith(_NEGATIONS):
                continue
            phrase = padded[at + 1 : m.end()]
            if phrase not in self.listed:  # odd spacing or a curly apostrophe
                phrase = " ".join(phrase.split()).replace("’", "'")
            found.append(_Hit(phrase, at, m.end() - 1))
        return found


def _trie(phrases: Iterable[str]) -> str:
    root: dict[str, Any] = {}
    for phrase in phrases:
        node = root
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}  # a phrase ends here
    return _trie_node(root, "")


def _trie_node(node: dict[str, Any], last: str) -> str:
    # Longer phrases first; a phrase ending in a letter must end a word.
    alternatives = [_trie_char(c) + _trie_node(child, c) for c, child in sorted(node.items()) if c]
    if "" in node:
        alternatives.append(r"(?!\w)" if last.isalnum() else "")
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"


def _trie_char(char: str) -> str:
    return {" ": r"\s+", "'": "['’]"}.get(char) or re.escape(char)


def _padded(text: str) -> str:
    """What `_Phrases` match: lowercased with offsets kept, after one leading space."""
    low = text.lower()
    # A few characters (İ) lowercase to two; offsets into `text` must stay valid.
    return " " + (low if len(low) == len(text) else text.translate(_ASCII_LOWER))


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
_NEGATIONS = ("not ", "n't ", "n’t ", "no ", "never ")
_PHRASE_TYPE = {phrase: name for name, phrases in KEYWORDS.items() for phrase in phrases}
_KEYWORD = _Phrases(_PHRASE_TYPE)
_CONCLUSION = _Phrases(CONCLUSIONS)
_FIX = _Phrases(FIX_WORDS)


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class WarmResult:
    """What the warm tier proposes for one session, plus the strategies that failed."""

    nodes: tuple[ExtractedNode, ...]
    edges: tuple[ExtractedEdge, ...]
    problems: tuple[str, ...]  # "strategy <name> failed: <error>"


@dataclass(frozen=True, eq=False, slots=True)
class _Found:
    """A node proposed by one strategy, still tied to its message and stream position."""

    strategy: str
    type: str
    message: TranscriptMessage
    stream: int
    pos: int  # position in the stream
    anchor: int  # offset of the trigger in its text: orders nodes within one message
    evidence: str
    confidence: float
    summary: str = ""  # "" = from the evidence, made only for nodes that survive corroboration

    @property
    def key(self) -> str:
        m = self.message
        return f"warm:{self.strategy}:{m.file}:{m.line_start}-{m.line_end}:{self.type}"


@dataclass
class _Outcome:
    found: list[_Found] = field(default_factory=list)
    resolved: list[tuple[_Found, _Found]] = field(default_factory=list)  # DEAD_END, SOLUTION


@dataclass
class _Context:
    """The session cut into streams, with tool calls looked up by id."""

    streams: tuple[tuple[TranscriptMessage, ...], ...]
    tools: dict[str, ToolUse]
    _signatures: dict[str, tuple[str, str]] = field(default_factory=dict)

    def walk(self) -> Iterator[tuple[int, int, TranscriptMessage]]:
        for stream, messages in enumerate(self.streams):
            for pos, message in enumerate(messages):
                yield stream, pos, message

    def signature(self, tool_use_id: str) -> tuple[str, str] | None:
        """(tool name, target) of a call: what "the same tool" means for a resolution."""
        tool = self.tools.get(tool_use_id)
        if tool is None:
            return None
        if tool_use_id not in self._signatures:
            self._signatures[tool_use_id] = (tool.name, _target_of(tool))
        return self._signatures[tool_use_id]


_Strategy = Callable[[_Context], _Outcome]


# --------------------------------------------------------------------------- public


def extract_warm(session: ParsedSession) -> WarmResult:
    """Warm-tier nodes and edges for `session`; deterministic (same input, same keys, order)."""
    context = _context(session.messages)
    outcomes: list[_Outcome] = []
    problems: list[str] = []
    for name, strategy in _STRATEGIES:
        try:
            outcomes.append(strategy(context))
        except Exception as exc:  # a heuristic bug must not cost the other strategies
            problems.append(f"strategy {name} failed: {type(exc).__name__}: {exc}")
    kept, owner = _corroborate([f for outcome in outcomes for f in outcome.found])
    pairs = [(owner[d], owner[s]) for outcome in outcomes for d, s in outcome.resolved]
    edges = [ExtractedEdge(d.key, s.key, "resolved") for d, s in pairs]
    try:
        edges += _sequence_edges(kept)
    except Exception as exc:
        problems.append(f"strategy edges failed: {type(exc).__name__}: {exc}")
    return WarmResult(tuple(_node(f) for f in kept), _ordered_edges(edges, kept), tuple(problems))


# --------------------------------------------------------------------------- context


def _context(messages: Sequence[TranscriptMessage]) -> _Context:
    streams: dict[tuple[str, str], list[TranscriptMessage]] = {}
    tools: dict[str, ToolUse] = {}
    for message in messages:
        for tool in message.tool_uses:
            tools[tool.id] = tool
        if not _skipped(message):
            streams.setdefault(_stream_key(message), []).append(message)
    return _Context(tuple(map(tuple, streams.values())), tools)


def _skipped(m: TranscriptMessage) -> bool:
    """Retellings and bookkeeping: compaction summaries and agents, summary/system records."""
    return (
        m.kind == "compact"
        or m.role in ("summary", "system")
        or m.agent_id.startswith("acompact")
        or "agent-acompact-" in m.file
    )


def _stream_key(m: TranscriptMessage) -> tuple[str, str]:
    # Old sessions inline sidechain records in the main file; they are another agent's thread.
    return m.file, m.agent_id or ("sidechain" if m.is_sidechain else "")


def _is_reasoning(m: TranscriptMessage) -> bool:
    return m.role == "assistant" and not m.is_meta and bool(m.text)


def _is_skill_body(m: TranscriptMessage) -> bool:
    return m.role == "user" and m.text.lstrip().startswith(_SKILL_BASE)


# --------------------------------------------------------------------------- strategy: keywords


def _keywords(context: _Context) -> _Outcome:
    outcome = _Outcome()
    for stream, pos, message in context.walk():
        for types, start, end in _keyword_regions(message):  # at most one region
            hits = _KEYWORD.hits(_padded(message.text), start, end)
            for name, distinct in _by_type(hits).items():
                if name in types:
                    outcome.found.append(_keyword_node(name, message, stream, pos, distinct))
    return outcome


def _keyword_regions(m: TranscriptMessage) -> Iterator[tuple[Sequence[str], int, int]]:
    """Which node types to look for, and where, in a message."""
    if _is_reasoning(m):
        yield NODE_TYPES, 0, len(m.text)
    elif _is_skill_body(m):  # its first line says which skill; the body is instructions
        start = m.text.find(_SKILL_BASE)
        yield ("CONTEXT_LOAD",), start, _line_end(m.text, start)
    elif m.kind == "tool_result" and (start := m.text.find(_LAUNCHING)) >= 0:
        yield ("CONTEXT_LOAD",), start, _line_end(m.text, start)


def _by_type(hits: list[_Hit]) -> dict[str, list[_Hit]]:
    """The first hit of each distinct phrase, grouped by node type, in text order."""
    seen: set[str] = set()
    grouped: dict[str, list[_Hit]] = {}
    for hit in hits:
        if hit.phrase not in seen:
            seen.add(hit.phrase)
            grouped.setdefault(_PHRASE_TYPE[hit.phrase], []).append(hit)
    return grouped


def _keyword_node(
    name: str, m: TranscriptMessage, stream: int, pos: int, hits: list[_Hit]
) -> _Found:
    lo, hi = _sentences(m.text, hits[0][1:], hits[-1][1:])
    evidence = m.text[lo:hi]
    confidence = round(min(0.35 + 0.1 * len(hits), _KEYWORD_CAP), 2)
    return _Found("keywords", name, m, stream, pos, hits[0].start, evidence, confidence)


def _summary(name: str, evidence: str) -> str:
    """A node's summary made from its evidence."""
    return (name == "CONTEXT_LOAD" and _context_summary(evidence)) or _labelled(name, evidence)


def _context_summary(evidence: str) -> str:
    """Skill loads read better by name than as the raw line."""
    for opening, verb in ((_SKILL_BASE, "loaded"), (_LAUNCHING, "launched")):
        if evidence.startswith(opening):
            where = evidence[len(opening) :].strip()
            name = _clean(where.rstrip("/\\").rsplit("/", 1)[-1], 80)
            return _fit(f"Context: {verb} skill `{name}`")
    return ""


# --------------------------------------------------------------------------- strategy: errors


def _error_resolution(context: _Context) -> _Outcome:
    outcome = _Outcome()
    for stream, pos, message in context.walk():
        for result in message.tool_results:
            if result.is_error:
                _pair(context, outcome, stream, pos, result)
    return outcome


def _pair(context: _Context, outcome: _Outcome, stream: int, pos: int, error: ToolResult) -> None:
    """Look up to _WINDOW messages ahead for what resolved `error`."""
    messages = context.streams[stream]
    wanted = context.signature(error.tool_use_id)
    for later in range(pos + 1, min(pos + 1 + _WINDOW, len(messages))):
        fix = _resolution(context, messages[later], stream, later, wanted)
        if fix is not None:
            dead = _dead_end(context, messages[pos], stream, pos, error)
            if dead is not None:
                outcome.found += (dead, fix)
                outcome.resolved.append((dead, fix))
            return


def _resolution(
    context: _Context,
    m: TranscriptMessage,
    stream: int,
    pos: int,
    wanted: tuple[str, str] | None,
) -> _Found | None:
    """A SOLUTION at `m`: the same call succeeding, or the agent saying it is fixed."""
    for result in m.tool_results:
        if result.is_error or wanted is None or context.signature(result.tool_use_id) != wanted:
            continue
        span = _output_line(result.text, last=wanted[0] == "Bash")  # Bash ends with a verdict
        if span is not None:
            tool = context.tools[result.tool_use_id]
            line = result.text[span[0] : span[1]]
            # Output is often a listing; quote it only when it reads as a verdict.
            verdict = f": {_clean(line, 90)}" if _VERDICT.search(line) else ""
            summary = _fit(f"Solution: {_describe(tool)} succeeded{verdict}")
            return _Found(
                "error_resolution", "SOLUTION", m, stream, pos, span[0], line, _PAIRED, summary
            )
    if not _is_reasoning(m):
        return None
    hits = [h for h in _KEYWORD.hits(_padded(m.text)) if _PHRASE_TYPE[h.phrase] == "SOLUTION"]
    if not hits:
        return None
    lo, hi = _sentences(m.text, hits[0][1:], hits[0][1:])
    evidence = m.text[lo:hi]
    return _Found("error_resolution", "SOLUTION", m, stream, pos, hits[0].start, evidence, _PAIRED)


def _dead_end(
    context: _Context, m: TranscriptMessage, stream: int, pos: int, error: ToolResult
) -> _Found | None:
    span = _error_line(error.text)
    if span is None:
        return None  # an empty error has no evidence to show
    line = error.text[span[0] : span[1]]
    tool = context.tools.get(error.tool_use_id)
    what = _describe(tool) if tool is not None else "A tool call"
    summary = _fit(f"Dead end: {what} failed with {_clean(line, 110)}")
    return _Found("error_resolution", "DEAD_END", m, stream, pos, span[0], line, _PAIRED, summary)


# --------------------------------------------------------------------------- strategy: conclusions


def _conclusions(context: _Context) -> _Outcome:
    outcome = _Outcome()
    for stream, pos, message in context.walk():
        if _is_reasoning(message):
            outcome.found += _message_conclusions(message, stream, pos)
    return outcome


def _message_conclusions(m: TranscriptMessage, stream: int, pos: int) -> list[_Found]:
    """At most one DISCOVERY and one SOLUTION per message: the first of each."""
    padded = _padded(m.text)
    found: dict[str, _Found] = {}
    for hit in _CONCLUSION.hits(padded):
        lo, hi = _sentences(m.text, hit[1:], hit[1:])
        name = "SOLUTION" if _FIX.hits(padded, lo, hi) else "DISCOVERY"
        if name not in found:
            evidence = m.text[lo:hi]
            found[name] = _Found(
                "conclusion", name, m, stream, pos, hit.start, evidence, _CONCLUDED
            )
            if len(found) == 2:
                break
    return list(found.values())


_STRATEGIES: tuple[tuple[str, _Strategy], ...] = (
    ("keywords", _keywords),
    ("error_resolution", _error_resolution),
    ("conclusion", _conclusions),
)


# --------------------------------------------------------------------------- merge and edges


def _corroborate(found: list[_Found]) -> tuple[list[_Found], dict[_Found, _Found]]:
    """One node per type and overlapping range of a file; `owner` maps each to its survivor."""
    by_place = sorted(
        found, key=lambda f: (f.message.file, f.type, f.message.line_start, f.message.line_end)
    )
    kept: list[_Found] = []
    owner: dict[_Found, _Found] = {}
    group: list[_Found] = []
    place: tuple[str, str, int] = ("", "", -1)  # file, type and last line of the group
    for f in by_place:
        m = f.message
        if group and not (m.file == place[0] and f.type == place[1] and m.line_start <= place[2]):
            kept.append(_survivor(group, owner))
            group = []
        group.append(f)
        place = (m.file, f.type, max(m.line_end, place[2]) if len(group) > 1 else m.line_end)
    if group:
        kept.append(_survivor(group, owner))
    return sorted(kept, key=_order), owner


def _survivor(group: list[_Found], owner: dict[_Found, _Found]) -> _Found:
    best = max(group, key=lambda f: (f.confidence, -_STRATEGY_RANK[f.strategy], -f.anchor))
    if len({f.strategy for f in group}) > 1:  # two strategies agree: corroborated
        boosted = min(best.confidence + _BONUS, _CORROBORATED_CAP)
        best = replace(best, confidence=round(max(best.confidence, boosted), 2))
    for f in group:
        owner[f] = best
    return best


def _order(f: _Found) -> tuple[int, int, int, int]:
    return f.message.index, f.anchor, _TYPE_ORDER[f.type], _STRATEGY_RANK[f.strategy]


def _sequence_edges(nodes: list[_Found]) -> list[ExtractedEdge]:
    """`informed` and `triggered_pivot`: each waiting source → the next follower, forward only."""
    edges: list[ExtractedEdge] = []
    streams: dict[int, list[_Found]] = {}
    for f in nodes:
        streams.setdefault(f.stream, []).append(f)
    for members in streams.values():
        members.sort(key=lambda f: (f.pos, f.anchor, _TYPE_ORDER[f.type]))
        waiting: dict[str, list[_Found]] = {source: [] for source in _FOLLOWED_BY}
        for f in members:
            for source, (follower, edge) in _FOLLOWED_BY.items():
                if f.type == follower:
                    close = [s for s in waiting[source] if f.pos - s.pos <= _WINDOW]
                    edges += [ExtractedEdge(s.key, f.key, edge) for s in close]
                    waiting[source] = []
            if f.type in waiting:
                waiting[f.type].append(f)
    return edges


def _ordered_edges(edges: list[ExtractedEdge], nodes: list[_Found]) -> tuple[ExtractedEdge, ...]:
    rank = {f.key: i for i, f in enumerate(nodes)}
    unique = {(e.source, e.target, e.type): e for e in edges}
    return tuple(sorted(unique.values(), key=lambda e: (rank[e.source], rank[e.target], e.type)))


def _node(f: _Found) -> ExtractedNode:
    m = f.message
    return ExtractedNode(
        key=f.key,
        type=f.type,
        summary=f.summary or _summary(f.type, f.evidence),
        evidence=f.evidence,
        file=m.file,
        line_start=m.line_start,
        line_end=m.line_end,
        confidence=f.confidence,
        tier="warm",
        strategy=f.strategy,
    )


# --------------------------------------------------------------------------- evidence

_SENTENCE_END = re.compile(r"[.!?](?=[\s)\"'*_`]|$)|\n")
_BULLET = re.compile(r"[ \t\r\n]*(?:(?:[-*+>]|\d{1,3}[.)]|#{1,6})[ \t]+)?")


def _sentences(text: str, first: tuple[int, int], last: tuple[int, int]) -> tuple[int, int]:
    """The sentence(s) from the one holding `first` to the one holding `last`, at most
    _EVIDENCE_CHARS long (only the first sentence, or a window of it, when longer)."""
    lo = _sentence_start(text, first[0])
    hi = _sentence_end(text, last[1])
    if hi - lo > _EVIDENCE_CHARS:
        hi = _sentence_end(text, first[1])
    if hi - lo > _EVIDENCE_CHARS:  # one giant sentence: a window around the trigger
        lo = max(lo, first[0] - _EVIDENCE_CHARS // 4)
        hi = min(hi, lo + _EVIDENCE_CHARS)
    lead = _BULLET.match(text, lo, hi)
    lo = lead.end() if lead and lead.end() <= first[0] else lo
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    return lo, hi


def _sentence_start(text: str, at: int) -> int:
    floor = max(0, at - _EVIDENCE_CHARS)
    cut = max(
        text.rfind("\n", floor, at),
        text.rfind(". ", floor, at),
        text.rfind("! ", floor, at),
        text.rfind("? ", floor, at),
    )
    return cut + 1 if cut >= 0 else floor


def _sentence_end(text: str, at: int) -> int:
    hi = _next_break(text, at)
    last = hi
    while last > at and text[last - 1].isspace():
        last -= 1
    if text[last - 1 : last] == ":":  # "The root cause is:" — the point is what follows
        hi = _next_break(text, hi + 1)
    return hi


def _next_break(text: str, at: int) -> int:
    limit = min(len(text), at + _EVIDENCE_CHARS)
    m = _SENTENCE_END.search(text, at, limit)
    if m is None:
        return limit
    return m.start() if m.group() == "\n" else m.end()


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


# Python and JS exception lines (`E   ImportError: …`, `TypeError: …`).
_EXCEPTION_LINE = re.compile(
    r"(?m)^[ \t]*(?:E[ \t]+)?(?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception|Failure)\b[^\n]*"
)
_ERRORISH_LINE = re.compile(
    r"(?im)^(?![ \t]*(?:npm[ \t]+)?warn)[^\n]*?\b(?:error|errors|failed|failure|fatal|cannot"
    r"|can't|could not|couldn't|denied|not found|no such|invalid|unable|refused|timed out"
    r"|exception|panic|not allowed|has not been)\b[^\n]*"
)
_NOISE_LINE = re.compile(r"(?i)[ \t]*(?:exit code -?\d+)?[ \t\r]*")
_EDGE_TAGS = re.compile(r"(?:<[\w-]+>[ \t]*)+")
_END_TAGS = re.compile(r"(?:[ \t]*</[\w-]+>)+[ \t\r]*$")


def _error_line(text: str) -> tuple[int, int] | None:
    """The first meaningful line of an error: an exception, else an error-ish line, else the
    first line that is not just "Exit code N". Reminders and escapes are not lines."""
    view = _quiet(text)
    m = _EXCEPTION_LINE.search(view) or _ERRORISH_LINE.search(view)
    if m is not None:
        return _trimmed(view, *m.span())
    return _output_line(text, last=False, view=view)


def _output_line(text: str, last: bool, view: str | None = None) -> tuple[int, int] | None:
    """The first (or last) non-blank line that says something, trimmed and bounded."""
    view = _quiet(text) if view is None else view
    for start, end in _line_spans(view, reverse=last):
        if not _NOISE_LINE.fullmatch(view, start, end):
            span = _trimmed(view, start, end)
            if span is not None:
                return span
    return None


def _quiet(text: str) -> str:
    """`text` with ANSI escapes and injected blocks (system reminders) blanked out: same
    length, so offsets found in it cut verbatim evidence out of `text`."""
    if "\x1b" not in text and "<" not in text:
        return text
    text = _ANSI.sub(_blank, text)
    return _DROPPED_BLOCKS.sub(_blank, text) if "<" in text else text


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def _line_spans(text: str, reverse: bool) -> Iterator[tuple[int, int]]:
    """(start, end) of each line, from the end when `reverse`, without splitting the text."""
    if not reverse:
        start = 0
        while start <= len(text):
            end = _line_end(text, start)
            yield start, end
            start = end + 1
        return
    end = len(text)
    while end >= 0:
        start = text.rfind("\n", 0, end) + 1
        yield start, end
        end = start - 1


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The line without surrounding whitespace and tool tags, at most _EVIDENCE_CHARS."""
    lead = _EDGE_TAGS.match(text, start, end)
    start = lead.end() if lead else start
    tail = _END_TAGS.search(text, start, end)
    end = tail.start() if tail else end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, min(end, start + _EVIDENCE_CHARS)) if end > start else None


# --------------------------------------------------------------------------- summaries

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?|\x1b.?")
_DROPPED_BLOCKS = re.compile(
    r"<(system-reminder|local-command-caveat|command-message)>.{0,20000}?</\1>", re.DOTALL
)
_TOOL_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?:\s[^<>]{0,200})?/?>")
_EMPHASIS = re.compile(r"\*\*|^#{1,6}\s+", re.MULTILINE)  # not `__`: __init__.py
_INPUT_FIELD = re.compile(
    r'"(command|file_path|notebook_path|path|pattern|url|skill)"\s*:\s*"((?:[^"\\]|\\.)*)'
)
_RUNNERS = frozenset(
    "npx npm pnpm yarn bun bunx uv uvx poetry pipenv python python3 node deno go cargo make"
    " docker git kubectl bundle rake mix dotnet gradle mvn just".split()
)
_PREFIX_WORDS = frozenset({"sudo", "time", "env", "exec", "command"})
_CD_PREFIX = re.compile(r"^(?:cd[ \t]+[^\s;&|]+[ \t]*&&[ \t]*)+")
_VERDICT = re.compile(
    r"(?i)\b(?:pass(?:ed|es)?|ok|success(?:ful(?:ly)?)?|succeeded|done|built|compiled"
    r"|completed?|fixed|updated|created|no (?:errors|issues|problems)|0 (?:errors|failed))\b|[✓✔]"
)


def _clean(text: str, limit: int) -> str:
    """One readable line: secrets redacted first (before any cut), tool XML, ANSI escapes
    and Markdown emphasis gone, whitespace folded, at most `limit` characters."""
    text = redact(text)
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "<" in text:
        text = _TOOL_TAG.sub(" ", _DROPPED_BLOCKS.sub(" ", text))
    return _one_line(_EMPHASIS.sub("", text), limit)


def _one_line(text: str, limit: int) -> str:
    """`store.text.one_line`, with a fast path for the usual printable text."""
    text = " ".join(text.split())
    if not text.isprintable():  # control or invisible characters: escape them
        return one_line(text, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _labelled(name: str, evidence: str) -> str:
    label = _LABELS[name]
    return _fit(f"{label}: {_clean(evidence, _SUMMARY_CHARS - len(label) - 3)}")


def _fit(summary: str) -> str:
    """At most _SUMMARY_CHARS, ending as a sentence does (or with the cut's "…")."""
    summary = _one_line(summary, _SUMMARY_CHARS - 1).rstrip(":;, ")
    return summary if summary.endswith((".", "!", "?", "…")) else summary + "."


def _inputs(tool: ToolUse) -> dict[str, str]:
    """String fields of a tool's input; the JSON may be cut short, so no full parse."""
    fields: dict[str, str] = {}
    for name, raw in _INPUT_FIELD.findall(tool.input_text):
        try:
            fields.setdefault(name, json.loads(f'"{raw}"'))
        except ValueError:
            fields.setdefault(name, raw)
    return fields


def _target_of(tool: ToolUse) -> str:
    """What a call acts on: the program a command runs, or the file, pattern or skill."""
    fields = _inputs(tool)
    if "command" in fields:
        return _program(fields["command"])
    for name in ("file_path", "notebook_path", "path", "pattern", "url", "skill"):
        if name in fields:
            return fields[name]
    return tool.skill


def _program(command: str) -> str:
    """`cd app && npm run build | tail` → "npm run": the last step's program (and subcommand)."""
    step = re.split(r"&&|\|\||;|\n", command)[-1].split("|")[0]
    words = step.split()
    while words and (words[0] in _PREFIX_WORDS or "=" in words[0]):  # sudo, FOO=1
        words.pop(0)
    if not words:
        return ""
    head = words[0].rsplit("/", 1)[-1]
    rest = [w for w in words[1:] if not w.startswith("-")]
    return f"{head} {rest[0]}" if head in _RUNNERS and rest else head


def _describe(tool: ToolUse) -> str:
    """A call as a summary names it: "`pytest tests/api`", "Edit of `app/page.tsx`"."""
    fields = _inputs(tool)
    if "command" in fields:
        first = _CD_PREFIX.sub("", fields["command"].strip()).split("\n", 1)[0]
        return f"`{_clean(first, 80)}`"
    for name in ("file_path", "notebook_path", "path", "pattern", "url"):
        if name in fields:
            return f"{tool.name} of `{_clean(fields[name], 80)}`"
    skill = fields.get("skill") or tool.skill
    return f"{tool.name} `{_clean(skill, 60)}`" if skill else _clean(tool.name, 40) or "A tool call"
