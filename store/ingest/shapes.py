"""The precision bar (issue 11): the few shapes of node that reviewers approve.

The knowledge bar (`store.ingest.bar`) says why a candidate is *not* worth a reviewer's time
(narration, a report, a plan, a pointer into the conversation…). Judged samples of real
sessions showed that ruling things out one by one does not generalise: each new session
brings new kinds of noise. So a candidate that passes that bar must also *have* one of the
shapes below, proven by the session's structure, before it enters the pending queue;
everything else is suppressed with the reason (`Candidate.unproven`), never lost.

Shapes of a failure (`store.ingest.episodes` applies them to dead ends and solutions):

- **refused**: the tool or the machine refused the invocation itself — an unknown flag or
  option, a program that is not installed, a permission the process lacks, a required
  environment variable that is missing (`refused`);
- **explained**: the agent states the cause right after it (or a few turns later), in a
  sentence that says why (`because`, `requires`, `points at`, `without`…), not its own slip
  (`explains`);
- **persistent**: the same informative error on three or more attempts that never passed.

What keeps any failure out: its error sits in code the session itself had written or edited
before (work in progress), its error says only *that* it failed (`bare_gist`: a runner's
"FAIL pkg 2.1s", "script exited with code 1", a test's name and its time), or the command
line ran several steps and the error cannot be tied to one.

Shapes of a statement (`store.ingest.warm` applies them to text candidates, with the
session's facts from `Evidence`):

- **concluded**: framed as the session's conclusion ("the root cause was …", "the bug is
  …", "confirmed: …", "it turns out …", "found N places where …");
- **read off a run**: the agent's first words after a command's output, about things that
  output (or the command) names;
- **explains a fix**: the agent's first words after a command that failed before now
  passed, with a causal clause ("`ACCESSIBLE=1` makes huh read stdin instead of …").

Any statement must also read as one self-contained sentence (`self_contained`: its subject
names something; no "the two files", "the pod's", "the same problem"), state a fact rather
than a change the agent made (`describes_change`) or the agent's own tooling
(`about_agent`), and be corroborated: something it names appears in the session's tool
output before it. Everything here reads transcript structure and the language of
sentences, never a particular project's words.
"""

from __future__ import annotations

import re

from store.ingest import bar

# --------------------------------------------------------------------------- failures

#: The tool or the machine refusing the invocation itself: its flags, its installation, the
#: process's permissions, the environment it requires.
REFUSED = re.compile(
    r"\bunknown (?:flag|option|shorthand flag|argument|switch)\b|\bunrecognized (?:option"
    r"|argument|arguments|flag)\b|\bno such option\b|\binvalid option\b|flag provided but not"
    r" defined|\b(?:option|flag) [^\n]{1,40} (?:is )?not (?:supported|recognized)\b"
    r"|\bcommand not found\b|executable file not found|\bis not recognized as an internal"
    r"|\bnot installed\b|\bpermission denied\b|\boperation not permitted\b|\bEACCES\b"
    r"|\bcredentials (?:were |are )?(?:not provided|missing|invalid|required)\b|\bunauthori[sz]ed\b"
    r"|\bnot authenticated\b|\bauthentication (?:failed|required)\b|\bhttp status:? 40[13]\b"
    r"|\baccess denied\b"
    r"|\b40[13] (?:unauthorized|forbidden)\b|\binvalid (?:api )?(?:key|token)\b"
    r"|\b(?:missing|required|requires)\b[^\n]{0,40}\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b"
    r"|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b[^\n]{0,30}\b(?:is not set|not set|is required|must be set"
    r"|is empty)\b|\brequires? (?:node|python|go|ruby|java|version)\b[^\n]{0,20}\d"
    r"|\bunsupported (?:engine|version|platform)\b",
    re.IGNORECASE,
)
#: The machine lacks the program the agent typed (or the agent typed it wrong).
NOT_INSTALLED = re.compile(
    r"\bcommand not found\b|executable file not found|\bis not recognized as an internal"
    r"|\bno such command\b|: not found\s*$|^\s*[\w.+-]+ not found\s*$",
    re.IGNORECASE | re.MULTILINE,
)
#: A path that is not there from where the command ran: a wrong working directory or a
#: typo'd path (`cd: foo: No such file or directory`, `Could not read package.json`,
#: `can't open file`, `go.mod file not found`, `file or directory not found: tests/x.py`).
MISSING_PATH = re.compile(
    r"\bno such file or directory\b|\bENOENT\b|\bcan'?t open file\b|\bcannot find the"
    r" (?:path|file)\b|\bfile or directory not found\b|\bnot a directory\b|\bcould not read"
    r" package\.json\b|\bgo\.mod file not found\b|\bcould not find `?\w+\.(?:toml|json|ya?ml)"
    r"|\bno rule to make target\b|\b(?:file|directory|folder|path)\b[^\n]{0,80}?\b(?:does not"
    r" exist|doesn'?t exist|not found)\b|\bnot found:? [\w./-]*/[\w.-]+\.\w{1,6}\b",
    re.IGNORECASE,
)


