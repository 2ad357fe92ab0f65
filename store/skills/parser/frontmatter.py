"""Loading the frontmatter safely: a streaming pre-pass over the parse events that rejects
alias bombs, deep nesting and non-standard tags; forbidden control characters shielded for
the YAML pass; ruamel's safe loader, with the common repairs retried on an error; and a
JSON-safe copy of what it loaded."""

from __future__ import annotations

import base64
import datetime
import math
import re
from collections.abc import Callable
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionEndEvent,
    CollectionStartEvent,
    Event,
    MappingStartEvent,
    ScalarEvent,
)

from store.models.skills import SpecWarning
from store.skills.parser.repairs import (
    _FRONTMATTER_FIRST_LINE,
    _expand_indent_tabs,
    _quote_colon_values,
)
from store.skills.parser.values import _kind, _Loaded, _one_line, _Reject, _truncate

MAX_ALIASES = 50
MAX_NODES = 20_000  # counts alias expansions, so it also bounds the JSON-safe copy
MAX_DEPTH = 32

_YAML_CORE = "tag:yaml.org,2002:"
_STANDARD_TAGS = frozenset(
    _YAML_CORE + t
    for t in (
        "str",
        "int",
        "float",
        "bool",
        "null",
        "map",
        "seq",
        "binary",
        "timestamp",
        "omap",
        "pairs",
        "set",
        "merge",
    )
)
# Characters YAML forbids in a stream (C0/C1 controls except tab/LF/CR/NEL). Real
# descriptions sometimes carry raw ANSI escapes; we shield them as private-use
# characters for the YAML pass and restore them afterwards so data stays verbatim.
_YAML_FORBIDDEN_RE = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]")
_SHIELD_BASE = 0xF0000
_SHIELD_RANGE_RE = re.compile("[\U000f0000-\U000f00ff]")


def _load_frontmatter(front: str) -> _Loaded:
    """Safely load the frontmatter as a JSON-safe dict, repairing common mistakes."""
    shielded, restore = _shield_forbidden(front)
    try:
        loaded = _safe_load(shielded)
    except (YAMLError, ValueError, TypeError, OverflowError, RecursionError) as error:
        loaded = _load_repaired(shielded, error)
    value = {} if loaded.value is None else loaded.value  # empty block: no_description
    if not isinstance(value, dict):
        raise _Reject("not_a_mapping", f"frontmatter is a {_kind(value)}, not a mapping")
    plain = {restore(k): restore(v) for k, v in loaded.plain.items()}
    return _Loaded(_json_dict(value, restore), loaded.warnings, plain)


def _safe_load(text: str) -> _Loaded:
    """Vet the event stream, then construct with the safe loader."""
    guard = _EventGuard()
    guard.check(text)
    try:
        return _Loaded(_yaml(allow_duplicates=False).load(text), [], guard.plain_scalars())
    except DuplicateKeyError as dup:
        # Lenient: load anyway. ruamel keeps the first occurrence.
        warning = SpecWarning("yaml_duplicate_keys", f"{dup.problem}; kept the first value")
        value = _yaml(allow_duplicates=True).load(text)
        return _Loaded(value, [warning], guard.plain_scalars())


def _yaml(*, allow_duplicates: bool) -> YAML:
    """A fresh safe, pure-Python loader (instances hold parse state, so never share them)."""
    yaml = YAML(typ="safe", pure=True)
    yaml.allow_duplicate_keys = allow_duplicates
    # Re-defining an anchor is legal YAML; ruamel's warnings.warn would leak to the UI.
    yaml.composer.warn_double_anchors = False
    return yaml


def _load_repaired(text: str, error: Exception) -> _Loaded:
    """Retry after the two common repairs; give up with the original error."""
    colon_text, colon_warnings = _quote_colon_values(text)
    tab_text, tab_warnings = _expand_indent_tabs(text)
    both_text, both_warnings = _quote_colon_values(tab_text)
    candidates = (
        (colon_text, colon_warnings),
        (tab_text, tab_warnings),
        (both_text, tab_warnings + both_warnings),
    )
    for candidate, repairs in candidates:
        if candidate == text or not repairs:
            continue
        try:
            loaded = _safe_load(candidate)
        except (YAMLError, ValueError, TypeError, OverflowError, RecursionError):
            continue
        return loaded._replace(warnings=repairs + loaded.warnings)
    raise _Reject("yaml_error", _describe_yaml_error(error))


def _describe_yaml_error(error: Exception) -> str:
    """One short line naming the file line, e.g. 'YAML error on line 3: ...'."""
    if isinstance(error, MarkedYAMLError) and error.problem_mark is not None:
        line = error.problem_mark.line + _FRONTMATTER_FIRST_LINE
        problem = error.problem or error.context or "invalid YAML"
        return f"YAML error on line {line}: {_one_line(str(problem))}"
    return f"YAML error: {_one_line(str(error)) or type(error).__name__}"


