"""The round-trip frontmatter edit behind enrichment: comments, key order, quoting and every
untouched line survive; only spec keys are written; a layout that cannot be reproduced, or
a frontmatter that is not YAML, is refused with the reason."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from store.skills.frontmatter_edit import FrontmatterEditError, edit
from store.skills.parser import parse_skill_md

DEMO = Path(__file__).resolve().parents[2] / "tooling" / "demo" / "skills"
FIELDS = {"when_to_use": "a release is due", "triggers": "ship it, cut a release", "tags": "x"}


def changed(before: str, after: str) -> list[str]:
    """The lines the edit added or removed (markers stripped)."""
    return [
        line[1:]
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_comments_order_quoting_and_the_body_survive() -> None:
    before = (
        "---\n"
        "# owned by the release team\n"
        "name: notes\n"
        "description: 'Notes.'   # too short\n"
        "license: MIT\n"
        "when_to_use: on release day\n"
        "metadata:\n"
        '  version: "1.0"  # keep quoted\n'
        "  author: release-eng\n"
        "allowed-tools:\n"
        "  - Read\n"
        "  - Bash(git:*)\n"
        "---\n\n# Notes\n\nBody with --- inside.\n"
    )
    after = edit(
        before, "Write release notes. Use when a release is due.", FIELDS
    )  # quoted like before
    assert "# owned by the release team" in after
    assert '  version: "1.0"  # keep quoted' in after
    assert "  - Bash(git:*)" in after
    assert after.endswith("---\n\n# Notes\n\nBody with --- inside.\n")
    keys = [line.split(":")[0] for line in after.split("---")[1].splitlines() if line[:1].isalpha()]
    assert keys == ["name", "description", "license", "metadata", "allowed-tools"]
    assert sorted(changed(before, after)) == sorted(
        [
            "description: 'Notes.'   # too short",
            "description: 'Write release notes. Use when a release is due.' # too short",
            "when_to_use: on release day",
            "  when_to_use: a release is due",
            "  triggers: ship it, cut a release",
            "  tags: x",
        ]
    )
    parsed = parse_skill_md(after.encode(), "notes")
    assert not isinstance(parsed, Exception)
    assert parsed.when_to_use == "a release is due"  # type: ignore[union-attr]


def test_a_metadata_block_is_added_when_there_is_none() -> None:
    before = "---\nname: a\ndescription: A.\n---\nbody\n"
    after = edit(before, "A, longer.", {"tags": "one, two"})
    assert (
        after == "---\nname: a\ndescription: A, longer.\nmetadata:\n  tags: one, two\n---\nbody\n"
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no frontmatter\n", "does not start with a `---` frontmatter block"),
        ("---\nname: a\ndescription: b\n", "not closed by a `---` line"),
        ("---\nname: [a\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: a\ndescription: \x1b[31mred\n---\n", "not valid YAML"),
        ("---\nname: a\nmetadata: text\n---\n", "`metadata` is not a mapping"),
    ],
)
def test_what_cannot_be_edited_faithfully_is_refused(text: str, reason: str) -> None:
    with pytest.raises(FrontmatterEditError, match=reason):
        edit(text, "d", FIELDS)


def test_every_demo_skill_round_trips_exactly() -> None:
    for path in sorted(DEMO.glob("*/SKILL.md")):
        text = path.read_text(encoding="utf-8")
        after = edit(text, "A new description. Use when testing.", {})
        lines = changed(text, after)
        assert len(lines) == 2, (path, lines)  # the description line, before and after


def outside_description(text: str) -> list[str]:
    """The lines of a SKILL.md that are not the description's (its key line and, for a
    folded or literal block, the indented lines under it)."""
    kept, inside = [], False
    for line in text.splitlines():
        if line.startswith("description:"):
            inside = True
            continue
        if inside and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        inside = False
        kept.append(line)
    return kept


@pytest.mark.corpus
def test_every_corpus_skill_round_trips_exactly(corpus_dir: Path) -> None:
    paths = sorted(corpus_dir.rglob("SKILL.md"))
    assert len(paths) > 200
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        after = edit(text, "A new description. Use when testing.", {})
        assert outside_description(after) == outside_description(text), path
