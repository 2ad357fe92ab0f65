"""Memos for the warm tier's pure text functions, kept for one session only.

The strategies and the bar read the same sentences again and again (the keyword and the
conclusion strategies find the same message, the bar weighs each summary several times), so
`clause`, `content_words`, `is_narration` and the like are remembered by their arguments.
`extract_warm` runs inside `session()`, which empties every memo before and after: nothing
is kept from one session to the next (a long-running worker does not grow, and a benchmark
that reads the same file twice is not served from the first read).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")

#: Entries a memo keeps (a session's distinct sentences and summaries are far fewer).
SIZE = 8192

_CLEARS: list[Callable[[], None]] = []


def per_session(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, remembered by its (hashable) arguments until the session ends. Only for pure
    functions whose result is never mutated by a caller (return tuples, strings, numbers)."""
    cached = lru_cache(maxsize=SIZE)(fn)
    _CLEARS.append(cached.cache_clear)
    return cast(Callable[P, R], cached)


def clear() -> None:
    for clear_one in _CLEARS:
        clear_one()


@contextmanager
def session() -> Iterator[None]:
    """Memos empty on entry and on exit."""
    clear()
    try:
        yield
    finally:
        clear()
