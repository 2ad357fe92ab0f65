"""From the loaded frontmatter to a `ParsedSkill`: the description, name, license,
compatibility, allowed tools, descriptive fields and relations, each checked against the
Agent Skills spec with a `SpecWarning` for every deviation."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from store.models.skills import ParsedSkill, SpecWarning
from store.skills.parser.values import (
    _first_text,
    _is_scalar,
    _kind,
    _list_field,
    _Loaded,
    _Reject,
    _show,
    _text,
    _truncate,
    _unique,
)

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
MAX_BODY_LINES = 500

SPEC_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
RELATION_KEYS = ("requires", "extends", "complements", "enables", "supersedes")

_NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


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
    relations, pins = _relations(fm, meta, name, w)
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
        pins=pins,
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
) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, int], ...]]:
    """(type, target) pairs from metadata (and stray top-level) relation keys, and the pinned
    ones as (type, target, version): `requires: base-deploy@3` pins version 3."""
    pairs: list[tuple[str, str]] = []
    pins: list[tuple[str, str, int]] = []
    for kind in RELATION_KEYS:
        targets = split_relation_targets(meta.get(kind)) + split_relation_targets(fm.get(kind))
        for written in dict.fromkeys(targets):
            target, version = _pinned(kind, written, w)
            if version < 0 or (kind, target) in pairs:
                continue
            if _relation_target_ok(kind, target, name, w):
                pairs.append((kind, target))
                if version:
                    pins.append((kind, target, version))
    return tuple(pairs), tuple(pins)


_PIN = re.compile(r"^(.+?)@v?(\d{1,9})$")


def _pinned(kind: str, written: str, w: list[SpecWarning]) -> tuple[str, int]:
    """(target, pinned version) of a relation target; version 0: unpinned, -1: a bad pin
    (warned, ignored). Only `requires` and `extends` pin: the others never propagate."""
    if "@" not in written:
        return written, 0
    found = _PIN.match(written)
    if found is None or int(found[2]) < 1 or kind not in ("requires", "extends"):
        message = (
            f"{kind!r} target {_show(written)} has a pin that is not @N (a version number"
            " of a required or extended skill); ignored"
        )
        w.append(SpecWarning("relation_pin_invalid", message))
        return written, -1
    return found[1], int(found[2])


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
