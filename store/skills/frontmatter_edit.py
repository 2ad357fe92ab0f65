"""Editing an existing SKILL.md's frontmatter without disturbing it (DESIGN §5: "YAML
round-trip, comments and key order preserved when editing an existing file").

ruamel.yaml's round-trip mode keeps comments, key order and the style of every scalar it does
not touch. Indentation and line width are per-document choices it cannot read back, so before
anything is changed the frontmatter is dumped unchanged under a few candidate layouts and the
one that reproduces the original text exactly is kept; when none does (an unusual hand
layout), the edit is refused rather than reformatting the user's file. The body after the
frontmatter is kept byte for byte.

Only spec keys are written: `description` at the top, and the descriptive fields
(`when_to_use`, `triggers`, `tags`) as string values under `metadata`. A top-level copy of
one of those (a non-spec key some skills use) moves into `metadata`.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from store.errors import LibrarianError

#: Candidate (mapping indent, sequence indent, sequence dash offset) layouts, most usual first.
LAYOUTS = ((2, 2, 0), (2, 4, 2), (4, 4, 0), (4, 6, 4), (2, 3, 1), (3, 3, 0))
#: The descriptive fields an enrichment writes under `metadata`.
META_FIELDS = ("when_to_use", "triggers", "tags")
#: Top-level spellings of them that move into `metadata`.
TOP_LEVEL_ALIASES = {"when_to_use": "when_to_use", "when-to-use": "when_to_use"}


class FrontmatterEditError(LibrarianError):
    """A SKILL.md whose frontmatter cannot be edited faithfully."""


def split(text: str) -> tuple[str, str, str]:
    """(opening line, frontmatter YAML, the rest from the closing `---` line on)."""
    newline = "\r\n" if text.startswith("---\r\n") else "\n"
    if not text.startswith("---" + newline):
        raise FrontmatterEditError("the SKILL.md does not start with a `---` frontmatter block")
    start = len("---" + newline)
    end = text.find(newline + "---", start - len(newline))
    while end != -1:
        after = end + len(newline) + 3
        if after == len(text) or text[after : after + len(newline)] == newline:
            break
        end = text.find(newline + "---", end + 1)
    if end == -1:
        raise FrontmatterEditError("the frontmatter block is not closed by a `---` line")
    return text[:start], text[start : end + len(newline)], text[end + len(newline) :]


def _yaml(layout: tuple[int, int, int]) -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line the author wrote on one line
    mapping, sequence, offset = layout
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def _dump(yaml: YAML, data: Any) -> str:
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()


def _faithful(front: str) -> tuple[YAML, CommentedMap]:
    """A YAML instance whose dump of the unchanged frontmatter is the original text, and the
    loaded mapping."""
    for layout in LAYOUTS:
        yaml = _yaml(layout)
        try:
            data = yaml.load(front)
        except YAMLError as exc:
            raise FrontmatterEditError(f"the frontmatter is not valid YAML: {exc}") from exc
        if not isinstance(data, CommentedMap):
            raise FrontmatterEditError("the frontmatter is not a mapping")
        if _dump(yaml, data) == front:
            return yaml, data
    raise FrontmatterEditError(
        "its frontmatter layout cannot be reproduced exactly, so the librarian will not"
        " rewrite it (edit it by hand)"
    )


def edit(text: str, description: str, fields: Mapping[str, str]) -> str:
    """`text` with `description` and the `metadata` fields set (strings), everything else
    kept as it was: comments, key order, quoting, the body."""
    opening, front, rest = split(text)
    yaml, data = _faithful(front)
    data["description"] = description
    meta = data.get("metadata")
    if meta is None and any(fields.values()):
        meta = CommentedMap()
        data["metadata"] = meta
    if meta is not None and not isinstance(meta, CommentedMap):
        raise FrontmatterEditError("its `metadata` is not a mapping")
    for key in list(data):
        target = TOP_LEVEL_ALIASES.get(str(key)) or (str(key) if key in META_FIELDS else "")
        if target and fields.get(target):
            del data[key]  # a non-spec top-level key: it moves into `metadata`
    for key, value in fields.items():
        if value and meta is not None:
            meta[key] = str(value)
    return opening + _dump(yaml, data) + rest
