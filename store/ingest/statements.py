"""Candidates from what the agent and the user *said* (the warm tier's text strategies).

- `keywords`: phrases per node type (`KEYWORDS`, one precompiled trie) in the agent's own
  text; confidence `0.35 + 0.1·k` for k distinct phrases of that type, capped at 0.70.
- `conclusions`: "I found that…", "the issue was…", "it turns out…" at 0.65; SOLUTION when
  the sentence states a fix, else DISCOVERY.
- `corrections`: the user stopping or declining a tool call, or opening a message with "no,",
  "don't", "instead": a PIVOT carrying the user's words (0.65). A human correction is the
  strongest signal a session has.
- `context`: skill loads (`Base directory for this skill:`, `Launching skill:`): kept as
  routine (the session's skill use is recorded elsewhere).

A trigger only says *where* to look. The summary is the *finding* near it: the sentence, in
the trigger's sentences or the two after them, that names the most specific things and does
not narrate intent ("Let me…", "I'll…", "Perfect!"); openers such as "I can see that" are cut
off, so the summary is the fact itself. Whether that fact is worth a reviewer's time is
`store.ingest.bar`'s call, made by the orchestration in `warm`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from store.ingest import bar, snippets
from store.ingest.candidates import Candidate
from store.ingest.caseblind import CaseBlind
from store.ingest.memo import per_session
from store.ingest.redact import redact
from store.models import ToolUse, TranscriptMessage

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

#: Openings of an explicit conclusion (strategy `conclusions`).
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
#: How a user opens a correction of what the agent just did.
CORRECTION = re.compile(
    r"^\s*(?:no\b[\s,.!:-]|nope\b|don'?t\b|do not\b|stop\b|wait\b|instead\b|actually,?\s"
    r"|that'?s (?:not|wrong)\b|not (?:that|like that|this)\b|wrong\b|never\b|please don'?t\b"
    r"|you (?:should|shouldn'?t|need to|must)\b|use\s+\S+\s+(?:instead|not)\b)",
    re.IGNORECASE,
)
#: What a finding sentence is introduced with; cut, so the summary is the fact.
_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|great|perfect|excellent|good|ah|oh|hmm|interesting|so|now|right)"
    r"[\s,!.:—-]+)*(?:(?:i\s+(?:can\s+)?see\s+(?:now\s+)?(?:that\s+)?|i\s+notice(?:d)?\s+"
    r"(?:that\s+)?|i(?:'ve| have)?\s+found\s+(?:out\s+)?(?:that\s+)?|i\s+discovered\s+"
    r"(?:that\s+)?|i\s+realized\s+(?:that\s+)?|it\s+turns\s+out\s+(?:that\s+)?|turns\s+out"
    r"\s+(?:that\s+)?|looks\s+like\s+|it\s+looks\s+like\s+|this\s+(?:shows|confirms|means)"
    r"\s+(?:that\s+)?|the\s+(?:issue|problem|bug|reason)\s+is\s+(?:clear\s*[—:-]\s*|that\s+)"
    r"|on\s+second\s+thought,?\s+|(?:my\s+(?:first\s+)?guess\s+is|i\s+(?:think|believe|suspect))"
    r"\s+(?:that\s+)?)"
    r"[\s,]*)+",
    re.IGNORECASE,
)
_INNER_LEAD = re.compile(
    r"[,;:]\s*(?:and\s+)?(?:i\s+(?:can\s+)?see\s+(?:now\s+)?that|i\s+notice(?:d)?\s+that"
    r"|i(?:'ve| have)?\s+found\s+(?:out\s+)?that|i\s+realized\s+that|it\s+turns\s+out"
    r"(?:\s+that)?|which\s+(?:shows|means)\s+that)\s+",
    re.IGNORECASE,
)
#: What stands in front of a statement and is not part of it: bullets, arrows, check marks
#: and emoji, a banner drawn as a word and a rule (`★ Insight ─────`), an interjection set
#: off by a dash ("Confirmed —", "Found it —", "Noted —"). Cut, so the bar reads the
#: statement itself ("✅ It removes …" leans on an earlier sentence).
_OPENING_MARKS = re.compile(
    r"^(?:[\s\-*•→>\u2013\u2014\u2190-\u21ff\u2500-\u27bf\u2b00-\u2bff\U0001f300-\U0001faff\ufe0f]"
    r"|(?<![\w])[A-Z][A-Za-z]{1,15}(?:\s[A-Za-z]{1,15})?\s*[\u2500-\u257f]{3,}"
    r"|(?:found it|confirmed|noted|got it|exactly|correct|right|yes|indeed|verified)\s*[—–]"
    r"|(?:found it|confirmed|noted|got it|verified)\s*[.!:]\s)+",
    re.IGNORECASE,
)
#: A label in front of the statement: a few plain words and a colon (no code, path or number,
#: which would make it part of the statement: "`request<T>` defaults to any: …").
_LABEL = re.compile(r"([A-Za-z][A-Za-z' -]{1,48}):\s+(?=\S)")
_VERBS = frozenset({"is", "are", "was", "were", "be", "means", "says"})  # a lead-in, not a label
HEDGE = re.compile(
    r"\b(?:might|may|could|probably|likely|perhaps|possibly|seems?|appears?|i think|i suspect"
    r"|i guess|i believe|presumably|maybe)\b",
    re.IGNORECASE,
)
_HEDGED = CaseBlind(HEDGE)  # as a condition, searched fast (see `caseblind`)


_NEGATIONS = ("not ", "n't ", "n’t ", "no ", "never ")
_SKILL_BASE = "Base directory for this skill:"
_LAUNCHING = "Launching skill:"
_KEYWORD_CAP, _CONCLUDED, _CORRECTED = 0.70, 0.65, 0.65
_FINDING_LOOKAHEAD = 2  # sentences after the trigger's where the finding may be


class _Hit(NamedTuple):
    phrase: str  # as listed, whatever the case, spacing or apostrophe in the text
    start: int
    end: int


class Phrases:
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


def padded(text: str) -> str:
    """What `Phrases` match: lowercased with offsets kept, after one leading space."""
    low = text.lower()
    # A few characters (İ) lowercase to two; offsets into `text` must stay valid.
    return " " + (low if len(low) == len(text) else text.translate(_ASCII_LOWER))


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}
PHRASE_TYPE = {phrase: name for name, phrases in KEYWORDS.items() for phrase in phrases}
KEYWORD = Phrases(PHRASE_TYPE)
CONCLUSION = Phrases(CONCLUSIONS)
FIX = Phrases(FIX_WORDS)


# --------------------------------------------------------------------------- messages


def is_reasoning(m: TranscriptMessage) -> bool:
    return m.role == "assistant" and not m.is_meta and bool(m.text)


def is_skill_body(m: TranscriptMessage) -> bool:
    return m.role == "user" and m.text.lstrip().startswith(_SKILL_BASE)


def is_prompt(m: TranscriptMessage) -> bool:
    """Something the user typed (not a tool result, not injected)."""
    return m.role == "user" and m.kind == "prompt" and not m.is_meta and bool(m.text.strip())


Walk = Iterable[tuple[int, int, TranscriptMessage]]


# --------------------------------------------------------------------------- keywords


def keywords(walk: Walk) -> list[Candidate]:
    found: list[Candidate] = []
    for stream, pos, message in walk:
        if not is_reasoning(message):
            continue
        hits = KEYWORD.hits(padded(message.text))
        for name, distinct in _by_type(hits).items():
            if name == "CONTEXT_LOAD" and not distinct:
                continue
            found.append(_keyword_node(name, message, stream, pos, distinct))
    return found


def _by_type(hits: list[_Hit]) -> dict[str, list[_Hit]]:
    """The first hit of each distinct phrase, grouped by node type, in text order."""
    seen: set[str] = set()
    grouped: dict[str, list[_Hit]] = {}
    for hit in hits:
        if hit.phrase not in seen:
            seen.add(hit.phrase)
            grouped.setdefault(PHRASE_TYPE[hit.phrase], []).append(hit)
    return grouped


def _keyword_node(
    name: str, m: TranscriptMessage, stream: int, pos: int, hits: list[_Hit]
) -> Candidate:
    lo, hi = snippets.sentences(m.text, hits[0][1:], hits[-1][1:])
    confidence = round(min(0.35 + 0.1 * len(hits), _KEYWORD_CAP), 2)
    summary, hedged = finding(m.text, lo, hi, ahead=name in ("DISCOVERY", "CONTEXT_LOAD"))
    kind = "HYPOTHESIS" if hedged and name in ("DISCOVERY", "INVESTIGATION") else name
    return Candidate(
        "keywords", kind, m, stream, pos, hits[0].start, m.text[lo:hi], confidence, summary,
        m.line_start, m.line_end,
    )  # fmt: skip


# --------------------------------------------------------------------------- conclusions


def conclusions(walk: Walk) -> list[Candidate]:
    """At most one DISCOVERY and one SOLUTION per message: the first of each."""
    found: list[Candidate] = []
    for stream, pos, m in walk:
        if not is_reasoning(m):
            continue
        low = padded(m.text)
        kinds: dict[str, Candidate] = {}
        for hit in CONCLUSION.hits(low):
            lo, hi = snippets.sentences(m.text, hit[1:], hit[1:])
            name = "SOLUTION" if FIX.hits(low, lo, hi) else "DISCOVERY"
            if name not in kinds:
                summary, hedged = finding(m.text, lo, hi, ahead=False)
                if hedged and name == "DISCOVERY":
                    name = "HYPOTHESIS"  # "the issue might be that …" is a guess
                if name in kinds:
                    continue
                kinds[name] = Candidate(
                    "conclusion", name, m, stream, pos, hit.start, m.text[lo:hi], _CONCLUDED,
                    summary, m.line_start, m.line_end,
                )  # fmt: skip
                if len(kinds) == 2:
                    break
        found += kinds.values()
    return found


# --------------------------------------------------------------------------- corrections


def corrections(streams: Sequence[Sequence[TranscriptMessage]]) -> list[Candidate]:
    """A user's correction: a declined or interrupted call followed by what they typed, or
    a typed message that opens as a correction right after the agent acted."""
    found: list[Candidate] = []
    for stream, messages in enumerate(streams):
        for pos, m in enumerate(messages):
            if not is_prompt(m) or pos == 0:
                continue
            before = _last_agent_action(messages, pos)
            if before is None:
                continue
            declined = _declined(messages, before, pos)
            if declined or CORRECTION.match(m.text):
                call = _last_call(messages, pos)
                found.append(_correction(m, stream, pos, declined, call))
                if declined and _asks(m.text):
                    found[-1] = replace(
                        found[-1], routine="the user asked a question, not for another way"
                    )
                elif call is not None and call.name in _ASKING_TOOLS:
                    found[-1] = replace(
                        found[-1], routine="the user answered the agent's question in words"
                    )
    return found


#: Tools with which the agent asks the user something: declining one is answering it.
_ASKING_TOOLS = frozenset({"AskUserQuestion"})


def _last_call(messages: Sequence[TranscriptMessage], pos: int) -> ToolUse | None:
    """The agent's last tool call before the user's message at `pos` (in this turn)."""
    for back in range(pos - 1, max(-1, pos - 12), -1):
        prior = messages[back]
        if is_prompt(prior):
            return None
        if prior.tool_uses:
            return prior.tool_uses[-1]
    return None


#: A user's message that asks rather than redirects ("Explain the considerations …", "Is
#: Agent 1 still required …?").
_QUESTION = re.compile(
    r"^\s*(?:explain|describe|tell me|show me|what|why|how|which|when|where|who|can you|could you"
    r"|would you|is|are|does|do|did|should)\b",
    re.IGNORECASE,
)


def _asks(text: str) -> bool:
    """Whether the user's words open as a question or a request to explain (a correction
    that ends in a question mark, "I thought we had X …?", still redirects)."""
    return bool(_QUESTION.match(text))


def _last_agent_action(messages: Sequence[TranscriptMessage], pos: int) -> int | None:
    """Position of the agent's last message before `pos` in the same turn (None when the
    user is answering nothing: the session's first prompt, or two prompts in a row)."""
    for back in range(pos - 1, max(-1, pos - 12), -1):
        prior = messages[back]
        if is_prompt(prior):
            return None
        if prior.role == "assistant" or prior.kind == "tool_result":
            return back
    return None


