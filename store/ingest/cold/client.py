"""The real `LlmClient` over the anthropic SDK, with its own retry loop: which SDK errors are
retried, which stop the tier, and how long the server asked us to wait.

The SDK is imported lazily (in functions): importing this module costs nothing, and a
missing SDK surfaces as `ColdTierUnavailable` when a client is built."""

from __future__ import annotations

import email.utils
import hashlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from store.ingest.cold.llm import ColdTierUnavailable, LlmFatalError, LlmWindowError
from store.ingest.cold.prompt import (
    TOOL_DESCRIPTION,
    TOOL_NAME,
    flatten_tool_input,
    tool_schema,
    user_content,
)
from store.ingest.cold.windows import estimate_tokens

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message, ToolParam

T = TypeVar("T")

#: A `retry-after` above this is capped: the worker would rather try again than stall.
MAX_RETRY_AFTER = 60.0
#: Status codes that mean every further call fails the same way.
FATAL_STATUS = {
    400: "bad request",
    401: "authentication failed",
    402: "payment required",
    403: "permission denied",
    404: "not found",
}


def default_backoff(attempt: int) -> float:
    """Seconds before retry `attempt` (0-based): 1, 2, 4, … capped at 30, with jitter
    (×0.75–1.0) so parallel workers do not retry in step."""
    return min(2.0**attempt, 30.0) * (1 - 0.25 * random.random())


@dataclass(frozen=True)
class _Failure:
    """How one SDK exception is handled."""

    label: str
    retry: bool = False
    fatal: bool = False


