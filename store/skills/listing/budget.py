"""Allot Claude Code's listing budget to the skills of a folder and say what to do.

The model of the listing (an estimate, documented in the README): every listed skill costs
its name (`- name` and a newline); a skill whose description is listed also costs `: ` and
its `description` + `when_to_use`, whitespace folded, cut at `skillListingMaxDescChars`.
Descriptions are granted to the most invoked skills first (ties: the most recently used,
then by name) until the next one does not fit; from there on skills are listed by name only
— "Claude Code drops descriptions starting with the skills you invoke least"
(code.claude.com/docs/en/skills). The entry format itself is not documented: the overhead
per entry is this project's guess and can be off by a few characters a skill."""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from store.models.listing import Advice, ListingEntry, ListingReport, ListingSettings
from store.query_terms import STOPWORDS
from store.skills.discovery import claude_home
from store.skills.listing.settings import (
    MANAGED_SETTINGS,
    ClaudeSettings,
    read_settings,
    settings_files,
)
from store.skills.listing.settings import listing_settings as settings_for
from store.skills.listing.sources import (
    MANAGED_SKILLS,
    SCOPE_RANK,
    Source,
    listing_roots,
    sources,
    usage,
)

#: `- ` before the name and the newline after the entry.
NAME_OVERHEAD = 3
#: `: ` between the name and the description.
DESCRIPTION_OVERHEAD = 2
_WORD = re.compile(r"[a-z][a-z0-9+#.-]{2,}[a-z0-9+#]")
_STATE_ORDER = {"full": 0, "dropped": 1, "name_only": 2, "hidden": 3, "shadowed": 4}
BIG_DESCRIPTION = 400
MAX_LOST_TERMS = 8


def listing_text(description: str, when_to_use: str, cap: int) -> tuple[str, str, bool]:
    """(what is listed, what the cap cut off, whether it was cut) for one skill."""
    combined = " ".join(f"{description} {when_to_use}".split())
    return combined[:cap], combined[cap:], len(combined) > cap


def report(
    conn: sqlite3.Connection,
    folder: Path,
    *,
    home: Path,
    env: Mapping[str, str],
    context_tokens: int | None = None,
    fraction: float | None = None,
    chars: int | None = None,
    config_context_tokens: int | None = None,
    config_fraction: float | None = None,
    managed_settings: Sequence[Path] = MANAGED_SETTINGS,
    managed_skills: Sequence[Path] = MANAGED_SKILLS,
) -> ListingReport:
    """The listing for a Claude Code session started in `folder` (`managed_*`: where Claude
    Code's managed settings and skills live; tests point them elsewhere)."""
    claude = read_settings(settings_files(folder, claude_home(home, env), managed_settings))
    settings = settings_for(
        claude,
        env,
        context_tokens=context_tokens,
        fraction=fraction,
        chars=chars,
        config_context_tokens=config_context_tokens,
        config_fraction=config_fraction,
    )
    roots = listing_roots(folder, home, env, claude, managed_skills)
    found, unread = sources(conn, roots)
    counts, sessions = usage(conn, {s.name for s in found} | {s.command for s in found})
    return allot(str(folder), settings, claude, found, counts, sessions, unread + claude.problems)


def allot(
    folder: str,
    settings: ListingSettings,
    claude: ClaudeSettings,
    found: Sequence[Source],
    counts: Mapping[str, tuple[int, str]],
    sessions: int,
    unread: Sequence[str] = (),
) -> ListingReport:
    """Grant descriptions by use until the budget runs out; everything else by name."""
    entries = [_entry(s, settings, claude, counts) for s in found]
    entries = _shadow(entries)
    listed = [e for e in entries if e.state in ("full", "name_only")]
    base = sum(len(e.name) + NAME_OVERHEAD for e in listed)
    remaining = settings.char_budget - base
    granted: list[ListingEntry] = []
    order = sorted(
        (e for e in entries if e.state == "full"),
        key=lambda e: (-e.uses, _newest_first(e.last_used), e.name, e.path),
    )
    cut = False
    by_path: dict[str, ListingEntry] = {e.path: e for e in entries}
    for entry in order:
        cost = entry.full_chars - (len(entry.name) + NAME_OVERHEAD)
        if not cut and cost <= remaining:
            remaining -= cost
            granted.append(entry)
        else:
            cut = True
            by_path[entry.path] = replace(
                entry,
                state="dropped",
                reason="past the budget: listed by name only",
                listed_chars=len(entry.name) + NAME_OVERHEAD,
            )
    # When the listing overflows, descriptions go least-used first: the reverse grant order.
    for rank, entry in enumerate(reversed(order), start=1):
        by_path[entry.path] = replace(by_path[entry.path], drop_rank=rank)
    entries = _with_lost_terms(list(by_path.values()), found, settings.max_desc_chars)
    entries.sort(key=lambda e: (_STATE_ORDER[e.state], e.drop_rank and -e.drop_rank, e.name))
    used = sum(e.listed_chars for e in entries)
    full = sum(e.full_chars for e in entries if e.state in ("full", "dropped"))
    full += sum(e.listed_chars for e in entries if e.state == "name_only")
    result = ListingReport(
        folder, settings, tuple(entries), used, full, sessions, (), tuple(unread)
    )
    return replace(result, advice=tuple(advise(result)))