#: The program a "not installed" error names.
_MISSING_PROGRAM = (
    re.compile(r"command not found: ([\w.+-]+)"),
    re.compile(r"exec: \"([\w.+-]+)\": executable file not found"),
    re.compile(r"(?:^|[\s:])([A-Za-z_][\w.+-]*): (?:command )?not found", re.MULTILINE),
    re.compile(r"^\s*([A-Za-z_][\w.+-]*) not found\s*$", re.MULTILINE),
)


def missing_program(gist: str) -> str:
    """The program a "not installed" error names ("" when it names none)."""
    for pattern in _MISSING_PROGRAM:
        m = pattern.search(gist)
        if m is not None:
            return m.group(1)
    return ""


#: A password or a confirmation the agent's shell has no terminal to ask for.
NO_TERMINAL = re.compile(
    r"\bsudo: (?:a terminal is required|a password is required|no tty present)"
    r"|\bno tty present\b|\bcannot prompt for (?:a )?password\b",
    re.IGNORECASE,
)


#: What the command would create is there already (a pull request, a branch, a folder, a
#: port in use): the state of the working copy or the machine at that moment.
TAKEN = re.compile(
    r"\balready exists?\b|\bEEXIST\b|\bfile exists\b|\baddress already in use\b"
    r"|\bis already (?:in use|taken|running|checked out|registered)\b",
    re.IGNORECASE,
)


MISSING_PATH_SLIP = "a path that was not there from where it ran (a wrong folder, a typo)"


def slip(gist: str) -> str:
    """What kind of environment slip the error is ("" when it is none): a program that is
    not installed or was mistyped, a password prompt with no terminal, something to create
    that already existed, or a path missing from where the command ran. Fixed by retyping,
    such a failure is routine; only an edit or an install that fixed it says something."""
    if NOT_INSTALLED.search(gist):
        return "a program not installed or mistyped"
    if NO_TERMINAL.search(gist):
        return "a password prompt the agent's shell cannot answer"
    if TAKEN.search(gist):
        return "something it would create already existed"
    if MISSING_PATH.search(gist):
        return MISSING_PATH_SLIP
    return ""


