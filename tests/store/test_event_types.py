"""One source of event names (issue 12): `EventType` spells every type once; the code, the
CLI's choices and the MCP schema take their names from it."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from store.models.events import AGENT_LIFECYCLE_EVENTS, EVENT_TYPES, EventType
from tests.layout import PACKAGES, REPO

REGISTRY = REPO / "store" / "models" / "events.py"


def test_every_type_is_described_once() -> None:
    assert list(EVENT_TYPES) == list(EventType)
    assert all(description.strip() for description in EVENT_TYPES.values())
    assert all(t.value == t.name.lower().replace("_", ".", 1) for t in EventType)


def test_agent_lifecycle_events_are_skill_types() -> None:
    assert AGENT_LIFECYCLE_EVENTS == (
        "proposed",
        "validated",
        "applied",
        "outcome_recorded",
        "revised",
        "deprecated",
        "contradicted",
    )
    assert all(EventType(f"skill.{name}") for name in AGENT_LIFECYCLE_EVENTS)


def test_a_member_is_its_name_as_a_string() -> None:
    """Stored, hashed and compared as the plain string it always was."""
    import json

    assert EventType.NODE_APPROVED == "node.approved"
    assert json.dumps({"type": EventType.NODE_APPROVED}) == '{"type": "node.approved"}'
    assert f"{EventType.NODE_APPROVED}" == "node.approved"


def _event_literals(path: Path) -> list[str]:
    """`file:line value` for every string literal that is exactly an event type's name."""
    names = {t.value for t in EventType}
    found = []
    with path.open(encoding="utf-8") as handle:
        tokens = list(tokenize.generate_tokens(io.StringIO(handle.read()).readline))
    for token in tokens:
        if token.type == tokenize.STRING and token.string[0] in "\"'":
            value = ast.literal_eval(token.string)
            if value in names:
                found.append(f"{path.relative_to(REPO)}:{token.start[0]} {value}")
    return found


def test_no_event_name_is_spelled_outside_the_registry() -> None:
    offenders = [
        hit
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        if path != REGISTRY
        for hit in _event_literals(path)
    ]
    assert offenders == [], "use store.models.events.EventType"
