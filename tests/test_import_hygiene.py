"""The layers hold: `store` runs without Textual or Rich; widgets see only plain data."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: What a widget may import from `store`: the frozen data classes and the text helpers.
WIDGET_STORE_MODULES = {"store.models", "store.text"}


def test_store_imports_without_textual_or_rich() -> None:
    code = (
        "import store, store.library, store.search, store.catalog, store.verify; import sys;"
        " print('textual' in sys.modules, 'rich' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def store_imports(path: Path) -> set[str]:
    """Every `store…` module a file imports, however it is spelled."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "store"}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "store":  # `from store import models`
                found |= {f"store.{a.name}" for a in node.names}
            elif node.module.startswith("store."):
                found.add(node.module)
    return found


def _plain(module: str) -> bool:
    """`store.models` (and its per-domain submodules) or `store.text`."""
    return module in WIDGET_STORE_MODULES or module.startswith("store.models.")


def test_widgets_import_only_plain_data_from_store() -> None:
    files = sorted((REPO / "widgets").glob("*.py"))
    assert files
    offending = {
        path.name: sorted(m for m in store_imports(path) if not _plain(m)) for path in files
    }
    offending = {name: modules for name, modules in offending.items() if modules}
    assert offending == {}