def _newest_first(when: str) -> tuple[int, str]:
    # Sorts recent uses first: never-used last, then later timestamps before earlier ones.
    return (1, "") if not when else (0, "".join(chr(0x10FFFF - ord(c)) for c in when))


def _entry(
    s: Source,
    settings: ListingSettings,
    claude: ClaudeSettings,
    counts: Mapping[str, tuple[int, str]],
) -> ListingEntry:
    text, _, capped = listing_text(s.description, s.when_to_use, settings.max_desc_chars)
    uses, last = counts.get(s.name) or counts.get(s.command) or (0, "")
    name_cost = len(s.name) + NAME_OVERHEAD
    full_cost = name_cost + (DESCRIPTION_OVERHEAD + len(text) if text else 0)
    state, reason, listed = "full", "listed with its description", full_cost
    override = (
        ""
        if s.scope == "plugin"
        else claude.overrides.get(s.command, claude.overrides.get(s.name, ""))
    )
    if s.hidden:
        state, reason, listed = "hidden", s.hidden, 0
    elif override in ("off", "user-invocable-only"):
        state, reason, listed = "hidden", f'skillOverrides: "{override}"', 0
    elif override == "name-only":
        state, reason, listed = "name_only", 'skillOverrides: "name-only"', name_cost
    if s.note:
        reason = f"{reason} ({s.note})"
    raw = len(" ".join(f"{s.description} {s.when_to_use}".split()))
    return ListingEntry(
        name=s.name,
        scope=s.scope,
        path=s.path,
        state=state,
        reason=reason,
        description_chars=raw,
        listed_chars=listed,
        full_chars=full_cost,
        capped=capped,
        uses=uses,
        last_used=last,
        in_library=s.in_library,
    )


def _shadow(entries: list[ListingEntry]) -> list[ListingEntry]:
    """One skill per command name: managed over personal over project (plugins never clash)."""
    best: dict[str, ListingEntry] = {}
    for entry in sorted(entries, key=lambda e: (SCOPE_RANK[e.scope], e.path)):
        key = entry.name if entry.scope == "plugin" else entry.name.lower()
        best.setdefault(key, entry)
    out = []
    for entry in entries:
        key = entry.name if entry.scope == "plugin" else entry.name.lower()
        winner = best[key]
        if winner is entry:
            out.append(entry)
        else:
            why = f"shadowed by the {winner.scope} skill {winner.path}"
            out.append(replace(entry, state="shadowed", reason=why, listed_chars=0))
    return out


