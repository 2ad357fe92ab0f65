"""The layout helpers every size relies on: paths shortened by the folder their rows share,
wrapped empty states, hanging indents, and the graph's relations grouped as `blast` has them."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from app.screenshots import plain_spaces
from store.models import BlastRadius, Dependency, Dependent, GraphFocus, GraphProblems
from widgets.graph_list import dependencies_of, dependency_rows, related_rows
from widgets.hanging import Hanging, hang_line
from widgets.line_table import common_folder, wrap


def test_common_folder_is_the_shared_folder_never_a_last_part() -> None:
    assert common_folder(["/home/dev/work/infra", "/home/dev/work/payments-api"]) == (
        "/home/dev/work/"
    )
    assert common_folder(["~/demo/demo-skills"]) == "~/demo/"  # one path: its folder
    assert common_folder(["~/a", "~/b"]) == ""  # "~/" is no shorter than "…/"
    assert common_folder(["/a/x", "/b/x"]) == ""
    assert common_folder(["/home/dev/x", "relative/x"]) == ""
    assert common_folder([]) == ""


def test_wrap_hangs_and_keeps_every_word() -> None:
    text = "No skills yet. Press r to scan the usual folders (~/.claude/skills, ~/.agents/skills)"
    lines = wrap(text, 30, indent=2)
    assert all(len(line) <= 30 for line in lines)
    assert lines[0].startswith("  No skills")
    assert all(line.startswith("    ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == text


def test_hanging_indents_wrapped_lines_under_their_entry() -> None:
    line = Text("Description: Author, review and run Alembic migrations for our services.")
    pieces = [p.plain for p in hang_line(line, 30)]
    assert pieces[0] == "Description: Author, review"
    assert all(p.startswith("  ") and len(p) <= 30 for p in pieces[1:])
    indented = [p.plain for p in hang_line(Text("   - an entry that is too long to fit"), 20)]
    assert indented[1].startswith("     ")  # its own indent and two more
    console = Console(width=30, record=True)
    console.print(Hanging(Text("short\n" + line.plain)))
    out = console.export_text().splitlines()
    assert out[0] == "short"
    assert out[1].startswith("Description:")
    assert out[2].startswith("  ")


def _focus() -> GraphFocus:
    radius = BlastRadius(
        skill="triage",
        status="stable",
        dependents=(),
        related=(Dependent("notes", "stable", "complements", 1, ("notes", "triage")),),
        sessions=(),
        patterns=(),
        drafts=(),
    )
    return GraphFocus(
        skill_id=1,
        name="triage",
        status="stable",
        version_no=1,
        description="",
        dependencies=(
            Dependency("rollback", "requires", ("extracted",), "stable"),
            Dependency("base", "extends", ("manual",), "stable"),
            Dependency("handoff", "enables", ("extracted",), "proposed"),
        ),
        radius=radius,
        dependent_count=0,
        direct_count=0,
        problems=GraphProblems(dangling=(), cycles=(), knots=(), self_loops=(), unproven=()),
    )


def test_graph_groups_relations_as_blast_does() -> None:
    """Only requires/extends are dependencies; enables and complements are related, in either
    direction."""
    focus = _focus()
    assert [d.name for d in dependencies_of(focus)] == ["rollback", "base"]
    assert [r.relation for r in dependency_rows(dependencies_of(focus))] == ["requires", "extends"]
    assert [(r.name, r.relation) for r in related_rows(focus)] == [
        ("handoff", "→ enables"),
        ("notes", "← complements"),
    ]


def test_screenshot_runs_are_split_between_columns() -> None:
    """A row run and a coloured cell: each part lands on its own cell, blanks dropped, so a
    renderer that ignores `textLength` (librsvg) keeps the columns in line."""
    row = (
        '<svg class="x"><text class="r2" x="0" y="10" textLength="122" clip-path="u">'
        "&#160;&#160;a&#160;b&#160;&#160;c&amp;d</text>"
        '<text class="r5" x="122" y="10" textLength="24.4">&#160;&#160;</text></svg>'
    )
    svg = plain_spaces(row)
    assert svg.startswith('<svg xml:space="preserve" class="x">')
    assert '<text class="r2" x="24.40" y="10" textLength="36.60" clip-path="u">a b</text>' in svg
    assert (
        '<text class="r2" x="85.40" y="10" textLength="36.60" clip-path="u">c&amp;d</text>' in svg
    )
    assert "r5" not in svg  # a blank run draws nothing
