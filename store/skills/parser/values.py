"""What every parsing stage shares: the `_Reject` that carries a `ParseFailure` out, the
loaded frontmatter, and helpers that read YAML values as text and show them in messages."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from store.models.files import ParseFailure
from store.models.skills import SpecWarning

_SHOW_CHARS = 60


class _Reject(Exception):
    """Carries a ParseFailure out of nested helpers to `parse_skill_md`."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.failure = ParseFailure(code, reason)


class _Loaded(NamedTuple):
    """A loaded frontmatter block and what it took to load it."""

    value: Any  # after `_load_frontmatter`: the JSON-safe mapping
    warnings: list[SpecWarning]
    plain: dict[str, str]  # top-level key -> its plain scalar exactly as written


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _text(value: Any) -> str:
    """Scalar -> str ('' for null); lists of scalars joined by spaces; mappings -> ''."""
    if value is None or isinstance(value, dict):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(_text(item) for item in value if _is_scalar(item))
    return str(value)


def _first_text(*values: Any) -> str:
    return next((text for text in map(_text, values) if text.strip()), "")


def _list_field(*values: Any) -> tuple[str, ...]:
    """Strings split on commas/newlines, lists taken item by item; unique, in order."""
    items: list[str] = []
    for value in values:
        if isinstance(value, str):
            items.extend(re.split(r"[,\n]", value))
        elif isinstance(value, list):
            items.extend(_text(item) for item in value if _is_scalar(item))
    return _unique(item.strip() for item in items)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "mapping"
    if isinstance(value, list | tuple | set):
        return "list"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


def _truncate(text: str) -> str:
    return text if len(text) <= _SHOW_CHARS else text[: _SHOW_CHARS - 1] + "…"


def _show(value: Any) -> str:
    """A short quoted rendering for messages; repr() escapes control characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(_truncate(text))


def _one_line(text: str) -> str:
    """The first line of a library message, whitespace-collapsed and capped."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    first = " ".join(first.split())
    return first if len(first) <= 100 else first[:99] + "…"
