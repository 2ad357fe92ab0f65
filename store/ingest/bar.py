"""The knowledge bar (DESIGN §6): is a candidate node worth a reviewer's time?

A node passes when a teammate who never saw the session learns something reusable from its
summary alone: it is **specific** (names a file, command, flag, library, error, setting or
version), **self-contained** (does not lean on "it", "this", "the issue"), and **not routine**
(narration of intent, reading or listing, a success that ended no failure). The warm tier's
rules set a candidate's *confidence*; this module scores how *informative* its summary is
and says why a candidate is kept out of the queue (`suppressed`, never lost).

Everything here reads the language of the summary, never a particular project's words:
entities are recognised by their shape (code spans, paths, flags, versions, error codes,
identifiers in code case), causal and factual clauses by function words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from store.ingest.caseblind import CaseBlind
from store.ingest.memo import per_session
from store.models.quick import quick_init

#: Pending needs at least this informativeness; below it a candidate is suppressed.
MIN_INFORMATIVENESS = 0.35
#: What a statement of the agent's (a text candidate, not an episode) needs. Calibrated on
#: two independent judges' verdicts of 99 pending nodes (issue 11): text nodes under 0.7
#: were approved 1 time in 52 verdicts, those at 0.7 or more about 1 time in 4 (before the
#: precision bar's shapes, which do the rest).
MIN_STATEMENT_INFORMATIVENESS = 0.7

#: Sentence openings that narrate what the agent is about to do or how it feels.
NARRATION = re.compile(
    r"""^(?:(?:ok(?:ay)?|alright|all\ right|great|perfect|excellent|good|nice|awesome|sure
    |ah|oh|hmm|wait|now|so|well|right|yes|done|first|next|then|finally|also|actually)
    \b[\s,.!:;—-]*)*
    (?:let\ me|let's|let\ us|i'll|i\ will|i'm\ going\ to|i\ am\ going\ to|i\ need\ to
    |i\ should|i\ want\ to|i'd\ like\ to|we\ need\ to|we'll|we\ should|i'm\ now|now\ i
    |i\ can\ (?:now\ )?see|i\ see|i\ notice|i\ understand|i've\ (?:now\ )?(?:created|updated
    |added|made|written|fixed|completed|finished|implemented|set\ up|run|checked)
    |i\ have\ (?:now\ )?(?:created|updated|added|made|written|completed|finished)
    |time\ to|moving\ on|looking\ at|checking|trying|going\ to)\b""",
    re.IGNORECASE | re.VERBOSE,
)
#: An opening with nothing after it worth keeping ("Ah, I see!", "Let me try again.").
EMPTY_FEELING = re.compile(
    r"^(?:(?:ok(?:ay)?|great|perfect|excellent|good|nice|ah|oh|hmm|interesting|done|yes|no"
    r"|sure|right|got it|i see|that worked|it worked|this works|it works|success(?:ful)?)"
    r"\b[\s!.,:;—-]*)+$",
    re.IGNORECASE,
)
#: A report of work done, not something learned ("X has been created", "Successfully…").
REPORT = re.compile(
    r"^(?:(?:\S+\s+){0,8}(?:has|have) been (?:successfully )?(?:created|updated|added|written"
    r"|implemented|completed|generated|set up|configured|installed|documented|cleaned up)\b"
    r"|(?:\S+\s+){0,8}(?:is|are) (?:now )?(?:all )?(?:complete|completed|done|finished)\b"
    r"|(?:fixed|done|resolved|solved|status|update)\s*[:—-]\s"
    r"|(?:the\s+)?(?:full\s+)?(?:test\s+)?(?:suite|run)[:\s]+\d+\s+(?:tests?\s+)?pass(?:ed|es)?\b"
    r"|\d+\s+(?:tests?\s+)?passed\b|\d+\s+pass,\s+\d+\s+fail\b"
    r"|successfully\b|(?:i|we) (?:have |'ve )?(?:successfully )?(?:created|updated|added"
    r"|implemented|completed|written|built|finished|set up)\b|all (?:tasks|todos) (?:are )?"
    r"(?:done|completed)\b)",
    re.IGNORECASE,
)
#: Openings that lean on something the summary does not say.
DANGLING = re.compile(
    r"^(?:it|this|that|these|those|they|here|there|which|the same|same)\b(?!\s+(?:is|are)\s+(?:that"
    r"|why))",
    re.IGNORECASE,
)
#: A pointer into the conversation inside a sentence: "in this component", "these calls"
#: (not "this is", "this means", "this project"): the reader never saw what it points at.
DEICTIC = re.compile(
    r"\b(?:this|these|those)\s+(?!(?:is|are|was|were|means|meant|way|case|time|project"
    r"|repo|repository|codebase|session|machine|team|one)\b)[a-z][a-z-]+\b(?![ \t]*[`(])",
)
#: An abstract subject whose content is only a pronoun ("The fix is to split it …").
_HOLLOW_SUBJECT = re.compile(
    r"^(?:the|our) (?:fix|issue|problem|solution|answer|trick|workaround|culprit|cause|bug)\b"
    r"[^.;:]*?\b(?:it|them|that one)\b",
    re.IGNORECASE,
)
#: A measurement with no subject ("8,715 ms down to 6.7 ms, …").
_BARE_MEASURE = re.compile(r"^[\d,.]+\s*[a-zA-Z%]{0,8}\s+(?:down|up|from|to|vs\.?|versus)\b")
#: Where files are in the working copy ("The files are actually in `types/`", "a.ts and b.ts
#: are missing"): the agent finding its way around, not something a teammate needs.
WHEREABOUTS = re.compile(
    r"^(?:the\s+)?(?:[\w./`-]+,?\s+(?:and\s+)?){0,6}(?:files?|director(?:y|ies)|folders?)\b"
    r"[^.;:]{0,40}?\b(?:(?:is|are|was|were)\s+(?:actually\s+|now\s+|still\s+)?(?:missing"
    r"|located|in|under|inside)\b|(?:do(?:es)?n't|do(?:es)? not|did not|didn't)\s+exist)",
    re.IGNORECASE,
)
#: A plan for this session, not a finding: a condition, then what to do ("If igniter can't
#: install, fall back to …").
PLAN_STEP = re.compile(
    r"^(?:if|when|once|otherwise|failing that)\b(?![^,;]*\byou\b)[^,;]{2,140},\s*(?:then\s+)?"
    r"(?:fall back|try|use|switch|skip|retry|run|add|check|go|install|do|revert|roll back|ask"
    r"|create|move|write)\b",
    re.IGNORECASE,
)
#: The session's own working state, not something a teammate could reuse: where the agent
#: is ("I'm on `feature/x`"), what it did or found already done ("was already updated",
#: "already modified before I started"), what its edits left ("`f` is now unused").
SESSION_STATE = re.compile(
    r"\b(?:i|we)(?:'m| am|'re| are)\s+(?:on|in|at|working|currently)\b"
    r"|\b(?:before|since|when|after)\s+(?:i|we)\s+(?:started|began|ran|changed|edited|touched)\b"
    r"|\b(?:my|our)\s+(?:changes?|edits?|fix|work|branch|patch)\b"
    r"|\b(?:at|from)\s+(?:the\s+)?(?:conversation|session)(?:'s)?\s+start\b"
    r"|\b(?:is|are|was|were|has been|have been|had been)\s+already\s+(?:been\s+)?[a-z]+(?:ed|en)\b"
    r"|\balready\s+(?:been\s+)?(?:updated|modified|changed|fixed|done|added|removed|in place"
    r"|merged|committed|applied|handled)\b"
    r"|\b(?:is|are)\s+now\s+(?:unused|used|in place|done|complete|green|clean|passing|fixed"
    r"|correct|consistent|gone|removed)\b",
    re.IGNORECASE,
)
#: A fragment that points at the next step and states nothing ("Now the production change in
#: `_base.py`."): an opening adverb and an article with no verb after it.
_FRAGMENT = re.compile(
    r"^(?:now|next|then|and now|and then|finally)[,\s]+(?:the|a|an|for|on to)\b", re.IGNORECASE
)
_VERB = re.compile(
    r"\b(?:is|are|was|were|be|has|have|had|does|do|did|can|cannot|can't|will|would|must"
    r"|should|needs?|returns?|uses?|calls?|runs?|fails?|works?|makes?|gets?|sets?|takes?"
    r"|holds?|reads?|writes?|breaks?|expects?|requires?|passes|shows?|lacks?|means?)\b",
    re.IGNORECASE,
)
#: Function words that state a cause, a consequence or a requirement.
CAUSAL = re.compile(
    r"\b(?:because|since|caused by|due to|so that|which means|means that|leads? to|results? in"
    r"|root cause|the reason|turns? out|requires?|needs? to be|must|only works|does not support"
    r"|doesn't support|is not supported|instead of|rather than|fails? (?:with|when|if|because)"
    r"|breaks?|broke|prevents?|blocks?|conflicts? with|depends on|expects?|ignores?|overrides?"
    r"|after|unless|whenever|when)\b",
    re.IGNORECASE,
)

_CODE_SPAN = re.compile(r"`[^`\n]{2,200}`")
_PATH = re.compile(r"(?:^|[\s(\"'])(?:~|\.{1,2})?/?(?:[\w.@-]+/)+[\w.@-]+")
_FILE = re.compile(r"\b[\w-]+\.(?:[a-z]{1,5}|[A-Z]{1,4})\b")
_FLAG = re.compile(r"(?:^|\s)--?[a-zA-Z][\w-]*")
_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b|@\d+(?:\.\d+)*\b")
_ERROR_CODE = re.compile(
    r"\b(?:[A-Z]{2,}\d{2,}|E[A-Z]{3,}|[A-Z][a-z]+(?:Error|Exception|Warning)|HTTP \d{3}"
    r"|\d{3} (?:Not Found|Forbidden|Unauthorized|Bad Request|Internal Server Error))\b"
)
_CODE_CASE = re.compile(
    r"\b(?:[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[a-z]+_[a-z0-9_]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+"
    r"|\w+\(\))"
)
_PROPORTION = re.compile(r"\b\d[\d,.]* (?:of|out of) (?:the )?(?:[\w'-]+ )?\d[\d,.]*\b")
_NUMBER_UNIT = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?|minutes?|MB|GB|KB|%|x|rows?|connections?|bytes)\b"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+")
_DIGIT = re.compile(r"\d")  # what `_VERSION`, `_NUMBER_UNIT` and `_PROPORTION` need

#: The phrase patterns above where they are only conditions, searched fast (see `caseblind`).
CAUSAL_FAST, DANGLING_FAST = CaseBlind(CAUSAL), CaseBlind(DANGLING)
_NARRATION_FAST, _EMPTY_FEELING_FAST = CaseBlind(NARRATION), CaseBlind(EMPTY_FEELING)
_PLAN_STEP_FAST, _SESSION_STATE_FAST = CaseBlind(PLAN_STEP), CaseBlind(SESSION_STATE)
_FRAGMENT_FAST, _VERB_FAST = CaseBlind(_FRAGMENT), CaseBlind(_VERB)
_WHEREABOUTS_FAST, _HOLLOW_SUBJECT_FAST = CaseBlind(WHEREABOUTS), CaseBlind(_HOLLOW_SUBJECT)
#: Words with no content of their own.
STOPWORDS = frozenset(
    """a an the and or but if then so to of in on at by for with from as into onto up out is
    are was were be been being am it its this that these those there here i me my we our you
    your they them he she let now just also all any some more most very can could would should
    will shall may might must do does did done has have had not no yes ok okay which what when
    where who how why than too only still again about over after before while because since
    get got make made see seen try tried use used going go need needs want wants""".split()
)


@quick_init  # one or more per candidate
@dataclass(frozen=True)
class Verdict:
    """How informative a summary is (0..1), and why it is kept out of the queue ("" if not)."""

    informativeness: float
    reason: str = ""

    @property
    def passes(self) -> bool:
        return not self.reason


def entities(text: str) -> list[str]:
    """Specific things a summary names (see `_entities`)."""
    return list(_entities(text))


@lru_cache(maxsize=4096)
def _entities(text: str) -> tuple[str, ...]:
    """Specific things a summary names: code spans, paths, files, flags, versions, error
    classes and codes, identifiers in code case, measured numbers and proportions ("52 of
    the 60"), each once."""
    found: dict[str, None] = {}
    spans = _CODE_SPAN.findall(text)
    for span in spans:
        found.setdefault(span.strip("`").lower(), None)
    plain = _CODE_SPAN.sub(" ", text) if spans else text
    digits = _DIGIT.search(plain) is not None
    for pattern, needs in (
        (_PATH, "/" in plain), (_FILE, "." in plain), (_FLAG, "-" in plain),
        (_VERSION, digits), (_ERROR_CODE, True), (_CODE_CASE, True), (_NUMBER_UNIT, digits),
        (_PROPORTION, digits),
    ):  # fmt: skip
        if not needs:  # a character every match holds is not there
            continue
        for match in pattern.findall(plain):
            token = match.strip(" \t\n(\"'").lower()
            if len(token) > 1:
                found.setdefault(token, None)
    return tuple(found)


_BOX_DRAWING = re.compile("[\u2500-\u257f]")
_CHECKLIST = re.compile("[✅❌✔✘✗☑☐]")
_LIST_ITEM = re.compile(r"\s[-–•]\s+[A-Z][\w ,/'-]{1,40}:\s")
_TABLE = re.compile(r"\|\s*:?-{3,}|(?:\|[^|\n]*){4,}\|")
#: A table's row lifted out of its table ("| 7 | `guard.sh` | … |").
_ROW = re.compile(r"^\s*\|(?:[^|\n]*\|){2,}")
_NOT_PROSE = re.compile(r"[^\w\s]|[\d_]")


def _prose(text: str) -> bool:
    """Mostly letters and spaces, with no box drawing: a sentence, not a tree or a table."""
    if "```" in text or _TABLE.search(text) or _CHECKLIST.search(text) or _ROW.match(text):
        return False  # a code block, a table or a checklist lifted into the summary
    if len(_LIST_ITEM.findall(text)) >= 2:
        return False  # "X - Testable: … - Good error handling: …": a list of labelled points
    plain = _CODE_SPAN.sub("", text)
    if _BOX_DRAWING.search(plain):
        return False
    others = len(_NOT_PROSE.findall(plain))
    return others <= 0.4 * max(len(plain), 1)


def content_words(text: str) -> list[str]:
    return list(_content_words(text))


@per_session
def _content_words(text: str) -> tuple[str, ...]:
    if text.isascii():  # the same words, lowercased once (most summaries are ASCII)
        return tuple([w for w in _LOW_WORD.findall(text.lower()) if w not in STOPWORDS])
    return tuple([low for w in _WORD.findall(text) if (low := w.lower()) not in STOPWORDS])


_LOW_WORD = re.compile(r"[a-z][a-z'-]+")


@per_session
def is_narration(text: str) -> bool:
    """An opening that narrates intent or feeling instead of stating something."""
    clause = text.strip().lstrip("#*->•").strip()
    return _NARRATION_FAST.match(clause) or _EMPTY_FEELING_FAST.match(clause)


@lru_cache(maxsize=4096)
def informativeness(text: str, confirmed: bool = False) -> float:
    """0..1: specific entities weigh most, then a causal or factual clause, then enough
    content words; a statement the tool output just before it bears out (`confirmed`)
    counts a little more."""
    named = len(entities(text))
    words = len(content_words(text))
    score = (0.25 + 0.15 * (min(named, 3) - 1)) if named else 0.0
    score += (0.2 if CAUSAL_FAST.search(text) else 0.0) + min(words, 10) / 10 * 0.2
    score += 0.1 if confirmed else 0.0
    return round(max(0.0, min(1.0, score)), 3)


@per_session
def judge(
    summary: str,
    *,
    routine: str = "",
    novelty: float = 1.0,
    confirmed: bool = False,
    said: bool = False,
    voice: bool = True,
) -> Verdict:
    """The bar for one candidate summary. `routine` names why the action it reports is
    routine ("" when it is not); `novelty` is how much of it is new in the session (0..1);
    `confirmed`: tool output just before it bears it out; `said`: the summary is a sentence
    of the agent's (held to the conversation's pointers), not a summary of what it ran
    (whose quoted output may say "this function"); `voice`: held to the session's voice too
    ("we", "the file"), which a user's quoted words may keep."""
    score = informativeness(summary, confirmed)
    if routine:
        return Verdict(score, routine)
    if is_narration(summary):
        return Verdict(score, "narration of intent, not a finding")
    if REPORT.match(summary.strip()):
        return Verdict(score, "a report of work done, not a finding")
    if said and _PLAN_STEP_FAST.match(summary.strip()):
        return Verdict(score, "a plan step, not a finding")
    if said and _SESSION_STATE_FAST.search(summary.strip()):
        return Verdict(score, "the session's own working state, not a lesson")
    if said and _FRAGMENT_FAST.match(summary.strip()) and not _VERB_FAST.search(summary):
        return Verdict(score, "narration of intent, not a finding")
    if said and _WHEREABOUTS_FAST.match(summary.strip()):
        return Verdict(score, "where files are in the working copy (finding the way around)")
    if not _prose(summary):
        return Verdict(score, "not a sentence (a diagram, a listing or code)")
    if len(content_words(summary)) < 4:
        return Verdict(score, "fewer than four content words")
    if not entities(summary):
        return Verdict(score, "names no file, command, setting, error or version")
    if DANGLING_FAST.match(summary.strip()) or (said and _leans(summary, voice)):
        return Verdict(score, "not self-contained (leans on an earlier sentence)")
    if novelty < 0.3:
        return Verdict(score, "repeats an earlier node of the session")
    if score < MIN_INFORMATIVENESS:
        return Verdict(score, f"too little information ({score:.2f} < {MIN_INFORMATIVENESS})")
    return Verdict(score)


#: Something only the session showed: "the original log", "the earlier output", "jprasm's
#: latest comment".
_SESSION_THING = re.compile(
    r"\b(?:the|that|this)\s+(?:original|earlier|previous|above|latest|first|same|user'?s)\s+"
    r"(?:log|logs|report|comment|message|output|traceback|error|screenshot|run|paste)\b"
    r"|\b[a-z][\w-]*'s\s+(?:latest\s+|original\s+|first\s+)?(?:log|logs|comment|report|paste"
    r"|screenshot)\b",
    re.IGNORECASE,
)


#: The session's own voice: "we", "our", "us" stand for the agent and its user, whom a
#: teammate reading the library never met.
_OUR_VOICE = re.compile(r"\b(?:[Ww]e|[Ww]e'(?:re|ve|d|ll)|[Oo]urs?|us)\b")
#: A generic noun with "the" and no name beside it ("the file", "the script", "the test"):
#: which one only the session knew.
_THING_NOUNS = (
    r"(?:file|script|command|function|method|class|test|module|component|hook|endpoint|query"
    r"|config|configuration|directory|folder|branch|migration|table|page|route|handler"
    r"|service|server|app|export|import|variable|field|column|value|call|flag|option|setting"
    r"|helper|wrapper|loop)s?"
)
_UNNAMED_THING = re.compile(
    rf"\b[Tt]he {_THING_NOUNS}\b(?![ \t]*(?:{_THING_NOUNS}[ \t]+)?[`(\"'])(?!'s)"
)


def session_voice(sentence: str) -> bool:
    """Whether the sentence speaks as the session ("we", "our", "us")."""
    return bool(_OUR_VOICE.search(_CODE_SPAN.sub("`x`", sentence)))


def _unnamed(sentence: str) -> bool:
    """A generic "the file" / "the test" with no name next to it, while the sentence names
    nothing else either that it could be (a sentence that names a file may say "the file")."""
    plain = _CODE_SPAN.sub("`x`", sentence)
    m = _UNNAMED_THING.search(plain)
    if m is None:
        return False
    before = plain[: m.start()]
    return "`" not in before and not entities(before)


def _leans(sentence: str, voice: bool = True) -> bool:
    """A pointer to something the sentence does not name: "this component", a hollow
    subject ("the fix is to split it"), a measurement with no subject, a thing only the
    session showed ("the original log")."""
    plain = _CODE_SPAN.sub("`x`", sentence.strip())
    return bool(
        DEICTIC.search(plain)
        or _HOLLOW_SUBJECT_FAST.match(plain)
        or _BARE_MEASURE.match(plain)
        or _SESSION_THING.search(plain)
        or (voice and (session_voice(sentence) or _unnamed(sentence)))
    )


def novelty(words: Iterable[str], seen: set[str]) -> float:
    """Share of `words` not in `seen` (1.0 for nothing to compare)."""
    unique = set(words)
    if not unique:
        return 1.0
    return len(unique - seen) / len(unique)
