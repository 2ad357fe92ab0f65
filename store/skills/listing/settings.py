"""The budget's inputs from Claude Code's settings files, the environment and the librarian's
config.

Claude Code reads, highest precedence first: managed settings, `.claude/settings.local.json`
and `.claude/settings.json` of the project, then `~/.claude/settings.json`
(code.claude.com/docs/en/settings, "Settings precedence"); objects such as `env`,
`skillOverrides` and `enabledPlugins` are read key by key in that order. A variable in the
process environment wins over a settings file's `env` block."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.models.listing import ListingSettings

DEFAULT_CONTEXT_TOKENS = 200_000
DEFAULT_FRACTION = 0.01
DEFAULT_CHARS_PER_TOKEN = 4.0
DEFAULT_MAX_DESC_CHARS = 1536
#: Where Claude Code's managed settings live on Linux and macOS.
MANAGED_SETTINGS = (
    Path("/etc/claude-code/managed-settings.json"),
    Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
)
BUDGET_VARIABLE = "SLASH_COMMAND_TOOL_CHAR_BUDGET"
CONTEXT_VARIABLE = "CLAUDE_CODE_MAX_CONTEXT_TOKENS"


@dataclass
class ClaudeSettings:
    """The merged values the listing depends on, each with the file it came from."""

    values: dict[str, tuple[Any, str]] = field(default_factory=dict)  # key -> (value, file)
    env: dict[str, tuple[str, str]] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)  # skillOverrides
    plugins: dict[str, bool] = field(default_factory=dict)  # enabledPlugins
    files: list[str] = field(default_factory=list)  # files read, highest precedence first
    problems: list[str] = field(default_factory=list)

    def get(self, key: str) -> tuple[Any, str] | None:
        return self.values.get(key)


def settings_files(
    folder: Path, claude_home: Path, managed: Sequence[Path] = MANAGED_SETTINGS
) -> list[Path]:
    """Settings files for a session started in `folder`, highest precedence first."""
    project = project_root(folder)
    files = list(managed)
    files += [project / ".claude" / "settings.local.json", project / ".claude" / "settings.json"]
    files.append(claude_home / "settings.json")
    return files


def project_root(folder: Path) -> Path:
    """The git root above `folder` (the folder itself outside a repository)."""
    current = folder.resolve()
    for candidate in (current, *current.parents):
        if (candidate / ".git").exists():
            return candidate
    return current


def read_settings(files: Sequence[Path]) -> ClaudeSettings:
    """Merge the files (highest precedence first); unreadable ones are noted, not fatal."""
    merged = ClaudeSettings()
    for path in files:
        data = _load(path, merged.problems)
        if data is None:
            continue
        merged.files.append(str(path))
        for key, value in data.items():
            merged.values.setdefault(key, (value, str(path)))
        for name, value in _mapping(data.get("env")).items():
            if isinstance(value, str | int | float):
                merged.env.setdefault(name, (str(value), str(path)))
        for name, value in _mapping(data.get("skillOverrides")).items():
            if isinstance(value, str):
                merged.overrides.setdefault(name, value)
        for name, value in _mapping(data.get("enabledPlugins")).items():
            if isinstance(value, bool):
                merged.plugins.setdefault(name, value)
    return merged


def _load(path: Path, problems: list[str]) -> dict[str, Any] | None:
    try:
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        problems.append(f"{path}: cannot read ({exc.strerror or exc})")
        return None
    try:
        data = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError) as exc:
        problems.append(f"{path}: not valid JSON ({exc})")
        return None
    if not isinstance(data, dict):
        problems.append(f"{path}: not a JSON object")
        return None
    return data


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def listing_settings(
    claude: ClaudeSettings,
    environ: Mapping[str, str],
    *,
    context_tokens: int | None = None,
    fraction: float | None = None,
    chars: int | None = None,
    config_context_tokens: int | None = None,
    config_fraction: float | None = None,
    chars_per_token: float = DEFAULT_CHARS_PER_TOKEN,
) -> ListingSettings:
    """The budget: explicit arguments first, then Claude Code's environment and settings,
    then the librarian's config, then Claude Code's defaults."""
    sources: list[tuple[str, str]] = []
    tokens, where = _first(
        ("--context-tokens", context_tokens),
        (f"${CONTEXT_VARIABLE}", _number(environ.get(CONTEXT_VARIABLE), int)),
        *_env_setting(claude, CONTEXT_VARIABLE, int),
        ("budget.context_tokens (config)", config_context_tokens),
        ("default (200k-token window)", DEFAULT_CONTEXT_TOKENS),
    )
    sources.append(("context window", where))
    share, where = _first(
        ("--fraction", fraction),
        *_setting(claude, "skillListingBudgetFraction", float),
        ("budget.fraction (config)", config_fraction),
        ("default", DEFAULT_FRACTION),
    )
    sources.append(("skillListingBudgetFraction", where))
    cap, where = _first(
        *_setting(claude, "skillListingMaxDescChars", int),
        ("default", DEFAULT_MAX_DESC_CHARS),
    )
    sources.append(("skillListingMaxDescChars", where))
    fixed, where = _first(
        ("--chars", chars),
        (f"${BUDGET_VARIABLE}", _number(environ.get(BUDGET_VARIABLE), int)),
        *_env_setting(claude, BUDGET_VARIABLE, int),
    )
    tokens, share, cap = int(tokens), float(share), int(cap)
    if fixed is not None:
        sources.append((BUDGET_VARIABLE, where))
        budget = int(fixed)
    else:
        budget = int(tokens * share * chars_per_token)
    return ListingSettings(tokens, share, chars_per_token, cap, budget, tuple(sources))


def _first(*candidates: tuple[str, Any]) -> tuple[Any, str]:
    for where, value in candidates:
        if value is not None:
            return value, where
    return None, ""


def _number(raw: Any, kind: type[int] | type[float]) -> Any:
    """A positive number from settings or the environment; None when absent or unusable."""
    if raw is None or isinstance(raw, bool):
        return None
    try:
        value = kind(float(raw)) if kind is int else kind(raw)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if value > 0 else None


def _setting(
    claude: ClaudeSettings, key: str, kind: type[int] | type[float]
) -> list[tuple[str, Any]]:
    found = claude.get(key)
    if found is None:
        return []
    value = _number(found[0], kind)
    if kind is float and value is not None and value > 1:
        value = None  # a fraction is at most 1
    return [(f"{key} in {found[1]}", value)]


def _env_setting(claude: ClaudeSettings, name: str, kind: type[int]) -> list[tuple[str, Any]]:
    found = claude.env.get(name)
    return [] if found is None else [(f"env.{name} in {found[1]}", _number(found[0], kind))]


def plugin_enabled(claude: ClaudeSettings, plugin: str, market: str) -> bool:
    """False only when `enabledPlugins` turns `plugin@market` off."""
    return claude.plugins.get(f"{plugin}@{market}", True)


__all__ = [
    "ClaudeSettings",
    "listing_settings",
    "plugin_enabled",
    "project_root",
    "read_settings",
    "settings_files",
]
