"""The knowledge bar: what a summary names, how informative it is, and why one is kept out."""

from __future__ import annotations

import pytest

from store.ingest.bar import MIN_INFORMATIVENESS, entities, informativeness, is_narration, judge


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("`npx tsc --noEmit` fails", ["npx tsc --noemit"]),
        ("edit src/hooks/useTodos.test.ts first", ["src/hooks/usetodos.test.ts"]),
        ("pass --no-turbopack to it", ["--no-turbopack"]),
        ("Next.js 15.5.2 with React 19.1.0", ["15.5.2", "19.1.0"]),
        ("it raised ImportError and TS2307", ["importerror", "ts2307"]),
        ("complete_checkout holds it", ["complete_checkout"]),
        ("52 of the 60 API connections", ["52 of the 60"]),
        ("queries took 8715 ms", ["8715 ms"]),
    ],
)
def test_entities_are_recognised_by_their_shape(text: str, named: list[str]) -> None:
    found = entities(text)
    assert all(n in found for n in named), found


def test_plain_prose_names_nothing() -> None:
    assert entities("The directory got lost and the files are somewhere else.") == []


@pytest.mark.parametrize(
    "text",
    [
        "Let me check the config.",
        "I'll create a CLAUDE.md file.",
        "Perfect! Now let me run the tests.",
        "Great, that worked.",
        "Ah, I see!",
        "Now I need to update the hook.",
        "I've created the index file.",
    ],
)
def test_narration_is_recognised(text: str) -> None:
    assert is_narration(text)


@pytest.mark.parametrize(
    "text",
    [
        "`pg_stat_statements` is only installed in the `payments` database.",
        "Raising the pool to 30+15 didn't help: same timeouts.",
        "The root cause was the lock queue behind `ALTER TABLE orders`.",
    ],
)
def test_statements_are_not_narration(text: str) -> None:
    assert not is_narration(text)


def test_informativeness_rises_with_entities_and_causes() -> None:
    vague = informativeness("The build failed again in this case.")
    named = informativeness("`npm run build` fails with TypeError in `next.config.ts`.")
    causal = informativeness(
        "`npm run build` fails because `next.config.ts` imports `generate` from `nanoid` 5."
    )
    assert vague < MIN_INFORMATIVENESS <= named < causal
    assert informativeness("x", confirmed=True) > informativeness("x")


@pytest.mark.parametrize(
    ("summary", "reason"),
    [
        ("Let me look at the logs.", "narration"),
        ("CLAUDE.md has been created with the structure of the project.", "report"),
        ("It works fine after running `make` in the build folder.", "self-contained"),
        ("Done.", "narration"),
        ("Fixed tests.", "content words"),
        ("The integration tests were flaky for most of the week on the shared runner.", "names"),
        ("`ls` shows files.", "content words"),
    ],
)
def test_judge_says_why(summary: str, reason: str) -> None:
    verdict = judge(summary)
    assert not verdict.passes
    assert reason in verdict.reason


def test_judge_passes_a_specific_fact_and_routine_wins() -> None:
    fact = "`refund_number_seq` is shared by all four xdist workers, so numbers skip."
    assert judge(fact).passes
    assert judge(fact, routine="agent mechanics").reason == "agent mechanics"
    assert "repeats" in judge(fact, novelty=0.1).reason