#: What a "not found" names when the agent guessed a name the project does not have (a
#: script, a pod, a table): the lesson, if any, is the right name (its solution says it).
GUESSED = re.compile(
    r"\bmissing script\b|\bunknown (?:command|script|task|target)\b|\bno (?:such )?(?:script"
    r"|task|target|rule) (?:named|found|to make)\b|\b(?:pods?|services?|deployments?|tables?"
    r"|relations?|branch|revision|tasks?|scripts?) \"?[\w./:-]+\"? (?:not found|does not exist)",
    re.IGNORECASE,
)
#: An error line that says only that something failed and where: a runner's package line
#: with its time, a script's exit code, a failing test's name with its duration, a bare exit.
BARE_GIST = re.compile(
    r"^\W*(?:(?:FAIL|FAILED|ok)\s+\S+(?:\s+\[[^\]]*\])?(?:\s+\(?[\d.]+m?s\)?)?"
    r"|(?:error:\s*)?(?:script|command|process|task) \"?[\w:.-]*\"? (?:exited|failed) with"
    r" (?:exit )?code \d+|exit(?:ed)? (?:with )?(?:code|status) \d+|error: recipe [^\n]* failed"
    r"|[×✕✗●]\s+[^\n]{1,200}?\s+\[?\d+(?:\.\d+)?\s?m?s\]?|npm (?:ERR!|error) (?:code|errno)"
    r" \S+|(?:\d+ )?tests? failed|make: \*\*\* [^\n]*error \d+)\W*$",
    re.IGNORECASE,
)
#: A sentence that says why something failed (not only what failed).
_WHY = re.compile(
    r"\b(?:because|since|due to|caused by|root cause|the reason|requires?|required|needs?"
    r"|without|missing|points? (?:at|to)|only|waiting for"
    r"|is waiting|expects?|can'?t|cannot|won'?t|doesn'?t|does not|isn'?t|is not|aren'?t"
    r"|are not|not (?:set|installed|available|supported|exported)|pre-existing|preexisting"
    r"|no longer|instead of|must|lacks?|never|rejects?|refuses?|blocks?|held|holds"
    r"|(?:was|is|were|are) (?:removed|renamed|deprecated)|shared|shares|too (?:small|large"
    r"|short|long|low|high|many|few|old|new)|exhaust\w*|exceed\w*|leak\w*|stale|collid\w*"
    r"|conflict\w*|mismatch\w*)\b",
    re.IGNORECASE,
)
#: A cause the agent states as its own act ("I put the upgrade in …", "my test expected …").
_OWN_ACT = re.compile(
    r"^\W*(?:i|i'?ve|i had|we|we'?ve|my|our)\b(?! (?:need|should|can|must|have to)\b)",
    re.IGNORECASE,
)


#: A dependency the environment lacks: a package (not a file of the project) that cannot be
#: found. About the project's environment even when the code that imports it is new.
MISSING_PACKAGE = re.compile(
    r"(?:cannot find module|can't resolve|module not found:? (?:error: )?(?:can't resolve)?"
    r"|no module named|cannot find package|no required module provides package)\s*"
    r"['\"`]?(?P<name>@?[a-z][\w.-]*(?:/[\w.-]+)?)['\"`]?",
    re.IGNORECASE,
)


def missing_package(gist: str) -> str:
    """The package a missing-dependency error names ("" when it is not one, or names a file
    of the project: a relative path or an alias)."""
    low = gist.lower()
    if "module" not in low and "resolve" not in low and "package" not in low:
        return ""  # most errors: no regex at all
    m = MISSING_PACKAGE.search(gist)
    return m.group("name") if m else ""


def bare_gist(gist: str) -> bool:
    """The error line says only that something failed (and where), not how."""
    return bool(BARE_GIST.match(" ".join(gist.split())))


def refused(gist: str) -> bool:
    """The tool or the machine refused the invocation itself."""
    return bool(REFUSED.search(gist)) and not GUESSED.search(gist)


def guessed(gist: str) -> bool:
    """A name the agent typed that the project does not have."""
    return bool(GUESSED.search(gist))


#: A rule of a tool or a language stated about a named thing ("`DROP INDEX CONCURRENTLY`
#: can't run in a transaction"): a lesson even inside the agent's account of its slip.
_TOOL_RULE = re.compile(
    r"`[^`\n]+`\s+(?:can'?t|cannot|must|requires?|only|never|won'?t|doesn'?t|does not"
    r"|is not allowed)\b",
    re.IGNORECASE,
)


def explains(cause: str) -> bool:
    """A stated cause that says why, and is not the agent owning a slip (unless it states a
    rule of the tool while doing so)."""
    if not cause or not _WHY.search(cause):
        return False
    return not _OWN_ACT.match(cause) or bool(_TOOL_RULE.search(cause))


# --------------------------------------------------------------------------- statements