def _declined(messages: Sequence[TranscriptMessage], since: int, pos: int) -> bool:
    window = messages[max(0, since - 1) : pos]
    return any(
        r.is_error and _refused(r.text) for message in window for r in message.tool_results
    ) or any("[Request interrupted" in message.text for message in window)


_REFUSED = re.compile(r"doesn't want to|rejected|interrupted", re.IGNORECASE)
_REFUSED_WORDS = ("doesn't want to", "rejected", "interrupted")


def _refused(text: str) -> bool:
    """The user declined or interrupted the call (`_REFUSED`; ASCII text is searched with
    `in`, the same answer at a fraction of a case-blind regex's cost)."""
    if text.isascii():
        low = text.lower()
        return any(word in low for word in _REFUSED_WORDS)
    return bool(_REFUSED.search(text))


def _correction(
    m: TranscriptMessage, stream: int, pos: int, declined: bool, call: ToolUse | None
) -> Candidate:
    text = m.text.strip()
    span = next(snippets.sentence_spans(text), (0, len(text)))
    lo, hi = span
    start = m.text.find(text)
    words = snippets.clean(text[lo:hi] if hi - lo > 20 else text, 200)
    if len(words) >= 200:  # cut where a clause ends, never inside a word
        words = snippets.clause_cut(words, 200)
    # What the user answered: the call they declined, or the one they corrected.
    what = snippets.describe(call) if call is not None else ""
    if declined:
        lead = f"The user declined {what}" if what else "The user declined the agent's call"
    else:
        lead = (
            f"After {what}, the user corrected the agent"
            if what
            else ("The user corrected the agent")
        )
    summary = snippets.fit(f'{lead}: "{words}"')
    evidence = m.text[start + lo : start + hi] if hi - lo > 20 else m.text.strip()[:400]
    return Candidate(
        "correction", "PIVOT", m, stream, pos, 0, evidence, _CORRECTED, summary,
        m.line_start, m.line_end,
    )  # fmt: skip


