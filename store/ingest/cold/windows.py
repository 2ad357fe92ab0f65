"""Token arithmetic and windows: a local, pessimistic token count, the window budget
`B = ⌊M_ctx·f⌋ − T_prompt − T_output`, and a session's messages rendered and packed into
overlapping windows."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from store.ingest.redact import redact
from store.models.sessions import TranscriptMessage

#: A window smaller than this cannot hold a useful stretch of reasoning.
MIN_WINDOW_TOKENS = 1000

#: Rendering bounds: windows are about reasoning, not about file dumps.
TOOL_INPUT_CHARS = 1000
TOOL_RESULT_CHARS = 4000

_TRUNCATED = " …[truncated]\n"


def estimate_tokens(text: str) -> int:
    """A local, deliberately pessimistic token count: ⌈UTF-8 bytes / 3⌉.

    Claude's tokenizer averages about 4 characters per token on English prose and about 3 on
    code, JSON and logs, which is what transcripts mostly are; a CJK character (3 bytes) is
    about one token. Dividing bytes by 3 therefore overestimates prose by about a third and is
    close for code. Erring high is the safe side: a window that is too small costs one more
    call, one that is too large fails.
    """
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / 3)


def window_budget(
    context_tokens: int, prompt_tokens: int, fraction: float = 0.45, output_tokens: int = 4000
) -> int:
    """B = ⌊M_ctx·f⌋ − T_prompt − T_output (DESIGN §6).

    Raises ValueError when B ≤ 0 (or the inputs make no sense). A positive B below
    `MIN_WINDOW_TOKENS` is raised to it, as long as prompt, window and output still fit the
    context: a 45% share is a quality choice, the context size is the hard limit.
    """
    if context_tokens <= 0 or not 0 < fraction <= 1 or prompt_tokens < 0 or output_tokens < 0:
        raise ValueError(
            f"bad window settings: context {context_tokens}, fraction {fraction}, "
            f"prompt {prompt_tokens}, output {output_tokens}"
        )
    budget = math.floor(context_tokens * fraction) - prompt_tokens - output_tokens
    if budget <= 0:
        raise ValueError(
            f"no room for a window: ⌊{context_tokens}·{fraction}⌋ − {prompt_tokens} prompt − "
            f"{output_tokens} output tokens = {budget}"
        )
    return min(max(budget, MIN_WINDOW_TOKENS), context_tokens - prompt_tokens - output_tokens)


@dataclass(frozen=True)
class Window:
    """Consecutive messages rendered as one prompt. `index` is 0-based."""

    index: int
    messages: tuple[TranscriptMessage, ...]
    text: str


def render_message(message: TranscriptMessage) -> str:
    """One message as window text: `[#index role kind] text`, tool calls and results on their
    own lines, always ending in a newline (so window text is a plain concatenation). Secrets
    are redacted before anything is cut or sent: no credential leaves the machine."""
    lines = [f"[#{message.index} {message.role} {message.kind}] {redact(message.text)}".rstrip()]
    lines += [
        f"-> {u.name}: {_clip(redact(u.input_text), TOOL_INPUT_CHARS)}" for u in message.tool_uses
    ]
    for result in message.tool_results:
        label = "error" if result.is_error else "result"
        lines.append(f"<- {label}: {_clip(redact(result.text), TOOL_RESULT_CHARS)}")
    return "\n".join(lines) + "\n"


def make_windows(
    messages: Sequence[TranscriptMessage],
    budget: int,
    overlap: int = 750,
    count: Callable[[str], int] = estimate_tokens,
) -> list[Window]:
    """Pack consecutive messages into windows of at most `budget` tokens (by `count`).

    Each window after the first starts with the previous window's tail messages worth at least
    `overlap` tokens. That is best effort: the overlap is capped at half the budget (so every
    window brings as much new text as it repeats) and shrinks when the tail plus the next new
    message would not fit. A message larger than the budget is truncated into a window of its
    own. Deterministic: the same input gives the same windows.
    """
    if budget <= 0:
        raise ValueError(f"window budget must be positive, got {budget}")
    blocks, costs = [], []
    for message in messages:
        block = render_message(message)
        cost = count(block)
        if cost > budget:
            # Costing it the whole budget keeps a truncated message alone in its window.
            block, cost = _truncate(block, budget, count), budget
        blocks.append(block)
        costs.append(cost)
    spans = _pack(costs, budget, min(max(overlap, 0), budget // 2))
    return [
        Window(i, tuple(messages[start:end]), "".join(blocks[start:end]))
        for i, (start, end) in enumerate(spans)
    ]


def _truncate(block: str, budget: int, count: Callable[[str], int]) -> str:
    """Cut `block` until it (with a marker) fits `budget`; proportional steps, bounded loop."""
    text = block
    for _ in range(32):
        cost = count(text)
        if cost <= budget:
            return text
        keep = max(0, int(len(text) * budget / cost * 0.9) - len(_TRUNCATED))
        text = block[:keep] + _TRUNCATED
    return _TRUNCATED


def _pack(costs: Sequence[int], budget: int, overlap: int) -> list[tuple[int, int]]:
    """Window spans `[start, end)` over message costs."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(costs):
        end = _fill(costs, start, budget)
        spans.append((start, end))
        if end >= len(costs):
            break
        start = _overlap_start(costs, start, end, overlap, budget)
    return spans


def _fill(costs: Sequence[int], start: int, budget: int) -> int:
    end, total = start, 0
    while end < len(costs) and total + costs[end] <= budget:
        total += costs[end]
        end += 1
    return max(end, start + 1)


def _overlap_start(costs: Sequence[int], start: int, end: int, overlap: int, budget: int) -> int:
    """Where the next window starts: back from `end` until the tail holds `overlap` tokens, but
    never back to `start` (no progress) and never so far that message `end` would not fit."""
    begin, tail = end, 0
    while begin > start + 1 and tail < overlap:
        begin -= 1
        tail += costs[begin]
    while begin < end and tail + costs[end] > budget:
        tail -= costs[begin]
        begin += 1
    return begin


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
