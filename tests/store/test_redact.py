"""Redaction of transcript text: what is hidden, what is left alone, idempotence, size."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.ingest import redact as redact_module
from store.ingest.redact import REDACTED, redact
from store.skills.lint import secret, secret_spans
from tooling.synthetic.secrets import secret_samples

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
    for rule in (*secret._SECRET_RULES, *secret._ASSIGNMENT_RULES):
        assert rule.triggers
        for trigger in rule.triggers:
            assert any(gate in trigger for gate in redact_module._TRIGGERS), trigger


# -- what the old rules missed (issue 10): each secret below reached the log in clear ----------

AWS_SECRET_2 = "q8Zr3Vt+Lm2Wx9Kp/Yn4Bc7Ds1Fg6Hj0Qa5Ze8Rt"
SLACK_BOT = "xo" + "xb-210000398475-5820193847261-Qw7Ez2Rt9Yu4Io1Pa6Sd3Fg8"
SLACK_HOOK = "T04AB7XKQ/B05CD9ZLM/q8ZkL2mN9xW4vR7tY1uI3oP5"
GITLAB = "gl" + "pat-Xk3mQ9zR7vT2wL5nB8cD"
HUGGING_FACE = "hf" + "_QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"
NPM = "np" + "m_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Gh6"
TWILIO = "SK" + "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
SENDGRID = "SG" + ".Xk3mQ9zR7vT2wL5nB8cD1a.Fh6Jp0Ws4Ey8Ru2Ti5Ol9Ka3Sd7Fg1Hj4Kl8Zx2Cv6B"
AZURE = "q8ZkL2mN9xW4vR7tY1uI3oP5aS6dF0gH2jK4lZ7xC9vB1nM3qW5eR8tY0uI2oP4aS6dF8gH0jK2lZ4xC6vB8n=="

MISSED_BEFORE = [
    (f"the key pair with secret {AWS_SECRET_2} was revoked", AWS_SECRET_2),
    (f"secret: {AWS_SECRET_2}", AWS_SECRET_2),
    (f"Secret:{AWS_SECRET_2}", AWS_SECRET_2),
    (f'{{"value": "{SLACK_BOT}", "scope": "ci"}}', SLACK_BOT),
    (f"curl -X POST https://hooks.slack.com/services/{SLACK_HOOK} -d @m.json", SLACK_HOOK),
    (f"git push with {GITLAB} failed", GITLAB),
    (f"login with {HUGGING_FACE}", HUGGING_FACE),
    (f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    (f"client = Client('{TWILIO}', sid)", TWILIO),
    (f"sg = SendGridAPIClient('{SENDGRID}')", SENDGRID),
    (
        "DefaultEndpointsProtocol=https;AccountName=stprod;"
        f"AccountKey={AZURE};EndpointSuffix=core.windows.net",
        AZURE,
    ),
    ("The staging password is Tr0ub4dor&3x until Monday.", "Tr0ub4dor&3x"),
    ("password: Zq8#mWx2!vLp", "Zq8#mWx2!vLp"),
    ("curl -u deploy:Hx7kq2Lm9 https://ci.example.org/api/jobs", "Hx7kq2Lm9"),
    ("mysql -u root -pW9x!Lq2zTe shop", "W9x!Lq2zTe"),
    ("docker login -u ci -p Qm4!zX8wLe registry.example.com", "Qm4!zX8wLe"),
    # found by the issue-10 audit: words between the name and its connector, a bare value,
    # `pw`, and a password piped into a login
    ("the password for the admin user is Xy7!pq2Lmz", "Xy7!pq2Lmz"),
    ("Password for user admin: s3cretPass9", "s3cretPass9"),
    ("user admin, password Xy7pq2Lm9w", "Xy7pq2Lm9w"),
    ("pw: Hq7pq2Lm9x", "Hq7pq2Lm9x"),
    ("echo Wq7pq2Lm9zz | docker login --password-stdin -u bob ghcr.io", "Wq7pq2Lm9zz"),
    # found on a held-out session: sudo's password piped in on standard input
    ('echo "Hk4pq2Lm9zW" | sudo -S cp /tmp/app.conf /etc/nginx/', "Hk4pq2Lm9zW"),
    ("printf 'Hk4pq2Lm9zW' | sudo -kS systemctl restart app", "Hk4pq2Lm9zW"),
    ("echo Hk4pq2Lm9zW | sudo --stdin apt-get install -y jq", "Hk4pq2Lm9zW"),
    ("sudo -S chown app /srv/data <<< 'Hk4pq2Lm9zW'", "Hk4pq2Lm9zW"),
    ('[Bash] {"command":"echo \\"Hk4pq2Lm9zW\\" | sudo -S cp /tmp/a /etc/a"}', "Hk4pq2Lm9zW"),
    ('{"command":"# copy\\necho \\"Hk4pq2Lm9zW\\" | sudo -S cp /tmp/a /etc/a"}', "Hk4pq2Lm9zW"),
    ('{"command":"cd /srv\\nmysql -u root -pW9x!Lq2zTe shop"}', "W9x!Lq2zTe"),
    # found on held-out sessions: JSON written inside a JSON string (a config in a command)
    (
        'cat > .mcp.json <<EOF\\n{\\"env\\": {\\"EXT_TOKEN\\": \\"Hk4pq2Lm9zWx-_Rt5uV7\\"}}',
        "Hk4pq2Lm9zWx-_Rt5uV7",
    ),
    ('{\\"db_password\\": \\"Cortex2024xyz!\\"}', "Cortex2024xyz!"),
    ("-- Passwords: Hk4pq2Lm9zW24! (all seed users)", "Hk4pq2Lm9zW24!"),
    ("ALTER USER app WITH PASSWORD 'Hk4pq2Lm9zW24!';", "Hk4pq2Lm9zW24!"),
    ("fallbacks hardcoded: user `app`, password `Hk4pq2Lm9zW24!`", "Hk4pq2Lm9zW24!"),
    # found on a second held-out round: a file read with line numbers, a commented-out or
    # inline-code .env line, a command cut short inside its quote, a licence key
    ("     9→JWT_SECRET=Hk4pq2Lm9zW24x", "Hk4pq2Lm9zW24x"),
    ('9\\tJWT_SECRET=\\"Hk4pq2Lm9zW24x\\"\\n10\\tPORT=3000', "Hk4pq2Lm9zW24x"),
    ('licence = \\"Q2hrN3pXcTlMbTRwUnQ4dlhrMnBMbTl6V3gyNHFO\\"\\nrun()', "Q2hrN3pXcTlMbTRw"),
    ("# JWT_SECRET=Hk4pq2Lm9zW24x", "Hk4pq2Lm9zW24x"),
    ("The Vercel env file shows `JWT_SECRET=Hk4pq2Lm9zW24x` with a newline", "Hk4pq2Lm9zW24x"),
    ("Cancelled: tool call Bash(PGPASSWORD='Hk4pq2Lm9zW24x psql -h db…)", "Hk4pq2Lm9zW24x"),
    ("Bash(PGPASSWORD='Hk4pq2Lm9zW24x psql -h db… errored, see 'psql'", "Hk4pq2Lm9zW24x"),
    ("Token = MHajlyqmndgzTDYsnVTCppXGykheod99HzcSpaPU", "MHajlyqmndgzTDYsnVTC"),
    ("Cancelled: tool call Bash(PGPASSWORD='npg_Hk4pq2Lm9zW24xQ8…) errored", "Hk4pq2Lm9zW24xQ8"),
    ('licence = "Q2hrN3pXcTlMbTRwUnQ4dlhrMnBMbTl6V3gyNHFOOHJUNXY3"', "Q2hrN3pXcTlMbTRwUnQ4"),
    ("i just generated this one now : rnd_Hk4pq2Lm9zW24xQ8rT5vN3mB7c", "Hk4pq2Lm9zW24xQ8rT5v"),
    ("psql -c \"CREATE USER app WITH PASSWORD 'Hk4pq2Lm9zW24!'\"", "Hk4pq2Lm9zW24!"),
    ('\\\\\\"api_token\\\\\\": \\\\\\"Hk4pq2Lm9zWx-_Rt5uV7\\\\\\"', "Hk4pq2Lm9zWx-_Rt5uV7"),
]


@pytest.mark.parametrize(("text", "secret"), MISSED_BEFORE)
def test_formats_the_old_rules_missed_are_redacted(text: str, secret: str) -> None:
    out = redact(text)
    assert secret[4:] not in out, out
    assert "[REDACTED" in out
    assert redact(out) == out


def test_a_value_ends_at_an_escaped_newline() -> None:
    text = "cat > .env << EOF\\nDB_USER=app\\nDB_PASSWORD=Hk4pq2Lm9zW24!\\nEOF"
    assert redact(text) == "cat > .env << EOF\\nDB_USER=app\\nDB_PASSWORD=[REDACTED]\\nEOF"
    assert redact("password: Hk4pq2Lm9zW24\\nnext") == "password: [REDACTED]\\nnext"


def test_a_marker_shows_a_kind_prefix_never_random_characters() -> None:
    assert redact(f"secret: {AWS_SECRET_2}") == "secret: [REDACTED]"
    assert redact(f"use {GITLAB}") == "use [REDACTED:glpa]"
    assert redact(f"use {HUGGING_FACE}") == "use [REDACTED:hf_]"
    assert redact(f"use {ANTHROPIC}") == "use [REDACTED:sk-a]"
    assert redact("DB_PASSWORD=Zq8mWx2vLp7kQ3nR") == "DB_PASSWORD=[REDACTED]"


# Text that looks secret-ish and is not: none of it may change.
NOT_SECRETS = [
    # hashes and ids
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Dev <dev@example.org>",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/app.tar.gz",
    "sha256:4bcb2c4d1e5a3f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e5d6c7b8a9f0e",
    '"integrity": "sha512-Xk3mQ9zR7vT2wL5nB8cD1aFh6Jp0Ws4Ey8Ru2Ti5Ol9Ka3Sd7Fg1Hj4Kl8Zx2Cv6B=="',
    "request_id: 550e8400-e29b-41d4-a716-446655440000 took 34ms",
    "idempotency_key=f47ac10b-58cc-4372-a567-0e02b2c3d479",
    "cache key 3f2a9c0d4b5e6f7a8b9c0d1e2f3a4b5c for user 12",
    "Fixed the token refresh in 9fceb02d0ae598e95dc970b74767f19372d61af8.",
    "The key fingerprint is SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8.",
    "public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    # paths, identifiers, code
    "/home/dev/.cache/pip/wheels/7a/3f/9c0d4b5e6f7a8b9c0d1e2f3a4b5c6d7e8f/token_utils.py",
    "src/auth/refreshAccessTokenFromEnvironment.ts:42:7 - error TS2345",
    "    password=hash_password(input['password']),",
    "    auth_token=environment_key,",
    "        key=lambda x: x[1],",
    "  unique_key='payment_id',",
    "const password: string = req.body.password;",
    "password: Optional[str] = None",
    "password: z.string().min(8)",
    "token = get_token(session)  # refreshed hourly",
    "self.secret_key = settings.SECRET_KEY",
    '"max_tokens": 4096, "input_tokens": 1520, "output_tokens": 310',
    "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
    "CACHE_KEY=users_by_email",
    'TOKEN = re.compile(r"[a-z0-9]+")',
    '    "mask_token": "[MASK]", "pad_token": "<pad>",',
    "File NotificationServiceClient.notify.with_retry_and_backoff_policy, line 3",
    "      Authorization: `Bearer ${getSessionToken()}`,",
    "Command lines: `curl -u user:pw`, `mysql -pPW`, `docker login -p PW`.",
    # prose
    "Your password is incorrect. The password is required and must be 12 characters.",
    "The secret manager rotates the token every hour; pass it as an environment variable.",
    "Pass as `auth_token=` / `authToken` on the client.",
    "tests/test_auth.py::test_token_expiry PASSED [ 50%]\n12 passed in 1.2s",
    "the API key is stored in Vault under secret/data/payments",
    "PWD=/home/dev/project\n$ pwd\n/home/dev/project",
    "the password for this account is incorrect; the pw is stored hashed",
    "password hashing with argon2id, password reset link, password v2 migration",
    "passwords for all users are rotated; password for the db: see vault",
    "echo $REGISTRY_TOKEN | docker login --password-stdin ghcr.io",
    'echo "$SUDO_PASSWORD" | sudo -S cp a b',
    '{\\"password\\": \\"$DB_PASSWORD\\", \\"token_url\\": \\"https://auth.example.org\\"}',
    'print(\\"the token is refreshed\\")',
    "ALTER USER app WITH PASSWORD 'changeme';",
    'license = "MIT"',
    "license: Apache-2.0",
    '  "license": "BSD-3-Clause",',
    "     9→  JWT_SECRET: z.string().min(32),",
    "# PORT=3000",
    "token = getAccessTokenForUser2024(session)",
    "the password 'must be 12 characters' rule",
    "PGPASSWORD=sk-… (set it yourself)",
    "the passwords you choose must be 12 characters",
    "echo done | sudo tee /etc/motd",
    "sudo -S is how sudo reads a password from standard input",
    # data
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
    "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    '{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": '
    '"iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAYAAADED76LAAAAJ0lEQVR4nGNgYGD4z8DAwMDAwMDAwMBAQA"}}',
    "color: #3f2a9c; background: #ffffff; --accent: #0d1e2f;",
    "ghp_... (required)",
    "?key=….",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_hashes_ids_paths_code_prose_and_data_are_left_alone(text: str) -> None:
    assert redact(text) == text


_SAMPLES = [s.text for s in secret_samples(per_format=1)]
_PIECES = [
    *_SAMPLES[::3],
    *NOT_SECRETS[::2],
    *(text for text, _ in MISSED_BEFORE),
    "secret ", "password is ", "token: ", "api key ", "PGPASSWORD=", "curl -u a:", "-p",
    "[REDACTED]", "[REDACTED:ghp_]", " ", "\n", "=", ":", "'", '"', "`",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=12), max_size=8))
def test_redact_is_idempotent_on_secret_sounding_mixtures(parts: list[str]) -> None:
    text = "".join(parts)
    once = redact(text)
    assert redact(once) == once
    assert len(once) <= 2 * len(text) + 15
