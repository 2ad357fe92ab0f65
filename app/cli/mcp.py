"""`librarian mcp`: serve memory and skills to agents over MCP (see `app.mcp_server`)."""

from __future__ import annotations

import argparse

from app.cli.common import Subcommands, add_command


def register(sub: Subcommands) -> None:
    """Add `mcp`."""
    add_command(sub, "mcp", "serve memory and skills to agents over MCP (stdio)", cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from app.mcp_server import serve  # pydantic and the MCP SDK: only `librarian mcp` loads them

    return serve(args)
