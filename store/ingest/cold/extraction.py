"""Running the cold tier over a session: windows checked against the client's real count, one
call per window, each reply validated (a node's evidence must be a verbatim substring of its
window) and merged across windows; and the cost estimate of a session, without any call."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from store.ingest.cold.llm import LlmClient, LlmFatalError, LlmWindowError
from store.ingest.cold.prompt import PROMPT, _is_edge, tool_schema, user_content
from store.ingest.cold.windows import (
    Window,
    estimate_tokens,
    make_windows,
    render_message,
    window_budget,
)
from store.models.sessions import (
    EDGE_TYPES,
    NODE_TYPES,
    ExtractedEdge,
    ExtractedNode,
    ParsedSession,
    TranscriptMessage,
)

#: Tokens the API adds for a forced tool call, on top of the schema text we count ourselves.
TOOL_USE_OVERHEAD = 500
SUMMARY_CHARS = 200
#: Shorter "evidence" matches almost anywhere, so it proves nothing.
MIN_EVIDENCE_CHARS = 8


@dataclass(frozen=True)
class ColdResult:
    """What the cold tier proposes for one session, and what went wrong on the way.

    `dropped` counts nodes the model returned that were not kept: malformed, of an unknown
    type, with evidence not found verbatim in their window, or beyond `max_nodes`. Duplicates
    from overlapping windows are merged, not dropped.
    """

    nodes: tuple[ExtractedNode, ...]
    edges: tuple[ExtractedEdge, ...]
    problems: tuple[str, ...]
    windows: int
    dropped: int
    failed: int = 0  # windows without a usable reply (including those skipped after a stop)
    stopped: bool = False  # a fatal error (bad key, bad request): further calls would fail too
    unsent: int = 0  # windows skipped after a stop

    @property
    def calls(self) -> int:
        """Requests made (one per window sent; retries not counted)."""
        return self.windows - self.unsent


def extract_cold(
    session: ParsedSession,
    client: LlmClient,
    *,
    fraction: float = 0.45,
    output_tokens: int = 4000,
    overlap: int = 750,
    max_nodes: int = 12,
) -> ColdResult:
    """Run the cold tier over a session. API failures become `problems`, never exceptions."""
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be at least 1, got {max_nodes}")
    if not session.messages:
        return ColdResult((), (), (), 0, 0)
    try:
        prompt = _prompt_tokens(client, max_nodes)
        budget = window_budget(client.context_tokens, prompt, fraction, output_tokens)
    except ValueError as exc:
        return ColdResult((), (), (f"cold tier skipped: {exc}",), 0, 0)
    windows = _checked_windows(session.messages, budget, overlap, client)
    collector = _Collector()
    for window in windows:
        try:
            raw = client.extract(PROMPT, window.text, max_nodes)
        except LlmFatalError as exc:
            rest = len(windows) - window.index - 1
            skipped = f"; {rest} more windows skipped" if rest else ""
            collector.problems.append(f"cold tier stopped: {exc}{skipped}")
            collector.failed += rest + 1
            collector.unsent = rest
            collector.stopped = True
            break
        except LlmWindowError as exc:
            collector.problems.append(f"window {window.index + 1} of {len(windows)}: {exc}")
            collector.failed += 1
            continue
        collector.add_window(window, raw, max_nodes)
    return collector.result(len(windows))


def _fixed_prompt(max_nodes: int) -> str:
    """What every call sends besides the window: the system prompt, the tool schema and the
    per-window wrapper."""
    return "\n".join((PROMPT, json.dumps(tool_schema(max_nodes)), user_content("", max_nodes)))


def _prompt_tokens(client: LlmClient, max_nodes: int) -> int:
    """T_prompt, counted by the client."""
    return client.count_tokens(_fixed_prompt(max_nodes)) + TOOL_USE_OVERHEAD


@dataclass(frozen=True)
class Estimate:
    """What a session would cost the cold tier, by the local count: one call per window."""

    windows: int
    input_tokens: int  # the prompt and the window, summed over the calls


def estimate_session(
    session: ParsedSession,
    context_tokens: int,
    *,
    fraction: float = 0.45,
    output_tokens: int = 4000,
    overlap: int = 750,
    max_nodes: int = 12,
) -> Estimate:
    """The windows `extract_cold` would send, without any network call (`estimate_tokens`
    errs high, so the real run sends at most about as many). Raises ValueError when no
    window fits the context (`window_budget`)."""
    if not session.messages:
        return Estimate(0, 0)
    prompt = estimate_tokens(_fixed_prompt(max_nodes)) + TOOL_USE_OVERHEAD
    budget = window_budget(context_tokens, prompt, fraction, output_tokens)
    windows = make_windows(session.messages, budget, overlap)
    return Estimate(len(windows), sum(prompt + estimate_tokens(w.text) for w in windows))


def _checked_windows(
    messages: Sequence[TranscriptMessage], budget: int, overlap: int, client: LlmClient
) -> list[Window]:
    """Windows packed by the local estimate, then verified with the client's real count (one
    call per window, not per message). If any window is over budget, re-pack once with the
    estimate scaled by the worst ratio seen."""
    windows = make_windows(messages, budget, overlap)
    counts = [(client.count_tokens(w.text), estimate_tokens(w.text)) for w in windows]
    if all(real <= budget for real, _ in counts):
        return windows
    scale = max(real / max(1, estimate) for real, estimate in counts)
    return make_windows(
        messages, budget, overlap, count=lambda text: math.ceil(estimate_tokens(text) * scale)
    )


@dataclass
class _Collector:
    """Nodes and edges across windows; the same key keeps its most confident version."""

    nodes: dict[str, ExtractedNode] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], ExtractedEdge] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    dropped: int = 0
    failed: int = 0
    stopped: bool = False
    unsent: int = 0

    def add_window(self, window: Window, raw: Sequence[Any], max_nodes: int) -> None:
        nodes, edges, dropped = window_nodes(window, raw, max_nodes)
        self.dropped += dropped
        for node in nodes:
            known = self.nodes.get(node.key)
            if known is None or node.confidence > known.confidence:
                self.nodes[node.key] = node
        for edge in edges:
            self.edges.setdefault((edge.source, edge.target, edge.type), edge)

    def result(self, windows: int) -> ColdResult:
        return ColdResult(
            nodes=tuple(self.nodes.values()),
            edges=tuple(self.edges.values()),
            problems=tuple(self.problems),
            windows=windows,
            dropped=self.dropped,
            failed=self.failed,
            stopped=self.stopped,
            unsent=self.unsent,
        )


def window_nodes(
    window: Window, raw: Sequence[Any], max_nodes: int
) -> tuple[list[ExtractedNode], list[ExtractedEdge], int]:
    """Validate one window's reply: (kept nodes in reply order, edges between them, dropped)."""
    node_items = [item for item in raw if not _is_edge(item)]
    valid = [(pos, node) for pos, item in enumerate(node_items) if (node := _node(window, item))]
    kept = sorted(valid, key=lambda p: (-p[1].confidence, p[0]))[:max_nodes]
    kept.sort(key=lambda p: p[0])
    keys = {pos: node.key for pos, node in kept}
    edges = [edge for item in raw if _is_edge(item) and (edge := _edge(item, keys))]
    return [node for _, node in kept], edges, len(node_items) - len(kept)


