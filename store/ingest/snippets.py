"""Pieces of transcript text the warm tier quotes and summarises: sentences around a trigger,
the line of tool output that carries a failure (its gist), what a tool call did, and one
clean summary line. Pure functions over strings; offsets always index the original text, so
evidence stays verbatim.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Iterator, Sequence
from functools import lru_cache

from store.ingest.redact import redact
from store.models import ToolUse
from store.text import one_line

EVIDENCE_CHARS = 400
SUMMARY_CHARS = 300

# --------------------------------------------------------------------------- sentences

_SENTENCE_END = re.compile(r"[.!?](?=[\s)\"'*_`]|$)|\n")
_BULLET = re.compile(r"[ \t\r\n]*(?:(?:[-*+>]|\d{1,3}[.)]|#{1,6})[ \t]+)?")


def sentences(text: str, first: tuple[int, int], last: tuple[int, int]) -> tuple[int, int]:
    """The sentence(s) from the one holding `first` to the one holding `last`, at most
    EVIDENCE_CHARS long (only the first sentence, or a window of it, when longer)."""
    lo = _sentence_start(text, first[0])
    hi = _sentence_end(text, last[1])
    if hi - lo > EVIDENCE_CHARS:
        hi = _sentence_end(text, first[1])
    if hi - lo > EVIDENCE_CHARS:  # one giant sentence: a window around the trigger
        lo = max(lo, first[0] - EVIDENCE_CHARS // 4)
        hi = min(hi, lo + EVIDENCE_CHARS)
    lead = _BULLET.match(text, lo, hi)
    lo = lead.end() if lead and lead.end() <= first[0] else lo
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    return lo, hi


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of text[start:end], bullets and blanks trimmed."""
    stop = len(text) if end is None else end
    at = start
    while at < stop:
        lead = _BULLET.match(text, at, stop)  # a list marker ("1. ") is not a sentence
        lo = lead.end() if lead else at
        hi = min(_next_break(text, lo), stop)
        if hi <= lo:
            hi = stop
        trimmed = hi
        while trimmed > lo and text[trimmed - 1].isspace():
            trimmed -= 1
        if trimmed > lo:
            yield lo, trimmed
        at = hi + 1 if hi < stop and text[hi : hi + 1] in ("\n", " ") else hi
        while at < stop and text[at].isspace():
            at += 1


def _sentence_start(text: str, at: int) -> int:
    floor = max(0, at - EVIDENCE_CHARS)
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
        lead = _BULLET.match(text, hi + 1)  # past a list marker ("1. "), not at its dot
        hi = _next_break(text, lead.end() if lead else hi + 1)
    return hi


def _next_break(text: str, at: int) -> int:
    limit = min(len(text), at + EVIDENCE_CHARS)
    m = _SENTENCE_END.search(text, at, limit)
    if m is None:
        return limit
    return m.start() if m.group() == "\n" else m.end()


def line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


# --------------------------------------------------------------------------- tool output

