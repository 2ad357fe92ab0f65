"""Pieces of transcript text the warm tier quotes and summarises: sentences around a trigger,
what a tool call did (its shell words, program and target, an edit's gist), and one clean
summary line; what tool output says is `store.ingest.output` (re-exported here). Pure
functions over strings; offsets always index the original text, so evidence stays verbatim.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator, Sequence
from functools import lru_cache

from store.ingest import edit_gists
from store.ingest.memo import per_session
from store.ingest.output import ANSI, DROPPED_BLOCKS, EVIDENCE_CHARS
from store.ingest.output import ERROR_NAME as ERROR_NAME
from store.ingest.output import ends_at_prompt as ends_at_prompt
from store.ingest.output import error_class as error_class
from store.ingest.output import error_gist as error_gist
from store.ingest.output import line_end as line_end
from store.ingest.output import output_line as output_line
from store.ingest.output import quiet as quiet
from store.ingest.output import shows_failure as shows_failure
from store.ingest.output import undecorated as undecorated
from store.ingest.redact import redact
from store.models import ToolUse
from store.text import one_line

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


_TOOL_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?:\s[^<>]{0,200})?/?>")


_EMPHASIS = re.compile(r"\*\*|^#{1,6}\s+", re.MULTILINE)  # not `__`: __init__.py


_ABSOLUTE = re.compile(r"(?<![\w.~`])/(?:[\w.@+-]+/){2,}([\w.@+-]+/)?([\w.@+-]+)")


@per_session
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
    if "*" in text or "#" in text:  # what `_EMPHASIS` needs
        text = _EMPHASIS.sub("", text)
    return fold(text, limit)


#: Where an error message chains its context ("exec failed: unable to start container
#: process: exec: \"curl\": executable file not found").
_CHAIN = re.compile(r":\s+")


def error_line(line: str, limit: int) -> str:
    """An error line as a summary quotes it: decorations gone, paths shortened, at most
    `limit` characters; a line too long that chains its context with colons loses its first
    links, not its last (the cause is at the end of the chain)."""
    text = short_paths(undecorated(line))
    text = " ".join(text.split())
    while len(text) > limit:
        links = _CHAIN.split(text, maxsplit=1)
        if len(links) < 2 or len(links[1]) < 24:
            break
        text = links[1]
    return clean(text, limit)


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
    return _ABSOLUTE.sub(_shortened, text) if "/" in text else text


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
    r'|description|prompt|subagent_type)"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*)'
)  # the value's characters as runs between escapes: one step per run, not per character


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
    return dict(_inputs(tool.input_text))


@per_session
def _inputs(text: str) -> tuple[tuple[str, str], ...]:
    fields: dict[str, str] = {}
    for name, raw in _INPUT_FIELD.findall(text):
        try:
            fields.setdefault(name, json.loads(f'"{raw}"'))
        except ValueError:
            fields.setdefault(name, raw)
    return tuple(fields.items())


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


#: A word or a run of operator characters, as `shlex` (posix, blanks split, these
#: punctuation characters) reads a command outside quotes.
_SHELL_TOKEN = re.compile(r"[();<>|&\n]+|[^();<>|&\n \t\r]+")


@lru_cache(maxsize=2048)
def _shell_words(command: str) -> tuple[str, ...]:
    if "<<" not in command and not any(c in command for c in "'\"\\#"):
        # No quote, escape, comment or heredoc (most commands): the same tokens at once.
        tokens = _SHELL_TOKEN.findall(command)
        return tuple(tokens or command.split())
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
    return [list(stage) for stage in _pipeline(command, keep_env)]


@per_session
def _pipeline(command: str, keep_env: bool) -> tuple[tuple[str, ...], ...]:
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
    return tuple(map(tuple, stages))


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


@per_session
def main_stage(command: str) -> str:
    """The stage that does the work, as text (see `pipeline`)."""
    stages = pipeline(command)
    return " ".join(stages[-1]) if stages else ""


@per_session
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
        old_shown, new_shown = edit_gists.windows(redact(pair[0]), redact(pair[1]), 70)
        return f"{_quoted(old_shown)} → {_quoted(new_shown)}"
    if gone:
        return f"removed {_quoted(gone[0])}"
    if came:
        return f"added {_quoted(edit_gists.first_added(came))}"
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
    if "\\" in path:  # a Windows path (`c:\\app\\src\\page.tsx`) names the same file
        path = path.replace("\\", "/")
    return path.rstrip("/").rsplit("/", 1)[-1]