# --------------------------------------------------------------------------- context loads


def context_loads(walk: Walk) -> list[Candidate]:
    found: list[Candidate] = []
    for stream, pos, m in walk:
        start = -1
        if is_skill_body(m):
            start = m.text.find(_SKILL_BASE)
        elif m.kind == "tool_result" and _LAUNCHING in m.text:
            start = m.text.find(_LAUNCHING)
        if start < 0:
            continue
        end = snippets.line_end(m.text, start)
        evidence = m.text[start:end]
        found.append(_skill_load(m, stream, pos, start, evidence))
    return found


def _skill_load(
    m: TranscriptMessage, stream: int, pos: int, start: int, evidence: str
) -> Candidate:
    return Candidate(
        "keywords", "CONTEXT_LOAD", m, stream, pos, start, evidence, 0.45,
        _skill_summary(evidence), m.line_start, m.line_end,
        routine="a skill load (recorded as the session's skill use)",
    )  # fmt: skip


def _skill_summary(evidence: str) -> str:
    for opening, verb in ((_SKILL_BASE, "Loaded"), (_LAUNCHING, "Launched")):
        if evidence.startswith(opening):
            where = evidence[len(opening) :].strip()
            name = snippets.clean(where.rstrip("/\\").rsplit("/", 1)[-1], 80)
            return snippets.fit(f"{verb} skill `{name}`")
    return snippets.fit(snippets.clean(evidence, 120))