def _node(window: Window, item: Any) -> ExtractedNode | None:
    """A node from one reply entry, or None when any part of it is unusable."""
    if not isinstance(item, dict):
        return None
    type_ = item.get("type")
    type_ = type_.strip().upper() if isinstance(type_, str) else None
    summary = _summary(item.get("summary"))
    confidence = _confidence(item.get("confidence", 0.5))
    evidence = item.get("evidence")
    evidence = evidence.strip() if isinstance(evidence, str) else ""
    if type_ not in NODE_TYPES or not summary or confidence is None:
        return None
    if len(evidence) < MIN_EVIDENCE_CHARS:
        return None
    where = locate(window, evidence, item.get("message_index"))
    if where is None:
        return None
    file, start, end = where
    return ExtractedNode(
        key=f"cold:llm:{file}:{start}-{end}:{type_}",
        type=type_,
        summary=summary,
        evidence=evidence,
        file=file,
        line_start=start,
        line_end=end,
        confidence=confidence,
        tier="cold",
        strategy="llm",
    )


def _summary(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    text = " ".join(value.split())
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1].rstrip() + "…"


def _confidence(value: Any) -> float | None:
    """A number clamped to [0, 1]; anything else (text, booleans, NaN) is malformed."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return min(1.0, max(0.0, float(value)))


def _edge(item: dict[str, Any], keys: dict[int, str]) -> ExtractedEdge | None:
    source, target, type_ = item.get("source"), item.get("target"), item.get("type")
    if type(source) is not int or type(target) is not int or type_ not in EDGE_TYPES:
        return None
    if source not in keys or target not in keys or keys[source] == keys[target]:
        return None
    return ExtractedEdge(keys[source], keys[target], str(type_))


def locate(window: Window, evidence: str, hint: Any = None) -> tuple[str, int, int] | None:
    """(file, line_start, line_end) of the message(s) the evidence was copied from, or None
    when it is not a verbatim substring of the window. `hint` (the model's message_index)
    picks between equal fragments; evidence spanning messages maps to their line range
    within the first message's file."""
    spans = _message_spans(window)
    at = _find(window, evidence, spans, hint)
    if at < 0:
        return None
    hit = [
        m
        for m, (a, b) in zip(window.messages, spans, strict=True)
        if a < at + len(evidence) and b > at
    ]
    same = [m for m in hit if m.file == hit[0].file]
    return hit[0].file, min(m.line_start for m in same), max(m.line_end for m in same)


def _find(window: Window, evidence: str, spans: list[tuple[int, int]], hint: Any) -> int:
    if type(hint) is int:
        for message, (a, b) in zip(window.messages, spans, strict=True):
            if message.index == hint and (at := window.text.find(evidence, a, b)) >= 0:
                return at
    return window.text.find(evidence)


def _message_spans(window: Window) -> list[tuple[int, int]]:
    """Where each message's block sits in the window text."""
    whole = [(0, len(window.text))] * len(window.messages)
    if len(window.messages) == 1:
        return whole  # possibly truncated, so not re-renderable
    spans, at = [], 0
    for message in window.messages:
        block = render_message(message)
        if not window.text.startswith(block, at):
            return whole  # not rendered by this module: map to the whole window
        spans.append((at, at + len(block)))
        at += len(block)
    return spans