_EXCEPTION_LINE = re.compile(
    r"(?m)^[ \t]*(?:\*\*[ \t]*\((?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception)\)[^\n]*"
    r"|\[?(?:E[ \t]+)?(?:Uncaught[ \t]+)?(?:[\w.]*\.)?[A-Z]\w*(?:Error|Exception|Failure)"
    r"\b(?::|[ \t]+\w)[^\n]*)"
)
#: Compilers and type checkers write `error` in lower case (`error TS2307:`, `error[E0425]:`,
#: `file.c:3:5: error:`); "Error: Build failed" is a wrapper's summary, not the error.
_COMPILER_LINE = re.compile(
    r"(?m)^[^\n]*?(?:\berror[ \t]*(?:TS|CS|C)\d{3,5}\b|\berror\[E\d{3,4}\]|^[^\n:]{1,200}:\d+"
    r"(?::\d+)?:[ \t]*(?:fatal[ \t]+)?error\b|^[ \t]*error(?:\[[\w-]+\])?:)[^\n]*"
)
_TEST_FAILURE_LINE = re.compile(
    r"(?m)^[ \t]*(?:FAILED[ \t]+\S+[^\n]*|FAIL[ \t]+\S+[^\n]*|[●✕×✗][ \t]+[^\n]+"
    r"|ERROR[ \t]+\S+::[^\n]*)"
)
#: A linter's or checker's finding at a place in a file (`lib/a.ex:120:18:pattern_match`,
#: `src/b.py:3:1: F401 …`): a relative path, a line and a column; warnings and notes are not it.
_LOCATION_LINE = re.compile(
    r"(?m)^[ \t]*(?:[┃│║|][ \t]*)?(?:\.{1,2}/)?[\w@+-][\w./@+-]*\.\w{1,8}:\d+:\d+\b"
    r"(?!:?[ \t]*(?:warning|note|info|hint|notice)\b):?[ \t]*(?P<rest>[^\n]*)"
)
#: A linter's rule code and message with its location on the next line (ruff's and
#: rustc-style output: `PLR1714 Consider merging …` then `  --> src/a.py:451:18`).
_RULE_FINDING = re.compile(
    r"(?m)^[ \t]*[A-Z]{1,6}\d{2,5}(?:\[\*\])?[ \t]+\S[^\n]*\n[ \t]*-->[ \t]*\S+:\d+:\d+"
)
_LOG_ERROR_LINE = re.compile(
    r"(?m)^[ \t]*(?:[✘✖×][ \t]*)?(?:ERRO(?:R)?\b|\[ERROR\]|FATAL\b|CRITICAL\b"
    r"|level=(?:error|fatal)\b)[^\n]*"
)
_ERRORISH_LINE = re.compile(
    r"(?im)^(?![ \t]*(?:npm[ \t]+warn|warn(?:ing)?\b|\(node:\d+\)|deprecat|notice\b|hint\b))"
    r"[^\n]*?\b(?:error|errors|failed|failure|fatal|cannot|can't|could not|couldn't|denied"
    r"|not found|no such|invalid|unable|refused|timed out|exception|panic|not allowed"
    r"|has not been|unknown|missing|undefined|conflict|mismatch)\b[^\n]*"
)
_PROMPT_LINE = re.compile(
    r"(?im)^[ \t]*(?:\?[ \t]+[^\n]*\?[^\n]*|[^\n]*\((?:y/n|y/N|Y/n|yes/no)\)[^\n]*"
    r"|[^\n]*\[(?:y/n|Y/n|y/N)\][^\n]*|[^\n]*press (?:enter|any key)[^\n]*"
    r"|[^\n]*ok to proceed\?[^\n]*)"
)
_NOISE_LINE = re.compile(r"(?i)[ \t]*(?:exit code -?\d+)?[ \t\r]*")
_EDGE_TAGS = re.compile(r"(?:<[\w-]+>[ \t]*)+")
_END_TAGS = re.compile(r"(?:[ \t]*</[\w-]+>)+[ \t\r]*$")
ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?|\x1b.?")
DROPPED_BLOCKS = re.compile(
    r"<(system-reminder|local-command-caveat|command-message)>.{0,20000}?</\1>", re.DOTALL
)
#: Signs in a command's output that it did not do what it was run for.
FAILURE_MARKERS = re.compile(
    r"(?im)^[ \t]*(?:Traceback \(most recent call last\)|npm ERR!|error(?:\[[\w-]+\])?:"
    r"|fatal:|FAILED\b|FAIL[ \t]|BUILD FAILED|Compilation failed|Failed to compile"
    r"|Command timed out|ERR_[A-Z_]+)"
    r"|\berror[ \t]*TS\d{3,5}\b|\b[1-9]\d* (?:failed|failing|errors?)\b(?! (?:in|of) 0)"
    r"|^[ \t]*(?:E[ \t]+)?[A-Z]\w*(?:Error|Exception): "
    r"|\bexit (?:code|status) [1-9]\d*\b"
)


