"""Memos for the warm tier's pure text functions, kept for one session only.

The strategies and the bar read the same sentences again and again (the keyword and the
conclusion strategies find the same message, the bar weighs each summary several times), so
`clause`, `content_words`, `is_narration` and the like are remembered by their arguments.
`extract_warm` runs inside `session()`, which empties every memo before and after: nothing
is kept from one session to the next (a long-running worker does not grow, and a benchmark
that reads the same file twice is not served from the first read). Callers outside a
session (the pattern classifier and the cold tier's upgrade ask the bar's `judge` about short
summaries) fill a memo up to `SIZE` entries; the next session empties it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import _lru_cache_wrapper, lru_cache
from typing import Any, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")

#: Entries a memo keeps (a session's distinct sentences and summaries are far fewer).
SIZE = 8192

_MEMOS: list[_lru_cache_wrapper[Any]] = []


def per_session(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, remembered by its (hashable) arguments until the session ends. Only for pure
    functions whose result is never mutated by a caller (return tuples, strings, numbers)."""
    cached = lru_cache(maxsize=SIZE)(fn)
    _MEMOS.append(cached)
    return cast(Callable[P, R], cached)


def clear() -> None:
    for cached in _MEMOS:
        cached.cache_clear()


def held() -> int:
    """Entries the memos hold now (0 outside a session)."""
    return sum(cached.cache_info().currsize for cached in _MEMOS)


@contextmanager
def session() -> Iterator[None]:
    """Memos empty on entry and on exit."""
    clear()
    try:
        yield
    finally:
        clear()
