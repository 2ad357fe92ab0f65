"""Claude Code's skill listing for a working folder, against its character budget (issue 15,
item 1), and the advice that comes with it."""

from __future__ import annotations

from dataclasses import dataclass, field

#: What happens to a skill in the listing.
#: full: name and description listed; dropped: past the budget, listed by name only;
#: name_only: `skillOverrides` asks for the name only; hidden: not listed to the model
#: (`disable-model-invocation`, `skillOverrides` off / user-invocable-only); shadowed: a
#: skill of higher precedence has the same name.
LISTING_STATES: tuple[str, ...] = ("full", "dropped", "name_only", "hidden", "shadowed")


@dataclass(frozen=True)
class ListingSettings:
    """The budget's inputs, and where each came from."""

    context_tokens: int
    fraction: float
    chars_per_token: float
    max_desc_chars: int
    char_budget: int  # the budget in characters, as used
    sources: tuple[tuple[str, str], ...] = ()  # (setting, where it came from)


@dataclass(frozen=True)
class ListingEntry:
    """One skill as Claude Code would list it in the folder."""

    name: str  # as listed (plugin skills are `plugin:skill`)
    scope: str  # managed | personal | project | plugin
    path: str  # the SKILL.md
    state: str  # one of LISTING_STATES
    reason: str  # why it has that state, in words
    description_chars: int  # description + when_to_use, before the per-skill cap
    listed_chars: int  # what it costs in the listing as it stands (0 when not listed)
    full_chars: int  # what it would cost with its description
    capped: bool  # description + when_to_use past the per-skill cap (cut there)
    uses: int  # sessions that invoked it (ingested transcripts)
    last_used: str  # when it was last invoked ("" if never)
    in_library: bool  # catalogued by the librarian (else read from disk for this report)
    drop_rank: int = 0  # 1 = the first whose description goes when the listing overflows
    lost_terms: tuple[str, ...] = ()  # routing terms the model no longer sees


@dataclass(frozen=True)
class Advice:
    """One thing to do about the listing, with the skills it concerns."""

    kind: str  # over_budget | biggest | terms_past_cut | never_used | raise_budget | …
    message: str
    skills: tuple[str, ...] = ()
    chars: int = 0  # characters it would free (or need)


@dataclass(frozen=True)
class ListingReport:
    """The listing for `folder`: every skill, the budget, and what to do."""

    folder: str
    settings: ListingSettings
    entries: tuple[ListingEntry, ...]
    used_chars: int  # the listing as Claude Code would cut it
    full_chars: int  # the listing with every description
    sessions: int  # ingested sessions the usage counts come from
    advice: tuple[Advice, ...] = ()
    unread: tuple[str, ...] = field(default=())  # folders or files that could not be read

    @property
    def over(self) -> int:
        return max(0, self.full_chars - self.settings.char_budget)

    @property
    def dropped(self) -> tuple[ListingEntry, ...]:
        return tuple(e for e in self.entries if e.state == "dropped")
