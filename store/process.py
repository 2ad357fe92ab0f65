"""How the project starts itself (hook workers, benchmarks, the MCP server in a bench).

`python -m app` puts the current directory first on `sys.path`, and `PYTHONPATH` can add any
folder before site-packages: started from a user's repository that has an `app/` (or
`store/`) package, it would run *their* code. Every self-spawn therefore goes through
`own_module`, which asks for this interpreter in safe-path mode (`-P`: nothing prepended to
`sys.path`) with Python's environment variables ignored (`-E`: no `PYTHONPATH`), so the
packages resolve to this installation from any working directory. Imports nothing heavy:
the Stop hook uses it.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: Interpreter flags for every self-spawn (see the module docstring).
ISOLATION = ("-E", "-P")


def own_module(module: str) -> list[str]:
    """argv that runs `module` of this installation with this interpreter, isolated."""
    return [sys.executable, *ISOLATION, "-m", module]


def own_librarian() -> list[str]:
    """argv that runs this installation's `librarian`: the console script next to this
    interpreter when there is one (what `pipx`/`uv tool` install), else `own_module("app")`."""
    script = Path(sys.executable).with_name("librarian")
    return [str(script)] if script.is_file() else own_module("app")
