"""The `broad_permissions` rule: a skill that pre-approves every shell command in its
`allowed-tools` (`Bash`, `Bash(*)`, `Bash(sudo:*)` …) and tells the agent not to ask for
confirmation. Claude Code applies a skill's `allowed-tools` without asking while the skill's
turn runs, and workspace trust does not gate it (code.claude.com/docs/en/skills, "Pre-approve
tools for a skill"), so the two together let a skill run anything unseen.

Either half alone is a smaller thing: unrestricted shell access is low (many tool skills need
it), a "do not ask for confirmation" instruction is low, and asking for Claude Code's own
permission bypass (`--dangerously-skip-permissions`, `bypassPermissions`) is medium."""

from __future__ import annotations

import re
from collections.abc import Sequence

from store.skills.lint.rules import _Hit, _Texts, neutralise

_W = r"[ \t\r\n]{1,4}"
# Anchored on the rare word (confirmation, permission…); the lead must end right before it.
_ASK_WORD = re.compile(r"(?:confirmation|permission|approval|consent)s?\b")
_SKIP_LEAD = re.compile(
    rf"(?<![\w-])(?:never|do{_W}not|don'?t|without|no{_W}need{_W}to|skip(?:ping)?|avoid)"
    rf"(?:{_W}(?:ever|once|any|the|a|for|to|asking|wait(?:ing)?|prompt(?:ing)?|checking"
    rf"|with|need|have|bother)){{0,4}}{_W}(?:ask(?:ing)?|request(?:ing)?|seek(?:ing)?|wait(?:ing)?{_W}for"
    rf"|prompt(?:ing)?|confirm(?:ing)?|need(?:ing)?)(?:{_W}(?:the{_W})?(?:user|human|me"
    rf"|anyone))?(?:{_W}(?:for|about))?(?:{_W}(?:any|a|an|their|the|explicit))?{_W}$"
    rf"|(?<![\w-])(?:skip|bypass|without)(?:{_W}(?:all|any|the|every))?{_W}$"
)
_SKIP_CHECK = re.compile(
    rf"(?<![\w-])(?:never|do{_W}not|don'?t){_W}(?:ask|check|confirm){_W}(?:with{_W})?"
    rf"(?:the{_W})?(?:user|human){_W}(?:first|before)\b"
    r"|(?<![\w-])(?:auto-?approve|pre-?approve)[ \t]+(?:every|all|any)[ \t]+"
    r"(?:command|tool|action)s?\b"
)


def _skip_phrases(low: str) -> list[tuple[int, int]]:
    """(start, end) of each instruction not to ask for confirmation, in lowercased text."""
    found = []
    for word in _ASK_WORD.finditer(low):
        window_start = max(0, word.start() - 120)
        lead = _SKIP_LEAD.search(low, window_start, word.start())
        if lead is not None:
            found.append((lead.start(), word.end()))
    found += [(m.start(), m.end()) for m in _SKIP_CHECK.finditer(low)]
    return sorted(found)


_BYPASS = re.compile(
    r"--dangerously-skip-permissions|bypasspermissions|--permission-mode[ =]+bypass"
    r"|defaultmode[\"']?[ \t]*:[ \t]*[\"']bypass"
)
_BROAD_TOOL = re.compile(
    r"^(?:bash|powershell|shell)(?:\((?:\*|\*:\*|\* \*|:\*|sudo\b.*|\*\*)?\))?$|^\*$", re.IGNORECASE
)
_ALLOWED_LINE = re.compile(r"(?m)^allowed[-_]tools[ \t]*:")


def broad_tools(allowed_tools: Sequence[str]) -> list[str]:
    """The entries of `allowed-tools` that grant every shell command."""
    return [t for t in allowed_tools if _BROAD_TOOL.match(" ".join(t.split()))]


def permission_hits(t: _Texts, allowed_tools: Sequence[str]) -> list[_Hit]:
    """Hits in SKILL.md (`t`), given the skill's parsed `allowed-tools`."""
    broad = broad_tools(allowed_tools)
    granted = neutralise(", ".join(broad), 60)
    hits: list[_Hit] = []
    asks = _skip_phrases(t.low) if _asks_skip(t) else []
    for start, end in asks:
        phrase = neutralise(" ".join(t.text[start:end].split()), 60)
        if broad:
            message = (
                f"tells the agent not to ask for confirmation (“{phrase}”) while pre-approving"
                f" every shell command (allowed-tools: {granted})"
            )
            hits.append(_Hit("broad_permissions", "high", message, start))
        else:
            message = f"tells the agent not to ask for confirmation (“{phrase}”)"
            hits.append(_Hit("broad_permissions", "low", message, start))
    if "bypass" in t.low or "dangerously" in t.low:
        for m in _BYPASS.finditer(t.low):
            what = neutralise(t.text[m.start() : m.end()], 60)
            message = f"asks for Claude Code's permission bypass ({what})"
            hits.append(_Hit("broad_permissions", "medium", message, m.start()))
    if broad and not asks:
        found = _ALLOWED_LINE.search(t.low)
        where = found.start() if found else -1
        message = f"pre-approves every shell command (allowed-tools: {granted})"
        hits.append(_Hit("broad_permissions", "low", message, where))
    return hits


def _asks_skip(t: _Texts) -> bool:
    return any(
        t.has(w) for w in ("confirmation", "permission", "approval", "consent", "approve", "first")
    )