class AnthropicClient:
    """`LlmClient` over the anthropic SDK (2.x), with its own retry loop.

    The SDK's retries are off (`max_retries=0`): retrying here lets tests inject `sleep`, and
    lets a window that still fails become one readable problem instead of an exception.
    """

    def __init__(
        self,
        model: str,
        api_key: str | None = None,
        *,
        http_client: Any = None,
        max_retries: int = 4,
        context_tokens: int = 200_000,
        backoff: Callable[[int], float] = default_backoff,
        sleep: Callable[[float], None] = time.sleep,
        output_tokens: int = 4000,
    ) -> None:
        try:
            import anthropic
        except ImportError as exc:
            raise ColdTierUnavailable(
                "the cold tier needs the anthropic SDK: pip install 'anthropic>=2.10,<3'"
            ) from exc
        self.model = model
        self.max_retries = max_retries
        self.output_tokens = output_tokens
        self._context_tokens = context_tokens
        self._backoff, self._sleep = backoff, sleep
        self._sdk: anthropic.Anthropic = anthropic.Anthropic(
            api_key=api_key, http_client=http_client, max_retries=0
        )
        if not (self._sdk.api_key or self._sdk.auth_token or self._sdk.credentials):
            raise ColdTierUnavailable("no Anthropic credentials: set ANTHROPIC_API_KEY")
        self._counts: dict[str, int] = {}
        self._count_api = True

    @property
    def context_tokens(self) -> int:
        """M_ctx of the configured model."""
        return self._context_tokens

    def count_tokens(self, text: str) -> int:
        """Real count from `/v1/messages/count_tokens`, cached by text hash. After the endpoint
        fails once this client estimates locally: counting must never block extraction."""
        key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        if key not in self._counts:
            if len(self._counts) >= 4096:
                self._counts.clear()
            counted = self._api_count(text)
            self._counts[key] = estimate_tokens(text) if counted is None else counted
        return self._counts[key]

    def _api_count(self, text: str) -> int | None:
        import anthropic

        if not self._count_api:
            return None
        try:
            reply = self._sdk.messages.count_tokens(
                model=self.model, messages=[{"role": "user", "content": text}]
            )
        except anthropic.AnthropicError:
            self._count_api = False
            return None
        return reply.input_tokens

    def extract(self, system: str, window: str, max_nodes: int) -> list[dict[str, Any]]:
        """One forced `record_nodes` call; see `LlmClient.extract`."""
        tool: ToolParam = {
            "name": TOOL_NAME,
            "description": TOOL_DESCRIPTION,
            "input_schema": tool_schema(max_nodes),
        }
        message = self._call(
            lambda: self._sdk.messages.create(
                model=self.model,
                max_tokens=self.output_tokens,
                system=system,
                messages=[{"role": "user", "content": user_content(window, max_nodes)}],
                tools=[tool],
                tool_choice={"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True},
            )
        )
        return self._tool_input(message)

    def tool_call(
        self, system: str, content: str, name: str, description: str, schema: dict[str, Any]
    ) -> dict[str, Any]:
        """One forced call of a single tool; its input object (raises `LlmWindowError`)."""
        from anthropic.types import ToolUseBlock

        tool: ToolParam = {"name": name, "description": description, "input_schema": schema}
        message = self._call(
            lambda: self._sdk.messages.create(
                model=self.model,
                max_tokens=self.output_tokens,
                system=system,
                messages=[{"role": "user", "content": content}],
                tools=[tool],
                tool_choice={"type": "tool", "name": name, "disable_parallel_tool_use": True},
            )
        )
        if message.stop_reason in ("refusal", "max_tokens"):
            raise LlmWindowError(f"no usable reply (stop: {message.stop_reason})")
        for block in message.content:
            if (
                isinstance(block, ToolUseBlock)
                and block.name == name
                and isinstance(block.input, dict)
            ):
                return dict(block.input)
        raise LlmWindowError(f"no {name} call in the reply (stop: {message.stop_reason})")

    def _tool_input(self, message: Message) -> list[dict[str, Any]]:
        from anthropic.types import ToolUseBlock

        if message.stop_reason == "refusal":
            raise LlmWindowError("the model refused this window")
        if message.stop_reason == "max_tokens":
            raise LlmWindowError(f"reply cut off at max_tokens ({self.output_tokens})")
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name == TOOL_NAME:
                return flatten_tool_input(block.input)
        raise LlmWindowError(f"no {TOOL_NAME} call in the reply (stop: {message.stop_reason})")

    def _call(self, request: Callable[[], T]) -> T:
        """`request()` with retries for rate limits, overload, 5xx and connection errors."""
        attempt = 0
        while True:
            try:
                return request()
            except Exception as exc:
                failure = _classify(exc)
                if failure is None:
                    raise  # not an API problem: a bug to see, not to report
                if failure.fatal:
                    raise LlmFatalError(failure.label) from exc
                if not failure.retry:
                    raise LlmWindowError(failure.label) from exc
                if attempt >= self.max_retries:
                    raise LlmWindowError(f"{failure.label} after {attempt} retries") from exc
                delay = _retry_after(exc)
                self._sleep(self._backoff(attempt) if delay is None else delay)
                attempt += 1


def _classify(exc: Exception) -> _Failure | None:
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return _Failure("request timed out", retry=True)
    if isinstance(exc, anthropic.APIConnectionError):
        return _Failure("connection failed", retry=True)
    if isinstance(exc, anthropic.APIStatusError):
        return _status_failure(exc)
    if isinstance(exc, anthropic.AnthropicError):
        return _Failure(f"API error: {exc}")
    return None


def _status_failure(exc: anthropic.APIStatusError) -> _Failure:
    status, detail = exc.status_code, exc.api_message or ""
    # The API can say outright whether a retry is worth it; otherwise go by the status.
    allowed = exc.response.headers.get("x-should-retry") != "false"
    if status == 429:
        return _Failure("rate limited", retry=allowed)
    if status == 529:
        return _Failure("API overloaded (529)", retry=allowed)
    if status >= 500 or status == 408:
        return _Failure(f"server error ({status})", retry=allowed)
    if status in FATAL_STATUS:
        label = f"{FATAL_STATUS[status]} ({status})"
        # A bad request or unknown model is worth its detail; a bad key is not.
        return _Failure(
            f"{label}: {detail}" if detail and status in (400, 404) else label, fatal=True
        )
    return _Failure(f"request rejected ({status})" + (f": {detail}" if detail else ""))


def _retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `retry-after` as seconds or an
    HTTP date), capped at `MAX_RETRY_AFTER`; None when it did not ask."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    seconds = _seconds(headers.get("retry-after-ms"), 1000.0)
    if seconds is None:
        seconds = _seconds(headers.get("retry-after"), 1.0)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        return None
    return min(seconds, MAX_RETRY_AFTER)


def _seconds(value: str | None, per_second: float) -> float | None:
    if value is None:
        return None
    try:
        return float(value) / per_second
    except ValueError:
        pass
    try:
        return email.utils.parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None
