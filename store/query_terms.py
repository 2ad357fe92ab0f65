"""Words of a task or prompt as the lexical index sees them: lower-cased tokens, stopwords
dropped, and the FTS5 query that ORs them. Standard library only: the UserPromptSubmit hook
ranks skills with it without loading the rest of the search code."""

from __future__ import annotations

import re
from collections.abc import Sequence

TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
MAX_TERMS = 48
STOPWORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further get gets got had hadn't has hasn't
have haven't having he her here hers herself him himself his how i i'd i'll i'm i've if in
into is isn't it it's its itself just let's like me more most much must my myself need needs
no nor not now of off on once only or other ought our ours ourselves out over own please
same she should shouldn't so some such than that that's the their theirs them themselves
then there there's these they they'd they'll they're they've this those through to too
under until up us very via want wants was wasn't we we'd we'll we're we've were weren't
what what's when where which while who whom why will with won't would wouldn't you you'd
you'll you're you've your yours yourself yourselves help hey hi thanks thank ok okay
something anything someone one ones lot lots really actually still already way thing things
""".split()
)


def query_terms(context: str) -> list[str]:
    """Lower-case words of a context, stopwords dropped, order kept, no repeats."""
    seen: dict[str, None] = {}
    for word in TOKEN.findall(context.lower()):
        word = word.split("'")[0]
        if word not in STOPWORDS and (len(word) > 1 or word.isdigit()):
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def fts_query(terms: Sequence[str]) -> str:
    """An explicit OR of individually quoted terms (plain spaces would mean AND)."""
    return " OR ".join(f'"{t}"' for t in terms)


def stem(word: str) -> str:
    """A crude suffix stripper, only for explaining matches to people."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