def _with_lost_terms(
    entries: list[ListingEntry], found: Sequence[Source], cap: int
) -> list[ListingEntry]:
    """Routing terms (words few other listed skills use) that the model no longer sees: the
    whole description of a dropped skill, the tail past the cap of a capped one."""
    texts = {s.path: listing_text(s.description, s.when_to_use, cap) for s in found}
    listed = [e for e in entries if e.state in ("full", "dropped", "name_only")]
    frequency: Counter[str] = Counter()
    for entry in listed:
        kept, tail, _ = texts[entry.path]
        frequency.update(set(_words(kept + " " + tail)))
    rare = max(2, len(listed) // 50)
    out = []
    for entry in entries:
        kept, tail, _ = texts[entry.path]
        if entry.state in ("dropped", "name_only"):
            lost_from = kept + " " + tail
        elif entry.state == "full" and entry.capped:
            lost_from = tail
        else:
            out.append(entry)
            continue
        seen_in_name = set(_words(entry.name.replace("-", " ")))
        still = set(_words(kept)) if entry.state == "full" else set()
        lost = [
            w
            for w in dict.fromkeys(_words(lost_from))
            if frequency[w] <= rare and w not in seen_in_name and w not in still
        ]
        out.append(replace(entry, lost_terms=tuple(lost[:MAX_LOST_TERMS])))
    return out


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


# -- advice ------------------------------------------------------------------------------------


def advise(r: ListingReport) -> list[Advice]:
    s = r.settings
    out: list[Advice] = []
    dropped = r.dropped
    names_only = sum(
        len(e.name) + NAME_OVERHEAD
        for e in r.entries
        if e.state != "hidden" and e.state != "shadowed"
    )
    if names_only > s.char_budget:
        out.append(
            Advice(
                "names_over_budget",
                f"Even the {sum(1 for e in r.entries if e.state not in ('hidden', 'shadowed')):,}"
                f" names alone take {names_only:,} characters, more than the whole budget:"
                " no description can be listed; hide skills you do not need here"
                ' (`skillOverrides` "off", or uninstall them).',
                (),
                names_only - s.char_budget,
            )
        )
    if r.full_chars > s.char_budget:
        names = tuple(e.name for e in sorted(dropped, key=lambda e: e.drop_rank, reverse=True))
        out.append(
            Advice(
                "over_budget",
                f"The listing needs {r.full_chars:,} characters and the budget is"
                f" {s.char_budget:,}: {len(dropped)} skills are listed by name only, so the"
                " model cannot tell when to use them.",
                names,
                r.full_chars - s.char_budget,
            )
        )
        window = s.context_tokens * s.chars_per_token
        needed = r.full_chars / window if window else 0
        if needed <= 1:
            out.append(
                Advice(
                    "raise_budget",
                    f"skillListingBudgetFraction {needed:.3f} (now {s.fraction:g}) would list"
                    f" every description, at {r.full_chars - s.char_budget:,} more characters"
                    " of context on every turn; or set SLASH_COMMAND_TOOL_CHAR_BUDGET to"
                    f" {r.full_chars:,}.",
                    (),
                    r.full_chars - s.char_budget,
                )
            )
    else:
        share = r.used_chars / s.char_budget if s.char_budget else 0
        out.append(
            Advice(
                "fits",
                f"The listing fits: {r.used_chars:,} of {s.char_budget:,} characters"
                f" ({share:.0%}).",
            )
        )
    out += _never_used(r)
    out += _biggest(r)
    out += _terms_past_cut(r)
    return out


def _never_used(r: ListingReport) -> list[Advice]:
    if r.sessions == 0:
        return [
            Advice(
                "no_usage",
                "No sessions have been ingested, so the drop order cannot follow use: run"
                " `librarian ingest` (or install the hooks) to count invocations.",
            )
        ]
    idle = [e for e in r.entries if e.state == "full" and e.uses == 0]
    if not idle:
        return []
    freed = sum(e.full_chars - len(e.name) - NAME_OVERHEAD for e in idle)
    return [
        Advice(
            "never_used",
            f"{len(idle)} skills were never invoked in {r.sessions:,} ingested sessions but"
            f' cost {freed:,} characters of descriptions; `skillOverrides` with "name-only"'
            " (or uninstalling them) frees that room for skills that are used.",
            tuple(e.name for e in sorted(idle, key=lambda e: -e.full_chars)),
            freed,
        )
    ]


def _biggest(r: ListingReport) -> list[Advice]:
    big = sorted(
        (
            e
            for e in r.entries
            if e.state in ("full", "dropped") and e.description_chars >= BIG_DESCRIPTION
        ),
        key=lambda e: (-e.description_chars, e.name),
    )[:5]
    if not big:
        return []
    spare = sum(e.description_chars - BIG_DESCRIPTION // 2 for e in big)
    return [
        Advice(
            "biggest",
            "The biggest descriptions: "
            + ", ".join(f"{e.name} ({e.description_chars:,})" for e in big)
            + f". Cut to about {BIG_DESCRIPTION // 2} characters each they would free"
            f" {spare:,}: keep the key use case and the trigger words, move the rest to the body.",
            tuple(e.name for e in big),
            spare,
        )
    ]


def _terms_past_cut(r: ListingReport) -> list[Advice]:
    cut = [e for e in r.entries if e.state == "full" and e.capped and e.lost_terms]
    out = []
    if cut:
        out.append(
            Advice(
                "terms_past_cut",
                f"{len(cut)} descriptions run past the {r.settings.max_desc_chars:,}-character"
                " cap and lose routing words there: "
                + "; ".join(f"{e.name}: {', '.join(e.lost_terms[:5])}" for e in cut[:5])
                + ". Put the key use case first.",
                tuple(e.name for e in cut),
            )
        )
    lost = [e for e in r.entries if e.state == "dropped" and e.lost_terms]
    if lost:
        out.append(
            Advice(
                "dropped_terms",
                "Dropped descriptions take their routing words with them: "
                + "; ".join(f"{e.name}: {', '.join(e.lost_terms[:4])}" for e in lost[:5])
                + ". The UserPromptSubmit hook (`librarian hooks install`) can still bring"
                " such a skill up when a prompt fits it.",
                tuple(e.name for e in lost),
            )
        )
    return out
