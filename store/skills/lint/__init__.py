"""Security lint for skill files.

Pure pattern matching over text: nothing from a skill is ever executed. Findings are shown
to people, so excerpts are single-line, neutralised, and secrets in them are masked.

The rules live by what they look for: `secret` (credentials), `commands` (piping downloads
into a shell, destructive commands, sending secrets out), `injection` (prompt-injection
phrases) and `hidden` (invisible characters, control characters, oversized blobs); `rules`
holds what they are made of and the matcher, `findings` turns hits into findings.
"""

from __future__ import annotations

from collections.abc import Iterable

from store.models.skills import LintFinding
from store.skills.lint.commands import _DESTRUCTIVE_RULES, _EXFIL_RULES, _PIPE_RULES
from store.skills.lint.findings import _findings, _sort_key
from store.skills.lint.hidden import MAX_BLOB_CHARS, _blob_hits, _control_hits, _hidden_hits
from store.skills.lint.injection import _INJECTION_RULES
from store.skills.lint.rules import _Rule, _run, _texts, neutralise
from store.skills.lint.secret import _format_hits, _secret_hits, secret_spans

__all__ = ["LINT_RULES", "MAX_BLOB_CHARS", "lint_skill", "lint_text", "neutralise", "secret_spans"]

#: rule id -> (severity, one-line description). The severity is the rule's highest.
LINT_RULES: dict[str, tuple[str, str]] = {
    "secret": ("high", "A credential, API key, token or private key written into the skill"),
    "pipe_to_shell": ("high", "Downloads a script and runs it straight away (curl … | sh)"),
    "destructive_command": ("high", "A command that wipes files, disks, history or databases"),
    "prompt_injection": ("high", "Text that tries to override the agent's instructions"),
    "hidden_unicode": ("high", "Invisible or bidirectional characters that hide what text says"),
    "terminal_escape": ("medium", "Raw control characters that can rewrite a terminal"),
    "oversized_blob": ("medium", "A huge line, encoded blob or file that can hide content"),
    "data_exfiltration": ("medium", "Sends local secrets (~/.ssh, .env, env) to a remote host"),
}

_PATTERN_RULES: tuple[_Rule, ...] = (
    *_PIPE_RULES,
    *_DESTRUCTIVE_RULES,
    *_INJECTION_RULES,
    *_EXFIL_RULES,
)


def lint_text(relpath: str, text: str) -> list[LintFinding]:
    """Lint one file's text; findings sorted by line, then rule."""
    lines = text.split("\n")
    texts = _texts(text, lines)
    hits = _secret_hits(texts)
    hits += _format_hits(text, hits)
    hits += _run(_PATTERN_RULES, texts)
    hits += _hidden_hits(text)
    hits += _control_hits(text)
    hits += _blob_hits(text, lines)
    return _findings(relpath, lines, hits)


def lint_skill(files: Iterable[tuple[str, str]]) -> list[LintFinding]:
    """Lint every (relpath, text) of a skill; SKILL.md first, then by path, line and rule."""
    found = {finding for relpath, text in files for finding in lint_text(relpath, text)}
    return sorted(found, key=_sort_key)
