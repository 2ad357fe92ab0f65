"""`librarian demo`: a realistic library built from skills the project ships."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from store.events import stepping_clock
from store.library import Clock, Library
from store.models import ScanReport
from store.models.events import EventType
from store.patterns.session_start import session_context

DEMO_SKILLS = Path(__file__).parent / "skills"
DEMO_SESSIONS = Path(__file__).parent / "sessions"
#: Who reviews in the demo, and the colleague whose earlier decisions are already on record
#: (so the reviewer's first undo cannot undo somebody else's work).
DEMO_REVIEWER = ("Dana Reviewer", "dana@example.com")
DEMO_COLLEAGUE = "Sam Maintainer <sam@example.com>"
#: A later edit to this skill gives the demo a second version to show.
PAYMENTS = "/home/dev/work/payments-api"
#: The colleague's review of what the pipeline put in the queue. Nodes are found by a phrase of
#: their summary and approved; a few summaries are edited into the reusable lesson (a
#: reviewer's job: say it once, in words that hold beyond one session); lessons that hold
#: beyond this repository are scoped TEAM. (phrase, edited summary or "", scope or "")
REVIEW: tuple[tuple[str, str, str], ...] = (
    (
        "holds a pooled connection",
        "`complete_checkout` held a pooled connection inside an open transaction across slow"
        " HTTP calls, so the API connection pool ran dry.",
        "TEAM",
    ),
    (
        "pooled connections held across",
        "`export_merchant` held a pooled connection inside an open transaction across slow S3"
        " uploads, so the API connection pool ran dry.",
        "TEAM",
    ),
    ("into short transactions with no connection held", "", "TEAM"),
    ("52 of the 60 API connections", "", "TEAM"),
    (
        "12 of the pod's 15 API connections",
        "12 of the 15 API connections are idle in transaction: checked out, transaction open,"
        " up to minutes old, with Postgres doing nothing for them.",
        "TEAM",
    ),
    ("Raising the pool", "", "TEAM"),
    ("needs ACCESS EXCLUSIVE", "", ""),
    ("holds a transaction open for hours", "", ""),
    ("autocommit_block", "", ""),
    ("LockNotAvailable", "", ""),
    ("is not rolled back with the test transaction", "", ""),
    ("Sequences are not transactional", "", ""),
    ("rolled-back `nextval()`", "", ""),
)
#: A solution the colleague rejects with the reason: it credits the migration's revision
#: rename, while what removed the second head was re-parenting `down_revision` (the pipeline
#: names one changed line of an edit; a reviewer reads the whole change).
REJECTED = (
    "succeeds after editing `0189_ix_orders_region_created_at.py`",
    "credits the rename of the revision id; the second head went away because `down_revision`"
    " now points at 0188_merchant_payout_schedule",
)
#: The agent that asked the librarian for help while working (logged retrievals).
DEMO_AGENT = "claude-code (agent)"
AGENT_QUESTIONS = (
    (PAYMENTS, "API requests time out waiting for a database connection from the pool"),
    (PAYMENTS, "QueuePool limit reached: connections idle in transaction"),
    ("/home/dev/work/web-frontend", "requests hang waiting for a pooled database connection"),
    (PAYMENTS, "the connection pool runs dry while a job uploads files"),
)
#: The SessionStart hook's injection at the start of a later session, and a person's search:
#: both logged, neither counted by graduation (the library chose the first, a person ran the
#: second).
SESSION_START_ID = "0d9e6f1a-5b7c-4c1e-9a37-2f4d8c6b1e05"
PERSON_QUESTION = "connections idle in transaction"
EDITED_SKILL = "kubernetes-rollout"
EDIT = """
## Canary gates (added after the March incident)