def quiet(text: str) -> str:
    """`text` with ANSI escapes, injected blocks (system reminders) and lines that never
    carry a failure blanked out (`NOISE_LINES`): same length, so offsets found in it cut
    verbatim evidence out of `text`."""
    if any(sign in text for sign in _NOISE_SIGNS):
        text = NOISE_LINES.sub(_blank, text)
    if "\x1b" not in text and "<" not in text:
        return text
    text = ANSI.sub(_blank, text)
    return DROPPED_BLOCKS.sub(_blank, text) if "<" in text else text


#: Lines of a command's output that are never its failure: a test runner's line for a test
#: that passed (`(pass) parses flags > throws UnknownFlagError`, `✓ renders`), and the
#: agent harness's own shell start-up noise (`…/shell-snapshots/snapshot-bash-….sh: line 372:
#: alias: --: not found`), printed before the command's real output.
NOISE_LINES = re.compile(
    r"(?m)^[ \t]*(?:\S+:[ \t]+)?(?:\(pass\)|[✓✔])[^\n]*$"
    r"|^[^\n]*shell-snapshots/snapshot-[\w.-]+\.sh:[^\n]*$"
)
_NOISE_SIGNS = ("(pass)", "✓", "✔", "shell-snapshots/")


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group())


def shows_failure(output: str) -> str:
    """How a command's output says it failed, even when the tool did not flag an error:
    "marked" (non-zero exit, failing tests, a compiler error, a traceback), "asked" (only a
    prompt it may have stopped at), "" (it does not)."""
    view = quiet(_ends(output))
    low = view.lower()
    # Cheap gates first: most output has none of these words and needs no regex at all.
    if any(word in low for word in _FAILURE_WORDS) and FAILURE_MARKERS.search(view):
        return "marked"
    if any(sign in low for sign in _PROMPT_SIGNS) and _PROMPT_LINE.search(view):
        return "asked"
    return ""


def ends_at_prompt(output: str) -> bool:
    """Whether the command stopped at a prompt it printed: at most two lines that say
    something come after the last one, warnings and notices aside (a test that answered a
    prompt goes on printing)."""
    view = quiet(_ends(output))
    prompts = list(_PROMPT_LINE.finditer(view))
    if not prompts:
        return False
    last = prompts[-1]
    after = [
        line
        for line in view[last.end() :].splitlines()
        if line.strip() and not _ASIDE_LINE.match(line)
    ]
    return len(after) <= 2


_ASIDE_LINE = re.compile(
    r"(?i)^[ \t]*(?:npm[ \t]+warn|warn(?:ing)?\b|notice\b|\(node:\d+\)|hint\b)"
)


_FAILURE_WORDS = ("error", "fail", "traceback", "exit ", "fatal", "timed out", "err!", "err_")
_PROMPT_SIGNS = ("?", "(y/", "[y/", "press ")


def _ends(output: str, size: int = 16_000) -> str:
    """The start and the end of a long output (where runners print what failed)."""
    return output if len(output) <= 2 * size else output[:size] + "\n" + output[-size:]


@lru_cache(maxsize=512)
def error_gist(text: str) -> tuple[int, int] | None:
    """The line of an error that carries the failure (see `_gist_line`), with the line after
    it when it only introduces that one ("…ignored by one of your .gitignore files:") or the
    next says why ("caused by: …")."""
    span = _gist_line(text)
    if span is None:
        return None
    view = quiet(text)
    line = view[span[0] : span[1]].rstrip()
    header = _test_header(view, span[0])
    if header is not None and _BARE_ASSERTION.match(line):
        # "1) test name (Module) … Assertion with =~ failed", and what was asserted
        code = _CODE_LINE.match(view, span[1] + 1) if span[1] < len(view) else None
        end = line_end(view, code.end()) if code else span[1]
        return header[0], min(end, header[0] + EVIDENCE_CHARS)
    nxt = output_line(view[span[1] :], last=False) if span[1] < len(view) else None
    if nxt is not None and (line.endswith(":") or _CAUSE.match(view, span[1] + nxt[0])):
        return span[0], min(span[1] + nxt[1], span[0] + EVIDENCE_CHARS)
    return span


