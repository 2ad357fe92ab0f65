"""Rules that follow data through a script rather than reading one line: a Python file (read
by `python_flow`), a JavaScript file, or a fenced ```python / ```js block in Markdown (read
with its lines numbered as in the file). JavaScript is read line by line: `process.env` sent
whole to the network (`data_exfiltration`), a socket piped into a shell (`reverse_shell`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from store.skills.lint.python_flow import _offset, python_hits
from store.skills.lint.rules import _Hit

# --------------------------------------------------------------------------- JavaScript

_JS_ENV = re.compile(
    r"JSON\.stringify\(\s*process\.env\s*\)|Object\.(?:entries|keys|values|assign)\([^)]{0,40}"
    r"process\.env\s*\)|\.\.\.process\.env\b|=\s*process\.env\s*[;\n]"
)
_JS_ASSIGNED = re.compile(r"(?:const|let|var)\s+(\w+)\s*=\s*([^;\n]*)")
_JS_SINK = re.compile(
    r"\b(?:fetch|axios(?:\.(?:post|put|patch|request))?|got\.(?:post|put)|request\.post"
    r"|https?\.request|\.send|\.write|navigator\.sendBeacon)\s*\("
)
_JS_SHELL = re.compile(r"spawn\(\s*['\"](?:/bin/)?(?:ba)?sh['\"]|exec\(\s*['\"](?:/bin/)?(?:ba)?sh")


def javascript_hits(text: str, line_offsets: Sequence[int], first_line: int = 0) -> list[_Hit]:
    """`process.env` sent whole to the network; a socket piped into a shell."""
    hits: list[_Hit] = []
    lines = text.split("\n")
    tainted: set[str] = set()
    for line in lines:
        assigned = _JS_ASSIGNED.search(line)
        if assigned and (_JS_ENV.search(line) or _mentions(assigned.group(2), tainted)):
            tainted.add(assigned.group(1))
    for number, line in enumerate(lines):
        if _JS_SINK.search(line) and (_JS_ENV.search(line) or _mentions(line, tainted)):
            at = _offset(line_offsets, first_line + number)
            hits.append(_Hit("data_exfiltration", "high", "sends process.env over the network", at))
    if _JS_SHELL.search(text) and re.search(r"\.connect\(", text) and ".pipe(" in text:
        number = next(i for i, line in enumerate(lines) if _JS_SHELL.search(line))
        at = _offset(line_offsets, first_line + number)
        hits.append(
            _Hit("reverse_shell", "high", "reverse shell: a socket is piped to a shell", at)
        )
    return hits


def _mentions(text: str, names: set[str]) -> bool:
    """`text` uses one of `names` whole (not `name.PORT` or `name["PORT"]`)."""
    return any(re.search(rf"\b{re.escape(n)}\b(?!\s*[.\[])", text) for n in names)


# --------------------------------------------------------------------------- dispatch

_FENCE = re.compile(r"(?m)^[ \t]{0,3}(?P<fence>```+|~~~+)[ \t]*(?P<lang>[\w+-]*)[^\n]*\n")
_PY_LANGS = frozenset({"python", "py", "python3"})
#: A Python source without one of these has nothing the flow rules look for.
_PY_TRIGGERS = (
    "environ", "socket", "exec(", "eval(", "compile(", "dup2", ".ssh", "credentials", ".netrc",
    "bashrc", "zshrc", "profile", "cron", "launch", "systemd", ".env",
)  # fmt: skip
_JS_LANGS = frozenset({"javascript", "js", "typescript", "ts", "node", "mjs"})
#: A fence opening a block in one of those languages: without one, no block is looked at.
_CODE_FENCE = re.compile(
    r"(?m)^[ \t]{0,3}(?:```+|~~~+)[ \t]*(?:python3?|py|javascript|js|typescript|ts|node|mjs)\b",
    re.IGNORECASE,
)


def flow_hits(relpath: str, text: str, line_offsets: Sequence[int]) -> list[_Hit]:
    """Dispatch by file type: Python and JavaScript files whole, Markdown by fenced block."""
    lower = relpath.lower()
    if lower.endswith((".py", ".pyw")):
        return python_hits(text, line_offsets) if _has_any(text, _PY_TRIGGERS) else []
    if lower.endswith((".js", ".mjs", ".cjs", ".ts")):
        return javascript_hits(text, line_offsets)
    if not lower.endswith((".md", ".markdown", ".mdx")):
        return []
    hits: list[_Hit] = []
    if _CODE_FENCE.search(text) is None:
        return hits
    for lang, first_line, block in fenced_blocks(text):
        if lang in _PY_LANGS and _has_any(block, _PY_TRIGGERS):
            hits += python_hits(block, line_offsets, first_line)
        elif lang in _JS_LANGS and ("process.env" in block or "spawn" in block):
            hits += javascript_hits(block, line_offsets, first_line)
    return hits


def _has_any(text: str, words: Sequence[str]) -> bool:
    return any(word in text for word in words)


def fenced_blocks(text: str) -> Iterator[tuple[str, int, str]]:
    """(language, 0-based first line of the content, content) for each fenced code block."""
    pos = 0
    line = 0  # lines counted up to `pos` (incrementally: a file of many blocks stays linear)
    while (opening := _FENCE.search(text, pos)) is not None:
        fence = opening.group("fence")
        close = re.compile(rf"(?m)^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = close.search(text, opening.end())
        stop = end.start() if end else len(text)
        line += text.count("\n", pos, opening.end())
        yield opening.group("lang").lower(), line, text[opening.end() : stop]
        after = end.end() if end else len(text)
        line += text.count("\n", opening.end(), after)
        pos = after
