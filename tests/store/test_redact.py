"""Redaction of transcript text: what is hidden, what is left alone, idempotence, size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.ingest import redact as redact_module
from store.ingest.redact import REDACTED, redact
from store.skills import lint
from store.skills.lint import secret_spans

# Fake credentials are glued together at runtime so secret scanners don't see whole keys.
BODY = "Rk7Lz2Qm9Wx4Tn8Vb3Hc6Yp1Jd5Gf0Sa2Ue7Io"
AWS_ID = "AK" + "IAQ3ZT7N5KX2LM8WPB"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY9d3kQ2LmZa"
GITHUB = "gh" + "p_" + BODY[:36]
GITHUB_PAT = "github" + "_pat_11ABQ7ZKI0" + BODY + "_kP8vN2cX7yT4sR1qZ9"
ANTHROPIC = "sk" + "-ant-api03-" + BODY * 2 + "-Gh2Jk7AA"
OPENAI = "sk" + "-proj-" + BODY
JWT = "ey" + "JhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhYmMxMjMiLCJyb2xlIjoiYWRtaW4ifQ." + BODY
PEM_BODY = "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi4Zt1v8WkM1B2bGqUq5xZ3yXyZ"
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"

SECRETS = [
    (f"aws_access_key_id = {AWS_ID}", AWS_ID),
    (f'aws_secret_access_key = "{AWS_SECRET}"', AWS_SECRET),
    (f"GITHUB_TOKEN={GITHUB}", GITHUB),
    (f"remote: using {GITHUB_PAT} for push", GITHUB_PAT),
    (f"export ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    (f"the key {ANTHROPIC} was rejected", ANTHROPIC),
    (f'client = OpenAI(api_key="{OPENAI}")', OPENAI),
    (f"curl -H 'Authorization: Bearer {JWT}' https://api.example.org", JWT),
    ("curl -H 'Authorization: Bearer abc123def456ghi789' https://x", "abc123def456ghi789"),
    ("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
    ("Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"),
    ("Authorization: token 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
    ("sent Bearer 4f9a8b7c6d5e4f3a2b1c in the header", "4f9a8b7c6d5e4f3a2b1c"),
    ("X-Api-Key: q8ZkL2mN9xW4", "q8ZkL2mN9xW4"),
    ("postgres://user:pass@host:5432/app", "pass"),
    ("DATABASE_URL=postgresql://admin:hunter2@db.internal/app", "hunter2"),
    ("GET https://api.example.org/v1/items?api_key=k3yV4lue9&page=2", "k3yV4lue9"),
    ("https://x.org/cb?code=1&access_token=ya29.a0Af&state=2", "ya29.a0Af"),
    ("DB_PASSWORD=hunter2", "hunter2"),
    ('SECRET_KEY = "django-insecure-q8z2"', "django-insecure-q8z2"),
    ("  export STRIPE_KEY=rk_test_51Hx", "rk_test_51Hx"),
    ('SECRET="two words"', "two words"),
    ('{"password": "correct horse", "user": "bob"}', "correct horse"),
    ("mysql --password=s3cr3t -u root", "s3cr3t"),
    (f"Key:\n{PEM}\n", PEM_BODY),
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_secret_is_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert "[REDACTED" in out


def test_marker_keeps_a_short_prefix_for_long_keys_only() -> None:
    assert redact(f"id {AWS_ID}") == "id [REDACTED:AKIA]"
    assert redact(f"token {GITHUB} end") == "token [REDACTED:ghp_] end"
    assert redact("postgres://user:pass@host") == f"postgres://user:{REDACTED}@host"


def test_context_around_a_secret_is_kept() -> None:
    out = redact(f"Key:\n{PEM}\n")
    assert out.startswith("Key:\n-----BEGIN RSA PRIVATE KEY-----\n[REDACTED")
    assert out.endswith("\n-----END RSA PRIVATE KEY-----\n")
    assert redact("DB_PASSWORD=hunter2 # prod") == "DB_PASSWORD=[REDACTED] # prod"


PLACEHOLDERS = [
    "export OPENAI_API_KEY=sk-...",
    'api_key = "sk-ant-api03-..."',
    "Authorization: Bearer $TOKEN",
    'curl -H "Authorization: Bearer ${GITHUB_TOKEN}" https://api.github.com',
    "Authorization: Bearer <token>",
    "API_KEY=$OPENAI_API_KEY",
    "DB_PASSWORD=${DB_PASSWORD}",
    "PASSWORD=changeme",
    "API_TOKEN=your-token-here",
    "SECRET=xxxxxxxx",
    "mongodb://$DB_USER:$DB_PASSWORD@$DB_HOST:$DB_PORT",
    "GITHUB_TOKEN=ghp_" + "x" * 36,
    "Bearer authentication is required for this endpoint.",
    "The Authorization header is missing.",
    "Send Authorization: Bearer tokens with every call.",
    '    cache_key = f"{user}:{locale}"',
    "    token = get_token(session)",
    "max_tokens = 1024",
    "MAX_TOKENS=4096",
    "PWD=/home/dev/project",
    "USE_AUTH=true",
    "https://example.org/path?page=2&sort=asc",
    "git@github.com:org/repo.git",
    "ImportError: cannot import name 'Client' from 'api' (/app/api/__init__.py)",
    "",
]


@pytest.mark.parametrize("text", PLACEHOLDERS)
def test_placeholders_and_prose_are_left_alone(text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_redact_is_idempotent(text: str, secret: str) -> None:
    once = redact(text)
    assert redact(once) == once


_FRAGMENTS = [text for text, _ in SECRETS] + PLACEHOLDERS + [" ", "\n", "=", ":", "@", "[", "]"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS) | st.text(max_size=12), max_size=8))
def test_redact_is_idempotent_on_mixtures(parts: list[str]) -> None:
    text = "".join(parts)
    once = redact(text)
    assert redact(once) == once
    # Growth is bounded: at most one 15-character marker per secret, and every secret needs
    # context of its own (`PASSWORD=`, `://u:`…), so text never more than doubles.
    assert len(once) <= 2 * len(text) + 15


def test_long_secrets_shrink_text() -> None:
    text = f"keys: {ANTHROPIC} {GITHUB_PAT}"
    assert len(redact(text)) < len(text) // 2


def test_secret_spans_cover_exactly_the_values() -> None:
    text = f"a {AWS_ID} b\nGITHUB_TOKEN={GITHUB}\n"
    spans = secret_spans(text)
    assert [text[s:e] for s, e in spans] == [AWS_ID, GITHUB]
    assert secret_spans("nothing secret here, sk-... and $TOKEN") == []


def test_secret_spans_of_a_key_block_are_its_body() -> None:
    text = f"x\n{PEM}\n"
    ((start, end),) = secret_spans(text)
    assert text[start:end] == PEM_BODY


def test_the_cheap_gate_lets_every_lint_secret_rule_through() -> None:
    # `redact` skips text holding none of its triggers; no lint rule may need another one.
    for rule in (*lint._SECRET_RULES, *lint._ASSIGNMENT_RULES):
        assert rule.triggers
        for trigger in rule.triggers:
            assert any(gate in trigger for gate in redact_module._TRIGGERS), trigger
