"""`librarian demo`: a realistic library built from skills the project ships."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from store.events import now_iso
from store.library import Clock, Library
from store.models import ScanReport

DEMO_SKILLS = Path(__file__).parent / "demo_skills"
DEMO_SESSIONS = Path(__file__).parent / "demo_sessions"
#: Who reviews in the demo, and the colleague whose earlier decisions are already on record
#: (so the reviewer's first undo cannot undo somebody else's work).
DEMO_REVIEWER = ("Dana Reviewer", "dana@example.com")
DEMO_COLLEAGUE = "Sam Maintainer <sam@example.com>"
#: A later edit to this skill gives the demo a second version to show.
PAYMENTS = "/home/dev/work/payments-api"
#: Nodes the demo's colleague approved: the recurring lessons of the shipped sessions.
RATIFIED = (
    "String to replace not found",
    "Re-reading the exact block",
    "re-read the exact lines",
    "idle in transaction",
    "holds a pooled connection",
    "recurring problem as the checkout pool exhaustion",
    "Raising the pool",
    "split it into short transactions",
    "idle_in_transaction_session_timeout",
    "The root cause was the lock queue",
    "a `lock_timeout`, so the ALTER",
    "`nextval()` is not transactional",
    "rolled-back `nextval()` still consumed",
)
#: The agent that asked the librarian for help while working (logged retrievals).
DEMO_AGENT = "claude-code (agent)"
AGENT_QUESTIONS = (
    (PAYMENTS, "Edit failed: String to replace not found in file"),
    (PAYMENTS, "the Edit tool says the old string is not in the file"),
    ("/home/dev/work/web-frontend", "Edit of a .tsx file failed, string to replace not found"),
    (PAYMENTS, "API requests time out waiting for a database connection from the pool"),
)
EDITED_SKILL = "kubernetes-rollout"
EDIT = """
## Canary gates (added after the March incident)

Hold the rollout at 10% for ten minutes and compare the canary's 5xx rate with the
stable pods before continuing. Abort with `kubectl rollout undo` when it is twice as high.
"""


def build_demo(target: Path, fresh: bool = False, clock: Clock | None = None) -> ScanReport:
    """Create (or refresh) the demo library at `target`; returns the first scan's report."""
    if fresh and target.exists():
        shutil.rmtree(target)
    skills_dir = target / "demo-skills"
    first_time = not skills_dir.exists()
    if first_time:
        shutil.copytree(DEMO_SKILLS, skills_dir, ignore=shutil.ignore_patterns("__pycache__"))
    with Library(target, clock=clock or now_iso) as library:
        library.config.set("skills.roots", json.dumps([str(skills_dir)]))
        # an approved draft lands next to the demo's skills, never in the real ~/.claude
        library.config.set("graduation.skills_root", json.dumps(str(skills_dir)))
        if first_time:  # the person trying the demo reviews as the demo's reviewer
            library.config.set("reviewer.name", json.dumps(DEMO_REVIEWER[0]))
            library.config.set("reviewer.email", json.dumps(DEMO_REVIEWER[1]))
        report = library.scan()
        if first_time:
            _tell_a_story(library, skills_dir)
            _ingest_sessions(library, target / "demo-transcripts")
    return report


def _tell_a_story(library: Library, skills_dir: Path) -> None:
    edited = skills_dir / EDITED_SKILL / "SKILL.md"
    if edited.exists():
        edited.write_text(edited.read_text(encoding="utf-8") + EDIT, encoding="utf-8")
        library.scan()
    library.change_status(
        "k8s-rollback-v1", "skill.deprecated", "superseded by kubernetes-rollback"
    )


def _ingest_sessions(library: Library, folder: Path) -> None:
    """Ingest the shipped transcripts and record a few review decisions, so the queue, the
    DAG and the audit trail all have something to show."""
    if not DEMO_SESSIONS.is_dir():
        return
    shutil.copytree(
        DEMO_SESSIONS, folder, ignore=shutil.ignore_patterns("*.md"), dirs_exist_ok=True
    )
    library.ingest([folder])
    with library.acting_as(DEMO_COLLEAGUE):
        solutions = library.nodes(status="pending", type_="SOLUTION", order="session")
        if solutions:
            library.review("approve", [n.node_id for n in solutions[:3]])
        approved = [
            n.node_id
            for n in library.nodes(status="pending")
            if any(phrase in n.summary for phrase in RATIFIED)
        ]
        if approved:
            library.review("approve", approved)
        loads = library.nodes(status="pending", type_="CONTEXT_LOAD", order="session")
        if loads:
            library.review(
                "reject",
                [loads[0].node_id],
                reason="loading a skill is not a reasoning step worth keeping",
            )
    _consolidate(library)


def _consolidate(library: Library) -> None:
    """Patterns from the approved reasoning, an agent asking for help a few times (every
    retrieval is logged), and the one pattern that now meets every graduation criterion
    drafted into the review queue."""
    library.consolidate()
    with library.acting_as(DEMO_AGENT):
        for project, question in AGENT_QUESTIONS:
            library.diagnose(question, project=project)
        library.pitfalls(project=PAYMENTS)
    library.graduate()