Hold the rollout at 10% for ten minutes and compare the canary's 5xx rate with the
stable pods before continuing. Abort with `kubectl rollout undo` when it is twice as high.
"""


#: The demo lives at its own date: built on a fixed clock from `DEMO_BUILT` (a minute per
#: reading), and opened at `DEMO_NOW`, the next morning (its config's `clock.start`), from
#: where its time moves on only while it is in use. So its eight weeks of runs and its
#: October sessions stay inside the health window whatever today's date is, and a fresh
#: `librarian demo` shows what the screenshots show.
DEMO_BUILT = "2026-11-02T09:00:00+00:00"
DEMO_NOW = "2026-11-03T09:00:00+00:00"


#: The stages of a first build, as `build_demo` reports them to `progress`.
DEMO_STAGES = (
    "scanning the demo skills (the embedding model loads)",
    "a skill edited, one deprecated",
    "ingesting the six demo sessions",
    "a colleague's review decisions",
    "consolidating patterns, an agent's retrievals, graduation",
    "eight weeks of runs, a retirement, candidate versions",
)


def build_demo(
    target: Path,
    fresh: bool = False,
    clock: Clock | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    *,
    team: bool = False,
) -> ScanReport:
    """Create (or refresh) the demo library at `target`; returns the first scan's report.
    The build reads `clock` (default: the demo's fixed clock from `DEMO_BUILT`);
    `progress(done, total, stage)` is told as each of the `DEMO_STAGES` starts. `team`: start
    the demo's local hub and, the first time, play the team story (`tooling.demo.team`)."""
    tell = progress or (lambda done, total, stage: None)
    if fresh and target.exists():
        shutil.rmtree(target)
    skills_dir = target / "demo-skills"
    first_time = not skills_dir.exists()
    if first_time:
        shutil.copytree(DEMO_SKILLS, skills_dir, ignore=shutil.ignore_patterns("__pycache__"))
    if clock is None and first_time:
        clock = stepping_clock(DEMO_BUILT)
    with Library(target, clock=clock) as library:  # a rebuild: the demo's own clock
        library.config.set("skills.roots", json.dumps([str(skills_dir)]))
        # an approved draft lands next to the demo's skills, never in the real ~/.claude
        library.config.set("graduation.skills_root", json.dumps(str(skills_dir)))
        # the budget panel shows Claude Code's listing in a demo project whose
        # .claude/skills is the demo's skills folder
        library.config.set("budget.folder", json.dumps(str(_demo_project(target, skills_dir))))
        if first_time:  # the person trying the demo reviews as the demo's reviewer
            library.config.set("reviewer.name", json.dumps(DEMO_REVIEWER[0]))
            library.config.set("reviewer.email", json.dumps(DEMO_REVIEWER[1]))
        stages = (len(DEMO_STAGES) if first_time else 1) + (1 if team else 0)
        tell(0, stages, DEMO_STAGES[0])
        report = library.scan()
        if first_time:
            tell(1, stages, DEMO_STAGES[1])
            _tell_a_story(library, skills_dir)
            _ingest_sessions(library, target / "demo-transcripts", tell)
            tell(5, stages, DEMO_STAGES[5])
            _govern(library, skills_dir)
            library.config.set("clock.start", json.dumps(DEMO_NOW))
        if team:
            from tooling.demo.team import TEAM_STAGE, build_team

            tell(stages - 1, stages, TEAM_STAGE)
            build_team(target, library)
        tell(stages, stages, "")
    return report


def _demo_project(target: Path, skills_dir: Path) -> Path:
    """A project folder (a git root) whose `.claude/skills` links to the demo's skills."""
    project = target / "demo-project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    link = project / ".claude" / "skills"
    if not link.is_symlink() and not link.exists():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(skills_dir, target_is_directory=True)
    return project


def _tell_a_story(library: Library, skills_dir: Path) -> None:
    edited = skills_dir / EDITED_SKILL / "SKILL.md"
    if edited.exists():
        edited.write_text(edited.read_text(encoding="utf-8") + EDIT, encoding="utf-8")
        library.scan()
    library.change_status(
        "k8s-rollback-v1", EventType.SKILL_DEPRECATED, "superseded by kubernetes-rollback"
    )


def _ingest_sessions(library: Library, folder: Path, tell: Callable[[int, int, str], None]) -> None:
    """Ingest the shipped transcripts and record a few review decisions, so the queue, the
    DAG and the audit trail all have something to show."""
    if not DEMO_SESSIONS.is_dir():
        return
    shutil.copytree(
        DEMO_SESSIONS, folder, ignore=shutil.ignore_patterns("*.md"), dirs_exist_ok=True
    )
    total = len(DEMO_STAGES)
    tell(2, total, DEMO_STAGES[2])
    library.ingest([folder])
    tell(3, total, DEMO_STAGES[3])
    with library.acting_as(DEMO_COLLEAGUE):
        _review(library)
    tell(4, total, DEMO_STAGES[4])
    _consolidate(library)


def _review(library: Library) -> None:
    """The colleague's decisions: approvals (some edited, some scoped TEAM), a rejection. A
    lesson the knowledge bar kept out of the queue (its summary leaned on the session: "the
    export", "12 of the pod's 15 connections") is promoted from the suppressed nodes first,
    and edited into words that stand alone where the story needs it: the reviewer's call."""
    pending = library.nodes(status="pending", order="session")
    suppressed = library.nodes(status="suppressed", order="session")
    for phrase, edited, scope in REVIEW:
        found = [n.node_id for n in pending if phrase in n.summary]
        if not found:
            found = [n.node_id for n in suppressed if phrase in n.summary][:1]
            if not found:
                continue
            library.review("unsuppress", found)
        if edited:
            library.review("edit", found[:1], summary=edited)
        if scope:
            library.review("scope", found, scope=scope)
        library.review("approve", found)
    phrase, reason = REJECTED
    wrong = [n.node_id for n in [*pending, *suppressed] if phrase in n.summary]
    if wrong:
        library.review("reject", wrong, reason=reason)


def _consolidate(library: Library) -> None:
    """Patterns from the approved reasoning, an agent asking for help a few times over MCP
    (every retrieval is logged, and only an agent's own requests count for graduation), a
    SessionStart injection and a person's search (logged, not counted), and the patterns that
    now meet every graduation criterion (two sessions for a TEAM lesson, retrieved by an
    agent, ratified) drafted into the review queue."""
    library.consolidate()
    with library.acting_as(DEMO_AGENT):
        library.retrieval_log.channel = "mcp"  # as `librarian mcp` logs an agent's calls
        try:
            for project, question in AGENT_QUESTIONS:
                library.search_memory(question, project=project)
            library.pitfalls(project=PAYMENTS)
        finally:
            library.retrieval_log.channel = ""
        session_context(library.kernel, PAYMENTS, SESSION_START_ID)  # the library chose this
    with library.acting_as(DEMO_COLLEAGUE):
        library.search_memory(PERSON_QUESTION, project=PAYMENTS)  # a person looking
    library.graduate()


#: Recorded runs: skill -> (version, days ago, success, detail). kubernetes-rollout drifts
#: after its v2 edit (its three dependents are the graph's blast radius), terraform reviews
#: degrade, the others are healthy; k8s-rollback-v1 failed the way its incident records.
ROLLOUT_FAILURE = "canary gate compared the canary's 5xx with every pod, aborted a healthy rollout"
OUTCOMES: dict[str, list[tuple[int, float, bool, str]]] = {
    "kubernetes-rollout": [
        *((1, days, True, "") for days in (52, 45, 38, 33, 27, 24, 19, 15, 12, 9)),
        (1, 6, False, "rollout stalled: readiness probe timeout shorter than start-up"),
        (2, 2.5, True, ""),
        (2, 2.0, False, ROLLOUT_FAILURE),
        (2, 1.6, False, ROLLOUT_FAILURE),
        (2, 1.1, False, "kubectl rollout undo left the canary pods running"),
        (2, 0.7, False, ROLLOUT_FAILURE),
        (2, 0.3, False, ROLLOUT_FAILURE),
    ],
    "terraform-plan-review": [
        (1, 26, True, ""),
        (1, 18, True, ""),
        (1, 11, False, "missed a forced replacement of the RDS instance"),
        (1, 8, True, ""),
        (1, 4, False, "missed a forced replacement hidden in a module"),
        (1, 1, True, ""),
    ],
    "sql-tuning": [
        (1, d, d != 13, "" if d != 13 else "advice ignored the partial index")
        for d in (40, 29, 22, 17, 13, 9, 6, 3, 1)
    ],
    "flaky-test-debugging": [(1, d, True, "") for d in (35, 20, 14, 5)],
    "git-bisect-regressions": [(1, d, True, "") for d in (21, 10, 2)],
    "log-query-recipes": [(1, d, True, "") for d in (44, 30, 16, 8, 4)],
    "incident-triage": [
        (1, d, d != 10, "" if d != 10 else "paged the wrong rotation") for d in (25, 19, 10, 7, 3)
    ],
    "k8s-rollback-v1": [
        (1, 34, True, ""),
        (1, 23, False, "rolled back to a revision carrying the same broken config map"),
        (1, 16, False, "rollout undo picked the previous revision, also broken"),
        (1, 12, False, "rolled back to a revision carrying the same broken config map"),
    ],
}
RETIRED = "k8s-rollback-v1"
RETIRED_SUCCESSOR = "kubernetes-rollback"
RETIREMENT = "rolled production back to a revision with the same broken config map, twice in March"
REGRESSION = (
    "a rollback names --to-revision and checks that revision's config map checksum before undoing"
)
#: The graduated skill: the colleague approves the draft of the insight about pooled
#: connections (it met the criteria on its own), then adds what to check first (version 2).
GRADUATED_KIND = "insight"
GRADUATED_EDIT = """
## Check first

Before raising the pool size, count the connections `idle in transaction` in
`pg_stat_activity`: if most of the pool is there, the pool is not too small.
"""


def _govern(library: Library, skills_dir: Path) -> None:
    """Outcomes over the last eight weeks, a retirement run to its incident, a pattern
    graduated into a skill that is earning stable, candidate versions (one set aside, one
    that took over, one waiting), and a thin skill's enrichment waiting for review: health,
    graph, runbook, lineage and the review queue all have a story."""
    now = datetime.fromisoformat(library.clock())
    with library.acting_as(DEMO_COLLEAGUE):
        _record_outcomes(library, now)
        library.relate("incident-triage", "requires", f"{RETIRED}@1")  # pinned to v1
        run = library.start_run(RETIRED, RETIREMENT)
        for step in range(1, 8):
            library.run_step(run.run_id, step, successor=RETIRED_SUCCESSOR, regression=REGRESSION)
        graduated = _graduate_approved(library, now)
        _candidates(library, skills_dir, now, graduated)
        library.enrich(THIN_SKILL)


def _record_outcomes(library: Library, now: datetime) -> None:
    for name, runs in OUTCOMES.items():
        for version, days, success, detail in runs:
            _outcome(library, name, version, now - timedelta(days=days), success, detail)


def _outcome(
    library: Library, name: str, version: int, at: datetime, success: bool, detail: str
) -> None:
    """A recorded run, dated when it happened (the event itself is appended now)."""
    library.record_outcome(
        name,
        success,
        version=version,
        detail=detail,
        at=at.isoformat(timespec="microseconds"),
    )


def _graduate_approved(library: Library, now: datetime) -> str:
    """The colleague approves the insight's draft (it met every criterion: no shortcut) and
    edits the skill; it has three clean runs and must earn stable with two more. The
    pitfall's draft stays in the review queue for the person trying the demo. Returns the
    graduated skill's name ("" when nothing was drafted)."""
    drafts = library.drafts("pending")
    chosen = [d for d in drafts if library.pattern(d.pattern_id).kind == GRADUATED_KIND]
    if not chosen:
        return ""
    approved = library.approve_draft(chosen[0].draft_id)
    if approved.path and Path(approved.path).is_file():  # a second version, for the diff
        path = Path(approved.path)
        path.write_text(path.read_text(encoding="utf-8") + GRADUATED_EDIT, encoding="utf-8")
        library.scan()
    version = library.get_skill(approved.name).summary.version_no
    for days in (9, 5, 2):
        _outcome(library, approved.name, version, now - timedelta(days=days), True, "")
    return approved.name


#: Candidate versions: stable skills edited after their first runs. A new version of a stable
#: skill proves itself while the previous one stays served (kubernetes-rollout's v2, edited at
#: the start, drifts and is set aside). log-query-recipes' v2 takes over after five clean runs
#: in a row; sql-tuning's v2 comes to require the freshly graduated skill, which is only
#: proposed: the scan warns, and it could not take over before that skill is proven.
TAKES_OVER = "log-query-recipes"
TAKES_OVER_EDIT = """
## Restarts in the last hour

```bash
kubectl -n api get pods --sort-by='.status.containerStatuses[0].restartCount' | tail -5
```
"""
WAITING = "sql-query-tuning"
WAITING_EDIT = """
## Before tuning a slow checkout query

Rule out a pool held open across slow work first: see the graduated pool skill.
"""
THIN_SKILL = "py-spy-profiling"


def _candidates(library: Library, skills_dir: Path, now: datetime, graduated: str) -> None:
    path = skills_dir / TAKES_OVER / "SKILL.md"
    path.write_text(path.read_text(encoding="utf-8") + TAKES_OVER_EDIT, encoding="utf-8")
    if graduated:
        waiting = skills_dir / WAITING / "SKILL.md"
        text = waiting.read_text(encoding="utf-8").replace(
            '  complements: "py-spy-profiling api-pagination-design"\n',
            f'  complements: "py-spy-profiling api-pagination-design"\n  requires: {graduated}\n',
            1,
        )
        waiting.write_text(text + WAITING_EDIT, encoding="utf-8")
    library.scan()
    version = library.get_skill(TAKES_OVER).summary.version_no
    for days in (3.5, 2.8, 2.1, 1.4, 0.6):
        _outcome(library, TAKES_OVER, version, now - timedelta(days=days), True, "")
