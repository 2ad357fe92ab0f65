"""The two common frontmatter mistakes, repaired with a warning: plain values containing ': '
(quoted) and tabs in indentation (expanded to the file's own indent width)."""

from __future__ import annotations

import json
import re

from store.models.skills import SpecWarning
from store.skills.parser.values import _show

_FRONTMATTER_FIRST_LINE = 2  # the opening `---` must be line 1

_KEY_LINE_RE = re.compile(r"(?P<indent> *)(?P<key>[A-Za-z0-9_][\w.-]*):[ \t]+(?P<value>\S.*)")
_QUOTED_STARTS = tuple("\"'[{|>&*!%@`#")


def _quote_colon_values(text: str) -> tuple[str, list[SpecWarning]]:
    """Quote plain `key: value` scalars whose value contains ': ' (a common mistake)."""
    lines = text.split("\n")
    out: list[str] = []
    warnings: list[SpecWarning] = []
    index = 0
    while index < len(lines):
        match = _KEY_LINE_RE.fullmatch(lines[index])
        end = _continuation_end(lines, index + 1, len(match["indent"])) if match else index + 1
        if match and _needs_quoting(match["value"]):
            value = _fold_plain(match["value"], lines[index + 1 : end])
            out.append(f"{match['indent']}{match['key']}: {json.dumps(value, ensure_ascii=False)}")
            warnings.append(_colon_warning(match["key"], index))
        else:
            out.extend(lines[index:end])  # block scalars and continuations stay untouched
        index = end
    return "\n".join(out), warnings


def _needs_quoting(value: str) -> bool:
    value = value.rstrip()
    if value.startswith(_QUOTED_STARTS):
        return False
    return ": " in value or value.endswith(":")


def _continuation_end(lines: list[str], start: int, indent: int) -> int:
    """Index after the lines that belong to the key at `indent` (deeper or blank)."""
    end = start
    while end < len(lines):
        line = lines[end]
        if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
            break
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1  # trailing blank lines belong to nobody; leave them in place
    return end


def _fold_plain(first: str, rest: list[str]) -> str:
    """Fold a multi-line plain scalar the way YAML does: newline->space, blank->newline."""
    folded = first.strip()
    breaks = 0
    for line in rest:
        stripped = line.strip()
        if not stripped:
            breaks += 1
            continue
        folded += "\n" * breaks if breaks else " "
        folded += stripped
        breaks = 0
    return folded


def _colon_warning(key: str, index: int) -> SpecWarning:
    line = index + _FRONTMATTER_FIRST_LINE
    return SpecWarning(
        "yaml_repaired_colon",
        f"value of {_show(key)} on line {line} contains ': ' and was not quoted; "
        "read it as a quoted string",
    )


def _expand_indent_tabs(text: str) -> tuple[str, list[SpecWarning]]:
    """Replace tabs in indentation with spaces, at the file's own indent width."""
    width = _space_indent_width(text)
    lines = text.split("\n")
    changed: list[int] = []
    for index, line in enumerate(lines):
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent:
            lines[index] = indent.expandtabs(width) + line[len(indent) :]
            changed.append(index + _FRONTMATTER_FIRST_LINE)
    if not changed:
        return text, []
    shown = ", ".join(str(n) for n in changed[:10]) + (" ..." if len(changed) > 10 else "")
    message = f"tabs used for indentation (line {shown}); expanded to {width} spaces"
    return "\n".join(lines), [SpecWarning("yaml_tabs", message)]


def _space_indent_width(text: str) -> int:
    """Smallest space-only indentation in the text; 2 if there is none."""
    widths = [len(m.group(1)) for m in re.finditer(r"^( +)\S", text, re.MULTILINE)]
    return min(widths, default=2)