#: An assertion message that does not say what was asserted.
_BARE_ASSERTION = re.compile(
    r"[ \t]*(?:E[ \t]+)?(?:Assertion with \S+ failed|AssertionError\s*$|assert(?:ion)? failed)",
    re.IGNORECASE,
)
_CODE_LINE = re.compile(r"[ \t]*code:[ \t]+\S")
_TEST_HEADER = re.compile(
    r"(?m)^[ \t]*(?:\d+\)[ \t]+test[ \t]+[^\n]+|FAILED[ \t]+\S+|●[ \t]+[^\n]+|--- FAIL: \S+[^\n]*)$"
)


def _test_header(view: str, at: int) -> tuple[int, int] | None:
    """The failing test's own line a few lines above `at` (runners print the test, then the
    assertion), if there is one."""
    start = at
    for _ in range(4):
        start = view.rfind("\n", 0, max(start - 1, 0)) + 1
        if start <= 0:
            break
    m = None
    for found in _TEST_HEADER.finditer(view, start, at):
        m = found
    return trimmed(view, *m.span()) if m else None


_CAUSE = re.compile(r"[ \t]*(?:caused by|cause|reason|because)\b", re.IGNORECASE)


def _gist_line(text: str) -> tuple[int, int] | None:
    """The line of an error that carries the failure: a compiler error, the last exception
    of a traceback, a failing test, an error-ish line that is not a warning or a notice, an
    interactive prompt the command stopped at; else the first line that says something."""
    view = quiet(text)
    compiled = _search(_COMPILER_LINE, view) if "error" in view.lower() else None
    if compiled:
        return trimmed(view, *compiled.span())
    exceptions = [m for lo, hi in _regions(view) for m in _EXCEPTION_LINE.finditer(view, lo, hi)]
    telling = [m for m in exceptions if not _WRAPPER.match(m.group())]
    exceptions = telling or exceptions  # "Error: Command failed" wraps the real error
    if exceptions:
        traceback = "Traceback (most recent call last)" in view
        chosen = exceptions[-1] if traceback else exceptions[0]
        return trimmed(view, *chosen.span())
    ruled = _search(_RULE_FINDING, view) if "-->" in view else None
    if ruled is not None:
        return trimmed(view, *ruled.span())
    located = _search(_LOCATION_LINE, view) if ":" in view else None
    if located is not None:
        return _with_message(view, located)
    for pattern in (_LOG_ERROR_LINE, _TEST_FAILURE_LINE):
        m = _search(pattern, view)
        if m is not None:
            return trimmed(view, *m.span())
    m = _errorish(view)
    if m is not None:
        return trimmed(view, *m.span())
    m = _search(_PROMPT_LINE, view)
    if m is not None:
        return trimmed(view, *m.span())
    return output_line(text, last=False, view=view)


#: A wrapper's line around the real error: "Error: Command failed: …", "Error: Build failed".
_WRAPPER = re.compile(
    r"[ \t]*\[?(?:Error|Exception)\b:?[ \t]*(?:command failed|build failed|process exited"
    r"|failed to compile|compilation failed|[^\n]*exited with (?:exit )?code)",
    re.IGNORECASE,
)
#: Words of an error line that say it failed (not only that something was not there).
_STRONG = re.compile(
    r"\b(?:error|errors|failed|failure|fatal|exception|panic|denied|refused|timed out"
    r"|not allowed|conflict|mismatch)\b",
    re.IGNORECASE,
)


def _errorish(view: str) -> re.Match[str] | None:
    """The first error-ish line, unless it only says something was not found or missing (a
    notice printed on the way: `nvm: not found`, `No config file found`) and a later line
    says the command failed: then that one."""
    found = list(
        itertools.islice(
            (m for lo, hi in _regions(view) for m in _ERRORISH_LINE.finditer(view, lo, hi)), 6
        )
    )
    if not found:
        return None
    if _STRONG.search(found[0].group()):
        return found[0]
    return next((m for m in found[1:6] if _STRONG.search(m.group())), found[0])


