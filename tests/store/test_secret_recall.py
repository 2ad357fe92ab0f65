"""Recall of `redact` over generated credentials of every format a maintained secret scanner
knows (no real key is ever written down: tokens are drawn from a seeded RNG at run time)."""

from __future__ import annotations

from store.ingest.redact import redact
from tooling.evaluation.redaction import leaked, measure_recall
from tooling.synthetic.secrets import SecretSample, format_count, secret_samples

#: The issue asks for at least this many formats.
MIN_FORMATS = 50


def test_the_generated_set_is_broad_deterministic_and_varied() -> None:
    samples = secret_samples()
    assert format_count() >= MIN_FORMATS
    assert len({s.kind for s in samples}) == format_count()
    assert samples == secret_samples()  # seeded: the same every run
    assert len({s.secret for s in samples}) == len(samples)  # every token its own
    assert secret_samples(seed=1) != samples


def test_every_generated_format_is_redacted() -> None:
    recall = measure_recall()
    report = "\n".join(f"{kind}: {text}" for kind, text in recall.leaks)
    assert recall.formats >= MIN_FORMATS
    assert recall.missed == (), report
    assert recall.samples_caught == recall.samples
    assert recall.rate == 1.0


def test_a_leak_is_any_run_of_eight_characters_left() -> None:
    sample = SecretSample("k", "key Q8zR7vT2wL5nB8cD1aFh6 end", "Q8zR7vT2wL5nB8cD1aFh6")
    assert leaked(sample, sample.text)
    assert leaked(sample, "key [REDACTED]T2wL5nB8cD end")
    assert not leaked(sample, "key [REDACTED:Q8zR] end")
    assert not leaked(sample, redact("secret Q8zR7vT2wL5nB8cD1aFh6 end"))
    shown = SecretSample("k", "https://h/s/abcdefghij", "https://h/s/abcdefghij", "https://h/s/")
    assert not leaked(shown, "https://h/s/[REDACTED]")


def test_recall_reports_the_formats_a_redactor_misses() -> None:
    recall = measure_recall(redactor=lambda text: text)
    assert recall.formats_caught == 0
    assert len(recall.missed) == recall.formats == format_count()
    assert recall.rate == 0.0