#: The frame of a conclusion: what the session settled on.
CONCLUDED = re.compile(
    r"\b(?:root cause|the (?:real |actual |underlying )?(?:cause|culprit|bug|problem|issue)"
    r" (?:is|was)\b|turns? out|confirmed\b|(?:this|that) confirms|i (?:found|verified|confirmed"
    r"|discovered|realized)|(?:^|\W)found (?:it|that|the|\d+|two|three|four|five|six)\b"
    r"|verified (?:at runtime|that)|the reason (?:is|was)|(?:is|was) caused by|the fix (?:is|was)"
    r"|the failure (?:is|was)|explains? why)",
    re.IGNORECASE,
)
#: A change the agent made or is about to make, not a fact it learned: "added an orphan
#: guard", "Sets `lock_timeout` …", "now resets the backoff", "we need to change …",
#: "… need to change", "Now update `x.ts` …".
_CHANGED = re.compile(
    r"^\W*(?:[\w`.()'-]+:\s+)?(?:(?:now|then|next|first|finally|also|so)\s+)?(?:added|adds|removed|removes|changed|changes|replaced|replaces"
    r"|renamed|renames|moved|moves|wrapped|wraps|sets|set|updated|updates|switched|switches"
    r"|made|makes|fixed|fixes|rewrote|rewrites|dropped|drops|introduced|introduces|extracted"
    r"|extracts|bumped|bumps|pinned|pins|reverted|reverts|update|add|remove|change|replace"
    r"|rename|move|wrap|fix|rewrite|drop|introduce|extract|bump|pin|revert|create|creates"
    r"|created|implement|implements|implemented|refactor|refactored|refactors)\b"
    r"|\bnow\s+(?:\w+\s+){0,2}?(?:resets?|leaves?|returns?|uses?|reads?|writes?|calls?|runs?"
    r"|checks?|handles?|passes|fails?|raises?|catches|shows?|follows?|points?|imports?|works?"
    r"|goes|sends?|logs?|skips?|waits?|retries|stamps?|stores?|has|is|are)\b"
    r"|\b(?:we|i|you)\s+(?:need|have|want|ought)\s+to\b|\b(?:need|needs) to (?:be )?(?:change"
    r"|update|fix|add|remove|move|rename|modif|edit|adjust|touch)"
    r"|\b(?:is|are|was|were) (?:unused|no longer used|dead code) now\b"
    r"|\b(?:is|are) (?:being|to be) (?:removed|added|changed|renamed|moved|replaced)\b",
    re.IGNORECASE,
)
#: The agent's own tooling: its skills, subagents, todos, prompts and tools.
_AGENT_WORDS = re.compile(
    r"\b(?:skills?|sub-?agents?|the agent(?:'s)?|todo ?list|todos|system prompt|tool calls?"
    r"|mcp|haiku|sonnet|opus)\b",
    re.IGNORECASE,
)
#: A subject that points into the conversation: "the two files", "the 60 connections",
#: "the pod's", "the same problem", "the second refund", "the other one".
_POINTING = re.compile(
    r"^\W*(?:the|these|those|both)\s+(?:(?:\d+|two|three|four|five|six|seven|eight|nine|ten"
    r"|first|second|third|last|other|same|remaining|rest|above|following|previous|original"
    r"|earlier|latter|former)\b|[a-z][\w-]*'s\b)"
    r"|^\W*\d[\d,.]*\s+(?:of|out of)\s+the\b",
    re.IGNORECASE,
)
#: Words a subject may open with before its head ("The", "A", "Each", "Only").
_DETERMINERS = frozenset(
    "the a an each every any all only both no its their this that these those some".split()
)
#: Auxiliaries and modals: a clause's verb starts at one.
_AUXILIARIES = frozenset(
    """is are was were has have had does do did can cannot can't could will won't would must
    should may might isn't aren't wasn't weren't doesn't don't didn't hasn't haven't hadn't
    couldn't wouldn't shouldn't shall""".split()
)
#: Verbs that are rarely nouns: in any form, a clause's verb starts at one.
_VERB_STEMS = """catch hold make raise throw return require need expect ignore override block
prevent break hang leak point consume allow expose depend share lack contain include accept
reject handle skip treat emit own trigger swallow escape compete support take keep get give
go come know seem appear become remain stay mean cause fail succeed pass drive call reach
resolve strip parse load save store cache apply convert map match produce generate create
delete remove add change replace rename move copy write read send receive wait retry start stop
open close lock hold install import export wrap unwrap default refuse ignore reuse leave lose
drop miss fall win outlive outrun trip crash exit differ collide conflict violate assume
compare count hide show print log report run use""".split()
_IRREGULAR = frozenset(
    """held made threw thrown broke broken hung kept got gave went came knew became meant fell
    lost left ran wrote written read took taken won tripped""".split()
)
_VERB_FORMS = frozenset(
    [*_VERB_STEMS, *_IRREGULAR]
    + [v + ("es" if v.endswith(("ch", "sh", "ss", "x", "o")) else "s") for v in _VERB_STEMS]
    + [(v + "d" if v.endswith("e") else v + "ed") for v in _VERB_STEMS]
    + [v[:-1] + "ies" for v in _VERB_STEMS if v.endswith("y")]
)
#: Bare forms that read as nouns after a determiner or an adjective ("the run", "a change").
_NOUNLIKE = frozenset(
    "use run call change return report show log count match map start stop open lock copy"
    " move drop store cache load save export import install default wrap fix test".split()
)
_TOKEN = re.compile(r"`[^`\n]*`|[\w'’.-]+|[^\w\s]")
_OPENING_CLAUSE = re.compile(
    r"^\W*(?:when|if|since|because|after|before|once|while|for|in|on|with|without|under|so"
    r"|and|but|also|then|thus|hence|however)\b[^,;:—]{0,160}[,;:—]\s*",
    re.IGNORECASE,
)
#: A proper name in running text: a capitalised word that is not the sentence's first.
_PROPER = re.compile(r"(?<=\s)[A-Z][a-z]+(?:[A-Z][a-z]+)*\b")
#: A number that names nothing by itself (a version has two dots: `3.9.0`).
_PLAIN_NUMBER = re.compile(r"[+-]?\d[\d,]*(?:\.\d+)?\s*[A-Za-z%]{0,3}")
#: A word with a slash that is not a path ("set/clear", "Research/Spec/Plan").
_SLASHED_WORDS = re.compile(r"^[A-Za-z]+(?:/[A-Za-z-]+)+$")
#: What a summary cut short by a faulty quote looks like: a scheme with one slash, a dangling
#: open bracket or quote at the end, an unclosed code span.
_GARBLED = re.compile(r"\bhttps?:/(?!/)|[(\[{][^\w)\]}]{0,3}$")


