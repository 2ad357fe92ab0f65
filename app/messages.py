"""Messages the app's workers post back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from store.models import ScanReport, SkillDetail, SkillSummary, Suggestion


@dataclass
class SkillsLoaded(Message):
    rows: list[SkillSummary]
    total: int


@dataclass
class DetailLoaded(Message):
    detail: SkillDetail | None


@dataclass
class SuggestionsReady(Message):
    context: str
    suggestions: list[Suggestion]
    seconds: float


@dataclass
class CatalogChanged(Message):
    """A scan (manual or by the file watcher) changed the catalog."""

    report: ScanReport


@dataclass
class ModelReady(Message):
    seconds: float
    ok: bool
    error: str = ""
