"""The layout holds (issue 12): no import cycles among the project's modules, imports of its
own modules inside functions only where listed with a reason, no module over 700 lines.

Each rule has a list of what exists today. A new cycle, a new in-function import or a new
long module fails; when a branch removes one, shrink its list (a stale entry is reported as
a warning, not a failure, so branches that land in any order stay green). Imports are read
from the source (`tests/layout.py`): those inside functions and under `if TYPE_CHECKING:`
count like any other.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from tests.layout import PACKAGES, cycles, edges, line_counts

#: Import cycles that exist today, each the set of modules that import one another. A cycle
#: found must lie within one of these; the goal is an empty list.
KNOWN_CYCLES: tuple[frozenset[str], ...] = ()

_HOOK_PATH = "keeps `librarian hook` and the CLI's start-up light (numpy, hnswlib, Textual)"
_BENCH_CHILD = "a bench child loads only what its measurement needs (its peak RSS is measured)"

#: Imports of the project's own modules inside functions, per importing module: why, and
#: what it imports that way. Anything else imported inside a function fails.
IN_FUNCTION_IMPORTS: dict[str, tuple[str, frozenset[str]]] = {
    "app.bench_app": (
        "the start time is taken before the app, the store and Textual are imported",
        frozenset(
            {
                "app.factory",
                "app.librarian_app",
                "app.screens.review",
                "store.events",
                "store.library",
                "tooling.bench.children",
                "widgets.node_detail",
                "widgets.node_table",
                "widgets.skill_table",
            }
        ),
    ),
    "app.cli.bench": (
        "the bench and the judge kits (asyncio, the model): only these commands load them",
        frozenset({"store.quality.kit", "store.quality.replay", "tooling.bench.run"}),
    ),
    "app.cli.common": (_HOOK_PATH, frozenset({"store.library"})),
    "app.cli.hooks": (
        "the prompt server runs only under `hook prompt-server`",
        frozenset({"app.prompt_server"}),
    ),
    "app.cli.launch": (
        "the demo build and Textual load only for `demo` and the app",
        frozenset({"app.factory", "tooling.demo.build", "tooling.demo.team"}),
    ),
    "app.cli.lineage": (
        "Rich: `librarian hook` must not load it",
        frozenset({"widgets.lineage_text"}),
    ),
    "app.cli.maintenance": (_HOOK_PATH, frozenset({"store.verify"})),
    "app.cli.mcp": (
        "pydantic and the MCP SDK: only `librarian mcp`",
        frozenset({"app.mcp_server"}),
    ),
    "app.cli.team": (
        "psycopg and the team modules: only `librarian team` loads them",
        frozenset(
            {
                "store.team.connection",
                "store.team.drafts",
                "store.team.hub",
                "store.team.pull",
                "store.team.push",
                "store.team.review",
                "store.team.server",
                "store.team.status",
            }
        ),
    ),
    "app.entry": (
        "nothing of the packages runs before the installation check",
        frozenset({"app.bench_app", "app.cli.main", "app.hook_main"}),
    ),
    "app.hook_main": (
        _HOOK_PATH,
        frozenset({"store.library", "store.skills.prompt_context", "store.skills.prompt_hook"}),
    ),
    "store.ingest.pipeline": (
        "only the first node of a run needs the surface hashing",
        frozenset({"store.skills.surface"}),
    ),
    "store.patterns.consolidate": (
        "scipy's clustering: only a consolidation loads it",
        frozenset({"store.patterns.cluster"}),
    ),
    "store.skills.prompt_hook": (
        "the lexical fallback masks secrets with the lint's rules (~0.1 s): the cold path only",
        frozenset({"store.skills.prompt_lexical"}),
    ),
    "tooling.bench.agents": (
        _BENCH_CHILD,
        frozenset(
            {
                "store.ingest.pipeline",
                "store.library",
                "store.projections",
                "store.skills.surface",
                "tooling.synthetic.data",
            }
        ),
    ),
    "tooling.bench.catalog": (
        _BENCH_CHILD,
        frozenset(
            {
                "store.library",
                "store.skills.listing.routing",
                "store.skills.listing.settings",
                "store.skills.prompt_context",
                "store.skills.security_eval",
            }
        ),
    ),
    "tooling.bench.children": (
        _BENCH_CHILD,
        frozenset(
            {
                "store.config",
                "store.ingest.transcript",
                "store.ingest.warm",
                "store.library",
                "store.models",
                "store.quality.corpus",
                "store.search",
                "tooling.bench.lifecycle",
                "tooling.evaluation.redaction",
                "tooling.evaluation.routing",
                "tooling.synthetic.data",
            }
        ),
    ),
    "tooling.bench.common": (
        _BENCH_CHILD,
        frozenset(
            {
                "store.library",
                "store.migrations",
                "tooling.evaluation.routing",
                "tooling.synthetic.data",
            }
        ),
    ),
    "tooling.bench.lifecycle": (
        _BENCH_CHILD,
        frozenset(
            {
                "store.library",
                "store.lifecycle.health",
                "store.projections",
                "store.skills.discovery",
                "store.skills.lint",
                "store.skills.parser",
                "store.skills.reconcile",
            }
        ),
    ),
    "tooling.bench.phases": (
        "each phase loads what it builds (the team phase: psycopg and the embedded server)",
        frozenset(
            {
                "store.library",
                "store.quality.labels",
                "tooling.bench.lifecycle",
                "tooling.bench.team",
                "tooling.synthetic.data",
            }
        ),
    ),
    "tooling.bench.team": (
        "psycopg and the embedded server: only the team phase and its children",
        frozenset(
            {
                "store.config",
                "store.library",
                "store.projections",
                "store.team.hub",
                "store.team.pull",
                "store.team.push",
                "store.team.server",
                "store.team.status",
            }
        ),
    ),
    "tooling.demo.build": (
        "the team story and the hub's modules: only `librarian demo --team`",
        frozenset({"tooling.demo.team"}),
    ),
    "tooling.evaluation.redaction": (
        "the transcript parser, for the corpus measurement only",
        frozenset({"store.ingest.transcript", "store.models"}),
    ),
}

#: Modules over `MAX_LINES` today (outside tests/). The goal is an empty set.
LONG_MODULES: frozenset[str] = frozenset()
MAX_LINES = 700


def _stale(kind: str, entries: object) -> None:
    if entries:
        warnings.warn(f"{kind} no longer exist: shrink the list ({entries})", stacklevel=2)


def test_no_import_cycles_beyond_the_known_ones() -> None:
    found = cycles(edges())
    new = [sorted(c) for c in found if not any(c <= known for known in KNOWN_CYCLES)]
    assert new == [], "new import cycles (break them, do not list them)"
    _stale("known cycles", [sorted(k) for k in KNOWN_CYCLES if not any(c <= k for c in found)])


def test_in_function_imports_of_own_modules_are_listed() -> None:
    inside = [e for e in edges() if e.in_function]
    unlisted = sorted(
        f"{e.source} -> {e.target}"
        for e in inside
        if e.target not in IN_FUNCTION_IMPORTS.get(e.source, ("", frozenset()))[1]
    )
    assert unlisted == [], "import at the top, or list it in IN_FUNCTION_IMPORTS with a reason"
    seen = {(e.source, e.target) for e in inside}
    _stale(
        "in-function imports",
        sorted(
            f"{source} -> {target}"
            for source, (_, targets) in IN_FUNCTION_IMPORTS.items()
            for target in targets
            if (source, target) not in seen
        ),
    )


def test_every_listed_in_function_import_has_a_reason() -> None:
    assert [m for m, (reason, _) in IN_FUNCTION_IMPORTS.items() if not reason.strip()] == []


def test_no_module_over_the_line_limit() -> None:
    counts = line_counts()
    long = sorted(path for path, lines in counts.items() if lines > MAX_LINES)
    assert [p for p in long if p not in LONG_MODULES] == [], f"split modules over {MAX_LINES}"
    _stale("long modules", sorted(LONG_MODULES - set(long)))


def test_the_measure_sees_cycles_and_in_function_imports(tmp_path: Path) -> None:
    """The reader itself: a two-module cycle made only of in-function imports is found."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "store" / "a.py").write_text("def f():\n    from store import b\n")
    (tmp_path / "store" / "b.py").write_text("from .a import f\n")
    found = edges(tmp_path)
    assert cycles(found) == [frozenset({"store.a", "store.b"})]
    assert [(e.source, e.target) for e in found if e.in_function] == [("store.a", "store.b")]
