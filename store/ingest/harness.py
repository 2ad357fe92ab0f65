"""Tool errors that come from the agent harness, not from the project.

Claude Code answers some tool calls with an error that says nothing about the code or the
environment: the agent edited a file it had not read, its `old_string` was not in the file,
a parallel sibling call failed, the tool input did not validate, the output was too big, the
user interrupted. They never become dead ends or pitfalls (what the agent *did* next can
still be knowledge). This is the one place that list lives; each entry has a test with a
real-shaped error text (tests/store/test_harness.py).

Matched on the start of the error's text, `<tool_use_error>` tags removed, lowercased (the
patterns are written in lowercase).
"""

from __future__ import annotations

import re
from typing import NamedTuple


class HarnessError(NamedTuple):
    name: str
    pattern: str  # a regex searched in the error text
    why: str


#: Every agent-harness error the warm tier ignores.
HARNESS_ERRORS: tuple[HarnessError, ...] = (
    HarnessError(
        "edit_string_not_found",
        r"string to replace not found in file",
        "the agent's Edit `old_string` did not match the file (its own view was stale)",
    ),
    HarnessError(
        "edit_multiple_matches",
        r"found \d+ matches of the string to replace",
        "the agent's Edit `old_string` was ambiguous",
    ),
    HarnessError(
        "edit_no_change",
        r"no changes to make: old_string and new_string are exactly the same",
        "the agent asked for an edit that changes nothing",
    ),
    HarnessError(
        "file_not_read",
        r"file has not been read yet",
        "Claude Code requires a Read before an Edit or Write",
    ),
    HarnessError(
        "file_changed_since_read",
        r"file has been (?:unexpectedly )?modified since (?:it was )?read",
        "the file changed between the agent's Read and its Edit",
    ),
    HarnessError(
        "sibling_errored",
        r"sibling tool call errored|parallel tool call .{0,80}errored",
        "a parallel tool call failed, so this one was cancelled",
    ),
    HarnessError(
        "input_validation",
        r"inputvalidationerror|invalid tool parameters|the required parameter `?\w+`? is missing",
        "the agent's tool call did not match the tool's schema",
    ),
    HarnessError(
        "output_too_large",
        r"exceeds maximum allowed (?:tokens|size)|output too large|response exceeded the",
        "the tool's output was too big for the context",
    ),
    HarnessError(
        "interrupted",
        r"\[request interrupted by user|interrupted by user|operation (?:was )?aborted",
        "the user stopped the call (a correction, if any, follows as a user message)",
    ),
    HarnessError(
        "user_rejected",
        r"the user doesn't want to (?:proceed|take this action)|user rejected (?:the )?tool use",
        "the user declined the call: the reason is a PIVOT, not a dead end",
    ),
    HarnessError(
        "permission_pending",
        r"requested permissions? to .{0,200} but you haven't granted it|permission to use \w+ "
        r"(?:has been|was) denied|this command requires approval",
        "the harness's permission system, not the project, refused the call",
    ),
    HarnessError(
        "read_directory",
        r"eisdir: illegal operation on a directory|is a directory, not a file",
        "the agent read a folder as a file",
    ),
    HarnessError(
        "no_such_tool",
        r"no such tool available|tool .{0,60} (?:is )?not (?:available|found)\b",
        "the agent called a tool that does not exist here",
    ),
    HarnessError(
        "mcp_server_failed",
        r'mcp server "[^"\n]{1,80}"[^\n]{0,80}?(?:timed out|failed|not connected|disconnected'
        r"|connection closed)|mcp error -?\d+",
        "an MCP server the agent calls failed or timed out (the agent's tooling)",
    ),
    HarnessError(
        "model_api_auth",
        r"oauth token has expired|failed to authenticate\. api error",
        "the agent's own connection to the model API failed",
    ),
    HarnessError(
        "sandbox_temp_file",
        r"can'?t create temp file for here document",
        "the agent's sandbox denied the shell a temporary file (a heredoc)",
    ),
    HarnessError(
        "working_directory",
        r"(?:^|\n)[^\n]{0,24}\bcd:(?:\d+:)?\s*(?:no such file or directory|can'?t cd)",
        "the agent changed into a folder that is not there (finding its way around)",
    ),
    HarnessError(
        "bare_error",
        r"\A\s*(?:error)?\s*\Z",
        "an error with no text says nothing about the project",
    ),
)

_TAGS = re.compile(r"</?tool_use_error>")
_BY_NAME = {entry.name: entry for entry in HARNESS_ERRORS}
#: One scan for every entry: named alternatives, the first that matches names the error.
_ANY = re.compile(
    "|".join(f"(?P<{entry.name}>{entry.pattern})" for entry in HARNESS_ERRORS), re.DOTALL
)
#: Only the start of an error is looked at: harness errors are short, project output is not.
_HEAD = 1000


#: Words at least one of which every harness error contains (checked before any regex).
_HINTS = (
    "string to replace", "matches of the string", "no changes to make", "has not been read",
    "modified since", "sibling", "errored", "inputvalidationerror", "invalid tool parameters",
    "required parameter", "maximum allowed", "too large", "response exceeded", "interrupted",
    "aborted", "doesn't want to", "rejected", "permission", "requires approval", "eisdir",
    "is a directory", "no such tool", "not available", "not found", "mcp server", "mcp error",
    "oauth token", "failed to authenticate", "temp file", "cd:",
)  # fmt: skip


def harness_error(text: str) -> HarnessError | None:
    """The harness error `text` is, if it is one."""
    head = _TAGS.sub("", text[:_HEAD]).lower()  # the patterns are lowercase: no IGNORECASE
    if len(head.strip()) > 5 and not any(map(head.__contains__, _HINTS)):
        return None  # most project errors: no regex at all
    found = _ANY.search(head)
    return _BY_NAME[found.lastgroup] if found and found.lastgroup else None


def is_harness_error(text: str) -> bool:
    return harness_error(text) is not None
