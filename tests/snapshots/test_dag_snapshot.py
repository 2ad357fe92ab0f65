"""SVG snapshot of DagView in a harness app: a realistic 15-node debugging session.

Two arcs: a flaky test chased through a dead end and a pivot to its solution, and a slow
build whose first fix was rejected. Arcs are highlighted and the cursor is on the last
solution after one `p`. Update after a deliberate change with
`pytest tests/snapshots/test_dag_snapshot.py --snapshot-update`.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.widgets import Footer

from store.models import Edge, Node
from widgets.dag_view import DagView

SIZE = (100, 30)

#: (type, summary, status), in message order; ids are n01, n02, ...
SESSION: list[tuple[str, str, str]] = [
    ("CONTEXT_LOAD", "Read CONTRIBUTING.md and the CI log of the failing run", "approved"),
    ("HYPOTHESIS", "test_export is flaky because tests share the tmp directory", "approved"),
    ("INVESTIGATION", "Ran the suite with -p randomly and 20 repeats", "approved"),
    ("DEAD_END", "Pinning the random seed did not stop the failures", "approved"),
    ("PIVOT", "Look at the fixture instead of the test order", "pending"),
    ("INVESTIGATION", "Diffed fixtures/export.csv against the main branch", "pending"),
    ("DISCOVERY", "The fixture has CRLF line endings on Windows checkouts", "approved"),
    ("HYPOTHESIS", "The build is slow because of the lockfile resolver", "rejected"),
    ("SOLUTION", "Normalise line endings in the fixture loader", "approved"),
    ("INVESTIGATION", "Profiled `make build` with py-spy", "pending"),
    ("DEAD_END", "Caching the wheel dir broke [bold]editable[/] installs", "pending"),
    ("PIVOT", "Build wheels once per CI job, not per tox env", "pending"),
    ("CONTEXT_LOAD", "Read the tox docs on package = wheel", "pending"),
    ("SOLUTION", "Set package = wheel and wheel_build_env in tox.ini", "pending"),
    ("DISCOVERY", "Build time down from 9 min to 2 min", "pending"),
]
EDGES: list[tuple[int, int, str]] = [
    (1, 2, "informed"),
    (2, 3, "informed"),
    (3, 4, "informed"),
    (4, 5, "triggered_pivot"),
    (5, 6, "informed"),
    (6, 7, "informed"),
    (7, 9, "informed"),
    (4, 9, "resolved"),
    (8, 10, "informed"),
    (10, 11, "informed"),
    (11, 12, "triggered_pivot"),
    (11, 14, "resolved"),
    (12, 14, "informed"),
    (13, 14, "informed"),
    (14, 15, "informed"),
]

SnapCompare = Callable[..., bool]


def session() -> tuple[list[Node], list[Edge]]:
    nodes = [
        Node(
            node_id=f"n{i:02d}",
            session_id="7f3c2a",
            project="/home/dev/exporter",
            type=type,
            summary=summary,
            evidence="",
            file="7f3c2a.jsonl",
            line_start=12 * i,
            line_end=12 * i + 4,
            confidence=0.6,
            scope="PROJECT",
            tier="warm",
            status=status,
            developer="dev",
            created_at="2026-01-01T00:00:00+00:00",
        )
        for i, (type, summary, status) in enumerate(SESSION, start=1)
    ]
    edges = [Edge(f"n{s:02d}", f"n{t:02d}", kind) for s, t, kind in EDGES]
    return nodes, edges


class DagSnapshotApp(App[None]):
    def compose(self) -> ComposeResult:
        yield DagView()
        yield Footer()

    def on_mount(self) -> None:
        view = self.query_one(DagView)
        view.set_graph(*session())
        view.highlight_arcs = True
        view.focus()


def test_dag_session(snap_compare: SnapCompare) -> None:
    """Arcs highlighted; `end`, `left`: the cursor on the last solution (the parent of n15)."""
    assert snap_compare(DagSnapshotApp(), terminal_size=SIZE, press=["end", "left"])
