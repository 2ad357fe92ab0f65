"""Which retrievals count for graduation: those an agent asked for.

Graduation's retrieval rate is evidence that agents *needed* a pattern while they worked. It
counts what agents asked the library for — MCP tool calls (tools logged as `mcp.<tool>`) and
the prompt hook's matches (`user-prompt`) — and not the context the SessionStart hook
injects (the library chose it), nor a person running `librarian profile`, `search`,
`pitfalls`, `diagnose` or `suggest`. Which tools count is `graduation.agent_tools`
(shell-style patterns). Every retrieval keeps its tool in the log, so the graduation
checklist can show each one and why it counted or not.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from store.config import Config

#: Tools whose retrievals are an agent's own requests (`graduation.agent_tools`).
AGENT_TOOLS: tuple[str, ...] = ("mcp.*", "user-prompt")
#: Tools a person runs from the command line (logged without a channel).
PERSON_TOOLS = frozenset({"search", "pitfalls", "diagnose", "profile", "suggest"})
LIBRARY_TOOLS = frozenset({"session-start"})


def agent_tools(config: Config) -> tuple[str, ...]:
    """The configured patterns (the defaults when unset or not a list of strings)."""
    value = config.get("graduation.agent_tools", list(AGENT_TOOLS))
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return AGENT_TOOLS


def judge(tool: str, patterns: Sequence[str]) -> tuple[bool, str]:
    """(counted, why) for one retrieval's tool."""
    if any(fnmatch.fnmatchcase(tool, p) for p in patterns):
        return True, f"an agent asked ({tool})"
    if tool in LIBRARY_TOOLS:
        return False, f"injected by the library, not asked for ({tool})"
    if tool in PERSON_TOOLS:
        return False, f"a person ran `librarian {tool}`"
    return False, f"not an agent's request ({tool})"
