"""What a tool's output says (issue 11): whether a command's output shows a failure or
stops at a prompt, the line of an error that carries the failure (not a banner, a warning, a
wrapper's "Error: Command failed" or a "not found" notice printed before it), and the line
of output worth quoting. Offsets found in `quiet(text)` cut verbatim evidence out of `text`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import lru_cache

EVIDENCE_CHARS = 400


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
    if any(map(text.__contains__, _NOISE_SIGNS)):  # map: no generator frame per sign
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
    if any(map(low.__contains__, _FAILURE_WORDS)) and FAILURE_MARKERS.search(view):
        return "marked"
    if any(map(low.__contains__, _PROMPT_SIGNS)) and _PROMPT_LINE.search(view):
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
    compiled = _search_lines(_COMPILER_LINE, view, "error")
    if compiled:
        return trimmed(view, *compiled.span())
    exceptions = _lines_matching(_EXCEPTION_LINE, view, _EXCEPTION_WORDS)
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
    return _past_banners(view) or output_line(text, last=False, view=view)


#: A line a program prints on its way (a step heading, a progress or an info line, the
#: command echoed back), never the reason it failed.
_BANNER = re.compile(
    r"[ \t]*(?:==>|-->|=>|>>>?|\+ |\$ |#|\[(?:info|debug|notice)\]|(?:info|note|notice|hint"
    r"|debug)\b:?|npm (?:notice|info|http)|(?:running|downloading|fetching|checking|installing"
    r"|resolving|compiling|building|loading|starting)\b)",
    re.IGNORECASE,
)


def _past_banners(view: str) -> tuple[int, int] | None:
    """The first line that says something and is not a banner, when a banner opens the
    output (`==> Running in non-interactive mode …` before `Need sudo access on macOS!`)."""
    first = output_line(view, last=False, view=view)
    if first is None or not _BANNER.match(view, first[0]):
        return None
    for start, end in _line_spans(view, reverse=False):
        if start < first[0] or _NOISE_LINE.fullmatch(view, start, end):
            continue
        if _says_something(view, start, end) and not _BANNER.match(view, start, end):
            return trimmed(view, start, end)
    return None


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


#: `_ERRORISH_LINE` (written in lowercase) for lowercased ASCII output: the same lines at the
#: same offsets, several times faster than IGNORECASE.
_ERRORISH_LOWER = re.compile(_ERRORISH_LINE.pattern.replace("(?im)", "(?m)", 1))


def _errorish(view: str) -> re.Match[str] | None:
    """The first error-ish line, unless it only says something was not found or missing (a
    notice printed on the way: `nvm: not found`, `No config file found`) and a later line
    says the command failed: then that one. (On ASCII output the match is of the lowercased
    view: only its offsets and a case-blind test of its text are used.)"""
    text, pattern = (view.lower(), _ERRORISH_LOWER) if view.isascii() else (view, _ERRORISH_LINE)
    found = list(
        itertools.islice(
            (m for lo, hi in _regions(view) for m in pattern.finditer(text, lo, hi)), 6
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


def _search_lines(pattern: re.Pattern[str], view: str, literal: str) -> re.Match[str] | None:
    """`_search(pattern, view)` for a pattern that matches within one line starting at the
    line's start (`(?m)^…`, no newline in it) and only on a line holding `literal`: only
    those lines are tried. The same match: the lines skipped cannot match, and a match tried
    at a line's start is the one a search reaching it finds. (A lazy `^[^\n]*?(…)` searched
    over a whole output costs about 100 ns a character; most lines hold no `literal`.)"""
    for lo, hi in _regions(view):
        at = view.find(literal, lo, hi)
        while at >= 0:
            start = view.rfind("\n", 0, at) + 1
            if start >= lo:  # a line cut by the region's start is not tried by a search
                m = pattern.match(view, start, hi)
                if m is not None:
                    return m
            at = view.find(literal, line_end(view, at), hi)
    return None


#: What every line `_EXCEPTION_LINE` matches holds.
_EXCEPTION_WORDS = ("Error", "Exception", "Failure")


def _lines_matching(
    pattern: re.Pattern[str], view: str, literals: tuple[str, ...]
) -> list[re.Match[str]]:
    """`pattern.finditer` over each of `_regions(view)`, for a pattern whose matches start
    at a line's start and end on that line (`(?m)^…[^\n]*`) and hold one of `literals`:
    only the lines holding one are tried, in order (see `_search_lines`)."""
    found: list[re.Match[str]] = []
    for lo, hi in _regions(view):
        at = _first_of(view, literals, lo, hi)
        while at >= 0:
            start = view.rfind("\n", 0, at) + 1
            if start >= lo:
                m = pattern.match(view, start, hi)
                if m is not None:
                    found.append(m)
            at = _first_of(view, literals, line_end(view, at), hi)
    return found


def _first_of(view: str, literals: tuple[str, ...], lo: int, hi: int) -> int:
    """Where the first of `literals` in view[lo:hi] starts (-1: none is there)."""
    hits = [at for at in (view.find(literal, lo, hi) for literal in literals) if at >= 0]
    return min(hits) if hits else -1


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


#: An error's class or code as compilers, runtimes and tools print it (`error TS2307`,
#: `E0432`, `ModuleNotFoundError`, `ENOENT`).
ERROR_NAME = re.compile(
    r"\b(?:error[ \t]*(?:TS|CS|C)\d{3,5}|E\d{4}|[A-Z]\w*(?:Error|Exception))\b"
    r"|\bE(?!RRORS?\b)[A-Z]{3,}\b"
)


def error_class(output: str) -> str:
    """The class or code of the error in the line that carries a failure ("" when it names
    none): what a later run's output must not carry again to count as a success."""
    span = error_gist(output)
    if span is None:
        return ""
    named = ERROR_NAME.search(output[span[0] : span[1]])
    return named.group(0) if named else ""