class _EventGuard:
    """Streams parse events and rejects bombs, deep nesting and unsafe tags early."""

    def __init__(self) -> None:
        self.nodes = 0
        self.aliases = 0
        self.stack: list[tuple[str | None, int]] = []  # (anchor, node count at start)
        self.sizes: dict[str, int] = {}  # anchor -> expanded node count
        self.root_is_mapping = False
        self.top_level: list[ScalarEvent | None] = []  # root mapping's keys and values, in turn

    def check(self, text: str) -> None:
        """Walk every event; raises YAMLError on syntax errors, _Reject on abuse."""
        for event in _yaml(allow_duplicates=False).parse(text):
            self._visit(event)

    def _visit(self, event: Event) -> None:
        tag = getattr(event, "tag", None)
        if isinstance(tag, str) and tag != "!" and tag not in _STANDARD_TAGS:
            shown = tag.replace(_YAML_CORE, "!!", 1)
            raise _Reject("unsafe_tag", f"unsafe YAML tag {_truncate(shown)}")
        self._note_top_level(event)
        if isinstance(event, AliasEvent):
            self._alias(event.anchor)
        elif isinstance(event, ScalarEvent):
            self._add(1)
            if event.anchor:
                self.sizes[event.anchor] = 1
        elif isinstance(event, CollectionStartEvent):
            self._open(event)
        elif isinstance(event, CollectionEndEvent):
            self._close()

    def _add(self, count: int) -> None:
        self.nodes += count
        if self.nodes > MAX_NODES:
            raise _Reject("yaml_bomb", f"frontmatter expands to more than {MAX_NODES:,} nodes")

    def _alias(self, anchor: str) -> None:
        self.aliases += 1
        if self.aliases > MAX_ALIASES:
            raise _Reject("yaml_bomb", f"frontmatter uses more than {MAX_ALIASES} aliases")
        if any(open_anchor == anchor for open_anchor, _ in self.stack):
            raise _Reject("yaml_bomb", f"alias *{_truncate(anchor)} refers to its own container")
        self._add(self.sizes.get(anchor, 1))  # undefined aliases fail later, in the composer

    def _note_top_level(self, event: Event) -> None:
        is_node = isinstance(event, AliasEvent | ScalarEvent | CollectionStartEvent)
        if is_node and self.root_is_mapping and len(self.stack) == 1:
            self.top_level.append(event if isinstance(event, ScalarEvent) else None)

    def plain_scalars(self) -> dict[str, str]:
        """Top-level `key: value` pairs whose value is an untagged plain scalar."""
        plain: dict[str, str] = {}
        keys, values = self.top_level[::2], self.top_level[1::2]
        for key, value in zip(keys, values, strict=False):
            if key is not None and value is not None and value.style is None and not value.tag:
                plain.setdefault(key.value, value.value)  # first wins, like the loader
        return plain

    def _open(self, event: CollectionStartEvent) -> None:
        anchor = event.anchor
        if not self.stack:
            self.root_is_mapping = isinstance(event, MappingStartEvent)
        if anchor:
            self.sizes.pop(anchor, None)  # a redefined anchor is unusable until it closes
        self.stack.append((anchor, self.nodes))
        self._add(1)
        if len(self.stack) > MAX_DEPTH:
            raise _Reject("too_deep", f"frontmatter nests deeper than {MAX_DEPTH} levels")

    def _close(self) -> None:
        anchor, start = self.stack.pop()
        if anchor:
            self.sizes[anchor] = self.nodes - start


def _shield_forbidden(text: str) -> tuple[str, Callable[[str], str]]:
    """Swap YAML-forbidden control characters for private-use ones; return the undo."""
    if not _YAML_FORBIDDEN_RE.search(text) or _SHIELD_RANGE_RE.search(text):
        # Nothing to shield, or shielding would be ambiguous: let YAML judge as is.
        return text, _identity
    shielded = _YAML_FORBIDDEN_RE.sub(lambda m: chr(_SHIELD_BASE + ord(m.group())), text)
    table = {_SHIELD_BASE + c: c for c in range(0x100)}
    return shielded, lambda s: s.translate(table)


def _identity(text: str) -> str:
    return text


# --------------------------------------------------------------------------- JSON-safe copy


def _json_dict(mapping: dict[Any, Any], restore: Callable[[str], str]) -> dict[str, Any]:
    return {_json_key(k, restore): _json_safe(v, restore) for k, v in mapping.items()}


def _json_key(key: Any, restore: Callable[[str], str]) -> str:
    converted = _json_safe(key, restore)
    return converted if isinstance(converted, str) else str(converted)


def _json_safe(value: Any, restore: Callable[[str], str]) -> Any:
    """Copy YAML data into str/int/float/bool/None/list/dict (str keys) only."""
    if isinstance(value, str):
        return restore(value)
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, datetime.date):  # also datetime.datetime
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")  # the form YAML !!binary used
    if isinstance(value, dict):
        return _json_dict(value, restore)
    if isinstance(value, set | frozenset):
        return sorted((_json_safe(v, restore) for v in value), key=str)
    if isinstance(value, list | tuple):
        return [_json_safe(v, restore) for v in value]
    return restore(str(value))
