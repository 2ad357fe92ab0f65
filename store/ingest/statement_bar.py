"""The precision bar for statements (issue 11; `store.ingest.shapes` has the shapes): a
statement of the agent's reaches the queue only framed as the session's conclusion, read off
the command just before it, or explaining why a failing command now passes — about things
the session's tool output showed, not the code the agent is changing; and beliefs the
session later revised (a hypothesis a check settled, a fix the user says still fails) are
stated as revised or not kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from store.ingest import bar, reviewer_rules, shapes, snippets, statements
from store.ingest.candidates import Candidate
from store.ingest.context import _Context, _Evidence, _head

_WINDOW = 8  # messages: a HYPOTHESIS → the check after it
_STILL_FAILS = re.compile(
    r"\b(?:still (?:fails?|failing|broken|not|doesn'?t|does not|getting|seeing|the same)"
    r"|(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not) (?:work|fix|help)|same (?:error|problem)"
    r"|not (?:fixed|working)|nope)\b",
    re.IGNORECASE,
)
#: What makes a guess a hypothesis: it proposes an explanation ("… is too short", "… so it
#: shares the pool", "… because …"), not a name or a plan ("could be `runStage` or similar").
_EXPLAINS = re.compile(
    r"\b(?:so|too|explains?|explaining|why|hence|therefore|triggers?|causes?|caused|leads? to"
    r"|results? in|fails?|failing|breaks?|blocks?|hangs?|times? out|leaks?|races?|stale"
    r"|missing|never|not|by|from|without|instead)\b",
    re.IGNORECASE,
)


def _revise(judged: dict[int, Candidate], context: _Context) -> dict[int, Candidate]:
    """Beliefs the session later revised: a hypothesis a later finding settles (kept out:
    the finding says it), one the agent's next check bears out (it becomes the DISCOVERY it
    turned into) or rules out (kept out), one a later root cause contradicts (kept out); a
    claimed fix the user says did not work."""
    passing = [c for c in judged.values() if not c.suppressed]
    for key, c in judged.items():
        if c.suppressed:
            continue
        if c.type == "HYPOTHESIS":
            judged[key] = _settled(c, passing, context)
        elif c.type == "SOLUTION" and c.strategy != "episode" and _user_says_fails(c, context):
            judged[key] = replace(c, suppressed="the user's next message says it still fails")
        elif c.type == "DISCOVERY" and c.strategy != "episode" and _revised(c, context):
            judged[key] = replace(c, suppressed=_TAKEN_BACK_REASON)
        elif c.type == "DISCOVERY" and c.strategy != "episode" and _blames(c):
            why = _superseded(c, context) or _unverified(c, context)
            why = why or reviewer_rules.later_root_cause(c, context, _named_things(c.summary))
            judged[key] = replace(c, suppressed=why) if why else c
        elif c.type == "DISCOVERY" and c.strategy != "episode":
            why = reviewer_rules.later_root_cause(c, context, _named_things(c.summary))
            judged[key] = replace(c, suppressed=why) if why else c
    return judged


def _blames(c: Candidate) -> bool:
    """Whether a statement names the cause of something ("The root cause: …", "The problem
    is …", "… was caused by …")."""
    return bool(
        shapes.CAUSE_FRAME.search(c.summary)
        or shapes.CAUSE_FRAME.search(c.evidence.lstrip("#*->• \t"))
        or _ROOT_CAUSE.search(c.summary)
    )


_SUPERSEDE_WINDOW = 80  # messages after a stated cause in which a later one replaces it


def _superseded(c: Candidate, context: _Context) -> str:
    """Why a stated cause is not the session's final belief ("" when it is): later in its
    stream the agent names "the real cause", or states another cause after the command it
    explained failed again. The later statement, if it passes the bar, is the one kept."""
    messages = context.streams[c.stream]
    runs = context.evidence(c.stream).runs
    explained = _failing_at(c, context)  # what the cause was about, when something failed
    failed_again = False
    for pos in range(c.pos + 1, min(len(messages), c.pos + 1 + _SUPERSEDE_WINDOW)):
        run = runs.get(pos)
        if run is not None and run.failed and not run.routine:
            failed_again = failed_again or not explained or run.target in explained
        later = messages[pos]
        if later.role != "assistant" or not later.text or not statements.is_reasoning(later):
            continue
        if shapes.REPLACED_CAUSE.search(later.text[:2000]):
            return "a later statement names the real cause instead (a belief it gave up)"
        if failed_again and _states_cause(later.text):
            return "the command failed again and the agent stated another cause (superseded)"
    return ""


def _states_cause(text: str) -> bool:
    """Whether one of the first sentences of a message states a cause in a frame."""
    for count, (lo, hi) in enumerate(snippets.sentence_spans(text)):
        if count >= 6:
            return False
        if shapes.CAUSE_FRAME.search(statements.clause(text[lo:hi])):
            return True
    return False


_FAILING_WINDOW = 40  # messages before a stated cause whose open failures it may explain


def _failing_at(c: Candidate, context: _Context) -> set[str]:
    """The targets of the project's commands that failed shortly before a statement and had
    not passed since (what a cause stated then explains)."""
    evidence = context.evidence(c.stream)
    failing: set[str] = set()
    for pos, run in sorted(evidence.runs.items()):
        if pos >= c.pos:
            break
        if run.failed and not run.routine:
            if pos >= c.pos - _FAILING_WINDOW:
                failing.add(run.target)
        elif pos in evidence.closed:
            failing.discard(run.target)
    return failing


def _unverified(c: Candidate, context: _Context) -> str:
    """Why nothing bears out a stated cause ("" when something does): a command that was
    failing when the agent stated it never passed after; or no command of the project's
    passed after it (the session ends, or only edits follow) and the output before it does
    not show what it names, nor had a failing command just passed."""
    evidence = context.evidence(c.stream)
    failing = _failing_at(c, context)
    later = [(pos, run) for pos, run in evidence.runs.items() if pos > c.pos]
    if failing:
        if any(pos in evidence.closed and run.target in failing for pos, run in later):
            return ""
        return "a cause the session never bore out: what it explains never passed after"
    messages = context.streams[c.stream]
    if any(not run.failed and not run.routine for _, run in later):
        return ""  # a command of the project's ran and passed after it
    if evidence.last_run(messages, c.pos) in evidence.closed:
        return ""  # it explains why a command that had failed just passed
    if _cause_borne_out(evidence, _named_things(c.summary), c.pos):
        return ""  # the output before it shows what it names
    return "a cause stated as the session ends: nothing after it bears it out"


#: The agent taking back what it just concluded ("Actually, …", "the real issue is …",
#: "I was wrong", "that's not it").
_TAKEN_BACK = re.compile(
    r"^\W*(?:actually|wait|hmm|no[,.]|oops)\b|\b(?:the (?:real|actual) (?:issue|problem|cause"
    r"|culprit|bug)|i was wrong|that'?s not (?:it|the (?:issue|cause|problem))|is not the (?:issue"
    r"|cause|problem)|was(?:n'?t| not) the (?:issue|cause|problem)|on closer (?:look|inspection)"
    r"|i misread|not stale)\b",
    re.IGNORECASE,
)
_TAKEN_BACK_REASON = "the agent took it back right after (a belief it gave up)"
_REVISION_WINDOW = 6  # messages after a conclusion in which the agent may take it back


def _revised(c: Candidate, context: _Context) -> bool:
    """Whether the agent takes back a conclusion in its next few messages, before the user
    speaks again."""
    if not shapes.concluded(f"{c.evidence} {c.summary}"):
        return False
    for later in context.streams[c.stream][c.pos + 1 : c.pos + 1 + _REVISION_WINDOW]:
        if statements.is_prompt(later):
            return False
        if later.role == "assistant" and later.text and _TAKEN_BACK.search(later.text[:300]):
            return True
    return False


def _settled(h: Candidate, passing: Sequence[Candidate], context: _Context) -> Candidate:
    """A passing hypothesis as the rest of its stream leaves it."""
    if _settled_later(h, passing):
        return replace(h, suppressed="settled later in the session (confirmed or ruled out)")
    if _contradicted(h, passing):
        return replace(h, suppressed="a later finding names another cause (ruled out)")
    verdict = _checked(h, context)
    if verdict == "refuted":
        return replace(h, suppressed="the agent's next check ruled it out")
    if verdict == "confirmed":
        stated = _dehedged(h.summary)
        if not statements.HEDGE.search(stated):
            return replace(h, type="DISCOVERY", summary=stated)
    if _went_on(h, context):
        return replace(h, suppressed="a guess the agent went on to check (it stays open)")
    return h


#: How the agent opens what it says after a check that bore its guess out.
_BORNE_OUT = re.compile(
    r"^\W*(?:confirmed|(?:that|this) confirms|yes\b|exactly\b|as suspected|bingo|there it is"
    r"|that'?s (?:it|the (?:cause|culprit|problem|issue))|found it|i was right)",
    re.IGNORECASE,
)


#: What the agent says of a guess a check ruled out.
_RULED_OUT = re.compile(
    r"\b(?:(?:is|was|isn'?t|wasn'?t|is not|was not|not) (?:the )?(?:cause|culprit|issue|problem"
    r"|reason)\b|ruled? out|red herring|(?:that|this) (?:wasn'?t|isn'?t|is not|was not) it\b"
    r"|so (?:that'?s|it'?s) not)",
    re.IGNORECASE,
)


_ROOT_CAUSE = re.compile(
    r"\b(?:root cause|the (?:real |actual )?(?:cause|reason|culprit) (?:is|was)|turns? out"
    r"|was caused by)\b",
    re.IGNORECASE,
)


_HEDGES = (
    (
        re.compile(
            r"\b(?:i (?:think|suspect|believe|guess)|my (?:guess|theory) is|presumably"
            r"|probably|likely|perhaps|possibly|maybe)\s+(?:that\s+)?",
            re.I,
        ),
        "",
    ),
    (re.compile(r"\b(?:might|may|could) have been\b", re.I), "was"),
    (re.compile(r"\b(?:might|may|could) be\b", re.I), "is"),
    (re.compile(r"\b(?:seems|appears) to be\b", re.I), "is"),
    (re.compile(r"\b(?:it )?(?:seems|appears|looks like)(?: that)?\s+", re.I), ""),
)


def _dehedged(summary: str) -> str:
    """The guess stated as the fact a check showed it to be."""
    out = summary
    for pattern, plain in _HEDGES:
        out = pattern.sub(plain, out)
    out = " ".join(out.split())
    return out[:1].upper() + out[1:] if out[:1].islower() and out[:1].isalpha() else out


def _checked(h: Candidate, context: _Context) -> str:
    """ "confirmed" when the agent's first words after its next check bear the guess out,
    "refuted" when it then says the guess was not it, "" when the stream moves on first (a
    user's message) or says neither within the window."""
    messages = context.streams[h.stream]
    named = set(bar.content_words(h.summary))
    looked = False
    for later in messages[h.pos + 1 : h.pos + 1 + 2 * _WINDOW]:
        if statements.is_prompt(later):
            return ""
        if later.kind == "tool_result":
            looked = True
            continue
        if not (looked and statements.is_reasoning(later)):
            continue
        if _BORNE_OUT.match(later.text):
            return "confirmed"
        said = later.text[:600]
        ruled = _RULED_OUT.search(said)
        if ruled and len(named & set(bar.content_words(said))) >= 2:
            return "refuted"
        looked = False  # the agent's reaction to this check said neither
    return ""


def _contradicted(h: Candidate, passing: Sequence[Candidate]) -> bool:
    """A later finding of the stream states the root cause and names none of the things
    the guess named: the guess was wrong."""
    named = set(bar.entities(h.summary))
    stems = _stems(h.summary)
    return any(
        other.stream == h.stream
        and other.pos > h.pos
        and other.type == "DISCOVERY"
        and _ROOT_CAUSE.search(other.summary)
        and not (named & set(bar.entities(other.summary)))
        and len(stems & _stems(other.summary)) < 2
        for other in passing
    )


def _stems(text: str) -> set[str]:
    """Content words cut to their first five letters ("connection", "connections")."""
    return {w[:5] for w in bar.content_words(text) if len(w) > 3}


def _settled_later(h: Candidate, passing: Sequence[Candidate]) -> bool:
    named = set(bar.entities(h.summary))
    return bool(named) and any(
        other.stream == h.stream
        and other.pos > h.pos
        and other.type in ("DISCOVERY", "SOLUTION", "DEAD_END")
        and named & set(bar.entities(other.summary))
        for other in passing
    )


def _user_says_fails(c: Candidate, context: _Context) -> bool:
    messages = context.streams[c.stream]
    for later in messages[c.pos + 1 : c.pos + 1 + _WINDOW]:
        if statements.is_prompt(later):
            return bool(_STILL_FAILS.search(later.text[:600]))
    return False


#: A sentence that states a concrete change: old → new between code spans, or a named
#: thing set, passed, pinned or swapped.
_CONCRETE_CHANGE = re.compile(
    r"`[^`\n]+`\s*(?:→|->|=>|to|with|instead of)\s*`[^`\n]+`"
    r"|\b(?:set(?:ting)?|pass(?:ing)?|pin|pinn(?:ed|ing)|adding|add(?:ed)?|us(?:e|ed|ing)"
    r"|switch(?:ed|ing)? to|replac(?:ed|ing))\s+`[^`\n]+`",
    re.IGNORECASE,
)


#: What a failed attempt in words says happened.
_FAILED_ATTEMPT = re.compile(
    r"\b(?:didn'?t|did not|doesn'?t|does not|won'?t) (?:help|work|fix|change)|no effect"
    r"|made (?:it|things) worse|fails? the\b|breaks? the\b|[+]\d+ errors?",
    re.IGNORECASE,
)


#: What makes a user's correction a lesson: a reason, or a rule for the agent.
_USER_REASON = re.compile(
    r"\b(?:because|since|so that|otherwise|as it|as that|which (?:would|will)|instead|rather"
    r" than|never|always|don'?t|do not|not|must|should(?:n'?t)?|only)\b",
    re.IGNORECASE,
)


def _unproven(c: Candidate, context: _Context) -> str:
    """Why a text candidate has none of the shapes reviewers approve ("" when it has one;
    see `store.ingest.shapes`)."""
    if c.strategy == "correction":
        return _unproven_correction(c)
    why = _unshaped(c, context)
    if why or c.informativeness >= bar.MIN_STATEMENT_INFORMATIVENESS:
        return why
    return (
        f"too little information for a statement ({c.informativeness:.2f} < "
        f"{bar.MIN_STATEMENT_INFORMATIVENESS})"
    )


def _unshaped(c: Candidate, context: _Context) -> str:
    """Why a text candidate has none of the shapes ("" when it has one)."""
    summary = c.summary
    if shapes.garbled(summary):
        return "the summary is garbled (cut inside a quote, a code span or a URL)"
    if shapes.about_agent(summary):
        return "about the agent's own tooling (its skills, subagents, prompts, todos)"
    if c.type != "SOLUTION" and shapes.describes_change(summary):
        return "a change the agent made or plans, not a fact it learned"
    listed = reviewer_rules.work_summary(summary)
    if listed:
        return listed
    alone = shapes.self_contained(summary)
    if alone:
        return f"not self-contained ({alone})"
    if c.type != "HYPOTHESIS" and statements.HEDGE.search(summary):
        return "a guess stated as a finding (hedged)"
    evidence = context.evidence(c.stream)
    named = _named_things(summary)
    messages = context.streams[c.stream]
    run = evidence.last_run(messages, c.pos)
    if c.type == "DISCOVERY" and shapes.copied_finding(summary):
        return "a finding copied from a tool's report (a file and line, then the message)"
    blamed = c.type == "DISCOVERY" and any(
        shapes.CAUSE_FRAME.search(text) for text in (summary, c.evidence.lstrip("#*->• \t"))
    )
    unborne = (
        blamed and _after_edits(evidence, c.pos) and not _cause_borne_out(evidence, named, c.pos)
    )
    if run is not None and run in evidence.closed and bar.CAUSAL.search(summary) and not unborne:
        return ""  # the agent's explanation of why a command that failed now passes
    if c.type == "HYPOTHESIS":
        return _unproven_guess(c)  # what comes after it settles it (`_settled`)
    if not named or not evidence.shown(named, c.pos):
        return "nothing it names appears in the session's tool output before it"
    if unborne:
        return "a cause it states that the tool output does not bear out"
    subject = [e for e in bar.entities(shapes.subject_of(summary)) if len(e) >= 4]
    if c.type not in ("DEAD_END", "SOLUTION") and evidence.worked_on(subject, c.pos):
        return "about code the agent is changing (its work in progress)"
    if c.type not in ("DEAD_END", "SOLUTION") and evidence.changing(named, c.pos):
        return f"about `{evidence.changing(named, c.pos)}`, a file the agent is changing"
    reported = _report(c, context) and shapes.reports_finding(f"{c.evidence} {summary}")
    framed = reported or shapes.concluded(f"{c.evidence} {summary}")
    read_off = (
        run is not None
        and evidence.shown(named, run + 1)
        and _ran_just_before(evidence, named, run)
    )
    if c.type == "SOLUTION":
        ok = bool(_CONCRETE_CHANGE.search(summary)) and (framed or run is not None)
        return "" if ok else "a fix in words that names no concrete change"
    if c.type == "DEAD_END":
        return "" if _FAILED_ATTEMPT.search(summary) else "a dead end in words that says no outcome"
    if c.type == "PIVOT":
        return "" if bar.CAUSAL.search(summary) else "a change of approach that gives no reason"
    if framed:
        return ""  # the session's (or a subagent's) conclusion, borne out by tool output
    if read_off:
        return ""  # read off the output of the command just before it
    return "neither a conclusion nor read off a command's output"


def _after_edits(evidence: _Evidence, pos: int) -> bool:
    """Whether the agent edited files shortly before `pos`: a cause stated then ("The issue
    was that …") is its account of its own change, which the output must bear out."""
    return any(pos - _CAUSE_WINDOW <= p < pos for p, _ in evidence.edits)


def _cause_borne_out(evidence: _Evidence, named: Sequence[str], pos: int) -> bool:
    """Whether the tool output shortly before `pos` bears out a cause the agent states ("The
    issue was that …"): the output of a command that failed shows one of the things it
    names (the error it explains), or the output of any command shows at least half of
    them, two at least (not only the subject it makes a claim about)."""
    window = [(p, text) for p, text in evidence.outputs if pos - _CAUSE_WINDOW <= p < pos]
    failed = {p for p, a in evidence.runs.items() if a.failed}
    if any(e in text for p, text in window if p in failed for e in named):
        return True
    shown = sum(any(e in text for _, text in window) for e in named)
    return shown >= max(2, (len(named) + 1) // 2)


#: Messages before a stated cause in which the failure it explains is looked for.
_CAUSE_WINDOW = 40


def _report(c: Candidate, context: _Context) -> bool:
    """Whether the candidate comes from a subagent's report: what its thread said last,
    handed back to the agent that asked as the result of its call (its conclusion)."""
    if not (c.message.agent_id or c.message.is_sidechain):
        return False
    return _head(c.message.text) in context.reports


def _ran_just_before(evidence: _Evidence, named: Sequence[str], run: int) -> bool:
    """Whether the command whose result is at `run` (its command or output) shows one of
    `named`."""
    text = next((t for pos, t in evidence.outputs if pos == run), "")
    return any(e in text for e in named)


_V_VERSION = re.compile(r"v\d+(?:\.\d+)+")


def _named_things(summary: str) -> list[str]:
    """What a statement names, as tool output would print it: a version without its "v"
    (`v15.5.2` is printed `15.5.2`), a call without its parentheses (`nextval()`)."""
    out: list[str] = []
    for e in bar.entities(summary):
        if len(e) < 4 or _number(e):
            continue
        if _V_VERSION.fullmatch(e):
            e = e[1:]
        elif e.endswith("()"):
            e = e[:-2]
        out.append(e)
    return out


def _number(entity: str) -> bool:
    return bool(re.fullmatch(r"[\d.,:+-]+\s*\w{0,8}", entity))


def _unproven_guess(c: Candidate) -> str:
    """A hypothesis must explain something; whether it stays open is for `_settled`."""
    if not (bar.CAUSAL.search(c.summary) or _EXPLAINS.search(c.summary)):
        return "a guess that explains nothing"
    return ""


def _went_on(h: Candidate, context: _Context) -> bool:
    """Whether the agent ran something after the guess before the user spoke again (a check
    that did not settle it in words: the check, not the guess, is what to look at)."""
    for later in context.streams[h.stream][h.pos + 1 : h.pos + 1 + 2 * _WINDOW]:
        if statements.is_prompt(later):
            return False
        if later.kind == "tool_result":
            return True
    return False


def _unproven_correction(c: Candidate) -> str:
    """A user's correction is a lesson when it says what to do or not do, with a reason or
    as a rule, and names what it is about; a question ("…, right?") settles nothing."""
    words = c.evidence
    if words.rstrip().endswith("?"):
        return "a question to the agent, not a settled correction"
    if reviewer_rules.unsettled_correction(words):
        return reviewer_rules.UNSETTLED_CORRECTION
    if len(bar.content_words(words)) < 6:
        return "a correction too short to say what to do instead"
    if not _USER_REASON.search(words):
        return "a correction that gives no reason or rule"
    if not (bar.entities(words) or re.search(r"(?<=\s)[A-Z][a-z]+", words)):
        return "a correction that names nothing specific"
    return ""