def _with_message(view: str, located: re.Match[str]) -> tuple[int, int] | None:
    """A finding's location line, with the line that says what is wrong when the location
    line itself does not (dialyzer puts the message after it, credo before it)."""
    span = trimmed(view, *located.span())
    # "#(App.Registry.check)" names where, not what: words of a message stand alone
    said = " ".join(w for w in located.group("rest").split() if not _NAME_PART.search(w))
    if span is None or len(_WORDS.findall(said)) >= 3:
        return span
    # only a line right next to it (no blank between) belongs to the finding
    at = line_end(view, span[1])
    after = trimmed(view, at + 1, line_end(view, at + 1)) if at < len(view) else None
    if after is not None and _plain_message(view, *after):
        return span[0], min(after[1], span[0] + EVIDENCE_CHARS)
    begin = view.rfind("\n", 0, span[0])
    before = trimmed(view, view.rfind("\n", 0, begin) + 1, begin) if begin > 0 else None
    if before is not None and _plain_message(view, *before):
        return before[0], min(span[1], before[0] + EVIDENCE_CHARS)
    return span


_WORDS = re.compile(r"[A-Za-z]{2,}")
_NAME_PART = re.compile(r"[.(/#]\w")
_DECORATION = re.compile(
    r"(?m)(?:^|[\u2190-\u21ff\u2500-\u257f])[ \t]*\[[A-Z]\](?=[ \t])|[\u2190-\u21ff\u2500-\u257f]+"
)


def _plain_message(view: str, start: int, end: int) -> bool:
    """A line of a few words that is not another location."""
    line = _DECORATION.sub(" ", view[start:end])
    return len(_WORDS.findall(line)) >= 3 and not _LOCATION_LINE.match(line)


def undecorated(text: str) -> str:
    """Tool output without the box drawing, arrows and category tags a report draws around
    its findings (`┃ [D] ↘ Nested modules …`)."""
    return _DECORATION.sub(" ", text) if not text.isascii() or "[" in text else text


def _regions(view: str, size: int = 16_000) -> list[tuple[int, int]]:
    """Where to look in a long output: its start and its end (runners print what failed
    there), as (start, end) offsets of `view` itself."""
    if len(view) <= 2 * size:
        return [(0, len(view))]
    return [(0, size), (len(view) - size, len(view))]


def _search(pattern: re.Pattern[str], view: str) -> re.Match[str] | None:
    for lo, hi in _regions(view):
        m = pattern.search(view, lo, hi)
        if m is not None:
            return m
    return None


def output_line(text: str, last: bool, view: str | None = None) -> tuple[int, int] | None:
    """The first (or last) non-blank line that says something, trimmed and bounded."""
    view = quiet(text) if view is None else view
    for start, end in _line_spans(view, reverse=last):
        if not _NOISE_LINE.fullmatch(view, start, end) and _says_something(view, start, end):
            span = trimmed(view, start, end)
            if span is not None:
                return span
    return None


def _says_something(text: str, start: int, end: int) -> bool:
    """A line with a few letters in it (not a banner drawn in punctuation)."""
    letters = 0
    for ch in text[start : min(end, start + 200)]:
        letters += ch.isalpha()
        if letters >= 3:
            return True
    return False


def _line_spans(text: str, reverse: bool) -> Iterator[tuple[int, int]]:
    if not reverse:
        start = 0
        while start <= len(text):
            end = line_end(text, start)
            yield start, end
            start = end + 1
        return
    end = len(text)
    while end >= 0:
        start = text.rfind("\n", 0, end) + 1
        yield start, end
        end = start - 1


def trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The line without surrounding whitespace and tool tags, at most EVIDENCE_CHARS."""
    lead = _EDGE_TAGS.match(text, start, end)
    start = lead.end() if lead else start
    tail = _END_TAGS.search(text, start, end)
    end = tail.start() if tail else end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, min(end, start + EVIDENCE_CHARS)) if end > start else None


# --------------------------------------------------------------------------- summaries

_TOOL_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?:\s[^<>]{0,200})?/?>")
_EMPHASIS = re.compile(r"\*\*|^#{1,6}\s+", re.MULTILINE)  # not `__`: __init__.py
_ABSOLUTE = re.compile(r"(?<![\w.~`])/(?:[\w.@+-]+/){2,}([\w.@+-]+/)?([\w.@+-]+)")


def clean(text: str, limit: int, *, secrets: bool = True) -> str:
    """One readable line: secrets redacted first (before any cut), tool XML, ANSI escapes
    and Markdown emphasis gone, whitespace folded, at most `limit` characters. `secrets=False`
    is for text that is only weighed, never shown or stored: the caller redacts what it
    keeps."""
    if secrets:
        text = redact(text)
    if "\x1b" in text:
        text = ANSI.sub("", text)
    if "<" in text:
        text = _TOOL_TAG.sub(" ", DROPPED_BLOCKS.sub(" ", text))
    return fold(_EMPHASIS.sub("", text), limit)


def fold(text: str, limit: int) -> str:
    """`store.text.one_line`, with a fast path for the usual printable text."""
    text = " ".join(text.split())
    if not text.isprintable():  # control or invisible characters: escape them
        return one_line(text, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_paths(text: str) -> str:
    """Absolute file paths cut to their last two parts: a lesson names the file, not one
    checkout's folders. A path that does not look like a file's (no extension, three parts
    or fewer: `/internal/settlements/export`) may be a URL route and is left whole."""
    return _ABSOLUTE.sub(_shortened, text)


def _shortened(m: re.Match[str]) -> str:
    whole = m.group(0)
    name = m.group(2)
    if "." not in name[1:] and whole.count("/") <= 3:
        return whole
    return (m.group(1) or "") + name


_CLAUSE_END = re.compile(r"[,;:)](?=\s)|\s[—–-]\s")


def _cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters where a clause ends, if one ends in the last
    third, else where a word ends; never inside a `code span`."""
    head = text[:limit]
    if head.count("`") % 2:  # the cut falls in a code span: cut before it
        head = head[: head.rfind("`")]
    ends = [m.end() for m in _CLAUSE_END.finditer(head) if m.end() >= limit * 2 // 3]
    if ends:
        return head[: ends[-1]].rstrip(" ,;:—–-(")
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:—–-(")


def clause_cut(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters where a clause or a sentence ends (with
    "…"), else where a word ends."""
    if len(text) <= limit:
        return text
    return _cut(text, limit - 1).rstrip("…") + "…"


def fit(summary: str) -> str:
    """At most SUMMARY_CHARS, ending as a sentence does, or cut where a clause or at least a
    word ends (with "…"): never inside a word or a code span."""
    summary = fold(summary, SUMMARY_CHARS * 4)
    if len(summary) > SUMMARY_CHARS - 1:
        summary = _cut(summary, SUMMARY_CHARS - 2).rstrip("…") + "…"
    summary = summary.rstrip(":;, ")
    if not summary:
        return ""
    return summary if summary.endswith((".", "!", "?", "…")) else summary + "."


# --------------------------------------------------------------------------- tool calls

_INPUT_FIELD = re.compile(
    r'"(command|file_path|notebook_path|path|pattern|url|skill|old_string|new_string|content'
    r'|description|prompt|subagent_type)"\s*:\s*"((?:[^"\\]|\\.)*)'
)
RUNNERS = frozenset(
    "npx npm pnpm yarn bun bunx uv uvx poetry pipenv python python3 node deno go cargo make"
    " docker git kubectl bundle rake mix dotnet gradle mvn just terraform helm pip pip3"
    " rails php composer swift flutter dart".split()
)
#: Subcommands after which the next word names what runs (`npm run build`, `uv run pytest`).
_RUN_WORDS = frozenset({"run", "exec", "x", "dlx", "test", "-m"})
_PREFIX_WORDS = frozenset({"sudo", "time", "env", "exec", "command", "nohup", "timeout"})
_CD_PREFIX = re.compile(r"^(?:cd[ \t]+[^\s;&|]+[ \t]*&&[ \t]*)+")
#: Pipeline stages that only filter another command's output.
_FILTERS = frozenset(
    "head tail grep egrep rg sort uniq wc tee less more cat cut tr sed awk jq column xargs".split()
)


def inputs(tool: ToolUse) -> dict[str, str]:
    """String fields of a tool's input; the JSON may be cut short, so no full parse."""
    fields: dict[str, str] = {}
    for name, raw in _INPUT_FIELD.findall(tool.input_text):
        try:
            fields.setdefault(name, json.loads(f'"{raw}"'))
        except ValueError:
            fields.setdefault(name, raw)
    return fields


#: A heredoc's body (the lines between `<<EOF` and `EOF`), for reading a command's steps.
HEREDOC_BODY = re.compile(
    r"(<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\2)[^\n]*\n.*?\n[ \t]*\3[ \t]*(?=\n|$)", re.S
)
_HEREDOC = re.compile(
    r"<<-?[ \t]*(['\"]?)([A-Za-z_]\w*)\1[^\n]*\n(?:.*?\n)??[ \t]*\2[ \t]*(?:\n|$)", re.S
)
_SEPARATORS = frozenset({"&&", "||", ";", "\n", "&", ";;"})
_REDIRECTS = frozenset({">", ">>", "<", ">&", "<&", "&>", ">|", "<<", "<<<", "&>>"})


def shell_words(command: str) -> list[str]:
    """Tokens of a shell command, quotes honoured, operators (`|`, `&&`, `;`, newlines,
    redirections) as tokens of their own; heredoc bodies dropped."""
    return list(_shell_words(command))


@lru_cache(maxsize=2048)
def _shell_words(command: str) -> tuple[str, ...]:
    text = _HEREDOC.sub("<< HEREDOC\n", command)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    words: list[str] = []
    try:
        for word in lexer:
            words.append(word)
    except ValueError:  # an unclosed quote: what was read so far
        pass
    return tuple(words or text.split())


def pipeline(command: str, *, keep_env: bool = False) -> list[list[str]]:
    """The stages of the step of a command that does the work: the last `&&`/`;`/newline
    step, its `|` stages without trailing filters (`npm run build 2>&1 | tail` → npm),
    redirections and leading `sudo`/`FOO=1` removed."""
    steps: list[list[str]] = [[]]
    for word in shell_words(command):
        if word in _SEPARATORS:
            steps.append([])
        else:
            steps[-1].append(word)
    step = next((s for s in reversed(steps) if s), [])
    stages: list[list[str]] = [[]]
    for word in step:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    stages = [_plain(s, keep_env) for s in stages if s]
    stages = [s for s in stages if s]
    while len(stages) > 1 and _program_word(stages[-1]) in _FILTERS:
        stages.pop()
    return stages


def _program_word(stage: list[str]) -> str:
    return next((w for w in stage if "=" not in w or w.startswith("-")), "")


def _plain(stage: list[str], keep_env: bool = False) -> list[str]:
    words: list[str] = []
    skip = False
    for i, word in enumerate(stage):
        if skip:
            skip = False
            continue
        if word in _REDIRECTS:
            skip = True
            if words and words[-1].isdigit() and i > 0 and stage[i - 1] == words[-1]:
                words.pop()  # the descriptor of `2>&1`
            continue
        words.append(word)
    env: list[str] = []
    while words and (words[0] in _PREFIX_WORDS or ("=" in words[0] and words[0][0] != "-")):
        word = words.pop(0)
        if "=" in word:
            env.append(word)
    if words:
        words[0] = words[0].rsplit("/", 1)[-1]
    return [*env, *words] if keep_env else words


def inspects_output(command: str) -> bool:
    """A command that reads logs or filters output (`gh run view --log-failed | grep FAILED`,
    `kubectl logs …`): failures in what it prints are someone else's, not its own."""
    words = shell_words(command)
    stages = [w for w in words if w == "|"]
    filtered = bool(stages) and any(
        w in _FILTERS for i, w in enumerate(words) if i > 0 and words[i - 1] == "|"
    )
    reads_logs = any(w in ("logs", "log", "--log", "--log-failed") for w in words[:8])
    return filtered or reads_logs


def main_stage(command: str) -> str:
    """The stage that does the work, as text (see `pipeline`)."""
    stages = pipeline(command)
    return " ".join(stages[-1]) if stages else ""


def program(command: str) -> str:
    """What a command runs, as a family: the program and its subcommand. `cd app && npm run
    build | tail` → "npm run build", `npx tsc --noEmit` → "npx tsc", `python -m pytest -x`
    → "python -m pytest", `kubectl -n api rollout status` → "kubectl rollout", `alembic
    upgrade head` → "alembic upgrade", `pytest tests/api` → "pytest", `ls -la` → "ls"."""
    stages = pipeline(command)
    if not stages:
        return ""
    words = stages[-1]
    head = words[0]
    if head.startswith("python") and "-m" in words[1:-1]:
        return f"{head} -m {words[words.index('-m') + 1]}"
    args = positional(words[1:])
    if head in RUNNERS and args:
        family = [head, args[0]]
        if args[0] in _RUN_WORDS and len(args) > 1:
            family.append(args[1])
        return " ".join(family)
    if args and _SUBCOMMAND.fullmatch(args[0]):
        return f"{head} {args[0]}"
    return head


_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]{1,24}")


def positional(words: Sequence[str]) -> list[str]:
    """The words that are not options, nor the value of a one-letter option (`-n api`)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word.startswith("-") and len(word) > 1:
            skip = len(word) == 2 and word[1].isalpha()
            continue
        out.append(word)
    return out


def command_tokens(command: str) -> tuple[list[str], list[str]]:
    """(what feeds the working stage, the working stage's words with the environment it is
    given), for comparing attempts."""
    stages = pipeline(command, keep_env=True)
    if not stages:
        return [], []
    return (stages[-2] if len(stages) > 1 else []), stages[-1]


def describe(tool: ToolUse) -> str:
    """A call as a summary names it: "`pytest tests/api`", "Edit of `app/page.tsx`"."""
    fields = inputs(tool)
    if "command" in fields:
        lines = _CD_PREFIX.sub("", fields["command"].strip()).split("\n")
        # a comment opening a script says what the agent meant, not what ran
        first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), "")
        return f"`{clean(short_paths(_CD_PREFIX.sub('', first.strip()) or lines[0]), 100)}`"
    for name in ("file_path", "notebook_path", "path", "pattern", "url"):
        if name in fields:
            return f"{tool.name} of `{clean(short_paths(fields[name]), 80)}`"
    skill = fields.get("skill") or tool.skill
    return f"{tool.name} `{clean(skill, 60)}`" if skill else clean(tool.name, 40) or "A tool call"


def edit_gist(tool: ToolUse) -> str:
    """What an Edit/MultiEdit/Write changed, in one line: "`old` → `new`" for the first
    changed line, "removed `old`", "added `new`", or "rewrote it"."""
    fields = inputs(tool)
    if tool.name == "Write" or ("content" in fields and "old_string" not in fields):
        return "rewrote it"
    old, new = fields.get("old_string", ""), fields.get("new_string", "")
    old_lines = [x.strip() for x in old.splitlines() if x.strip()]
    new_lines = [x.strip() for x in new.splitlines() if x.strip()]
    gone = [x for x in old_lines if x not in new_lines]
    came = [x for x in new_lines if x not in old_lines]
    if gone and came:
        # The first changed line that is code (an assignment, then a call or a bracket),
        # not a comment or a docstring's prose.
        pairs = list(zip(gone, came, strict=False))
        pair = next(
            (p for rank in (1, 2) for p in pairs if _code_rank(p[1]) == rank), (gone[0], came[0])
        )
        return f"{_quoted(pair[0])} → {_quoted(pair[1])}"
    if gone:
        return f"removed {_quoted(gone[0])}"
    if came:
        return f"added {_quoted(came[0])}"
    return "edited it"


_COMMENT = re.compile(r"^(?:#|//|/\*|\*|--|;|\"\"\"|\'\'\'|<!--)")


def _code_rank(line: str) -> int:
    """1 for an assignment, 2 for a call or a bracket, 0 for prose or a comment."""
    if _COMMENT.match(line):
        return 0
    if re.search(r"[^=!<>]=[^=]", line):
        return 1
    return 2 if re.search(r"[(){}\[\];]", line) else 0


def _quoted(line: str) -> str:
    inner = clean(line.replace("`", "'"), 70)
    return f"`{inner}`"


def file_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]
