"""The `prompt_injection` rule: phrases that try to override the agent's instructions, keep
things from the user or make it exfiltrate data."""

from __future__ import annotations

import re
from dataclasses import dataclass

from store.skills.lint.rules import _Describe, _Rule, _Verdict, neutralise

_W = r"[ \t\r\n]{1,4}"  # phrases may wrap across Markdown lines
_QUOTES = frozenset("\"'`“‘«")


def _injection(message: str, lead: re.Pattern[str] | None = None, reach: int = 24) -> _Describe:
    """Describe a phrase; `lead` must end within `reach` characters before it."""

    def describe(m: re.Match[str], text: str) -> _Verdict:
        start = m.start()
        if lead is not None:
            window = text[max(0, start - reach) : start].lower()
            found = lead.search(window)
            if found is None:
                return None
            start -= len(window) - found.start()
        phrase = neutralise(" ".join(text[start : m.end()].split()), 80)
        # A phrase opening a quotation is usually cited as a bad example, not addressed to
        # the agent: still shown, one level lower.
        if start > 0 and text[start - 1] in _QUOTES:
            return "medium", f"quotes a prompt-injection phrase: “{phrase}”"
        return "high", f"{message}: “{phrase}”"

    return describe


_EXFILTRATE = _injection("tells the agent to exfiltrate data")
_LINE_LEAD = re.compile(r"[ \t]*(?:(?:[-*+>]|\d{1,3}[.)])[ \t]+)?(?:\*\*|__|\*|_)?")
_IMPERATIVE_AFTER = (".", "!", "?", ":", ";", " then", " please", " now", " silently",
                     " quietly", " secretly")  # fmt: skip


def _describe_exfiltrate(m: re.Match[str], text: str) -> _Verdict:
    # Only as an instruction (line or sentence start, "then …"): security docs say
    # "code cannot exfiltrate credentials" all the time.
    line_start = text.rfind("\n", 0, m.start()) + 1
    before = text[max(line_start, m.start() - 40) : m.start()]
    lead = " " + before.rstrip(" \t*_").lower()
    if _LINE_LEAD.fullmatch(text, line_start, m.start()) or lead.endswith(_IMPERATIVE_AFTER):
        return _EXFILTRATE(m, text)
    return None


@dataclass(frozen=True, slots=True)
class _Phrase:
    pattern: str  # lowercase
    message: str
    triggers: tuple[str, ...]
    # Must end right before the phrase. Phrases start at a rare word ("user", "your") and
    # look back for the common ones ("do not tell the"), which keeps the scan fast.
    lead: str = ""
    reach: int = 24  # how far back the lead may start


_INJECTION_PHRASES: tuple[_Phrase, ...] = (
    *(
        _Phrase(
            rf"{verb}(?:{_W}(?:all|any|the|your|my|of|these|those)){{0,3}}{_W}(?:previous|prior"
            rf"|above|earlier|preceding|original|system)(?:{_W}(?:system|developer|safety))?"
            rf"{_W}(?:instructions?|prompts?|rules|directions|directives|guidelines|messages"
            r"|context)\b",
            "tells the agent to ignore its earlier instructions",
            (verb,),
        )
        for verb in ("ignore", "disregard", "forget", "bypass")
    ),
    _Phrase(
        rf"disregard{_W}(?:all{_W})?(?:of{_W})?your{_W}(?:system{_W}prompt"
        rf"|(?:previous{_W}|prior{_W})?instructions|guidelines|rules|programming)\b",
        "tells the agent to disregard its instructions",
        ("disregard",),
    ),
    _Phrase(
        rf"you{_W}are{_W}now{_W}(?:dan\b|in{_W}(?:developer|god|jailbreak|jailbroken"
        rf"|unrestricted|dan){_W}mode|jailbroken|unrestricted|unfiltered)",
        "tries to switch the agent into a jailbreak persona",
        ("now",),
    ),
    _Phrase(
        rf"user\b(?!{_W}to\b)",
        "tells the agent to keep something from the user",
        ("tell", "inform", "notify", "alert"),
        rf"(?<![\w-])(?:do{_W}not|don'?t|never){_W}(?:tell|inform|notify|alert){_W}the{_W}$",
        48,
    ),
    _Phrase(
        rf"without{_W}(?:telling|informing|notifying|alerting){_W}(?:the{_W})?"
        r"(?:user|human|operator)\b",
        "tells the agent to act without telling the user",
        ("without",),
    ),
    _Phrase(
        r"to[ \t]+(?:https?|ftp)://",
        "tells the agent to send secrets to a URL",
        ("http", "ftp:"),
        rf"(?<![\w-])(?:send|post|upload|transmit|forward){_W}(?:the|all|any|your|their|its)"
        rf"(?:{_W}[\w.-]{{1,20}}){{0,2}}?{_W}(?:contents|credentials|secrets|env(?:ironment)?"
        r"(?:[ \t]+variables|[ \t]+vars)?|api[ \t]+keys|tokens|passwords|private[ \t]+keys"
        r"|ssh[ \t]+keys|\.env)\b[^\n]{0,60}?[ \t]$",
        160,
    ),
    _Phrase(
        rf"override{_W}(?:all{_W}|any{_W})?(?:of{_W})?your{_W}(?:safety|guidelines"
        r"|restrictions|rules|programming|instructions)\b",
        "tells the agent to override its safety rules",
        ("override",),
    ),
    _Phrase(
        rf"your(?:{_W}(?:full|entire|complete|hidden|original|initial))?{_W}"
        rf"(?:system{_W}prompt|instructions)\b",
        "tries to make the agent reveal its system prompt",
        ("your",),
        rf"(?<![\w-])(?:reveal|leak|disclose|print|output|repeat|dump){_W}$",
    ),
)

_INJECTION_RULES: tuple[_Rule, ...] = (
    *(
        _Rule(
            "prompt_injection",
            re.compile(ph.pattern),
            _injection(ph.message, re.compile(ph.lead) if ph.lead else None, ph.reach),
            ph.triggers,
            lower=True,
        )
        for ph in _INJECTION_PHRASES
    ),
    _Rule(
        "prompt_injection",
        re.compile(r"exfiltrat(?:e|ing)\b"),
        _describe_exfiltrate,
        ("exfiltrat",),
        lower=True,
    ),
)
