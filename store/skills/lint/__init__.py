"""Security lint for skill files.

Pure pattern matching over text: nothing from a skill is ever executed. Findings are shown
to people, so excerpts are single-line, neutralised, and secrets in them are masked.

The rules live by what they look for: `secret` (credentials), `commands` (piping downloads
into a shell, destructive commands, sending secrets out), `execution` (decoding a payload and
running it, reverse shells), `persistence` (start-up files, cron, launch agents), `registry`
(package installs sent to another registry), `permissions` (every shell command pre-approved
with an instruction not to ask), `flows` and `python_flow` (data followed through JavaScript
and Python code),
`injection` (prompt-injection phrases) and `hidden` (invisible characters, control
characters, oversized blobs); `rules` holds what they are made of and the matcher, `findings`
turns hits into findings and `illustrative` marks the ones inside clearly illustrative
Markdown (an attack example in a security skill).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from store.models.skills import LintFinding
from store.skills.lint.commands import _DESTRUCTIVE_RULES, _EXFIL_RULES, _PIPE_RULES
from store.skills.lint.execution import _DECODE_EXECUTE_RULES, _REVERSE_SHELL_RULES
from store.skills.lint.findings import _findings, _sort_key
from store.skills.lint.flows import flow_hits
from store.skills.lint.hidden import MAX_BLOB_CHARS, _blob_hits, _control_hits, _hidden_hits
from store.skills.lint.illustrative import BLOCK_ONLY_RULES, LOWERED_RULES, illustrative_lines
from store.skills.lint.injection import _INJECTION_RULES
from store.skills.lint.permissions import permission_hits
from store.skills.lint.persistence import _PERSISTENCE_RULES
from store.skills.lint.registry import _REGISTRY_RULES
from store.skills.lint.rules import _Rule, _run, _texts, neutralise
from store.skills.lint.secret import _format_hits, _secret_hits, secret_spans

__all__ = [
    "LINT_RULES",
    "LINT_VERSION",
    "MAX_BLOB_CHARS",
    "lint_skill",
    "lint_text",
    "neutralise",
    "secret_spans",
]

#: Bumped whenever the rules change what they find: a scan lints unchanged skills again
#: when the findings it has on record came from an older version.
LINT_VERSION = 2

#: rule id -> (severity, one-line description). The severity is the rule's highest.
LINT_RULES: dict[str, tuple[str, str]] = {
    "secret": ("high", "A credential, API key, token or private key written into the skill"),
    "pipe_to_shell": ("high", "Downloads a script and runs it straight away (curl … | sh)"),
    "decode_execute": ("high", "Decodes hidden content and runs it (base64 -d | sh, exec(b64…))"),
    "reverse_shell": ("high", "Hands a shell to a remote host (/dev/tcp, nc -e, socket + dup2)"),
    "data_exfiltration": (
        "high",
        "Sends the environment or credential files (~/.ssh, .env) to a remote host",
    ),
    "persistence": (
        "high",
        "Makes something run again later: shell start-up files, cron, launch agents, services",
    ),
    "broad_permissions": (
        "high",
        "Pre-approves every shell command and tells the agent not to ask for confirmation",
    ),
    "destructive_command": ("high", "A command that wipes files, disks, history or databases"),
    "prompt_injection": ("high", "Text that tries to override the agent's instructions"),
    "hidden_unicode": ("high", "Invisible or bidirectional characters that hide what text says"),
    "registry_redirect": (
        "high",
        "Sends package installs to another registry, or turns off their verification",
    ),
    "terminal_escape": ("medium", "Raw control characters that can rewrite a terminal"),
    "oversized_blob": ("medium", "A huge line, encoded blob or file that can hide content"),
}

_PATTERN_RULES: tuple[_Rule, ...] = (
    *_PIPE_RULES,
    *_DECODE_EXECUTE_RULES,
    *_REVERSE_SHELL_RULES,
    *_DESTRUCTIVE_RULES,
    *_INJECTION_RULES,
    *_EXFIL_RULES,
    *_PERSISTENCE_RULES,
    *_REGISTRY_RULES,
)
_SKILL_FILES = ("SKILL.md", "skill.md")


def lint_text(relpath: str, text: str, allowed_tools: Sequence[str] = ()) -> list[LintFinding]:
    """Lint one file's text; findings sorted by line, then rule. `allowed_tools` (the skill's
    parsed `allowed-tools`) matters for SKILL.md only."""
    lines = text.split("\n")
    texts = _texts(text, lines)
    hits = _secret_hits(texts)
    hits += _format_hits(text, hits)
    hits += _run(_PATTERN_RULES, texts)
    hits += flow_hits(relpath, text, _line_starts(lines))
    if relpath in _SKILL_FILES:
        hits += permission_hits(texts, allowed_tools)
    hits += _hidden_hits(text)
    hits += _control_hits(text)
    hits += _blob_hits(text, lines)
    found = _findings(relpath, lines, hits)
    wanted = {f.line for f in found if f.rule in LOWERED_RULES and f.severity != "low"}
    return _in_context(found, illustrative_lines(relpath, text, wanted) if wanted else {})


def lint_skill(
    files: Iterable[tuple[str, str]], allowed_tools: Sequence[str] = ()
) -> list[LintFinding]:
    """Lint every (relpath, text) of a skill; SKILL.md first, then by path, line and rule."""
    found = {
        finding for relpath, text in files for finding in lint_text(relpath, text, allowed_tools)
    }
    return sorted(found, key=_sort_key)


def _line_starts(lines: Sequence[str]) -> list[int]:
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _in_context(
    findings: list[LintFinding], marked: dict[int, tuple[str, bool]]
) -> list[LintFinding]:
    """Findings on clearly illustrative lines: marked, lowered to low, the reason said."""
    if not marked:
        return findings
    out = []
    for f in findings:
        where = marked.get(f.line)
        if where is None or f.rule not in LOWERED_RULES:
            out.append(f)
            continue
        reason, strong = where
        if not strong and f.rule in BLOCK_ONLY_RULES:
            out.append(f)
            continue
        severity = "low" if f.severity in ("high", "medium") else f.severity
        message = f"{f.message} — in an illustrative example ({reason})"
        out.append(replace(f, severity=severity, message=message, context="illustrative"))
    return sorted(out, key=_sort_key)