#: The frame of a conclusion, cut before the statement is read ("The root cause was that …").
_FRAME = re.compile(
    r"^\W*(?:(?:the|our) (?:real |actual |underlying )?(?:root cause|cause|culprit|bug|problem"
    r"|issue|reason|failure|fix)(?: (?:of|for|behind|in) [^,:;]{1,60}?)? (?:is|was)(?: that)?"
    r"|(?:the )?root cause\s*:|confirmed\s*:|(?:interesting|ah|aha|oh|ok|okay|so|well|hmm"
    r"|right)\s*[,:—!-])\s+",
    re.IGNORECASE,
)


def _unframed(text: str) -> tuple[str, bool]:
    """`text` without the frames of a conclusion in front of it, and whether it had one."""
    framed = False
    for _ in range(3):
        m = _FRAME.match(text)
        if m is None:
            break
        text, framed = text[m.end() :], True
    return text, framed


def self_contained(sentence: str) -> str:
    """Why the sentence does not stand on its own ("" when it does): its subject names
    nothing specific, or points at something only the conversation showed. A conclusion's
    frame ("The root cause was that …") is cut first: what follows it must name the thing."""
    text, framed = _unframed(sentence.strip())
    clause = _OPENING_CLAUSE.sub("", text, count=1) if _OPENING_CLAUSE.match(text) else text
    if _POINTING.match(clause) or _POINTING.match(text):
        return "its subject points at something only the session showed"
    subject = _subject(clause)
    if framed and _names(re.split(r"[,;:—]", clause, maxsplit=1)[0]):
        return ""  # "The root cause was the configuration shipped with 3.9.0, …"
    if subject is None:
        return "no subject and verb (a fragment or a heading)"
    if _names(subject):
        return ""
    opening = text[: len(text) - len(clause)]
    if subject.lower() in ("it", "they", "this", "that", "he", "she") and _names(opening):
        return ""  # "When `x` runs, it …": the opening clause named it
    return "its subject names nothing specific"


