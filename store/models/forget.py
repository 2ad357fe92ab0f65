"""Forgetting: what `librarian forget` erases (its plan) and what it did (its report)."""

from __future__ import annotations

from dataclasses import dataclass

# -- forgetting (store/forget.py) ----------------------------------------------------------------


@dataclass(frozen=True)
class ErasureItem:
    """One piece of text `forget` erases (or would): what it is and where it lives."""

    what: str  # "message" | "summary" | "evidence" | "reason" | "pattern" | "draft" | ...
    where: str  # e.g. "session s-one #3 (lines 7–8)", "node n_… (DEAD_END)"
    preview: str  # a short one-line excerpt for the person confirming (never recorded)


@dataclass(frozen=True)
class ForgetPlan:
    """What `librarian forget` erases for a node, a session or a text."""

    scope: str  # "node" | "session" | "text"
    target: str  # the node or session id ("" for a text: the text itself is never kept)
    items: tuple[ErasureItem, ...]
    nodes: tuple[str, ...]  # nodes forgotten: out of the queue, patterns and search
    sessions: tuple[str, ...]  # sessions whose archived messages lose text
    patterns: tuple[str, ...]  # patterns dissolved (their texts quoted a forgotten node)
    skills: tuple[str, ...]  # SKILL.md files that may quote it: files, left to their owner
    redactions: int  # events written before schema 9 whose inline text is redacted in place

    @property
    def empty(self) -> bool:
        return not self.items and not self.nodes


@dataclass(frozen=True)
class ForgetReport:
    """What one `forget` did."""

    plan: ForgetPlan
    seq: int  # the `blob.erased` event (0 when there was nothing to erase)
    blobs: int  # blobs now tombstones
    redacted: int  # old events redacted in place
    embeddings: int  # cached vectors of forgotten texts deleted
    scrubbed: bool  # WAL checkpointed and truncated, database vacuumed
    notes: tuple[str, ...] = ()
