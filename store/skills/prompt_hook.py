"""`librarian hook user-prompt`: ask the resident ranker, start it when it is not running, and
fall back to the lexical index meanwhile. Separate from `prompt_context` (what the ranker and
the fallback share) so that the fallback, which imports those shared parts, is imported only
here and only on the cold path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from store.skills.prompt_context import (
    MAX_INPUT,
    Request,
    Settings,
    ask_ranker,
    parse_request,
    ranker_paths,
    ranker_running,
    start_ranker,
    worth_ranking,
)

Fallback = Callable[[Path, Request, Settings], str]


def run_hook(root: Path, raw: str, fallback: Fallback | None = None) -> str:
    """`librarian hook user-prompt`: the stdout for one hook input; "" when there is nothing
    to add or anything goes wrong. Never raises an `Exception`."""
    try:
        request = parse_request(raw[:MAX_INPUT])
        if (
            request is None
            or not worth_ranking(request.prompt)
            or not (root / "library.db").is_file()
        ):
            return ""
        settings = Settings.from_config(root / "config.toml")
        paths = ranker_paths(root)
        if paths is not None and settings.server:
            answer = ask_ranker(paths[0], request, settings.wait_ms / 1000)
            if answer is not None:
                return answer
            if not ranker_running(paths[1]):
                marker = paths[1].with_suffix(".started")
                start_ranker(root, root / "spool" / "prompt-server.log", marker)
        answer_from_index = fallback
        if answer_from_index is None:
            # deferred: masking secrets loads the lint's rules (~0.1 s), only the cold path pays
            from store.skills.prompt_lexical import lexical_output

            answer_from_index = lexical_output
        return answer_from_index(root, request, settings)
    except Exception:
        return ""
