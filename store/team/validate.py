"""Checking what comes from the hub before anything of it is stored here.

Another library wrote it, through a client that may be older, newer or hostile, and an owner
of the hub may have written rows by hand: every pulled row is checked field by field, and a
drafted SKILL.md must parse as a spec-valid skill and pass the security lint, exactly as a
draft this library makes. A row that fails is reported in one line and skipped whole.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from store.models import NODE_TYPES, SCOPES, ParsedSkill
from store.skills.lint import lint_text
from store.skills.parser import is_valid_skill_name, parse_skill_md
from store.text import one_line

ITEM_ID = re.compile(r"[A-Za-z0-9_.:-]{1,100}")
STATUSES = ("staged", "approved", "rejected", "withdrawn")
KINDS = ("stage", "revise", "withdraw", "approve", "reject", "edit", "rescope")
SPEC_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
CITATION_FIELDS = {"marker": str, "node_id": str, "session_id": str, "file": str}


class Malformed(ValueError):
    """What is wrong with a pulled row."""


def problem(row: dict[str, Any]) -> str | None:
    """None when the row can be stored; else one line saying what is wrong with it."""
    try:
        check(row)
    except Malformed as exc:
        who = one_line(str(row.get("author") or row.get("actor") or "?"), 40)
        what = one_line(str(row.get("item_id", "?")), 60)
        return (
            f"hub event {row.get('id')}: {row.get('item_kind', 'item')} {what} by {who} has a"
            f" malformed payload ({exc}); skipped, nothing of it was stored"
        )
    return None


def check(row: dict[str, Any]) -> None:
    _text(row, "item_id", 100)
    if not ITEM_ID.fullmatch(row["item_id"]):
        raise Malformed("bad item id")
    if row.get("kind") not in KINDS:
        raise Malformed("unknown event kind")
    if row.get("item_kind") not in ("node", "draft"):
        raise Malformed("unknown item kind")
    if row.get("status") not in STATUSES:
        raise Malformed("unknown status")
    if row.get("scope") not in SCOPES:
        raise Malformed("unknown scope")
    for key, limit in (("origin", 64), ("author", 63), ("actor", 63), ("decided_by", 63)):
        _text(row, key, limit, empty=key == "decided_by")
    _text(row, "summary", 2000)
    _text(row, "reason", 2000, empty=True)
    if not isinstance(row.get("at"), datetime):
        raise Malformed("no time")
    if not isinstance(row.get("applied"), bool) or not isinstance(row.get("published"), bool):
        raise Malformed("flags are not booleans")
    for key in ("id", "last_event"):
        if not isinstance(row.get(key), int):
            raise Malformed(f"{key} is not a number")
    body = row.get("body")
    if not isinstance(body, dict):
        raise Malformed("the decision is not an object")
    for key in ("summary", "reason", "scope", "status"):
        if key in body and not isinstance(body[key], str):
            raise Malformed(f"the decision's {key} is not text")
    item = row.get("item_body")
    if not isinstance(item, dict):
        raise Malformed("the item is not an object")
    if row["item_kind"] == "node":
        _node(item)
    else:
        _draft(item)


def _node(item: dict[str, Any]) -> None:
    for key, limit in (
        ("session_id", 200),
        ("project", 1000),
        ("file", 4000),
        ("tier", 20),
        ("developer", 300),
    ):
        _text(item, key, limit, empty=key != "session_id")
    _text(item, "evidence", 100_000, empty=True)
    if item.get("type") not in NODE_TYPES:
        raise Malformed("unknown node type")
    for key in ("line_start", "line_end"):
        if not isinstance(item.get(key), int) or isinstance(item.get(key), bool) or item[key] < 0:
            raise Malformed(f"{key} is not a line number")
    for key in ("confidence", "informativeness"):
        value = item.get(key)
        if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
            raise Malformed(f"{key} is not a number between 0 and 1")
    edges = item.get("edges", [])
    if not isinstance(edges, list) or len(edges) > 1000:
        raise Malformed("edges are not a list")
    for edge in edges:
        if not (
            isinstance(edge, list)
            and len(edge) == 3
            and all(isinstance(e, str) and 0 < len(e) <= 100 for e in edge)
        ):
            raise Malformed("an edge is not [source, target, type]")


def _draft(item: dict[str, Any]) -> None:
    _text(item, "name", 64)
    _text(item, "pattern_id", 100)
    _text(item, "content", 262_144)
    if not is_valid_skill_name(item["name"]):
        raise Malformed("the draft's name is not a valid skill name")
    citations = item.get("citations", [])
    if not isinstance(citations, list) or len(citations) > 500:
        raise Malformed("citations are not a list")
    for c in citations:
        if not isinstance(c, dict) or set(c) != {*CITATION_FIELDS, "line_start", "line_end"}:
            raise Malformed("a citation has other fields")
        if not all(isinstance(c[k], str) for k in CITATION_FIELDS) or not all(
            isinstance(c[k], int) and not isinstance(c[k], bool) for k in ("line_start", "line_end")
        ):
            raise Malformed("a citation's fields have the wrong types")
    skill_problem = skill_md_problem(item["content"], item["name"])
    if skill_problem:
        raise Malformed(skill_problem)


def skill_md_problem(text: str, name: str) -> str | None:
    """Why a drafted SKILL.md from the team cannot become a skill here (None: it can)."""
    parsed = parse_skill_md(text.encode("utf-8"), name)
    if not isinstance(parsed, ParsedSkill):
        return "the SKILL.md does not parse"
    if set(parsed.frontmatter) - SPEC_KEYS or parsed.name != name:
        return "the SKILL.md is not spec-valid"
    findings = [f for f in lint_text("SKILL.md", text) if f.severity in ("high", "medium")]
    if findings:
        return f"the SKILL.md fails the security lint: {findings[0].rule}"
    return None


def _text(data: dict[str, Any], key: str, limit: int, *, empty: bool = False) -> None:
    value = data.get(key)
    if not isinstance(value, str):
        raise Malformed(f"{key} is not text")
    if len(value) > limit or (not value and not empty):
        raise Malformed(f"{key} is empty or too long")
