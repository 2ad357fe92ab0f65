"""The review queue (screen 1): one screen over four decision panes — nodes, SKILL.md drafts,
relation proposals, enrichment proposals — and the filter bar of the nodes."""

from app.screens.review.screen import ReviewScreen

__all__ = ["ReviewScreen"]