# --------------------------------------------------------------------------- the finding


@per_session
def finding(text: str, lo: int, hi: int, *, ahead: bool = True) -> tuple[str, bool]:
    """(summary, hedged) for a trigger whose sentences are text[lo:hi]: the most informative
    clause among them, its opener cut. When they say nothing specific ("Ah, I see!") and
    `ahead`, the two sentences after are read too: the finding often follows the exclamation.
    The first sentence when none says anything (the bar then keeps it out of the queue).
    `hedged` is read on the whole sentence ("I think …", "It might be …")."""
    own = list(_sentences_from(text, lo, hi, hi))
    if any(x.rstrip(" *_").endswith(":") for x in own):  # a list follows: read its items
        own += [t for t, _ in zip(_sentences_from(text, hi, len(text), hi), range(3), strict=False)]
    own = _with_lists(own)
    best, sentence = _most_informative(own)
    if not best and ahead:
        best, sentence = _most_informative(
            _with_lists(list(_sentences_from(text, hi, len(text), hi)))
        )
    if not best:
        sentence = own[0] if own else text[lo:hi]
        best = clause(sentence) if own else snippets.clean(text[lo:hi], 200)
    summary = snippets.fit(_capital(snippets.short_paths(_redacted(best))))
    return summary, _HEDGED.search(sentence)


@per_session
def _redacted(text: str) -> str:
    """`redact`, once per clause of the session (several triggers share their finding)."""
    return redact(text)


