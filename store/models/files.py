"""Files the library could not read: why a skill or transcript file was skipped."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ParseFailure:
    """Why a file was skipped. `code` is stable (for tests and --json); `reason` is for people."""

    code: str
    reason: str


@dataclass(frozen=True)
class SkippedFile:
    path: str
    code: str
    reason: str
