"""The bar for a pattern: what it must hold before it is served to an agent (DESIGN §7).

- a **pitfall** needs a failing action among its members and a resolution that differs from
  it: one that names or says something the failure does not (what changed), not the same
  action again and not another failure;
- a **strategy** needs at least two concrete ordered steps: steps that name something specific
  (a file, command, setting, error or version: `store.ingest.bar.entities`);
- an **insight** needs a title that passes the node bar (`store.ingest.bar.judge`: specific,
  not narration, not a report of work done), and more than failures nobody resolved;
- and no pattern is about the agent harness's own tool mechanics
  (`store.ingest.harness`): those are never project knowledge.

A pattern below the bar keeps its place in the library, and the reason (`flaw`) is shown where
people look at patterns; it is never served: not in the profile, the SessionStart context,
memory search, pitfalls or diagnose, and it is never a graduation candidate. Reasons are fixed
sentences with counts, never quoted text, so they can stay inline in events.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from store.ingest.bar import content_words, entities, judge
from store.ingest.harness import harness_error

#: Concrete ordered steps a strategy needs.
MIN_STEPS = 2

#: Words that only report an outcome: a resolution must say more than these.
OUTCOME = frozenset(
    """succeed succeeds succeeded success successful successfully work works worked pass
    passes passed fail fails failed failing failure error errors run runs ran again now fine
    green ok""".split()
)
_FAILURE = re.compile(
    r"\b(?:fails?|failed|failing)\s+(?:with|when|because|on|at)\b|\bdid(?:n't| not)\s+"
    r"(?:help|work|fix|change)\b|\bstill\s+(?:fails?|failing|broken|times? out)\b",
    re.IGNORECASE,
)
_SUCCESS = re.compile(r"\b(?:succeed(?:s|ed)?|works|worked|pass(?:es|ed)|fixed)\b", re.IGNORECASE)


def concrete(text: str) -> bool:
    """A step that names something specific."""
    return bool(entities(text))


def reads_as_failure(text: str) -> bool:
    """A summary whose main statement is a failure ("`x` fails with …", "raising y didn't
    help"); a success that mentions the failure it ended is not one."""
    return bool(_FAILURE.search(text)) and not _SUCCESS.search(text)


def differs(resolution: str, failing: Iterable[str]) -> bool:
    """The resolution says something the failing actions do not: it names a thing or uses
    a word beyond theirs (outcome words aside), and is not itself a failure."""
    if not resolution.strip() or reads_as_failure(resolution):
        return False
    seen: set[str] = set()
    for text in failing:
        seen |= _terms(text)
    return bool(_terms(resolution) - seen)


def _terms(text: str) -> set[str]:
    words = {_stem(w) for w in content_words(text)} - OUTCOME
    return words | set(entities(text))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def flaw(
    kind: str,
    *,
    title: str,
    steps: Sequence[str],
    resolution: str,
    failing: Sequence[str],
    members: int,
) -> str:
    """Why a pattern does not pass its kind's bar ("" when it does). `failing`: the summaries
    of its members that record a failing action; `members`: how many it has."""
    mechanics = harness_error(title)
    if mechanics is not None:
        return f"agent mechanics, not project knowledge: {mechanics.why}"
    if kind == "pitfall":
        if not failing:
            return "a pitfall needs a failing action: no member records one"
        if not resolution.strip():
            return "a pitfall needs a resolution: none is recorded"
        if not differs(resolution, failing):
            return "the resolution repeats the failing action instead of saying what changed"
        return ""
    if kind == "strategy":
        count = len({s.strip().lower() for s in steps if concrete(s)})
        if count < MIN_STEPS:
            return (
                f"a strategy needs at least {MIN_STEPS} concrete ordered steps (naming a file,"
                f" command, setting or error): it has {count}"
            )
        return ""
    unresolved = not resolution.strip() and (
        (members and len(failing) == members) or reads_as_failure(title)
    )
    if unresolved:
        return "only failures that nothing resolved: there is no lesson to serve yet"
    verdict = judge(title)
    if not verdict.passes:
        return f"the title does not pass the knowledge bar: {verdict.reason}"
    return ""
