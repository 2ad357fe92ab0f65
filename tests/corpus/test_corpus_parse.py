"""Parse every SKILL.md in the real-world corpus and check warnings against the files.

The expectations are computed here from an independent ruamel load of each file's
frontmatter, so the test follows whatever the corpus contains.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from store.models import ParsedSkill, ParseFailure
from store.skills.parser import parse_skill_md

pytestmark = pytest.mark.corpus

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("LIBRARIAN_CORPUS", REPO.parent / "shared" / "corpus"))
if not (CORPUS / "skills").is_dir():
    pytest.skip(f"no skills corpus at {CORPUS}", allow_module_level=True)

SKILL_FILES = sorted((CORPUS / "skills").glob("**/SKILL.md"))
SPEC_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


def file_id(path: Path) -> str:
    return path.parent.relative_to(CORPUS / "skills").as_posix()


def load_frontmatter(path: Path) -> dict[str, Any]:
    """An independent, minimal frontmatter reader (not the parser under test)."""
    lines = path.read_bytes().decode("utf-8-sig").replace("\r\n", "\n").split("\n")
    assert lines[0].strip() == "---"
    end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    # Keep the newline before the closing `---`: it is part of the YAML (`>` and `|` keep it).
    loaded = YAML(typ="safe", pure=True).load("\n".join(lines[1:end]) + "\n")
    assert isinstance(loaded, dict)
    return loaded


def parse(path: Path) -> ParsedSkill | ParseFailure:
    return parse_skill_md(path.read_bytes(), path.parent.name)


def codes(result: ParsedSkill, code: str) -> int:
    return sum(1 for w in result.warnings if w.code == code)


def test_corpus_is_present() -> None:
    assert SKILL_FILES


@pytest.mark.parametrize("path", SKILL_FILES, ids=file_id)
def test_every_file_parses_to_a_result(path: Path) -> None:
    result = parse(path)
    assert isinstance(result, ParsedSkill | ParseFailure)
    if isinstance(result, ParseFailure):
        assert result.code
        assert result.reason.strip()


@pytest.mark.parametrize("path", SKILL_FILES, ids=file_id)
def test_warnings_match_the_file(path: Path) -> None:
    result = parse(path)
    assert isinstance(result, ParsedSkill), result
    fm = load_frontmatter(path)
    description = fm["description"]
    metadata = fm.get("metadata")
    non_string = [v for v in (metadata or {}).values() if not isinstance(v, str)]
    expected = {
        "allowed_tools_list": int(isinstance(fm.get("allowed-tools"), list)),
        "description_too_long": int(len(description) > 1024),
        "description_angle_brackets": int("<" in description or ">" in description),
        "extra_keys": int(bool(set(fm) - SPEC_KEYS)),
        "license_missing": int("license" not in fm),
        "metadata_non_string": len(non_string) if isinstance(metadata, dict) else 0,
        "metadata_not_mapping": int(metadata is not None and not isinstance(metadata, dict)),
        "name_mismatch": int(fm.get("name") != path.parent.name),
    }
    assert {code: codes(result, code) for code in expected} == expected
    assert result.description == description
    assert result.name == fm["name"]


def test_no_real_skill_is_skipped() -> None:
    failures = {file_id(p): r for p in SKILL_FILES if isinstance(r := parse(p), ParseFailure)}
    assert failures == {}


def test_known_deviations() -> None:
    by_id = {file_id(p): p for p in SKILL_FILES}
    postgresql = by_id.get("wshobson-agents/postgresql")
    if postgresql is None:
        pytest.skip("wshobson-agents/postgresql is not in this corpus")
    result = parse(postgresql)
    assert isinstance(result, ParsedSkill)
    assert result.name == "postgresql-table-design"
    assert [w.message for w in result.warnings if w.code == "name_mismatch"] == [
        "name 'postgresql-table-design' does not match its folder 'postgresql'"
    ]
