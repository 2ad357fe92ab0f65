"""Fake credentials in the shapes real ones take, in the places transcripts show them.

Used to measure how much `redact` catches (tests, `librarian bench --only secrets`). Every
token is drawn at run time from a seeded RNG, so no real key is ever written down and every run
sees the same samples. Formats are the providers' published ones (prefix, alphabet, length) as
listed by gitleaks and detect-secrets; they are written here independently of the patterns in
`store.secret_formats`, so the measurement does not just replay the detector.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
DIGITS = string.digits
B62 = LOWER + UPPER + DIGITS
B64 = B62 + "+/"
URLSAFE = B62 + "-_"
HEX = "0123456789abcdef"
B32 = UPPER + "234567"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
# Symbols people put in passwords that shells and .env files take literally.
SYMBOLS = "!@#%^&*_+-=.?~"


@dataclass(frozen=True, slots=True)
class SecretSample:
    """One secret in context. `shown` is a public prefix of `secret` that may stay visible."""

    kind: str
    text: str
    secret: str
    shown: str = ""


Token = Callable[[random.Random], str]


def _s(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _tok(prefix: str, alphabet: str, n: int) -> Token:
    return lambda rng: prefix + _s(rng, alphabet, n)


def password(rng: random.Random) -> str:
    """A strong password: letters, digits and a symbol or two, 10-16 characters."""
    chars = [rng.choice(UPPER), rng.choice(LOWER), rng.choice(DIGITS), rng.choice(SYMBOLS)]
    chars += [rng.choice(B62 + SYMBOLS) for _ in range(rng.randint(6, 12))]
    rng.shuffle(chars)
    while chars[-1] in ".?!-=":  # sentence punctuation after a value is not part of it
        chars.insert(0, chars.pop())
    return "".join(chars)


def _uuid(rng: random.Random) -> str:
    h = _s(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _b64(rng: random.Random, size: int) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {
        "sub": _s(rng, HEX, 12),
        "iat": rng.randint(1_700_000_000, 1_800_000_000),
        "role": "service",
    }
    body = _b64url(json.dumps(claims).encode())
    return f"{header}.{body}.{_b64url(rng.randbytes(32))}"


def _pem_body(rng: random.Random, head: str = "MIIEpAIBAAKCAQEA") -> str:
    data = head + _b64(rng, 300)
    return "\n".join(data[i : i + 64] for i in range(0, len(data), 64))


# Sentences with no keyword in them: only the token's own format can give it away.
NEUTRAL = (
    "I rotated {s} after it showed up in the CI log.",
    "remote: {s}",
    "found `{s}` in config/settings.yml on line 12",
    '{{"value": "{s}", "scope": "ci"}}',
    "export CI_VALUE={s}",
    "curl -sS https://api.example.org/v1/items -d 'value={s}'",
)


@dataclass(frozen=True, slots=True)
class _Spec:
    kind: str
    token: Token
    contexts: Sequence[str] = NEUTRAL
    shown: str = ""


def _specs() -> list[_Spec]:
    pw = password
    return [
        _Spec("AWS access key id", _tok("AKIA", B32, 16)),
        _Spec("AWS temporary access key id", _tok("ASIA", B32, 16)),
        _Spec(
            "AWS secret key in prose",
            _tok("", B64, 40),
            (
                "The key pair with secret {s} was revoked this morning.",
                "Rotated it; the secret {s} no longer works.",
            ),
        ),
        _Spec(
            "AWS secret key after 'secret:'",
            _tok("", B64, 40),
            ("secret: {s}", "  aws secret: {s}", "Secret:{s}"),
        ),
        _Spec(
            "AWS credentials file",
            _tok("", B64, 40),
            ("aws_secret_access_key = {s}", "[default]\naws_secret_access_key={s}\n"),
        ),
        _Spec(
            "AWS session token (JSON)",
            _tok("IQoJb3JpZ2luX2Vj", B64, 340),
            ('"SessionToken": "{s}",',),
            shown="IQoJb3JpZ2luX2Vj",
        ),
        _Spec("GitHub classic token", _tok("ghp_", B62, 36)),
        _Spec("GitHub OAuth token", _tok("gho_", B62, 36)),
        _Spec("GitHub app token", _tok("ghs_", B62, 36)),
        _Spec(
            "GitHub fine-grained token",
            lambda r: "github_pat_" + _s(r, B62, 22) + "_" + _s(r, B62, 59),
        ),
        _Spec("GitLab personal token", _tok("glpat-", URLSAFE, 20)),
        _Spec("GitLab runner token", _tok("glrt-", URLSAFE, 20)),
        _Spec("GitLab deploy token", _tok("gldt-", URLSAFE, 20)),
        _Spec("GitLab pipeline trigger token", _tok("glptt-", HEX, 40)),
        _Spec(
            "Slack bot token",
            lambda r: f"xoxb-{_s(r, DIGITS, 12)}-{_s(r, DIGITS, 13)}-{_s(r, B62, 24)}",
        ),
        _Spec(
            "Slack user token",
            lambda r: (
                f"xoxp-{_s(r, DIGITS, 11)}-{_s(r, DIGITS, 12)}-{_s(r, DIGITS, 13)}-"
                + _s(r, HEX, 32)
            ),
        ),
        _Spec(
            "Slack app token",
            lambda r: f"xapp-1-A{_s(r, UPPER + DIGITS, 10)}-{_s(r, DIGITS, 13)}-{_s(r, HEX, 64)}",
        ),
        _Spec(
            "Slack webhook URL",
            lambda r: (
                "https://hooks.slack.com/services/"
                + f"T{_s(r, UPPER + DIGITS, 8)}/B{_s(r, UPPER + DIGITS, 10)}/{_s(r, B62, 24)}"
            ),
            ("Posting to {s} failed with 404.", 'SLACK_WEBHOOK_URL="{s}"'),
            shown="https://hooks.slack.com/services/",
        ),
        _Spec(
            "Discord webhook URL",
            _tok("", URLSAFE, 68),
            ("curl -X POST https://discord.com/api/webhooks/{snowflake}/{s} -d @msg.json",),
        ),
        _Spec(
            "Discord bot token",
            lambda r: (
                r.choice("MNO")
                + _s(r, B62, 25)
                + "."
                + _s(r, URLSAFE, 6)
                + "."
                + _s(r, URLSAFE, 38)
            ),
        ),
        _Spec("Hugging Face token", _tok("hf_", LOWER + UPPER, 34)),
        _Spec("Hugging Face org token", _tok("api_org_", LOWER + UPPER, 34)),
        _Spec("npm token", _tok("npm_", B62, 36)),
        _Spec(
            "npm legacy token in .npmrc",
            _uuid,
            ("//registry.npmjs.org/:_authToken={s}",),
        ),
        _Spec(
            "PyPI upload token",
            _tok("pypi-AgEIcHlwaS5vcmc", URLSAFE, 150),
            shown="pypi-AgEIcHlwaS5vcmc",
        ),
        _Spec("Twilio API key", _tok("SK", HEX, 32)),
        _Spec("Twilio auth token", _tok("", HEX, 32), ("TWILIO_AUTH_TOKEN={s}",)),
        _Spec("SendGrid API key", lambda r: f"SG.{_s(r, URLSAFE, 22)}.{_s(r, URLSAFE, 43)}"),
        _Spec("Stripe live secret key", _tok("sk_live_", B62, 99)),
        _Spec("Stripe restricted key", _tok("rk_live_", B62, 24)),
        _Spec("Stripe test secret key", _tok("sk_test_", B62, 99)),
        _Spec("Stripe webhook secret", _tok("whsec_", B62, 32)),
        _Spec("OpenAI project key", _tok("sk-proj-", URLSAFE, 156)),
        _Spec("Anthropic API key", lambda r: "sk-ant-api03-" + _s(r, URLSAFE, 93) + "AA"),
        _Spec("Google API key", _tok("AIza", URLSAFE, 35)),
        _Spec("Google OAuth client secret", _tok("GOCSPX-", URLSAFE, 28)),
        _Spec("Google OAuth access token", _tok("ya29.", URLSAFE, 150)),
        _Spec(
            "Azure storage connection string",
            lambda r: _b64(r, 64),
            (
                "DefaultEndpointsProtocol=https;AccountName=stdev01;AccountKey={s};"
                "EndpointSuffix=core.windows.net",
            ),
        ),
        _Spec(
            "Azure service bus connection string",
            lambda r: _b64(r, 32),
            (
                "Endpoint=sb://ns-dev.servicebus.windows.net/;SharedAccessKeyName="
                "RootManageSharedAccessKey;SharedAccessKey={s}",
            ),
        ),
        _Spec(
            "Azure AD client secret",
            lambda r: _s(r, B62, 3) + r.choice(DIGITS) + "Q~" + _s(r, B62 + "_-.~", 34),
        ),
        _Spec("JSON Web Token", _jwt),
        _Spec(
            "RSA private key",
            _pem_body,
            ("-----BEGIN RSA PRIVATE KEY-----\n{s}\n-----END RSA PRIVATE KEY-----",),
        ),
        _Spec(
            "OpenSSH private key",
            lambda r: _pem_body(r, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
            ("-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",),
        ),
        _Spec(
            "password in prose",
            pw,
            ("The staging password is {s} until Monday.", "the new password was {s}, ok?"),
        ),
        _Spec("password: value", pw, ("password: {s}", "  Password: {s}", "db password: {s}")),
        _Spec("curl basic auth", pw, ("curl -u deploy:{s} https://ci.example.org/api/jobs",)),
        _Spec("mysql inline password", pw, ("mysql -u root -p{s} shop_production",)),
        _Spec(
            "docker login password",
            pw,
            ("docker login -u ci-bot -p {s} registry.example.com",),
        ),
        _Spec(
            "password in a database URL",
            lambda r: quote(password(r), safe=""),  # URLs percent-encode `@`, `#`, `?`
            ("DATABASE_URL=postgres://app:{s}@db.internal:5432/app",),
        ),
        _Spec("netrc password", pw, ("machine api.example.com login bob password {s}",)),
        _Spec("sshpass password", pw, ("sshpass -p '{s}' ssh deploy@10.0.0.5",)),
        _Spec("redis-cli password", pw, ("redis-cli -h cache.internal -a {s} ping",)),
        _Spec(
            "PGPASSWORD inline",
            pw,
            ("cd /srv/app && PGPASSWORD={s} pg_dump -h db -U app app > dump.sql",),
        ),
        _Spec(
            "wget password flag",
            pw,
            ("wget --http-password={s} https://files.example.org/build.tar.gz",),
        ),
        _Spec(".env password", pw, ("DB_PASSWORD={s}",)),
        _Spec(
            "Kubernetes secret value (base64)",
            lambda r: base64.b64encode(password(r).encode()).decode(),
            ("data:\n  password: {s}\n",),
        ),
        _Spec("DigitalOcean token", _tok("dop_v1_", HEX, 64)),
        _Spec("Shopify token", _tok("shpat_", HEX, 32)),
        _Spec("Linear API key", _tok("lin_api_", B62, 40)),
        _Spec("Render API key", _tok("rnd_", B62, 28)),
        _Spec("Doppler token", _tok("dp.pt.", B62, 43)),
        _Spec("Databricks token", _tok("dapi", HEX, 32)),
        _Spec("Mailgun key", _tok("key-", HEX, 32)),
        _Spec("Mailchimp API key", lambda r: _s(r, HEX, 32) + f"-us{r.randint(1, 21)}"),
        _Spec("New Relic user key", _tok("NRAK-", UPPER + DIGITS, 27)),
        _Spec("Atlassian API token", _tok("ATATT3xFfGF0", URLSAFE, 180)),
        _Spec(
            "Telegram bot token",
            _tok("AA", URLSAFE, 33),
            ("bot = Bot('{id}:{s}')", "TELEGRAM={id}:{s}"),
        ),
        _Spec("Postman API key", lambda r: f"PMAK-{_s(r, HEX, 24)}-{_s(r, HEX, 34)}"),
        _Spec("Vault token", _tok("hvs.", URLSAFE, 92)),
        _Spec("Grafana service account token", lambda r: f"glsa_{_s(r, B62, 32)}_{_s(r, HEX, 8)}"),
        _Spec("Sentry user token", _tok("sntryu_", HEX, 64)),
        _Spec("age secret key", _tok("AGE-SECRET-KEY-1", BECH32, 58), shown="AGE-SECRET-KEY-1"),
        _Spec("Pulumi token", _tok("pul-", HEX, 40)),
        _Spec(
            "Terraform Cloud token",
            lambda r: f"{_s(r, LOWER + DIGITS, 14)}.atlasv1.{_s(r, URLSAFE, 67)}",
        ),
        _Spec("Square secret", _tok("sq0csp-", URLSAFE, 43)),
        _Spec("Perplexity key", _tok("pplx-", B62, 48)),
        _Spec("Groq key", _tok("gsk_", B62, 52)),
        _Spec("Replicate token", _tok("r8_", B62, 37)),
        _Spec("Alibaba Cloud key id", _tok("LTAI", B62, 20)),
        _Spec("Supabase token", _tok("sbp_", HEX, 40)),
        _Spec("Brevo key", lambda r: f"xkeysib-{_s(r, HEX, 64)}-{_s(r, B62, 16)}"),
        _Spec(
            "Dynatrace token",
            lambda r: f"dt0c01.{_s(r, UPPER + DIGITS, 24)}.{_s(r, UPPER + DIGITS, 64)}",
        ),
        _Spec("Docker Hub token", _tok("dckr_pat_", URLSAFE, 27)),
        _Spec("Heroku API key", _tok("HRKU-AA", URLSAFE, 58)),
        _Spec("Heroku legacy API key", _uuid, ("HEROKU_API_KEY={s}",)),
        _Spec("Figma token", _tok("figd_", URLSAFE, 40)),
        _Spec(
            "API key in prose",
            _tok("", B62, 32),
            ("The API key for staging is {s} if you need it.", "api key {s}"),
        ),
        _Spec("token after 'token:'", _tok("", URLSAFE, 40), ("token: {s}", "Token = {s}")),
        _Spec(
            "client secret (hex)",
            _tok("", HEX, 32),
            ("client_secret: {s}", "The client secret is {s}."),
        ),
        _Spec("opaque bearer token", _tok("", URLSAFE, 32), ("Authorization: Bearer {s}",)),
        _Spec("X-API-Key header", _tok("", B62, 32), ("curl -H 'X-API-Key: {s}' https://x.io",)),
        _Spec(
            "GitLab PRIVATE-TOKEN header",
            _tok("", B62, 20),
            ('curl --header "PRIVATE-TOKEN: {s}" https://gitlab.example.com/api/v4/projects',),
        ),
        _Spec("Okta API token", _tok("00", URLSAFE, 40), ("Authorization: SSWS {s}",)),
        _Spec(
            "HTTP basic auth header",
            lambda r: base64.b64encode(f"deploy:{password(r)}".encode()).decode(),
            ("Authorization: Basic {s}",),
        ),
        _Spec("Datadog API key", _tok("", HEX, 32), ("DD_API_KEY={s}",)),
        _Spec("Cloudflare API token", _tok("", URLSAFE, 40), ("CLOUDFLARE_API_TOKEN={s}",)),
    ]


def secret_samples(per_format: int = 3, seed: int = 20261125) -> list[SecretSample]:
    """`per_format` samples of every format, each with its own token and context."""
    rng = random.Random(seed)
    samples: list[SecretSample] = []
    for spec in _specs():
        for i in range(per_format):
            secret = spec.token(rng)
            context = spec.contexts[(i + rng.randrange(len(spec.contexts))) % len(spec.contexts)]
            text = context.format(s=secret, id=_s(rng, DIGITS, 10), snowflake=_s(rng, DIGITS, 19))
            samples.append(SecretSample(spec.kind, text, secret, spec.shown))
    return samples


def format_count() -> int:
    """How many formats `secret_samples` covers."""
    return len(_specs())
