"""The discovery surface of a skill: the short texts that are embedded and indexed.

Only name, description, when_to_use, triggers and tags are embedded (never the body): that
is what an agent sees before it activates a skill. Per-sentence surfaces were measured and
dropped: no routing gain on the eval set for three times the embedding cost. The body's
prose is lexical evidence only (`lexical_body`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

#: Labels in the vector index are skill_id * SLOTS + ordinal.
SLOTS = 16
#: How many surfaces a skill has at most (card, use).
MAX_SURFACES = 2
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
#: How much of a body (after dropping code) feeds the lexical index.
BODY_CHARS = 12_000


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
    return result


def lexical_body(body: str) -> str:
    """The body as lexical evidence: prose only (code blocks dropped), bounded in size."""
    return _CODE_BLOCK.sub(" ", body)[:BODY_CHARS]


def fts_columns(manifest: Mapping[str, Any]) -> tuple[str, str, str]:
    """(name, description, extra) for the FTS5 table; the body column is `lexical_body`."""
    extra = _join(
        [
            str(manifest.get("when_to_use", "")),
            " ".join(manifest.get("triggers", ()) or ()),
            " ".join(manifest.get("tags", ()) or ()),
            str(manifest.get("role", "")),
        ]
    )
    return name_words(str(manifest.get("name", ""))), str(manifest.get("description", "")), extra
