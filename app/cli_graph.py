"""`librarian graph [SKILL]`: one skill's dependencies and dependents as an indented tree, or
(without a skill) what is wrong with the graph: cycles, dangling references, self-relations.
Exit code 0 either way: problems are reported, not failures."""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any

from app.cli import emit, open_library
from store.models import BlastRadius, Dependency, Dependent, GraphProblems
from store.text import one_line

#: Lines of a tree or a problem list beyond which the text says "+N more" (--json has all).
TEXT_LIMIT = 400


def cmd_graph(args: argparse.Namespace) -> int:
    from app import render

    with open_library(args) as library:
        if not args.skill:
            found = library.graph_problems()
            emit(args, render.plain(found), problems_text(found))
            return 0
        radius = library.blast(args.skill)
        deps = library.dependencies(args.skill)
        touching = library.graph_problems().touching(radius.skill)
    data = {
        "skill": radius.skill,
        "status": radius.status,
        "dependencies": [
            {**render.plain(d), "manual": d.manual, "missing": d.missing} for d in deps
        ],
        "blast": render.plain(radius),
        "problems": render.plain(touching),
    }
    emit(args, data, focus_text(radius, deps, touching))
    return 0


def focus_text(radius: BlastRadius, deps: list[Dependency], problems: GraphProblems) -> str:
    name = one_line(radius.skill, 80)
    lines = [f"{name} ({radius.status})", f"depends on ({len(deps)}):"]
    lines += [f"  {dependency_line(d)}" for d in deps] or ["  nothing"]
    direct = sum(1 for d in radius.dependents if d.depth == 1)
    lines.append(
        f"dependents — blast radius: {len(radius.dependents)} skills ({direct} direct)"
        f" · {len(radius.sessions)} sessions · {len(radius.patterns)} patterns"
        f" · {len(radius.drafts)} drafts"
    )
    tree = dependent_tree(radius)
    lines += _capped(tree) or ["  nothing depends on it"]
    if radius.related:
        lines.append("related:")
        lines += [
            f"  {one_line(r.name, 60)} ({r.status}) {r.relation} {name}" for r in radius.related
        ]
    if problems.count:
        lines.append("problems:")
        lines += [f"  {line}" for line in problem_lines(problems)]
    return "\n".join(lines)


def dependency_line(d: Dependency) -> str:
    origin = "by hand" if d.manual else "/".join(d.origins)
    mark = "  <- dangling: no such skill" if d.missing else ""
    return f"{d.relation:<16} {one_line(d.name, 60)} ({d.status}) [{origin}]{mark}"


def dependent_tree(radius: BlastRadius) -> list[str]:
    """The dependents as a tree: each under the skill it depends on along its shortest
    path, nearest first, depth by indentation."""
    children: dict[str, list[Dependent]] = defaultdict(list)
    for d in radius.dependents:
        children[d.path[1]].append(d)
    lines: list[str] = []
    stack = [(d, 1) for d in reversed(children[radius.skill])]
    while stack:
        d, level = stack.pop()
        lines.append(
            f"{'  ' * level}{one_line(d.name, 60)} ({d.status}) {d.relation}"
            f" {one_line(d.path[1], 60)}  [depth {d.depth}]"
        )
        stack += [(c, level + 1) for c in reversed(children.get(d.name, []))]
    return lines


def problems_text(found: GraphProblems) -> str:
    if not found.count:
        return "no graph problems: no cycles, no dangling references, no self-relations"
    head = (
        f"{len(found.cycles)} cycles, {len(found.dangling)} dangling references,"
        f" {len(found.self_loops)} self-relations"
    )
    return "\n".join([head, *_capped([f"  {line}" for line in problem_lines(found)])])


def problem_lines(found: GraphProblems) -> list[str]:
    lines = []
    for cycle, knot in zip(found.cycles, found.knots, strict=True):
        path = " -> ".join(one_line(n, 60) for n in (*cycle, cycle[0]))
        more = f" (a knot of {len(knot)} skills)" if len(knot) > len(cycle) else ""
        lines.append(f"cycle: {path}{more}")
    lines += [
        f"dangling: {one_line(r.source, 60)} {r.type} {one_line(r.target, 60)}"
        f" (no such skill; {r.origin})"
        for r in found.dangling
    ]
    lines += [
        f"self-relation: {one_line(r.source, 60)} {r.type} itself (ignored)"
        for r in found.self_loops
    ]
    return lines


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= TEXT_LIMIT:
        return lines
    return [*lines[:TEXT_LIMIT], f"  … +{len(lines) - TEXT_LIMIT:,} more (--json lists all)"]


def add_parser(sub: Any, add: Any) -> None:
    graph = add(
        sub,
        "graph",
        "a skill's dependencies and dependents as a tree; without a skill: cycles and"
        " dangling references",
        True,
    )
    graph.add_argument("skill", nargs="?", help="the skill (default: the graph's problems)")
