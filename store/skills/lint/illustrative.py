"""Which lines of a Markdown file are clearly illustrative: an attack shown to be recognised, a
"❌ Bad" example, a command a security hook blocks. A finding there is still shown — marked
`illustrative`, its severity lowered to low — so a security skill that explains `rm -rf /`
five times is not five high findings, and nothing is hidden.

Clearly means one of: the line sits in a section whose heading names attacks, exploits,
vulnerable or insecure code, anti-patterns or what not to do; a fenced block whose lead-in
(the two lines before it) or first comment says so ("❌ Bad:", "An attacker could run:",
"# vulnerable"); or, outside fences, a line that itself talks about the command rather than
asking for it ("never run", "blocks", "an attacker", "detects"). Scripts are never
illustrative: they are run, not read. Secrets, hidden characters and control characters are
not lowered either: they do their harm wherever they sit."""

from __future__ import annotations

import re

#: Rules whose findings are lowered inside illustrative lines.
LOWERED_RULES = frozenset(
    {
        "pipe_to_shell",
        "destructive_command",
        "data_exfiltration",
        "decode_execute",
        "reverse_shell",
        "persistence",
        "registry_redirect",
        "prompt_injection",
        "broad_permissions",
    }
)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")

_HEADING = re.compile(r"^(?P<level>#{1,6})[ \t]+(?P<title>.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(?P<fence>```+|~~~+)")
_SECTION_WORDS = re.compile(
    r"attack|malicious|malware|exploit|payload|vulnerab|insecure|anti-?patterns?|bad (?:example|"
    r"practice|pattern)s?|what not to|never do|don'?t do|do not (?:do|run|use)|dangerous"
    r"|red flags?|threat|detect|indicators? of|unsafe|examples? of (?:attacks|bad)|forbidden"
    r"|\bblocks?\b|blocked|blocklist|deny ?list|denylist|prohibited|injection|escape hatch|backdoor"
    r"|\brefuses?\b|\brejects?\b|\bcatch(?:es)?\b|guards? against|\bprevents?\b"
    r"|recogni[sz]e|\bspot\b|look (?:out )?for|watch (?:out )?for|warning signs|obfuscat"
    r"|reverse shells?|evasion|tricks|\bIoCs?\b|suspicious"
    r"|supply.chain|typosquat|phishing|sandbox escape|jailbreak",
    re.IGNORECASE,
)
_LEAD_WORDS = re.compile(
    r"❌|✗|✘|🚫|⛔|\bbad\b|\bwrong\b|\bdon'?t\b|\bdo not\b|\bnever\b|\bavoid\b|attacker"
    r"|malicious|exploit|vulnerable|insecure|unsafe|dangerous|anti-?pattern|red flag|blocks?\b"
    r"|blocked|\bden(?:y|ies)\b|detects?\b|flags?\b|catch(?:es)?\b|forbid|prohibit|refuses?\b"
    r"|instead of\b|payload",
    re.IGNORECASE,
)
_LINE_WORDS = re.compile(
    r"attacker|malicious|exploit|\bnever\b|\bdon'?t\b|\bdo not\b|\bblocks?\b|\bblocked\b"
    r"|\bden(?:y|ies)\b|\bdetects?\b|dangerous|forbid|prohibit|\brefuses?\b|\bavoid\b"
    r"|\bwarns?\b|red flag|\bunsafe\b|insecure",
    re.IGNORECASE,
)
#: Rules whose phrases are negative by nature ("never ask for confirmation", "do not tell the
#: user"): a negative word on the line proves nothing, only a section or a block does.
BLOCK_ONLY_RULES = frozenset({"broad_permissions", "prompt_injection"})
_FIRST_COMMENT = re.compile(
    r"^[ \t]*(?:#|//|--|/\*|<!--|rem\b)[^\n]*(?:bad|wrong|don'?t|do not|never|vulnerable|insecure"
    r"|attack|malicious|exploit|❌|unsafe|dangerous|anti-?pattern)",
    re.IGNORECASE,
)


_RUN_IT = re.compile(
    r"\b(?:run|execute|paste|copy|try)\b[^.\n]{0,40}\b(?:example|command|snippet|block|script"
    r"|line)s?\b[^.\n]{0,30}\b(?P<where>above|below)\b",
    re.IGNORECASE,
)


