"""What the cold tier needs from a model (`LlmClient`; fakes implement it in tests) and the
errors a call or the tier itself ends in."""

from __future__ import annotations

from typing import Any, Protocol


class ColdTierUnavailable(Exception):
    """The cold tier cannot run here (no SDK, no API key, bad settings)."""


class LlmError(Exception):
    """An LLM call failed for good (retries included); the message is for people."""


class LlmWindowError(LlmError):
    """This window failed; the others may still work (rate limits, overload, odd replies)."""


class LlmFatalError(LlmError):
    """Every further call would fail the same way (bad key, bad request): stop the tier."""


class LlmClient(Protocol):
    """What the cold tier needs from a model. Fakes implement it in tests."""

    @property
    def context_tokens(self) -> int:
        """The model's context window, M_ctx."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens in `text`: a real count when available, else `estimate_tokens`. Never raises
        for API problems."""
        ...

    def extract(self, system: str, window: str, max_nodes: int) -> list[dict[str, Any]]:
        """One structured call for one window. Returns the node dicts in the model's order
        (`type`, `summary`, `evidence`, `confidence`, optional `message_index`), then the edge
        dicts (`source`, `target`: 0-based node positions; `type`). A node entry that is not a
        mapping is returned as `{}` so positions stay aligned. Raises `LlmWindowError` or
        `LlmFatalError` when the call fails."""
        ...