def _with_lists(sentences: list[str]) -> list[str]:
    """A sentence that introduces a list (it ends with a colon) is read with its first items
    ("Two fixes: rewrite …; add …"): alone it says nothing, and the items lack their subject."""
    out: list[str] = []
    for i, sentence in enumerate(sentences):
        if sentence.rstrip(" *_").endswith(":") and i + 1 < len(sentences):
            items = [
                _ITEM_LABEL.sub("", x.strip()).rstrip(".;")
                for x in sentences[i + 1 : i + 4]
                if not _heading(x)
            ]
            if items:
                out.append(sentence.rstrip(" *_") + " " + "; ".join(items))
                continue
        out.append(sentence)
    return out


#: The label in front of a list item ("**Missing scripts**: …"): the item says it again.
_ITEM_LABEL = re.compile(r"^\*{0,2}[A-Za-z][\w '/-]{1,40}\*{0,2}:\*{0,2}\s+(?=\S)")


def _most_informative(sentences: Sequence[str]) -> tuple[str, str]:
    """(clause, its sentence) for the clause that names the most, among sentences that are
    not narration and name something specific; ("", "") when none does."""
    best, best_score, source = "", -1.0, ""
    for sentence in sentences:
        if _heading(sentence):
            continue
        said = clause(sentence)
        if not said or bar.is_narration(said) or not bar.entities(said):
            continue
        score = bar.informativeness(said)
        if score > best_score:
            best, best_score, source = said, score, sentence
    return best, source


def _sentences_from(text: str, lo: int, stop: int, hi: int) -> Iterator[str]:
    """The sentences from `lo`: those up to `hi`, then at most _FINDING_LOOKAHEAD more
    before `stop`."""
    after = 0
    for count, (start, end) in enumerate(snippets.sentence_spans(text, lo, stop)):
        if start >= hi:
            after += 1
            if after > _FINDING_LOOKAHEAD:
                return
        yield text[start:end]
        if count >= 8:
            return


def _heading(sentence: str) -> bool:
    """A title or a lead-in ("## Results", "**Differences from the docs:**"), not a finding."""
    bare = sentence.strip().strip("*_ ")
    return sentence.lstrip().startswith("#") or bare.endswith(":")


@per_session
def clause(sentence: str) -> str:
    """The statement in a sentence: its opener cut ("I can see that …"), or what follows a
    finding verb inside it ("Looking at `x`, I notice that …")."""
    clean = snippets.clean(sentence, 2000, secrets=False)  # `finding` redacts what it keeps
    cut = _LEAD.match(clean) or _INNER_LEAD.search(clean)
    clause = clean[cut.end() :].strip() if cut else clean
    clause = _OPENING_MARKS.sub("", clause, count=1).strip()
    label = _LABEL.match(clause)
    named = label.group(1).lower().split() if label else []
    if (
        label
        and len(named) <= 6
        and not _VERBS & set(named)
        and "'" not in label.group(1).replace("'s ", " ")
        and not bar.DANGLING_FAST.match(label.group(1))
        and not bar.is_narration(label.group(1))  # "Let's try another way: …" announces
        and not bar.CAUSAL_FAST.search(label.group(1))  # "Root cause: …" frames the finding
        and not bar.REPORT.match(clause)  # "Fixed: tests pass now" stays a report
        and len(clause.split()) >= 4 + len(named)
    ):
        clause = clause[label.end() :]  # "Key fix in this session: …", "Root cause: …"
    if clause.startswith("(") and clause.count("(") > clause.count(")"):
        clause = clause[1:].lstrip()  # an aside opened in the sentence and closed later
    joined = _JOINED.match(clause)
    if joined and len(clause) > joined.end() + 20:
        clause = clause[joined.end() :]  # "So in `x`, …": the link to the sentence before
        clause = clause[:1].upper() + clause[1:] if clause[:1].islower() else clause
    return clause


#: A conjunction that ties a sentence to the one before it.
_JOINED = re.compile(r"^(?:so|and|but|thus|hence|therefore)\b,?\s+", re.IGNORECASE)


def _capital(text: str) -> str:
    """A sentence starts with a capital, unless it starts with a name written as is (a
    path, a file, an identifier)."""
    first = text.split(" ", 1)[0]
    if not text[:1].islower() or not first.rstrip(",:;").isalpha():
        return text
    return text[:1].upper() + text[1:]