def illustrative_lines(
    relpath: str, text: str, wanted: set[int] | None = None
) -> dict[int, tuple[str, bool]]:
    """1-based line -> (why it is illustrative, whether a section or block says so rather
    than the line alone), for a Markdown file; {} for anything else. With `wanted`, only
    those lines are judged (the walk still follows every heading and fence).

    A block the text then tells the reader to run ("run the example above") is not
    illustrative whatever its label says: calling a payload an example must not lower it."""
    if not relpath.lower().endswith(MARKDOWN_SUFFIXES):
        return {}
    lines = text.split("\n")
    marked: dict[int, tuple[str, bool]] = {}
    sections: list[tuple[int, str, bool]] = []  # (level, title, illustrative)
    fence, fence_reason, fence_start = "", "", 0
    blocks: list[tuple[int, int]] = []  # (opening, closing) line numbers of illustrative blocks
    run_it: list[tuple[int, str]] = []  # lines that tell the reader to run a block
    for index, line in enumerate(lines):
        number = index + 1
        lead = line.lstrip(" \t")[:1]
        opening = _FENCE.match(line) if lead in ("`", "~") else None
        if fence:
            if _closes(opening, fence):
                fence = ""
                if fence_reason:
                    blocks.append((fence_start, number))
            elif fence_reason and (wanted is None or number in wanted):
                marked[number] = (fence_reason, True)
            continue
        if opening:
            fence, fence_start = opening.group("fence"), number
            fence_reason = _section_reason(sections) or _lead_reason(lines, index)
            first = lines[index + 1] if index + 1 < len(lines) else ""
            if not fence_reason and _FIRST_COMMENT.match(first):
                fence_reason = "the block's first comment says it is a bad example"
            continue
        order = _RUN_IT.search(line)
        if order:
            run_it.append((number, order.group("where").lower()))
        heading = _HEADING.match(line) if lead == "#" else None
        if heading:
            level = len(heading.group("level"))
            while sections and sections[-1][0] >= level:
                sections.pop()
            title = heading.group("title")
            # A level-1 heading is the document's title ("# Dangerous command guard"): it
            # names the subject of the whole skill, not an example inside it.
            sections.append((level, title, level > 1 and bool(_SECTION_WORDS.search(title))))
            continue
        if wanted is not None and number not in wanted:
            continue
        reason = _section_reason(sections)
        if reason:
            marked[number] = (reason, True)
        elif _LINE_WORDS.search(line):
            marked[number] = (
                "the sentence talks about the command rather than asking for it",
                False,
            )
    for number, where in run_it:
        _unmark_ordered_block(marked, blocks, number, where)
    return marked


def _closes(opening: re.Match[str] | None, fence: str) -> bool:
    return (
        opening is not None
        and opening.group("fence")[0] == fence[0]
        and len(opening.group("fence")) >= len(fence)
    )


def _unmark_ordered_block(
    marked: dict[int, tuple[str, bool]], blocks: list[tuple[int, int]], line: int, where: str
) -> None:
    """The block a "run the example above/below" line points at is not illustrative."""
    if where == "above":
        target = next((b for b in reversed(blocks) if b[1] < line), None)
    else:
        target = next((b for b in blocks if b[0] > line), None)
    if target is not None:
        for number in range(target[0], target[1] + 1):
            marked.pop(number, None)


def _section_reason(sections: list[tuple[int, str, bool]]) -> str:
    for _level, title, illustrative in reversed(sections):
        if illustrative:
            return f"under the heading “{_short(title)}”"
    return ""


def _lead_reason(lines: list[str], fence_index: int) -> str:
    """The two non-blank lines before a fence, when they announce a bad or attack example."""
    seen = 0
    for back in range(fence_index - 1, max(-1, fence_index - 6), -1):
        line = lines[back].strip()
        if not line:
            continue
        if _HEADING.match(line) or _FENCE.match(line):
            break
        found = _LEAD_WORDS.search(line)
        if found:
            return f"after “{_short(line)}”"
        seen += 1
        if seen == 2:
            break
    return ""


def _short(text: str, limit: int = 50) -> str:
    text = " ".join(text.split()).strip("*_#:` ")
    return text if len(text) <= limit else text[: limit - 1] + "…"
