"""The security lint on real public skills: high-severity false positives stay near zero.

Reads the shared corpus in place (never copied into the project); skipped when absent.
Run with `-s` to see what the corpus triggers.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

import pytest

from store.models import LintFinding
from store.skills.lint import lint_skill

pytestmark = pytest.mark.corpus

CORPUS = Path(
    os.environ.get("LIBRARIAN_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared/corpus")
)
SKILLS = CORPUS / "skills"

# Rules whose high-severity hits would alarm a person looking at a harmless skill.
GUARDED = {"secret", "prompt_injection"}

# (file relative to skills/, rule) pairs checked by hand and judged real or acceptable.
# Empty today. Reviewed and deliberately not listed:
# - anthropics-skills/claude-api/shared/model-migration.md, prompt_injection: cites
#   "disregard the previous instruction" as language to avoid; reported as a *medium*
#   "quotes a prompt-injection phrase" finding, so it does not need an exception.
# - 40+ placeholder keys in anthropics-skills/claude-api/** (ghp_your_github_token,
#   xoxp-..., sk-ant-oat01-..., "your-api-key") and wshobson-agents/** (.env samples such
#   as API_SECRET_KEY=dev-secret-key): rejected by the placeholder filter, no finding.
ALLOWED: set[tuple[str, str]] = set()


def _skill_root(path: Path) -> Path:
    """The nearest folder holding a SKILL.md; files outside any skill stand alone."""
    for parent in path.parents:
        if parent == SKILLS.parent:
            break
        if (parent / "SKILL.md").is_file():
            return parent
    return path.parent


def _lint_corpus() -> list[tuple[str, LintFinding]]:
    """(path relative to skills/, finding) for every skills/**/*.md file, per skill."""
    by_skill: dict[Path, list[Path]] = {}
    for path in sorted(SKILLS.rglob("*.md")):
        by_skill.setdefault(_skill_root(path), []).append(path)
    out: list[tuple[str, LintFinding]] = []
    for root, paths in by_skill.items():
        files = [(p.relative_to(root).as_posix(), p.read_text("utf-8", "replace")) for p in paths]
        for finding in lint_skill(files):
            out.append(((root / finding.file).relative_to(SKILLS).as_posix(), finding))
    return out


@pytest.fixture(scope="module")
def corpus_findings() -> list[tuple[str, LintFinding]]:
    if not SKILLS.is_dir():
        pytest.skip(f"no corpus at {SKILLS} (set LIBRARIAN_CORPUS)")
    start = time.perf_counter()
    found = _lint_corpus()
    files = sum(1 for _ in SKILLS.rglob("*.md"))
    print(f"\nlinted {files} files in {time.perf_counter() - start:.2f}s")
    for (rule, severity), n in sorted(Counter((f.rule, f.severity) for _, f in found).items()):
        print(f"  {rule:20} {severity:6} {n}")
    for path, f in found:
        print(f"  {f.rule}/{f.severity} {path}:{f.line} {f.message}\n      | {f.excerpt}")
    return found


def test_no_unexpected_high_severity_secret_or_injection(
    corpus_findings: list[tuple[str, LintFinding]],
) -> None:
    unexpected = [
        f"{path}:{f.line} {f.rule}: {f.message} | {f.excerpt}"
        for path, f in corpus_findings
        if f.rule in GUARDED and f.severity == "high" and (path, f.rule) not in ALLOWED
    ]
    assert unexpected == [], "\n".join(unexpected)


def test_corpus_findings_are_printable_and_located(
    corpus_findings: list[tuple[str, LintFinding]],
) -> None:
    for path, f in corpus_findings:
        assert f.line >= 0, path
        assert "\x1b" not in f.excerpt, path
        assert "\n" not in f.excerpt, path
        assert len(f.excerpt) <= 160, path
