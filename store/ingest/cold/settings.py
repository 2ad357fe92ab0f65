"""The cold tier's settings from config: the model and its context window, the client built
from them, and `extract_cold`'s keyword arguments."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from store.ingest.cold.client import AnthropicClient
from store.ingest.cold.llm import ColdTierUnavailable

if TYPE_CHECKING:
    from store.config import Config

T = TypeVar("T")

DEFAULT_MODEL = "claude-sonnet-5-5"


class ColdSettings(TypedDict):
    """`extract_cold` keyword arguments read from config (`extract_cold(s, c, **settings)`)."""

    fraction: float
    output_tokens: int
    overlap: int
    max_nodes: int


def client_from_config(config: Config) -> AnthropicClient:
    """The configured client; `ColdTierUnavailable` when the SDK or the API key is missing."""
    env = str(config.get("llm.api_key_env", "ANTHROPIC_API_KEY"))
    api_key = os.environ.get(env, "").strip()
    if not api_key:
        raise ColdTierUnavailable(
            f"the cold tier needs an Anthropic API key: set {env} "
            "(config llm.api_key_env names the variable)"
        )
    model, context_tokens = configured_model(config)
    return AnthropicClient(
        model,
        api_key,
        max_retries=_setting(config, "llm.max_retries", 4, int),
        context_tokens=context_tokens,
        output_tokens=_setting(config, "llm.output_tokens", 4000, int),
    )


def configured_model(config: Config) -> tuple[str, int]:
    """The configured model's name and context window (no SDK, no API key needed)."""
    model = str(config.get("llm.model", DEFAULT_MODEL))
    return model, _setting(config, "llm.context_tokens", 200_000, int)


def cold_settings(config: Config) -> ColdSettings:
    """`extract_cold` keyword arguments from config."""
    return ColdSettings(
        fraction=_setting(config, "llm.window_fraction", 0.45, float),
        output_tokens=_setting(config, "llm.output_tokens", 4000, int),
        overlap=_setting(config, "llm.overlap_tokens", 750, int),
        max_nodes=_setting(config, "llm.max_nodes", 12, int),
    )


def _setting(config: Config, key: str, default: T, kind: Callable[[Any], T]) -> T:
    value = config.get(key, default)
    if isinstance(value, bool):
        raise ColdTierUnavailable(f"config {key} must be a number, got {value!r}")
    try:
        return kind(value)
    except (TypeError, ValueError) as exc:
        raise ColdTierUnavailable(f"config {key} must be a number, got {value!r}") from exc
