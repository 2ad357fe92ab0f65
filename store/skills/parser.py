"""Lenient, safe SKILL.md parsing: bytes in, `ParsedSkill` or `ParseFailure` out.

The Agent Skills spec is strict but real skills are not, so deviations become
`SpecWarning`s and the skill still loads; only unreadable or unsafe files fail.
YAML is read with ruamel's safe loader after a streaming pre-pass over the
parse events that rejects alias bombs, deep nesting and non-standard tags.
Nothing here does I/O or executes anything.
"""

from __future__ import annotations

import base64
import datetime
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

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

from store.models import ParsedSkill, ParseFailure, SpecWarning

MAX_FILE_BYTES: int = 4 * 1024 * 1024
MAX_FRONTMATTER_BYTES: int = 256 * 1024

MAX_ALIASES = 50
MAX_NODES = 20_000  # counts alias expansions, so it also bounds the JSON-safe copy
MAX_DEPTH = 32
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
MAX_BODY_LINES = 500

SPEC_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
RELATION_KEYS = ("requires", "extends", "complements", "enables", "supersedes")

_NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_OPENING_RE = re.compile(r"---[ \t]*(?:\n|$)")
_CLOSING_RE = re.compile(r"^---[ \t]*$", re.MULTILINE)
_FRONTMATTER_FIRST_LINE = 2  # the opening `---` must be line 1
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
_KEY_LINE_RE = re.compile(r"(?P<indent> *)(?P<key>[A-Za-z0-9_][\w.-]*):[ \t]+(?P<value>\S.*)")
_QUOTED_STARTS = tuple("\"'[{|>&*!%@`#")
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


# --------------------------------------------------------------------------- public API


def parse_skill_md(data: bytes, folder_name: str) -> ParsedSkill | ParseFailure:
    """Parse one SKILL.md; never raises, never executes anything."""
    try:
        text = _decode(data)
        front, body = _split_frontmatter(text)
        loaded = _load_frontmatter(front)
        return _build(loaded, body, folder_name)
    except _Reject as rejected:
        return rejected.failure


def split_relation_targets(value: object) -> tuple[str, ...]:
    """Split a relation value ("a, b c" or a list) into unique targets, in order."""
    items: Iterable[object] = value if isinstance(value, list | tuple) else (value,)
    targets: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            continue  # null, mappings and nested lists name no skill
        targets.extend(t for t in re.split(r"[\s,]+", str(item)) if t)
    return tuple(dict.fromkeys(targets))


def is_valid_skill_name(name: str) -> bool:
    """True if `name` meets the spec: 1-64 chars of a-z, 0-9 and single inner hyphens."""
    return 1 <= len(name) <= MAX_NAME_CHARS and _NAME_RE.fullmatch(name) is not None


# --------------------------------------------------------------------------- bytes -> text


