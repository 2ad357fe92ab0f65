"""The CLI's wiring: every command `librarian --help` lists is registered once, by one domain
module, with the function that runs it; the read-only rules moved with the commands; building
the parser loads none of the heavy dependencies."""

from __future__ import annotations

import argparse
import pkgutil
import re
import subprocess
import sys

import pytest

import app.cli
from app.cli import launch
from app.cli.common import reads_only
from app.cli.main import DOMAINS, build_parser, main
from tests.conftest import REPO


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def listed(parser: argparse.ArgumentParser) -> list[str]:
    """The command names as `librarian --help` lists them."""
    return re.findall(r"^    ([a-z][a-z-]*)(?:\s|$)", parser.format_help(), re.MULTILINE)


def test_every_listed_command_is_registered_once_by_one_domain() -> None:
    parser = build_parser()
    names = listed(parser)
    assert len(names) == len(set(names)) > 30
    assert names == list(subcommands(parser))
    owners: dict[str, str] = {}
    for domain in DOMAINS:
        probe = argparse.ArgumentParser().add_subparsers()
        domain.register(probe)
        for name, sub in probe.choices.items():
            assert name not in owners, f"{name} registered by {owners[name]} and {domain}"
            owners[name] = domain.__name__
            assert sub.get_default("command_fn").__module__ == domain.__name__
    assert list(owners) == names


def test_every_domain_module_is_wired_in() -> None:
    modules = {f"app.cli.{m.name}" for m in pkgutil.iter_modules(app.cli.__path__)}
    helpers = {"app.cli.main", "app.cli.common", "app.cli.progress"}
    assert modules - helpers == {d.__name__ for d in DOMAINS}


@pytest.mark.parametrize(
    ("argv", "read_only"),
    [
        (["skills"], True),
        (["show", "x"], True),
        (["verify"], True),
        (["sessions"], True),
        (["session", "s"], True),
        (["nodes"], True),
        (["audit"], True),
        (["patterns"], True),
        (["pattern", "p"], True),
        (["retrievals"], True),
        (["blast", "x"], True),
        (["graph"], True),
        (["lineage", "x"], True),
        (["runs"], True),
        (["runs", "show", "r"], True),
        (["runs", "abandon", "r"], False),
        (["drafts"], True),
        (["drafts", "show", "d"], True),
        (["drafts", "approve", "d"], False),
        (["drafts", "diff", "d"], True),
        (["drafts", "keep", "d", "{host}"], False),
        (["enrich"], True),
        (["enrich", "x"], False),
        (["enrich", "--all"], False),
        (["enrichments"], True),
        (["enrichments", "diff", "e"], True),
        (["enrichments", "approve", "e"], False),
        (["proposals"], True),
        (["proposals", "compute"], False),
        (["health"], True),
        (["health", "--apply"], False),
        (["scan"], False),
        (["suggest", "x"], False),
        (["search", "x"], False),
        (["profile"], False),
        (["review", "approve", "n"], False),
        (["forget", "scrub"], False),
        (["mcp"], False),
        (["config", "get", "k"], False),
    ],
)
def test_commands_that_only_read_open_the_library_read_only(
    argv: list[str], read_only: bool
) -> None:
    assert reads_only(build_parser().parse_args(argv)) is read_only


def test_no_command_opens_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "cmd_app", lambda args: 7)
    assert main([]) == 7


def test_building_the_parser_loads_no_heavy_dependency() -> None:
    heavy = ("textual", "rich", "numpy", "hnswlib", "fastembed", "scipy", "anthropic", "mcp")
    code = (
        "import sys; from app.cli.main import build_parser; build_parser();"
        f" print(sorted(m for m in {heavy!r} + ('pydantic',) if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
