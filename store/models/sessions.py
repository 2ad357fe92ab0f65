"""Sessions and the reasoning DAG: parsed transcripts, extracted and stored nodes and edges,
cold-tier upgrade plans and reports, and the review queue's audit and counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from store.models.quick import quick_init

# -- sessions and the reasoning DAG (DESIGN §6) ---------------------------------------------

NODE_TYPES: tuple[str, ...] = (
    "HYPOTHESIS",
    "INVESTIGATION",
    "DISCOVERY",
    "PIVOT",
    "DEAD_END",
    "SOLUTION",
    "CONTEXT_LOAD",
)
EDGE_TYPES: tuple[str, ...] = ("informed", "triggered_pivot", "resolved")
NODE_STATUSES: tuple[str, ...] = (
    "pending",
    "approved",
    "rejected",
    "merged",
    "forgotten",
    "suppressed",
    "superseded",
)
#: What a projection (and so every screen) shows in place of text `forget` erased.
ERASED = "[erased]"
SCOPES: tuple[str, ...] = ("PROJECT", "TEAM")


@quick_init
@dataclass(frozen=True)
class ToolUse:
    """A tool call inside an assistant message."""

    id: str
    name: str
    input_text: str  # the tool input as compact JSON, bounded in size
    skill: str = ""  # for the `Skill` tool: the skill it launched


@quick_init
@dataclass(frozen=True)
class ToolResult:
    """A tool result inside a user record."""

    tool_use_id: str
    text: str  # the result content as text, bounded in size
    is_error: bool


@quick_init
@dataclass(frozen=True)
class TranscriptMessage:
    """One message of a session: consecutive records that form one turn part (assistant lines
    sharing `message.id` are merged), located by file and 1-based line range."""

    index: int  # position in the session, 0-based, in file order (main file, then subagents)
    file: str  # relative to the main file's folder: "abc.jsonl", "abc/subagents/agent-x.jsonl"
    line_start: int
    line_end: int
    uuid: str
    role: str  # "user" | "assistant" | "system" | "summary"
    kind: str  # "prompt" | "text" | "tool_use" | "tool_result" | "meta" | "compact" | "system"
    text: str  # the readable text of the message (text blocks joined; tool results' text)
    timestamp: str
    tool_uses: tuple[ToolUse, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()
    is_sidechain: bool = False
    agent_id: str = ""
    is_meta: bool = False


@dataclass(frozen=True)
class ParsedSession:
    """A Claude Code session read from its JSONL file(s)."""

    session_id: str
    project: str  # from `cwd` in the records, never from the folder name
    branch: str  # from `gitBranch`
    client_version: str  # from `version`
    started_at: str
    ended_at: str
    messages: tuple[TranscriptMessage, ...]
    turns: int  # user prompts (not tool results, not meta)
    tool_calls: int
    errors: int  # tool results with is_error
    skills_used: tuple[str, ...]  # from Skill tool calls and "Base directory for this skill:"
    skipped: dict[str, int]  # reason -> count of lines skipped
    files: tuple[str, ...]  # absolute paths read (main file first, then subagent files)
    compactions: int = 0
    labels: tuple[str, ...] = ()  # each of `files` as messages and node keys name it
    # the main file each of `files` was read for, when a session has several (else empty)
    sources: tuple[str, ...] = ()


@quick_init
@dataclass(frozen=True)
class ExtractedNode:
    """A node proposed by an extraction tier, before dedup and storage."""

    key: str  # deterministic within the session: "<tier>:<strategy>:<file>:<start>-<end>:<type>"
    type: str  # one of NODE_TYPES
    summary: str  # 1-2 readable sentences
    evidence: str  # a verbatim fragment of the transcript text (before redaction)
    file: str
    line_start: int
    line_end: int
    confidence: float
    tier: str  # "warm" | "cold"
    strategy: str  # e.g. "episode", "keywords", "conclusion", "correction", "llm"
    #: How much a teammate learns from the summary (0..1, `store.ingest.bar`).
    informativeness: float = 0.0
    #: Why the node is kept out of the pending queue ("" when it passes the bar).
    suppressed: str = ""


@quick_init
@dataclass(frozen=True)
class ExtractedEdge:
    source: str  # ExtractedNode.key
    target: str  # ExtractedNode.key
    type: str  # one of EDGE_TYPES


@dataclass(frozen=True)
class PlannedSession:
    """A session the cold tier would send, and what it would cost (local estimate)."""

    session_id: str
    path: str  # the main file it is read from
    windows: int  # one call each
    input_tokens: int  # prompt and window text over its calls
    #: Why it is sent: "new" (the cold tier never read it), "changed" (the transcript grew
    #: since), "prompt" (read with another model or prompt version), "again" (`--again`).
    reason: str


@dataclass(frozen=True)
class UpgradePlan:
    """What `ingest --llm` would send before it sends anything: a cost-free count."""

    model: str
    prompt_version: str
    sessions: tuple[PlannedSession, ...]
    already: int  # sessions this model and prompt version already read: not sent
    output_tokens: int  # the output cap of one call
    problems: tuple[str, ...] = ()

    @property
    def calls(self) -> int:
        return sum(s.windows for s in self.sessions)

    @property
    def input_tokens(self) -> int:
        return sum(s.input_tokens for s in self.sessions)

    @property
    def max_output_tokens(self) -> int:
        return self.calls * self.output_tokens


@dataclass(frozen=True)
class UpgradeReport:
    """What the cold tier did over sessions (`ingest --llm`)."""

    model: str
    prompt_version: str
    sessions: int  # sessions sent
    already: int  # sessions already read by this model and prompt version: not sent
    calls: int  # windows sent, one call each
    nodes_added: int  # new nodes (pending or suppressed)
    superseded: int  # pending or suppressed warm nodes a cold node replaced
    merged: int  # cold nodes recorded as duplicates (of a reviewed node, or by dedup)
    suppressed: int  # new cold nodes below the knowledge bar
    dropped: int  # replies not kept: malformed, unknown type, evidence not in the window
    withheld: int  # not added: they would bring forgotten content back
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Node:
    """A stored reasoning node."""

    node_id: str
    session_id: str
    project: str
    type: str
    summary: str
    evidence: str  # verbatim, with secrets redacted
    file: str
    line_start: int
    line_end: int
    confidence: float
    scope: str
    tier: str
    status: str
    developer: str
    created_at: str
    decided_at: str = ""
    decided_by: str = ""
    reason: str = ""
    merged_into: str = ""
    retrieval_count: int = 0
    last_retrieved_at: str = ""
    #: How much a teammate learns from the summary (0..1, `store.ingest.bar`).
    informativeness: float = 0.0
    #: Why the knowledge bar kept it out of the queue ("" when it passed).
    suppressed_reason: str = ""
    #: The cold-tier node that restated it better (status `superseded`; "" otherwise).
    superseded_by: str = ""


@dataclass(frozen=True)
class Edge:
    source: str  # node_id
    target: str  # node_id
    type: str


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    project: str
    branch: str
    client_version: str
    started_at: str
    ended_at: str
    turns: int
    tool_calls: int
    errors: int
    skills_used: tuple[str, ...]
    skipped: dict[str, int]
    node_count: int
    pending_count: int


@dataclass(frozen=True)
class ContextMessage:
    """An archived transcript message shown around a node's evidence."""

    index: int
    file: str
    line_start: int
    line_end: int
    role: str
    kind: str
    text: str
    timestamp: str
    is_error: bool
    in_range: bool  # the node's evidence comes from this message


@dataclass(frozen=True)
class AuditEntry:
    seq: int
    ts: str
    actor: str
    action: str  # approved | rejected | edited | rescoped | reopened
    node_id: str
    before: dict[str, Any]
    after: dict[str, Any]
    reason: str
    batch: str = ""  # one id per decision call (a multi-selection shares it)


@dataclass(frozen=True)
class QueueCounts:
    pending: int
    decided_today: int
    approved: int
    rejected: int
    #: Below the knowledge bar: kept out of the pending queue, never lost.
    suppressed: int = 0
