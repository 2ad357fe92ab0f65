"""Nothing flagged as a secret leaves the library unmasked: the SessionStart context and the
profile, on a library whose skill description and reasoning nodes carry tokens (a skill file
as its author wrote it; nodes as an older version, which knew fewer formats, stored them)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from store.library import Library
from store.models import MemoryHit, Suggestion
from store.patterns import session_start as ss
from store.serving import masked
from tests.store.conftest import write_skill
from tests.store.test_ingest import Transcript
from tests.store.test_patterns import add_node, add_session

PROJECT = "/work/payments"
# Fake tokens, glued together at run time so secret scanners do not see whole keys.
GITHUB = "gh" + "p_Rk7Lz2Qm9Wx4Tn8Vb3Hc6Yp1Jd5Gf0Sa2Ue7I"
HUGGING_FACE = "hf" + "_QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"
GITLAB = "gl" + "pat-Xk3mQ9zR7vT2wL5nB8cD"
AWS_SECRET = "q8Zr3Vt+Lm2Wx9Kp/Yn4Bc7Ds1Fg6Hj0Qa5Ze8Rt"
TOKENS = (GITHUB, HUGGING_FACE, GITLAB, AWS_SECRET)
DEAD = [
    f"Dead end: pushing the image with token {GITLAB} to the registry fails with 401 denied",
    f"Dead end: the registry push with {GITLAB} still fails with 401 denied",
    f"Dead end: registry push returns 401 denied although {GITLAB} was set",
]
FIX = [
    f"Solution: the deploy key with secret {AWS_SECRET} had expired; rotating it fixed the push",
    f"Solution: rotating the expired deploy key (secret {AWS_SECRET}) fixed the registry push",
    f"Solution: registry push works after rotating the deploy key, secret {AWS_SECRET}",
]


def assert_masked(text: str) -> None:
    for token in TOKENS:
        assert token[4:20] not in text, text
    assert "[REDACTED" in text


def leaky_library(library: Library, tmp_path: Path) -> Library:
    """Skills with tokens in their descriptions, used in the project's sessions; approved
    nodes with tokens in them, consolidated into a pitfall."""
    root = tmp_path / "skills"
    write_skill(
        root,
        "registry-push",
        f"Push images to the registry with the token {GITHUB}. Use when a push is denied.",
    )
    write_skill(root, "model-pull", f"Pull models with {HUGGING_FACE} set. Use for downloads.")
    library.scan([root])
    transcripts = tmp_path / "projects"
    for sid in ("u1", "u2"):
        t = Transcript(transcripts / f"{sid}.jsonl", sid, PROJECT)
        t.prompt("Push the release image.")
        t.tool("Skill", "registry-push", "Launching skill: registry-push")
        t.tool("Skill", "model-pull", "Launching skill: model-pull")
        t.say("Done.")
    assert library.ingest([transcripts]).ingested == 2
    ids = []
    for i in range(3):
        sid = f"s{i}"
        add_session(library, sid, PROJECT, f"2026-10-{10 + i:02d}T09:00:00+00:00")
        add_node(library, f"d{i}", sid, PROJECT, DEAD[i], line=10)
        add_node(
            library,
            f"f{i}",
            sid,
            PROJECT,
            FIX[i],
            line=20,
            edges_in=[{"source": f"d{i}", "type": "resolved"}],
        )
        ids += [f"d{i}", f"f{i}"]
    library.review("approve", ids)
    library.consolidate()
    return library


@pytest.fixture
def leaky(make_library: Callable[..., Library], tmp_path: Path) -> Library:
    return leaky_library(make_library(), tmp_path)


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_the_library_holds_the_tokens_and_the_lint_flags_the_skills(leaky: Library) -> None:
    # The premise: the secrets are really in there (a skill file is its author's).
    pitfall = next(p for p in leaky.patterns() if p.kind == "pitfall")
    assert any(t in pitfall.title + pitfall.resolution for t in TOKENS)
    findings = leaky.get_skill("registry-push").findings
    assert any(f.rule == "secret" and f.severity == "high" for f in findings)


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_session_start_context_masks_skills_and_pitfalls(leaky: Library) -> None:
    with leaky.db.read() as conn:
        context = ss.build_context(conn, PROJECT, ss.Settings())
    assert "registry-push" in context.text
    assert "Pitfall" in context.text
    assert_masked(context.text)
    assert ss.hook_output(context.text).count("REDACTED") == context.text.count("REDACTED")


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_profile_masks_every_line(leaky: Library) -> None:
    text = leaky.profile(PROJECT)
    assert "Pitfalls, most severe first" in text
    assert_masked(text)


@pytest.mark.model  # ranks, clusters or dedupes by meaning: the real model
def test_memory_hit_details_are_masked_before_they_are_cut(leaky: Library) -> None:
    hits = leaky.pitfalls(project=PROJECT)
    assert hits
    for hit in hits:
        for token in TOKENS:
            assert token[4:20] not in hit.detail


class _Pair(NamedTuple):
    left: str
    right: int


def test_masked_walks_dataclasses_dicts_lists_and_tuples() -> None:
    hit = MemoryHit(1, "pattern", "p1", f"pushed {GITHUB}", f"secret: {AWS_SECRET}", 0.5)
    suggestion = Suggestion(1, "s", "stable", f"uses {HUGGING_FACE}", 0.9, 0.1, 0.2, 1.0, ("a",))
    out = masked({"hits": [hit], "pair": _Pair(f"x {GITLAB}", 3), "skills": (suggestion,), "n": 2})
    assert out["hits"][0] == dataclasses.replace(
        hit, title="pushed [REDACTED:ghp_]", detail="secret: [REDACTED]"
    )
    assert out["pair"] == _Pair("x [REDACTED:glpa]", 3)
    assert out["skills"][0].description == "uses [REDACTED:hf_]"
    assert out["n"] == 2
    assert masked("nothing here") == "nothing here"


def test_the_session_start_hook_prints_the_masked_context(leaky: Library) -> None:
    raw = json.dumps({"hook_event_name": "SessionStart", "cwd": PROJECT, "session_id": "x"})
    output = ss.run_hook(leaky.paths.db.parent, raw)
    context = json.loads(output)["hookSpecificOutput"]["additionalContext"]
    assert "registry-push" in context
    assert_masked(context)
