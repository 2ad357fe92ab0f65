"""Cold tier: reasoning nodes proposed by an LLM over token-budget windows (DESIGN §6).

Optional by design: nothing else needs it, and no failure of the API leaves this module as an
exception. A session is cut into windows of at most `B = ⌊M_ctx·f⌋ − T_prompt − T_output`
tokens that overlap by ~750 tokens, so reasoning that straddles a cut is seen whole once. Each
window is one forced tool call (`record_nodes`); a node survives only if its evidence is a
verbatim substring of its window, which is what keeps the model from inventing quotes. The
prompt states the knowledge bar (DESIGN §6) with labelled examples and is versioned
(`PROMPT_VERSION`); `store.ingest.upgrade` runs this over sessions already in the library.

The anthropic SDK is imported lazily: importing this module costs nothing, and a missing SDK
surfaces as `ColdTierUnavailable` when a client is built.

`llm` says what the tier needs from a model and how calls fail, `windows` cuts a session into
windows, `prompt` is what each call sends, `extraction` runs the tier and validates replies,
`client` is the anthropic SDK client and `settings` reads the tier's config. Every public name
is re-exported here.
"""

from __future__ import annotations

from store.ingest.cold.client import FATAL_STATUS, MAX_RETRY_AFTER, AnthropicClient, default_backoff
from store.ingest.cold.extraction import (
    MIN_EVIDENCE_CHARS,
    SUMMARY_CHARS,
    TOOL_USE_OVERHEAD,
    ColdResult,
    Estimate,
    estimate_session,
    extract_cold,
    locate,
    window_nodes,
)
from store.ingest.cold.llm import (
    ColdTierUnavailable,
    LlmClient,
    LlmError,
    LlmFatalError,
    LlmWindowError,
)
from store.ingest.cold.prompt import (
    PROMPT,
    PROMPT_VERSION,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    flatten_tool_input,
    tool_schema,
    user_content,
)
from store.ingest.cold.settings import (
    DEFAULT_MODEL,
    ColdSettings,
    client_from_config,
    cold_settings,
    configured_model,
)
from store.ingest.cold.windows import (
    MIN_WINDOW_TOKENS,
    TOOL_INPUT_CHARS,
    TOOL_RESULT_CHARS,
    Window,
    estimate_tokens,
    make_windows,
    render_message,
    window_budget,
)

__all__ = [
    "DEFAULT_MODEL",
    "FATAL_STATUS",
    "MAX_RETRY_AFTER",
    "MIN_EVIDENCE_CHARS",
    "MIN_WINDOW_TOKENS",
    "PROMPT",
    "PROMPT_VERSION",
    "SUMMARY_CHARS",
    "TOOL_DESCRIPTION",
    "TOOL_INPUT_CHARS",
    "TOOL_NAME",
    "TOOL_RESULT_CHARS",
    "TOOL_USE_OVERHEAD",
    "AnthropicClient",
    "ColdResult",
    "ColdSettings",
    "ColdTierUnavailable",
    "Estimate",
    "LlmClient",
    "LlmError",
    "LlmFatalError",
    "LlmWindowError",
    "Window",
    "client_from_config",
    "cold_settings",
    "configured_model",
    "default_backoff",
    "estimate_session",
    "estimate_tokens",
    "extract_cold",
    "flatten_tool_input",
    "locate",
    "make_windows",
    "render_message",
    "tool_schema",
    "user_content",
    "window_budget",
    "window_nodes",
]