def _subject(clause: str) -> str | None:
    """The words before the clause's first verb (None when it has none)."""
    tokens = [m for m in _TOKEN.finditer(clause) if not m.group().startswith("`")]
    previous = ""
    for m in tokens:
        word = m.group().lower().replace("’", "'")
        if word in _AUXILIARIES or (
            word in _VERB_FORMS
            and not (word in _NOUNLIKE and previous in _DETERMINERS)
            and previous not in _DETERMINERS
        ):
            return clause[: m.start()].strip(" ,")
        if word.endswith("ed") and len(word) > 4 and previous not in _DETERMINERS and m.start():
            return clause[: m.start()].strip(" ,")
        previous = word
    return None


def _names(words: str) -> bool:
    """Whether `words` name something specific: a code span, a path, a file, a flag, a
    version, an error class, an identifier in code case, or a proper name inside them (not
    the capital a sentence starts with)."""
    found = [e for e in bar.entities(words) if not _SLASHED_WORDS.match(e)]
    if found and not all(_PLAIN_NUMBER.fullmatch(e) for e in found):
        return True
    return bool(_PROPER.search(" " + " ".join(words.split()[1:])))


def describes_change(sentence: str) -> bool:
    """A change the agent made or plans ("added …", "now resets …", "we need to change …")."""
    return bool(_CHANGED.search(sentence.strip()))


def about_agent(sentence: str) -> bool:
    """About the agent's own tooling (its skills, subagents, todos, prompts, tools)."""
    return bool(_AGENT_WORDS.search(sentence))


#: What makes a subagent's report a finding rather than a tour of the code: it concludes, or
#: it names a difference, a gap or a contradiction.
_REPORTED_FINDING = re.compile(
    r"\b(?:differ\w*|mismatch\w*|missing|stale|out of date|outdated|inconsisten\w*"
    r"|conflict\w*|contradict\w*|instead of|no longer|not (?:match|documented|mentioned|used"
    r"|set|installed|supported|defined))\b",
    re.IGNORECASE,
)


def reports_finding(text: str) -> bool:
    """Whether a subagent's report states a finding (see `_REPORTED_FINDING`)."""
    return bool(CONCLUDED.search(text) or _REPORTED_FINDING.search(text))


#: A statement that blames a cause ("The issue was that …", "The real problem is …", "Root
#: cause: …"): the agent's account of why something failed.
CAUSE_FRAME = re.compile(
    r"^\W*(?:so,?\s+)?(?:the\s+)?(?:real\s+|actual\s+|underlying\s+|main\s+)?(?:root\s+cause"
    r"|(?:issue|problem|cause|culprit|bug)\s+(?:is|was|here is|here was)\b)",
    re.IGNORECASE,
)
#: A finding as a linter or compiler reports it: a file and line, then the message
#: ("`server.go:224` - Should use tagged switch", "src/a.ts:12:5: error …").
_COPIED_FINDING = re.compile(
    r"^\W*`?[\w@./-]+\.[A-Za-z]\w{0,7}:\d+(?::\d+)?`?\s*(?:[-–—:]|\(|\w+:)"
)


def copied_finding(summary: str) -> bool:
    """A summary that is a tool's finding copied out (it opens on a file and line)."""
    return bool(_COPIED_FINDING.search(summary))


def concluded(text: str) -> bool:
    return bool(CONCLUDED.search(text))


def garbled(summary: str) -> bool:
    """A summary a faulty cut left unreadable: an unclosed code span, a URL cut to one slash,
    an opening bracket at the end."""
    return summary.count("`") % 2 == 1 or bool(_GARBLED.search(summary))


def subject_of(sentence: str) -> str:
    """What the sentence is about: its subject after a conclusion's frame and an opening
    clause (the whole sentence when no verb is found)."""
    text, _ = _unframed(sentence.strip())
    clause = _OPENING_CLAUSE.sub("", text, count=1) if _OPENING_CLAUSE.match(text) else text
    subject = _subject(clause)
    return clause if subject is None else subject
