"""The `secrets` bench phase: recall, the formats missed, the corpus redactions and false
positives (when the corpus is there), and MB/s, with budgets checked."""

from __future__ import annotations

from pathlib import Path

from tooling.bench.children import child_secrets
from tooling.bench.run import BUDGETS, _check
from tooling.synthetic.data import synthetic_session
from tooling.synthetic.secrets import format_count


def test_the_secrets_phase_reports_every_budget(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    synthetic_session(session, 200_000)
    corpus = tmp_path / "transcripts"
    (corpus / "p").mkdir(parents=True)
    (corpus / "p" / "s.jsonl").write_text(
        '{"type": "user", "message": {"role": "user", "content": "ship it"},'
        ' "uuid": "550e8400-e29b-41d4-a716-446655440000"}\n'
        '{"type": "user", "message": {"role": "user", "content": "DB_PASSWORD=Zq8mWx2vLp"}}\n',
        encoding="utf-8",
    )
    result = child_secrets(str(session), str(corpus))
    assert result["formats"] == format_count()
    assert result["recall"] == 1.0
    assert result["missed"] == []
    assert result["mb_per_second"] > 0
    assert result["corpus_files"] == 1
    assert result["corpus_redactions"] == 1
    # Not among the reviewed corpus secrets, so it counts as a false positive.
    assert result["corpus_false_positives"] == 1
    assert result["corpus_redacted"] == ["p/s.jsonl: …DB_PASSWORD=[Zq8mWx2vLp]…"]
    verdicts = _check({"secrets": result})
    assert set(verdicts) == {f"secrets.{f}" for (s, f) in BUDGETS if s == "secrets"}
    assert verdicts["secrets.recall"] is True
    assert verdicts["secrets.corpus_false_positives"] is False


def test_without_a_corpus_the_phase_says_so(tmp_path: Path) -> None:
    session = tmp_path / "session.jsonl"
    synthetic_session(session, 50_000)
    result = child_secrets(str(session), str(tmp_path / "nowhere"))
    assert result["corpus"].startswith("skipped")
    assert "corpus_false_positives" not in result