def _decode(data: bytes) -> str:
    """Check size and encoding; return text with LF line endings and no BOM."""
    if len(data) > MAX_FILE_BYTES:
        raise _Reject("too_large", f"file is {len(data):,} bytes (limit {MAX_FILE_BYTES:,})")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _Reject("binary", f"contains a NUL byte at byte {nul}; looks like a binary file")
    skipped = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    try:
        text = data[skipped:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Reject("invalid_utf8", f"not valid UTF-8 at byte {exc.start + skipped}") from None
    if not text.strip():
        raise _Reject("empty", "file is empty" if not text else "file contains only whitespace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split_frontmatter(text: str) -> tuple[str, str]:
    """Return (frontmatter, body); the file must open with a `---` line."""
    opening = _OPENING_RE.match(text)
    if opening is None:
        raise _Reject("no_frontmatter", "file does not start with a '---' frontmatter line")
    closing = _CLOSING_RE.search(text, opening.end())
    if closing is None:
        raise _Reject("unterminated_frontmatter", "frontmatter opened on line 1 is never closed")
    front = text[opening.end() : closing.start()]
    size = len(front.encode("utf-8"))
    if size > MAX_FRONTMATTER_BYTES:
        raise _Reject(
            "frontmatter_too_large",
            f"frontmatter is {size:,} bytes (limit {MAX_FRONTMATTER_BYTES:,})",
        )
    return front, text[closing.end() + 1 :]


# --------------------------------------------------------------------------- YAML


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


# --------------------------------------------------------------------------- repairs


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


# --------------------------------------------------------------------------- fields


def _build(loaded: _Loaded, body: str, folder: str) -> ParsedSkill:
    """Turn a loaded frontmatter mapping into a ParsedSkill, collecting warnings."""
    fm: dict[str, Any] = loaded.value
    w = list(loaded.warnings)  # appended to in a fixed order, so warnings are deterministic
    description = _description(fm, w)
    name, declared = _resolve_name(_as_written(loaded, "name"), folder, w)
    _check_extra_keys(fm, w)
    meta = _metadata(fm, w)
    license_text = _license(fm, w)
    compatibility = _compatibility(fm, w)
    allowed_tools = _allowed_tools(fm, w)
    relations = _relations(fm, meta, name, w)
    w.extend(_body_warnings(body))
    return ParsedSkill(
        name=name,
        declared_name=declared,
        description=description,
        frontmatter=fm,
        body=body,
        license=license_text,
        compatibility=compatibility,
        allowed_tools=allowed_tools,
        relations=relations,
        warnings=tuple(w),
        **_descriptive_fields(loaded, meta),
    )


def _descriptive_fields(loaded: _Loaded, meta: dict[str, Any]) -> dict[str, Any]:
    """Non-spec fields people put at the top level or in metadata."""
    fm: dict[str, Any] = loaded.value
    top_or_meta = (fm, meta)
    return {
        "when_to_use": _first_text(
            *(src.get(key) for src in top_or_meta for key in ("when_to_use", "when-to-use"))
        ),
        "triggers": _list_field(*(src.get("triggers") for src in top_or_meta)),
        "tags": _list_field(*(src.get(key) for src in top_or_meta for key in ("tags", "keywords"))),
        "role": _first_text(meta.get("role"), fm.get("role")),
        "version": _first_text(meta.get("version"), _as_written(loaded, "version")),
    }


def _as_written(loaded: _Loaded, key: str) -> Any:
    """A top-level value, but as written if YAML typed it (`name: 2048`, `version: 1.10`)."""
    value = loaded.value.get(key)
    if value is None or isinstance(value, str | list | dict):
        return value
    return loaded.plain.get(key, value)


def _description(fm: dict[str, Any], w: list[SpecWarning]) -> str:
    """The description, coerced to text; fails the parse when there is none."""
    text = _coerce_description(fm.get("description"), w)
    if not text.strip():
        missing = "description" not in fm
        raise _Reject(
            "no_description",
            "no 'description' in frontmatter" if missing else "'description' is empty",
        )
    if len(text) > MAX_DESCRIPTION_CHARS:
        w.append(
            SpecWarning(
                "description_too_long",
                f"description is {len(text):,} characters (spec max {MAX_DESCRIPTION_CHARS})",
            )
        )
    if "<" in text or ">" in text:
        w.append(SpecWarning("description_angle_brackets", "description contains '<' or '>'"))
    return text


def _coerce_description(raw: Any, w: list[SpecWarning]) -> str:
    if raw is None or isinstance(raw, str):
        return raw or ""
    if isinstance(raw, dict) or (isinstance(raw, list) and not all(map(_is_scalar, raw))):
        raise _Reject("no_description", f"'description' is a {_kind(raw)}, not text")
    text = " ".join(_text(item) for item in raw) if isinstance(raw, list) else _text(raw)
    w.append(
        SpecWarning(
            "description_not_string",
            f"description is a {_kind(raw)} ({_show(raw)}); read it as text",
        )
    )
    return text


def _resolve_name(raw: Any, folder: str, w: list[SpecWarning]) -> tuple[str, str | None]:
    """Return (effective name, declared name); unusable names fall back to the folder."""
    if raw is None:
        message = f"no 'name' in frontmatter; using the folder name {_show(folder)}"
        w.append(SpecWarning("name_missing", message))
        return folder, None
    reason = _unsafe_name_reason(raw)
    if reason:
        message = f"name {_show(raw)} {reason}; using the folder name {_show(folder)}"
        w.append(SpecWarning("name_unsafe", message))
        return folder, raw if isinstance(raw, str) else None
    _check_name_spec(raw, folder, w)
    return raw, raw


def _unsafe_name_reason(raw: Any) -> str:
    """Why a declared name cannot be used as an identifier or path part ('' if it can)."""
    if not isinstance(raw, str):
        return f"is a {_kind(raw)}, not a string"
    if not raw.strip():
        return "is empty"
    if "/" in raw or "\\" in raw:
        return "contains a path separator"
    if ".." in raw:
        return "contains '..'"
    if any(_is_control(c) for c in raw):
        return "contains control characters"
    return ""


def _is_control(char: str) -> bool:
    # Cc: C0/C1 controls incl. NUL and ESC; Cf: invisible format chars such as bidi
    # overrides; Zl/Zp: line/paragraph separators. None belong in an identifier.
    return unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp"}


def _check_name_spec(name: str, folder: str, w: list[SpecWarning]) -> None:
    if _NAME_RE.fullmatch(name) is None:
        message = f"name {_show(name)} is not lowercase letters, digits and single hyphens"
        w.append(SpecWarning("name_invalid", message))
    if len(name) > MAX_NAME_CHARS:
        message = f"name is {len(name):,} characters (spec max {MAX_NAME_CHARS})"
        w.append(SpecWarning("name_too_long", message))
    if name != folder:
        message = f"name {_show(name)} does not match its folder {_show(folder)}"
        w.append(SpecWarning("name_mismatch", message))


def _check_extra_keys(fm: dict[str, Any], w: list[SpecWarning]) -> None:
    extra = sorted(key for key in fm if key not in SPEC_KEYS)
    if not extra:
        return
    shown = ", ".join(_show(key) for key in extra[:20])
    more = f" and {len(extra) - 20} more" if len(extra) > 20 else ""
    w.append(SpecWarning("extra_keys", f"keys outside the Agent Skills spec: {shown}{more}"))


def _metadata(fm: dict[str, Any], w: list[SpecWarning]) -> dict[str, Any]:
    """The metadata mapping ({} if absent or unusable), warning on non-string values."""
    meta = fm.get("metadata")
    if meta is None:
        return {}
    if not isinstance(meta, dict):
        message = f"'metadata' is a {_kind(meta)} ({_show(meta)}), not a mapping; ignored"
        w.append(SpecWarning("metadata_not_mapping", message))
        return {}
    for key, value in meta.items():
        if not isinstance(value, str):
            shown = f"metadata.{_truncate(key)}"
            message = f"{shown} is a {_kind(value)} ({_show(value)}), not a string"
            w.append(SpecWarning("metadata_non_string", message))
    return meta


def _license(fm: dict[str, Any], w: list[SpecWarning]) -> str:
    text = _text(fm.get("license"))
    if not text.strip():
        w.append(SpecWarning("license_missing", "no 'license' in frontmatter"))
    return text


def _compatibility(fm: dict[str, Any], w: list[SpecWarning]) -> str:
    text = _text(fm.get("compatibility"))
    if len(text) > MAX_COMPATIBILITY_CHARS:
        message = f"compatibility is {len(text):,} characters (spec max {MAX_COMPATIBILITY_CHARS})"
        w.append(SpecWarning("compatibility_too_long", message))
    return text


def _allowed_tools(fm: dict[str, Any], w: list[SpecWarning]) -> tuple[str, ...]:
    raw = fm.get("allowed-tools")
    if isinstance(raw, list):
        message = "'allowed-tools' is a YAML list; the spec wants a space-separated string"
        w.append(SpecWarning("allowed_tools_list", message))
        return _unique(_text(item).strip() for item in raw)
    return _unique(_split_tools(_text(raw)))


def _split_tools(text: str) -> list[str]:
    """Split on whitespace/commas, but not inside parentheses: `Bash(git add:*)`."""
    tokens: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if depth == 0 and (char.isspace() or char == ","):
            tokens.append("".join(current))
            current = []
            continue
        depth = max(0, depth + (char == "(") - (char == ")"))
        current.append(char)
    tokens.append("".join(current))
    return tokens


def _relations(
    fm: dict[str, Any], meta: dict[str, Any], name: str, w: list[SpecWarning]
) -> tuple[tuple[str, str], ...]:
    """(type, target) pairs from metadata (and stray top-level) relation keys."""
    pairs: list[tuple[str, str]] = []
    for kind in RELATION_KEYS:
        targets = split_relation_targets(meta.get(kind)) + split_relation_targets(fm.get(kind))
        for target in dict.fromkeys(targets):
            if _relation_target_ok(kind, target, name, w):
                pairs.append((kind, target))
    return tuple(pairs)


def _relation_target_ok(kind: str, target: str, name: str, w: list[SpecWarning]) -> bool:
    if target == name:
        message = f"{kind!r} lists the skill itself ({_show(name)}); ignored"
        w.append(SpecWarning("relation_self", message))
        return False
    # Plugin skills are namespaced `plugin:skill` in Claude Code, so accept that form.
    if not all(is_valid_skill_name(part) for part in target.split(":", 1)):
        message = f"{kind!r} target {_show(target)} is not a valid skill name; ignored"
        w.append(SpecWarning("relation_invalid", message))
        return False
    return True


def _body_warnings(body: str) -> list[SpecWarning]:
    if not body.strip():
        return [SpecWarning("body_empty", "SKILL.md has no instructions after the frontmatter")]
    lines = body.count("\n") + (0 if body.endswith("\n") else 1)
    if lines > MAX_BODY_LINES:
        message = f"body is {lines:,} lines (spec recommends under {MAX_BODY_LINES})"
        return [SpecWarning("body_too_long", message)]
    return []


# --------------------------------------------------------------------------- small helpers


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
