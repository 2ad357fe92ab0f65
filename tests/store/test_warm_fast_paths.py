"""The warm tier's second speed pass (issue 11's budget) changes no answer.

Each fast path is checked against the slow way it replaces, on generated text shaped to hit
its edge cases (line starts, region cuts of long output, quotes and operators), so that a
later change to a pattern that breaks a fast path's precondition fails here:

- compiler and exception lines are tried only on lines holding their literal words;
- a shell command without quotes, escapes, comments or heredocs is tokenized by one regex;
- a tool input's string fields are read as runs between escapes;
- entity patterns are skipped when a character every match needs is absent;
- the actions between an episode's failure and success are found by bisection;
- candidates are copied through their instance dict;
- the parser decodes a usual line with the JSON scanner alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from store.ingest import bar, changes, episodes, output, snippets
from store.ingest.actions import Action, Episode
from store.ingest.candidates import Candidate, replace
from store.ingest.transcript import records
from store.models import ToolResult, ToolUse, TranscriptMessage

# -- tool output: lines tried only where their literal is -------------------------------------

_OUTPUT_PIECES = st.sampled_from(
    [
        "error",
        "Error",
        "error TS2307: x",
        "error[E0425]: y",
        "src/a.ts:3:5: error: z",
        "  error: w",
        "TypeError: boom",
        "  File x, line 2",
        "**(ValueError) bad",
        "E   KeyError: k",
        "Failure",
        "Exception in thread",
        "\n",
        "\n",
        ":",
        " ",
        "a",
        "12",
        "ok",
    ]
)


def _outputs() -> st.SearchStrategy[str]:
    return st.lists(_OUTPUT_PIECES, max_size=40).map("".join)


def _long(text: str, pad: int) -> str:
    """`text` in an output longer than two regions (16,000 characters each), where the
    second region starts, `pad` characters into it: that region then starts inside one of
    its lines (which a search from there cannot match at its start)."""
    filler = ("x" * 70 + "\n") * 300
    cut = min(pad, len(text))
    return filler + text + "y" * (16_000 - len(text) + cut)


def _slow_search(pattern: re.Pattern[str], view: str) -> tuple[int, int] | None:
    for lo, hi in output._regions(view):
        m = pattern.search(view, lo, hi)
        if m is not None:
            return m.span()
    return None


@settings(max_examples=300, deadline=None)
@given(_outputs(), st.integers(0, 400))
def test_compiler_lines_are_found_as_a_search_finds_them(text: str, pad: int) -> None:
    for view in (text, _long(text, pad)):
        fast = output._search_lines(output._COMPILER_LINE, view, "error")
        assert (fast.span() if fast else None) == _slow_search(output._COMPILER_LINE, view)


@settings(max_examples=300, deadline=None)
@given(_outputs(), st.integers(0, 400))
def test_exception_lines_are_found_as_finditer_finds_them(text: str, pad: int) -> None:
    for view in (text, _long(text, pad)):
        slow = [
            m.span()
            for lo, hi in output._regions(view)
            for m in output._EXCEPTION_LINE.finditer(view, lo, hi)
        ]
        fast = output._lines_matching(output._EXCEPTION_LINE, view, output._EXCEPTION_WORDS)
        assert [m.span() for m in fast] == slow


# -- shell words ---------------------------------------------------------------------------


def _shlex_words(command: str) -> tuple[str, ...]:
    """The tokenizer the fast path stands in for, as `_shell_words` runs it."""
    text = snippets._HEREDOC.sub("<< HEREDOC\n", command)
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    words: list[str] = []
    with contextlib.suppress(ValueError):
        words.extend(lexer)
    return tuple(words or text.split())


_COMMANDS = st.lists(
    st.sampled_from([*"ab-_./=1 \t\r\n;|&<>()$*~\x0b", "&&", "2>&1", "| tail", "<<"]),
    max_size=30,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_COMMANDS)
def test_plain_commands_are_tokenized_as_shlex_tokenizes_them(command: str) -> None:
    assert snippets._shell_words.__wrapped__(command) == _shlex_words(command)


def test_commands_with_quotes_escapes_comments_or_heredocs_still_go_through_shlex() -> None:
    for command in (
        'git commit -m "fix: a b"',
        "echo 'a|b'",
        "ls a\\ b",
        "make # build",
        "cat <<EOF\nx | y\nEOF",
    ):
        assert snippets._shell_words.__wrapped__(command) == _shlex_words(command)


# -- tool input fields ------------------------------------------------------------------------

_OLD_INPUT_FIELD = re.compile(
    r'"(command|file_path|notebook_path|path|pattern|url|skill|old_string|new_string|content'
    r'|description|prompt|subagent_type)"\s*:\s*"((?:[^"\\]|\\.)*)'
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["command", "content", "path", "other"]),
        st.text(alphabet=st.sampled_from(list('ab"\\\n\t/ é')), max_size=30),
        max_size=3,
    ),
    st.integers(0, 60),
)
def test_input_fields_are_read_as_the_per_character_pattern_read_them(
    fields: dict[str, str], cut: int
) -> None:
    text = json.dumps(fields)
    for shown in (text, text[: len(text) - cut]):  # the JSON may be cut short
        assert snippets._INPUT_FIELD.findall(shown) == _OLD_INPUT_FIELD.findall(shown)


# -- entities ------------------------------------------------------------------------------


def _all_entities(text: str) -> tuple[str, ...]:
    """`bar._entities` with every pattern run."""
    found: dict[str, None] = {}
    for span in bar._CODE_SPAN.findall(text):
        found.setdefault(span.strip("`").lower(), None)
    plain = bar._CODE_SPAN.sub(" ", text)
    for pattern in (
        bar._PATH, bar._FILE, bar._FLAG, bar._VERSION, bar._ERROR_CODE, bar._CODE_CASE,
        bar._NUMBER_UNIT, bar._PROPORTION,
    ):  # fmt: skip
        for match in pattern.findall(plain):
            token = match.strip(" \t\n(\"'").lower()
            if len(token) > 1:
                found.setdefault(token, None)
    return tuple(found)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            "the| |ms|`x.py`|a/b/c|--flag|-x|v1.2|3 of 5|12 ms|E0425|TypeError|camelCase"
            "|snake_case|f()|file.ts|.|/|-|7|٣".split("|")
        ),
        max_size=12,
    ).map("".join)
)
def test_entities_skip_only_patterns_that_cannot_match(text: str) -> None:
    assert bar._entities.__wrapped__(text) == _all_entities(text)


# -- episodes ------------------------------------------------------------------------------


def _message(index: int) -> TranscriptMessage:
    name = f"m{index}"
    return TranscriptMessage(index, "s.jsonl", index, index, name, "assistant", "text", "", "")


def _act(stream: int, pos: int, failed: bool = False) -> Action:
    m = _message(pos)
    tool, result = ToolUse(f"t{pos}", "Bash", "{}"), ToolResult(f"t{pos}", "", failed)
    return Action(stream, pos, m, m, pos, tool, result, "make", "make", failed, None, False)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 30), st.booleans()), max_size=25),
    st.integers(0, 2),
    st.integers(0, 30),
    st.integers(0, 30),
)
def test_the_actions_between_are_found_by_bisection_as_by_a_scan(
    rows: list[tuple[int, int, bool]], stream: int, first: int, last: int
) -> None:
    found = sorted((_act(s, p, f) for s, p, f in rows), key=lambda a: (a.stream, a.pos))
    episode = Episode("make", [_act(stream, first, True)], success=_act(stream, last))
    places = episodes._places(found)
    assert places is not None
    assert episodes._between(found, episode, places) == episodes._between(found, episode)
    backwards = list(reversed(found))
    ordered = [(a.stream, a.pos) for a in backwards] == sorted((a.stream, a.pos) for a in found)
    assert (episodes._places(backwards) is not None) == ordered  # out of order: a scan


def test_a_candidate_is_copied_as_dataclasses_copies_it() -> None:
    m = _message(3)
    c = Candidate("episode", "DEAD_END", m, 0, 3, 0, "ev", 0.6, "summary", 3, 3, cause="why")
    fast = replace(c, routine="routine", unproven="no")
    slow = dataclasses.replace(c, routine="routine", unproven="no")
    assert type(fast) is Candidate
    assert vars(fast) == vars(slow)
    assert list(vars(fast)) == list(vars(slow))


def test_words_as_typed_are_read_once_and_answer_as_before() -> None:
    command = "cd app && pytest -x tests/a 2>&1 | tail -20"
    assert changes._raw_words(command) == ["cd", "app", "&&", "pytest", "-x", "tests/a"]
    assert changes._raw_words(command) is not changes._raw_words(command)  # a fresh list


# -- the parser's line decoding -------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=8,
    ),
    st.sampled_from(["", "\n", "\r\n", " \n", "x", " {}", "\ufeff"]),
    st.booleans(),
)
def test_a_line_is_decoded_as_json_loads_decodes_it(value: object, edge: str, front: bool) -> None:
    text = json.dumps(value)
    text = edge + text if front else text + edge
    try:
        expected: object = json.loads(text)
    except ValueError:
        expected = ValueError
    try:
        got: object = records._loads_line(text)
    except ValueError:
        return  # the caller reads it again with json.loads
    assert json.dumps(got) == json.dumps(expected)


def test_a_space_to_the_regex_is_a_space_to_str_isspace() -> None:
    """`changes._token` and `_shown` test words with `\\s` instead of `str.isspace` per
    character: the same answer for every code point."""
    differ = [c for c in range(0x110000) if bool(changes._SPACE.search(chr(c))) != chr(c).isspace()]
    assert differ == []
