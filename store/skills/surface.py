"""The discovery surface of a skill: the short texts that are embedded and indexed.

Only name, description, when_to_use, triggers and tags are used (never the body): that is
what an agent sees before it activates a skill, and what a task description should match.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

#: Labels in the vector index are skill_id * SLOTS + ordinal.
SLOTS = 16
MAX_SENTENCES = 6
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z0-9\"'(])")
_MIN_SENTENCE = 24


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def name_words(name: str) -> str:
    return re.sub(r"[-_:/.]+", " ", name).strip()


def _join(parts: Sequence[str]) -> str:
    return " ".join(p.strip() for p in parts if p and p.strip())


def surfaces(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, text) pairs, in a fixed order; the first is always the skill's card."""
    words = name_words(str(manifest.get("name", "")))
    description = " ".join(str(manifest.get("description", "")).split())
    extra = _join(
        [
            str(manifest.get("when_to_use", "")),
            ", ".join(manifest.get("triggers", ()) or ()),
            ", ".join(manifest.get("tags", ()) or ()),
        ]
    )
    result = [("card", f"{words}: {description}")]
    if extra:
        result.append(("use", f"{words}: {extra}"))
    sentences = [s for s in _SENTENCE_END.split(description) if len(s) >= _MIN_SENTENCE]
    if len(sentences) > 1:
        result.extend(("sentence", f"{words}: {s}") for s in sentences[:MAX_SENTENCES])
    return result[:SLOTS]


def fts_columns(manifest: Mapping[str, Any]) -> tuple[str, str, str]:
    """(name, description, extra) for the FTS5 table."""
    extra = _join(
        [
            str(manifest.get("when_to_use", "")),
            " ".join(manifest.get("triggers", ()) or ()),
            " ".join(manifest.get("tags", ()) or ()),
            str(manifest.get("role", "")),
        ]
    )
    return name_words(str(manifest.get("name", ""))), str(manifest.get("description", "")), extra
