"""What the library serves to coding agents leaves through `masked`: no secret goes out.

Skills, patterns and reasoning nodes can carry secrets: a skill description with a token (the
lint flags it, but the file is the author's), a pattern title from a session ingested before
`redact` knew that format. Each serving path masks what it returns in one place: the
SessionStart context (`patterns.session_start`, every field it shows), the profile
(`patterns.memory.render_profile`, every line), the MCP tools (`app.mcp_server`, every answer),
the CLI's agent-facing commands (`suggest`, `search`, `pitfalls`, `diagnose`) and the
UserPromptSubmit hook (`skills.prompt_rank` masks the ranker's picks, `skills.prompt_lexical`
redacts what the index alone serves).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, cast

from store.ingest.redact import redact

T = TypeVar("T")


def masked(value: T) -> T:
    """`value` with every string in it redacted: strings, and the strings inside dataclasses,
    dicts (values), lists and tuples. Anything else is returned as it is."""
    return cast(T, _masked(value))


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        items = [_masked(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _masked(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init
        }
        return dataclasses.replace(value, **changes)
    return value
