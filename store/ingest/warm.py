"""Warm tier (DESIGN §6): fast, offline rules that propose reasoning nodes for a session, and
the knowledge bar that decides which of them a reviewer sees.

Strategies, each run on its own so that one failing never stops the others:

- `episode` (`store.ingest.episodes`): dead ends and solutions from the tool structure — a
  failing action, the attempts on the same target, the one that then worked and what changed
  in between — at 0.60, joined by `resolved`. Agent-harness errors and routine commands are
  kept as suppressed candidates.
- `keywords`, `conclusion`, `correction`, context loads (`store.ingest.statements`): from
  what the agent and the user said; the summary is the finding near the trigger.

Then the bar (`store.ingest.bar`) and a few rules about the session's structure:

- a PIVOT the agent announces needs a failure or a user correction before it (within 8
  messages of its stream): otherwise it is a change of plan, not a pivot;
- a HYPOTHESIS that a later finding of the session settles (they name the same things) is
  not kept; a SOLUTION the agent claims is not kept when the user's next message says it
  still fails;
- a DISCOVERY whose entities appear in the tool output just before it is confirmed (+0.05);
- novelty: a summary that mostly repeats an earlier one of the session does not pass.

Candidates that fail are kept with `suppressed` = the reason (stored, never in the queue).
Nodes of one type on overlapping lines of one file are corroboration: one node is kept (one
that passes the bar first, then the higher confidence), plus 0.05 (capped at 0.75) when two
strategies agree. Edges go forward within a stream: `informed` HYPOTHESIS → next
INVESTIGATION and `triggered_pivot` DEAD_END → next PIVOT (both within 8 messages),
`resolved` from the episodes.

What is read: messages are grouped into streams by file and agent (a subagent file, or
inline sidechain records of old sessions); windows and edges never cross streams.
Compaction summaries, `summary`/`system` records and compaction agents are skipped: they
retell reasoning already in the file. Reasoning types come from assistant text only; tool
output is data, meta messages are injected instructions.

Evidence is verbatim (before redaction, which the caller applies when storing); summaries
are built from redacted, tag-free, one-line text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from store.ingest import bar, episodes, forks, memo, snippets, statements
from store.ingest.candidates import Candidate, changed
from store.ingest.caseblind import CaseBlind
from store.ingest.context import _Context
from store.ingest.statement_bar import _EXPLAINS, _revise, _unproven
from store.models import NODE_TYPES, ExtractedEdge, ExtractedNode, ParsedSession, TranscriptMessage

# Re-exported: the phrase lists are part of the warm tier's documented rules.

KEYWORDS = statements.KEYWORDS


CONCLUSIONS = statements.CONCLUSIONS


FIX_WORDS = statements.FIX_WORDS


_TYPE_ORDER = {name: i for i, name in enumerate(NODE_TYPES)}


_STRATEGY_RANK = {"episode": 0, "correction": 1, "conclusion": 2, "keywords": 3}


_WINDOW = 8  # messages: HYPOTHESIS/DEAD_END → what follows; failure → pivot
_BONUS, _CORROBORATED_CAP = 0.05, 0.75


#: What a change of approach says it did or does.
_PIVOT_ACT = re.compile(
    r"\b(?:switch(?:ed|ing)? (?:to|from)|mov(?:ed|ing) (?:to|away)|f[ae]ll(?:ing)? back"
    r"|went back|go(?:ing)? back|revert(?:ed|ing)?|replac(?:ed|ing)|chang(?:ed|ing) (?:the )?"
    r"approach|(?:i|we) (?:now )?use[sd]?|gave up on|dropp(?:ed|ing)|abandon(?:ed|ing))\b",
    re.IGNORECASE,
)


#: What a stated fix says it changed.
_CHANGE = re.compile(
    r"\b(?:fix(?:ed|es)? (?:by|with)|by (?:\w+ing)|chang(?:ed|ing|e)"
    r"|set(?:ting)?|add(?:ed|ing)|remov(?:ed|ing)|replac(?:ed|ing)|pinn(?:ed|ing)|pin"
    r"|upgrad(?:ed|ing)|downgrad(?:ed|ing)|renam(?:ed|ing)|mov(?:ed|ing)|switch(?:ed|ing)"
    r"|instead|rotat(?:ed|ing)|delet(?:ed|ing)|restor(?:ed|ing)|revert(?:ed|ing)|split"
    r"|wrap(?:ped|ping)|increas(?:ed|ing)|decreas(?:ed|ing)|disabl(?:ed|ing)|enabl(?:ed|ing)"
    r"|install(?:ed|ing)|updat(?:ed|ing)|us(?:e|ed|ing) )|`[^`\n]+`\s*(?:→|->|=>)\s*`",
    re.IGNORECASE,
)


#: A method worth reusing names the command and what it showed.
_COMMAND_SPAN = re.compile(r"`[^`\n]*\s[^`\n]*`|`(?:SELECT|EXPLAIN|git|kubectl|psql|curl)[^`]*`")


_SHOWED = re.compile(
    r"\b(?:shows?|showed|reveal(?:s|ed)?|expos(?:es|ed)|returns?|returned|reports?|reported"
    r"|found|finds|pointed|points|tells?|told)\b",
    re.IGNORECASE,
)


#: What a document says to do.
_RULE = re.compile(
    r"\b(?:says?|according to|per the|requires?|must|should|never|always|forbids?|prefers?)\b",
    re.IGNORECASE,
)


#: The phrase patterns above as conditions, searched fast (see `caseblind`).
_PIVOT_ACT_FAST, _CHANGE_FAST = CaseBlind(_PIVOT_ACT), CaseBlind(_CHANGE)
_SHOWED_FAST, _RULE_FAST = CaseBlind(_SHOWED), CaseBlind(_RULE)


#: The `(follower, edge)` each node type links to when a follower comes next.
_FOLLOWED_BY = {
    "HYPOTHESIS": ("INVESTIGATION", "informed"),
    "DEAD_END": ("PIVOT", "triggered_pivot"),
}


@dataclass(frozen=True)
class WarmResult:
    """What the warm tier proposes for one session, plus the strategies that failed."""

    nodes: tuple[ExtractedNode, ...]
    edges: tuple[ExtractedEdge, ...]
    problems: tuple[str, ...]  # "strategy <name> failed: <error>"


def _episodes(context: _Context) -> None:
    found, pairs = episodes.candidates(context.actions)
    found += forks.forks(context.actions)
    context.found += found
    context.resolved += pairs


def _keywords(context: _Context) -> None:
    context.found += statements.keywords(context.walk())


def _conclusions(context: _Context) -> None:
    context.found += statements.conclusions(context.walk())


def _corrections(context: _Context) -> None:
    context.found += statements.corrections(context.streams)


def _context_loads(context: _Context) -> None:
    context.found += statements.context_loads(context.walk())


_STRATEGIES: tuple[tuple[str, Callable[[_Context], None]], ...] = (
    ("episode", _episodes),
    ("keywords", _keywords),
    ("conclusion", _conclusions),
    ("correction", _corrections),
    ("context", _context_loads),
)


# --------------------------------------------------------------------------- public


def extract_warm(session: ParsedSession) -> WarmResult:
    """Warm-tier nodes and edges for `session`; deterministic (same input, same keys, order)."""
    with memo.session():
        return _extract(session)


def _extract(session: ParsedSession) -> WarmResult:
    context = _context(session.messages)
    problems: list[str] = []
    for name, strategy in _STRATEGIES:
        before = (len(context.found), len(context.resolved))
        try:
            strategy(context)
        except Exception as exc:  # a heuristic bug must not cost the other strategies
            del context.found[before[0] :], context.resolved[before[1] :]
            problems.append(f"strategy {name} failed: {type(exc).__name__}: {exc}")
    try:
        judged = _judge(context)
    except Exception as exc:
        problems.append(f"strategy bar failed: {type(exc).__name__}: {exc}")
        judged = {id(c): c for c in context.found}
    kept, owner = _corroborate(list(judged.values()))
    kept = _deduplicated(kept)
    pairs = [
        (owner[id(judged[id(d)])], owner[id(judged[id(s)])])
        for d, s in context.resolved
        if id(d) in judged and id(s) in judged
    ]
    edges = [ExtractedEdge(d.key, s.key, "resolved") for d, s in pairs if d is not s]
    try:
        edges += _sequence_edges(kept)
    except Exception as exc:
        problems.append(f"strategy edges failed: {type(exc).__name__}: {exc}")
    return WarmResult(tuple(_node(c) for c in kept), _ordered_edges(edges, kept), tuple(problems))


# --------------------------------------------------------------------------- context


def _context(messages: Sequence[TranscriptMessage]) -> _Context:
    streams: dict[tuple[str, str], list[TranscriptMessage]] = {}
    for message in messages:
        if not _skipped(message):
            streams.setdefault(_stream_key(message), []).append(message)
    return _Context(tuple(map(tuple, streams.values())))


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


# --------------------------------------------------------------------------- the bar


def _judge(context: _Context) -> dict[int, Candidate]:
    """Every candidate with its informativeness and, when it fails, why; keyed by the id of
    the candidate as a strategy made it (pairs refer to those)."""
    ordered = sorted(context.found, key=_order)
    causes: dict[int, list[tuple[int, set[str]]]] = {}  # per stream, in message order
    for c in ordered:
        if c.cause:
            causes.setdefault(c.stream, []).append((c.pos, set(bar.content_words(c.cause))))
    turns = _turning_points(ordered)
    restructured = [_restructured(c, turns) for c in ordered]
    twins = _twins(restructured, ordered)
    out: dict[int, Candidate] = {}
    seen_words: set[str] = set()  # in the text summaries that passed, messages before this one
    this_message: set[str] = set()
    message = -1
    for found, c in zip(ordered, restructured, strict=True):
        if found.message.index != message:
            seen_words |= this_message
            this_message, message = set(), found.message.index
        if id(found) in twins:
            c = changed(c, routine=twins[id(found)])
        if c.strategy != "episode" and not c.routine and _stated_cause(c, causes):
            c = changed(c, routine="the cause the DEAD_END before it states")
        words = bar.content_words(c.summary)
        # Episodes name their command again by design (a solution repeats its dead end's).
        fresh = 1.0 if c.strategy == "episode" else bar.novelty(words, seen_words)
        if c.strategy != "episode" and _recap(c.message) and fresh < _RECAP_NOVELTY:
            c = changed(c, routine=c.routine or "restates what the session already found")
        confirmed = c.type == "DISCOVERY" and _confirmed(c, context)
        verdict = bar.judge(
            c.summary,
            routine=c.routine,
            novelty=fresh,
            confirmed=confirmed,
            said=c.strategy != "episode",
            voice=c.strategy != "correction",
        )
        if c.strategy != "episode" and (verdict.passes or verdict.reason.startswith(_NAMEABLE)):
            named = _resolved(c, context)  # only what may reach the queue is worth the search
            if named is not c:
                c = named
                verdict = bar.judge(
                    c.summary,
                    novelty=fresh,
                    confirmed=confirmed,
                    said=True,
                    voice=c.strategy != "correction",
                )
        if verdict.passes and c.type == "HYPOTHESIS" and not _explains(c.summary):
            verdict = replace(verdict, reason="a guess that explains nothing (a name or a plan)")
        if verdict.passes and c.unproven:
            verdict = replace(verdict, reason=c.unproven)
        if verdict.passes and c.strategy != "episode":
            unproven = _unproven(changed(c, informativeness=verdict.informativeness), context)
            if unproven:
                verdict = replace(verdict, reason=unproven)
        confidence = c.confidence
        if confirmed and verdict.passes:
            confidence = round(min(confidence + _BONUS, _CORROBORATED_CAP), 2)
        out[id(found)] = changed(
            c,
            informativeness=verdict.informativeness,
            suppressed=verdict.reason,
            confidence=confidence,
        )
        if verdict.passes and c.strategy != "episode":
            # What the agent said before, not what it ran: a wrap-up that states a fix in
            # words says more than the episode's mechanical summary of the same edits.
            this_message.update(words)
    return _revise(out, context)


#: "the pod", "the export's": a thing the session named earlier, by a bare noun.
_BARE_THE = re.compile(
    r"\b([Tt]he) ([a-z][a-z-]{2,24})(?='s\b|[.,;:)]|$|\s+(?:is|are|was|were|has|had|holds?|ran"
    r"|runs?|uses?|used|calls?|in|on|of|at|during|for|with|to|from|and|but|that|which|while"
    r"|after|before|still|never|only|itself)\b)"
)


#: Nouns that never stand for one thing the session named.
_NOT_NAMED = frozenset(
    """user agent model session issue problem fix bug reason cause same other first last next
    whole rest following previous above below following end start beginning way case time
    result results output code change changes test tests error errors""".split()
)


_LOOKBACK = 60  # messages of the stream searched for where a bare noun was named


#: Verdicts a name from earlier in the session may change.
_NAMEABLE = ("names no file", "not self-contained")


def _resolved(c: Candidate, context: _Context) -> Candidate:
    """`c` with the session-local things it names by a bare noun ("the pod", "the export")
    given the name the session used for them earlier ("the `api-7f9` pod", "the
    `settlement` export"): the reader never saw the session. A noun the session never named
    is left as it is (a component the project knows by that name)."""
    if "he " not in c.summary:  # what `_BARE_THE` needs
        return c
    nouns = [m for m in _BARE_THE.finditer(c.summary) if m.group(2) not in _NOT_NAMED]
    if not nouns:
        return c
    messages = context.streams[c.stream]
    before = [
        m.text
        for m in messages[max(0, c.pos - _LOOKBACK) : c.pos + 1]
        if m.text and (m.role == "assistant" or statements.is_prompt(m))
    ]
    summary = c.summary
    for m in reversed(nouns):  # from the end, so earlier offsets stay valid
        name = _named(m.group(2), before, c.summary)
        if name:
            summary = (
                f"{summary[: m.start()]}{m.group(1)} `{name}` {m.group(2)}{summary[m.end() :]}"
            )
    if summary == c.summary:
        return c
    return changed(c, summary=snippets.fit(summary))


def _named(noun: str, texts: Sequence[str], summary: str) -> str:
    """The code-span name written right next to `noun` most recently in `texts` ("the
    `orders` export", "pod `api-7f9`"), unless the summary already names it."""
    near = _naming(noun)
    for text in reversed(texts):
        if noun not in text:
            continue
        found = [g1 or g2 for g1, g2 in near.findall(text)]
        if found:
            name = found[-1]
            return "" if f"`{name}`" in summary else name
    return ""


@lru_cache(maxsize=256)
def _naming(noun: str) -> re.Pattern[str]:
    word = re.escape(noun)
    return re.compile(rf"`([^`\n]{{2,60}})`[ \t]+{word}s?\b|\b{word}[ \t]+`([^`\n]{{2,60}})`")


def _explains(summary: str) -> bool:
    return bar.CAUSAL_FAST.search(summary) or bool(_EXPLAINS.search(summary))


def _stated_cause(c: Candidate, causes: dict[int, list[tuple[int, set[str]]]]) -> bool:
    """Whether `c` says what a dead end before it already ends with (its stated cause);
    `causes` holds each stream's stated causes by position, in order."""
    earlier = causes.get(c.stream, [])
    if not earlier or earlier[0][0] >= c.pos:
        return False  # no stated cause before it (most candidates): no words to weigh
    words = bar.content_words(c.summary)
    if not words:
        return False
    for pos, said in earlier:
        if pos >= c.pos:
            return False
        if bar.novelty(words, said) <= 0.2:
            return True
    return False


#: Which type a sentence is, when two strategies read it as different types (the finding
#: first, the act of looking last).
_TYPE_PRIORITY = {
    name: i
    for i, name in enumerate(
        (
            "SOLUTION",
            "DISCOVERY",
            "DEAD_END",
            "PIVOT",
            "HYPOTHESIS",
            "CONTEXT_LOAD",
            "INVESTIGATION",
        )
    )
}


def _twins(typed: Sequence[Candidate], original: Sequence[Candidate]) -> dict[int, str]:
    """Text candidates of one message with the same summary under different types: all but
    the one of the most telling type are kept out (by the id of the original candidate)."""
    groups: dict[tuple[int, str], list[int]] = {}
    for i, c in enumerate(typed):
        if c.strategy != "episode" and not c.routine:
            groups.setdefault((c.message.index, c.summary), []).append(i)
    out: dict[int, str] = {}
    for members in groups.values():
        if len({typed[i].type for i in members}) < 2:
            continue
        best = min(members, key=lambda i: _TYPE_PRIORITY[typed[i].type])
        for i in members:
            if typed[i].type != typed[best].type:
                out[id(original[i])] = f"the same finding as the {typed[best].type} of this message"
    return out


#: A wrap-up message ("**Root cause.** … **Fixed.** …") restates the session: only what is
#: mostly new there is kept.
_RECAP_NOVELTY = 0.6


_RECAP_MARK = re.compile(r"(?m)^\s*(?:#{1,6}\s|\*\*[^*\n]{1,40}[.:]?\*\*|[-*]\s+\*\*)")


def _recap(m: TranscriptMessage) -> bool:
    """A wrap-up: a message with several headings or bold labels."""
    return _is_recap(m.text)


@memo.per_session
def _is_recap(text: str) -> bool:
    return len(_RECAP_MARK.findall(text)) >= 2


def _turning_points(found: Sequence[Candidate]) -> dict[int, list[int]]:
    """Positions, per stream, of what a pivot answers: a project action that failed, or a
    user's correction."""
    points: dict[int, list[int]] = {}
    for c in found:
        failed = c.strategy == "episode" and c.type == "DEAD_END" and not c.routine
        if failed or c.strategy == "correction":
            points.setdefault(c.stream, []).append(c.pos)
    return points


def _restructured(c: Candidate, turns: dict[int, list[int]]) -> Candidate:
    """The session's structure and the sentence's function applied to a text candidate.

    - An announced PIVOT answers a failure or a user's correction in the 8 messages before
      it and says what it changes to; otherwise a sentence that states a fact (the
      "instead" in "uses `title` instead of `text`") is a DISCOVERY.
    - A SOLUTION the agent states must say what changed: "the build succeeded" is a report.
    - A CONTEXT_LOAD the agent states is a fact about a document unless it says what the
      document made it do (a cause or a rule); reading one is narration.
    Narration stays what it is; the bar keeps it out."""
    if c.routine or c.strategy not in ("keywords", "conclusion") or bar.is_narration(c.summary):
        return c
    if c.type == "PIVOT":
        answers = any(0 <= c.pos - at <= _WINDOW for at in turns.get(c.stream, []))
        return c if answers and _PIVOT_ACT_FAST.search(c.summary) else changed(c, type="DISCOVERY")
    if c.type == "SOLUTION" and not _CHANGE_FAST.search(c.summary):
        return changed(c, routine="says it worked, not what changed")
    if c.type == "CONTEXT_LOAD" and not (
        bar.CAUSAL_FAST.search(c.summary) or _RULE_FAST.search(c.summary)
    ):
        return changed(c, type="DISCOVERY")
    if c.type == "INVESTIGATION" and not (
        _COMMAND_SPAN.search(c.summary) and _SHOWED_FAST.search(c.summary)
    ):
        return changed(c, routine="a look around, not a method worth reusing")
    return c


def _confirmed(c: Candidate, context: _Context) -> bool:
    """Some entity the discovery names appears in a tool result just before it."""
    named = [e for e in bar.entities(c.summary) if len(e) > 3]
    if not named:
        return False
    messages = context.streams[c.stream]
    outputs = " ".join(
        m.text.lower() for m in messages[max(0, c.pos - 4) : c.pos] if m.kind == "tool_result"
    )
    return any(e in outputs for e in named)


def _corroborate(found: list[Candidate]) -> tuple[list[Candidate], dict[int, Candidate]]:
    """One node per type and overlapping range of a stream (a thread of one file: subagent
    messages relayed between a call and its result are another thread); `owner` maps each
    candidate (by id) to its survivor."""
    by_place = sorted(found, key=lambda c: (c.stream, c.type, c.line_start, c.line_end, _order(c)))
    kept: list[Candidate] = []
    owner: dict[int, Candidate] = {}
    group: list[Candidate] = []
    place: tuple[int, str, int] = (-1, "", -1)  # stream, type and last line of the group
    for c in by_place:
        same = c.stream == place[0] and c.type == place[1] and c.line_start <= place[2]
        if group and not same:
            kept.append(_survivor(group, owner))
            group = []
        group.append(c)
        place = (c.stream, c.type, max(c.line_end, place[2]) if len(group) > 1 else c.line_end)
    if group:
        kept.append(_survivor(group, owner))
    return sorted(kept, key=_order), owner


#: Share of a node's content words an earlier node of the session's type must hold for the
#: two to be one lesson (of the smaller word set).
_NEAR_IDENTICAL = 0.8


_DEDUP_WINDOW = 40  # earlier nodes of the type compared (a session rarely holds more)


def _deduplicated(kept: list[Candidate]) -> list[Candidate]:
    """Passing nodes of one type that say nearly the same thing as an earlier one of the
    session (the same error from two commands, a finding restated later): only the first
    stays in the queue; the others are suppressed with the reason."""
    seen: dict[str, list[set[str]]] = {}
    out: list[Candidate] = []
    for c in kept:
        # A dead end is its error: the same error line from another command is one lesson.
        error = c.strategy == "episode" and c.type == "DEAD_END"
        words = set(bar.content_words(c.evidence if error else c.summary))
        if not c.suppressed and len(words) >= (3 if error else 4):
            earlier = seen.setdefault(c.type, [])
            recent = earlier[-_DEDUP_WINDOW:]
            if any(len(words & w) >= _NEAR_IDENTICAL * min(len(words), len(w)) for w in recent):
                c = changed(c, suppressed=f"nearly repeats an earlier {c.type} of the session")
            else:
                earlier.append(words)
        out.append(c)
    return out


def _survivor(group: list[Candidate], owner: dict[int, Candidate]) -> Candidate:
    best = max(
        group,
        key=lambda c: (not c.suppressed, c.confidence, -_STRATEGY_RANK[c.strategy], -c.anchor),
    )
    agreeing = {c.strategy for c in group if not c.routine}
    if len(agreeing) > 1 and not best.suppressed:  # two strategies agree: corroborated
        boosted = min(best.confidence + _BONUS, _CORROBORATED_CAP)
        best = changed(best, confidence=round(max(best.confidence, boosted), 2))
    for c in group:
        owner[id(c)] = best
    return best


def _order(c: Candidate) -> tuple[int, int, int, int, int]:
    return (
        c.message.index,
        c.line_start,
        c.anchor,
        _TYPE_ORDER[c.type],
        _STRATEGY_RANK[c.strategy],
    )


def _sequence_edges(nodes: list[Candidate]) -> list[ExtractedEdge]:
    """`informed` and `triggered_pivot`: each waiting source → the next follower, forward only."""
    edges: list[ExtractedEdge] = []
    streams: dict[int, list[Candidate]] = {}
    for c in nodes:
        streams.setdefault(c.stream, []).append(c)
    for members in streams.values():
        members.sort(key=lambda c: (c.pos, c.anchor, _TYPE_ORDER[c.type]))
        waiting: dict[str, list[Candidate]] = {source: [] for source in _FOLLOWED_BY}
        for c in members:
            for source, (follower, edge) in _FOLLOWED_BY.items():
                if c.type == follower:
                    close = [s for s in waiting[source] if c.pos - s.pos <= _WINDOW]
                    edges += [ExtractedEdge(s.key, c.key, edge) for s in close]
                    waiting[source] = []
            if c.type in waiting:
                waiting[c.type].append(c)
    return edges


def _ordered_edges(edges: list[ExtractedEdge], nodes: list[Candidate]) -> tuple[ExtractedEdge, ...]:
    rank = {c.key: i for i, c in enumerate(nodes)}
    unique = {
        (e.source, e.target, e.type): e for e in edges if e.source in rank and e.target in rank
    }
    return tuple(sorted(unique.values(), key=lambda e: (rank[e.source], rank[e.target], e.type)))


def _node(c: Candidate) -> ExtractedNode:
    return ExtractedNode(
        key=c.key,
        type=c.type,
        summary=c.summary,
        evidence=c.evidence,
        file=c.file,
        line_start=c.line_start,
        line_end=c.line_end,
        confidence=c.confidence,
        tier="warm",
        strategy=c.strategy,
        informativeness=c.informativeness,
        suppressed=c.suppressed,
    )
