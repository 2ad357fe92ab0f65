"""What the UserPromptSubmit hook's resident ranker adds for a prompt: `suggest`'s ranking,
kept only where the prompt's embedding is close enough to a skill's own text.

`suggest` scores are relative (the best hit always scores high, whatever the prompt), so the
floor is absolute: the cosine of the prompt with the skill's card (name and description) or
its use text, at or above `prompt_hook.floor`. Measured on the routing evaluation's 434 tasks
and 40 prompts that fit no skill (`store/eval/unrelated_prompts.txt`): at 0.40, 73% of the
tasks bring up their skill (as the first pick) and none of the unrelated prompts brings up
anything; at 0.35, 82% and one. The ranker passes its own functions in, so this module needs
neither the library nor the model."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from store.embed import Matrix
from store.models import Suggestion
from store.serving import masked
from store.skills.prompt_context import Pick, Settings, worth_ranking
from store.skills.surface import SLOTS

Embed = Callable[[list[str]], Matrix]
Rank = Callable[[str, Matrix, int], Sequence[Suggestion]]
Cosines = Callable[[Matrix, Sequence[int]], dict[int, float]]


def choose(
    prompt: str, settings: Settings, *, embed: Embed, rank: Rank, cosines: Cosines
) -> list[Pick]:
    """The skills the prompt fits, best first, their texts masked for secrets."""
    if not worth_ranking(prompt) or settings.skills <= 0:
        return []
    vector = embed([prompt])[0]
    picks = []
    for hit in rank(prompt, vector, max(settings.skills * 3, 10)):
        labels = [hit.skill_id * SLOTS, hit.skill_id * SLOTS + 1]
        cosine = max(cosines(vector, labels).values(), default=0.0)
        if cosine >= settings.floor:
            picks.append(
                Pick(
                    hit.name,
                    hit.description,
                    round(cosine, 3),
                    hit.matched_terms,
                    "dense",
                    hit.skill_id,
                )
            )
    picks.sort(key=lambda p: (-p.relevance, p.name))
    return masked(picks[: settings.skills])
