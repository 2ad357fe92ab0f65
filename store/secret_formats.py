"""Credential formats that identify themselves: a fixed prefix, an alphabet and a length.

The formats are facts read from the rule lists of two maintained secret scanners, gitleaks
(`config/gitleaks.toml`) and detect-secrets (its plugins), and from the providers' own
documentation. A token in one of these formats is a secret wherever it appears, with or without
a keyword near it, so `format_spans` needs no context; `store.ingest.redact` adds the rules that
do (keywords, headers, command lines).

Speed: the text is scanned once for runs of token characters at least `MIN_RUN` long, and each
run is tried only against the formats that start with its first two characters, so adding a
format costs nothing on text that does not hold it. A few formats do not start a run (a
webhook URL's path, a secret with its marker in the middle); each has a literal that must occur
in the text (a webhook's host) or in the run (`-us` in a Mailchimp key).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

#: The shortest run worth checking: every format below is at least this long.
MIN_RUN = 20

# Token characters. A run starts after anything else (space, quote, `=`, `:`, `/`), which is
# where a key begins in `NAME=key`, `"key"`, `token:key` or a URL path. The scan steps over
# whole short runs and gaps inside the regex engine (possessive, so it never backtracks into
# them) and ends at the next long run, or at the end of the text.
_T = "A-Za-z0-9_.~-"
_RUNS = re.compile(
    rf"(?:[^{_T}]++|[{_T}]{{1,{MIN_RUN - 1}}}+(?![{_T}]))*+(?:(?P<run>[{_T}]{{{MIN_RUN},}})|\Z)"
)
_END = r"(?![A-Za-z0-9_-])"  # a fixed-length key is not the start of a longer token


@dataclass(frozen=True, slots=True)
class Format:
    """A credential format: `prefix` (literal, case as written) then `pattern`'s body."""

    kind: str
    prefix: str
    pattern: re.Pattern[str]  # the whole value, matched at the start of a run
    group: str | int = 0  # the part that is secret


def _f(kind: str, prefix: str, body: str, end: str = _END) -> Format:
    return Format(kind, prefix, re.compile(re.escape(prefix) + body + end))


def _each(kind: str, prefixes: str, body: str, end: str = _END) -> tuple[Format, ...]:
    return tuple(_f(kind, prefix, body, end) for prefix in prefixes.split())


_B62 = "[A-Za-z0-9]"
_URLSAFE = r"[\w-]"  # base64url (and the `_` / `-` many vendors add)

FORMATS: tuple[Format, ...] = (
    *_each("AWS access key id", "AKIA ASIA ABIA ACCA", "[A-Z0-9]{16}"),
    *_each("GitHub token", "ghp_ gho_ ghu_ ghs_ ghr_", _B62 + "{36,251}"),
    _f("GitHub fine-grained token", "github_pat_", r"\w{22,251}"),
    *_each(
        "GitLab token",
        "glpat- glrt- gldt- glft- glcbt- glimt- glsoat- glagent- gloas-",
        _URLSAFE + r"{20,}(?:\.[\w-]+){0,2}",
        "",
    ),
    _f("GitLab pipeline trigger token", "glptt-", "[0-9a-f]{40}"),
    _f("GitLab runner registration token", "GR1348941", _URLSAFE + "{20}"),
    *_each(
        "Slack token",
        "xoxb- xoxp- xoxa- xoxr- xoxs- xoxo- xoxe-",
        r"(?=[0-9A-Za-z-]*[0-9])[0-9A-Za-z-]{10,250}",
        "",
    ),
    _f("Slack configuration token", "xoxe.xox", r"[bp]-[0-9]-[A-Za-z0-9]{140,170}"),
    _f("Slack app token", "xapp-", r"[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[a-z0-9]{32,}"),
    _f("Hugging Face token", "hf_", "[A-Za-z]{34}"),
    _f("Hugging Face organisation token", "api_org_", "[A-Za-z]{34}"),
    _f("npm token", "npm_", _B62 + "{36}"),
    *_each(
        "PyPI token", "pypi-AgEIcHlwaS5vcmc pypi-AgENdGVzdC5weXBpLm9yZw", _URLSAFE + "{50,}", ""
    ),
    _f("Twilio API key", "SK", "[0-9a-fA-F]{32}"),
    _f("SendGrid API key", "SG.", _URLSAFE + r"{22}\." + _URLSAFE + "{43}"),
    *_each(
        "Stripe key", "sk_live_ sk_test_ sk_prod_ rk_live_ rk_test_ rk_prod_", _B62 + "{10,247}"
    ),
    _f("Stripe webhook secret", "whsec_", "[A-Za-z0-9+/=]{32,}", ""),
    _f("OpenAI or Anthropic API key", "sk-", r"(?=[\w-]*[0-9])[\w-]{20,250}", ""),
    _f("Google API key", "AIza", _URLSAFE + "{35}"),
    _f("Google OAuth client secret", "GOCSPX-", _URLSAFE + "{28}"),
    _f("Google OAuth access token", "ya29.", _URLSAFE + "{30,}", ""),
    *_each("DigitalOcean token", "dop_v1_ doo_v1_ dor_v1_", "[a-f0-9]{64}"),
    *_each("Shopify token", "shpat_ shpca_ shppa_ shpss_", "[a-fA-F0-9]{32}"),
    _f("Linear API key", "lin_api_", _B62 + "{40}"),
    _f("Render API key", "rnd_", _B62 + "{24,64}"),
    *_each("Doppler token", "dp.pt. dp.st. dp.ct. dp.sa. dp.scim. dp.audit.", _B62 + "{40,44}"),
    _f("Databricks token", "dapi", "[a-f0-9]{32}(?:-[0-9])?"),
    _f("Mailgun key", "key-", "[a-f0-9]{32}"),
    _f("New Relic user key", "NRAK-", "[A-Z0-9]{27}"),
    _f("New Relic insert key", "NRII-", _URLSAFE + "{32}"),
    _f("New Relic browser key", "NRJS-", "[a-f0-9]{19}"),
    _f("Atlassian API token", "ATATT3", r"[\w=-]{100,}", ""),
    # The bot's numeric id and a colon come first (`123456789:AA…`); the colon ends the run.
    Format("Telegram bot token", "AA", re.compile(r"(?<=[0-9]{5}:)AA" + _URLSAFE + "{33}" + _END)),
    _f("Postman API key", "PMAK-", "[a-f0-9]{24}-[a-f0-9]{34}"),
    *_each("Vault token", "hvs. hvb.", _URLSAFE + "{90,}", ""),
    _f("Grafana service account token", "glsa_", _B62 + "{32}_[A-Fa-f0-9]{8}"),
    _f("Grafana Cloud token", "glc_", "[A-Za-z0-9+/]{32,}={0,2}", ""),
    _f("Grafana API key", "eyJrIjoi", "[A-Za-z0-9]{70,}={0,2}", ""),
    _f("JSON Web Token", "eyJ", r"[\w-]{8,4000}\.eyJ[\w-]{8,8000}\.[\w-]{16,2000}", ""),
    _f("Sentry org token", "sntrys_", r"eyJ[\w=+/-]{60,}", ""),
    _f("Sentry user token", "sntryu_", "[a-f0-9]{64}"),
    _f("age secret key", "AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    _f("Pulumi token", "pul-", "[a-f0-9]{40}"),
    *_each("Square token", "sq0atp- sq0csp-", _URLSAFE + "{22,60}", ""),
    _f("Square or Facebook access token", "EAA", "[A-Z][A-Za-z0-9_-]{60,}", ""),
    _f("Perplexity API key", "pplx-", _B62 + "{48}"),
    _f("Groq API key", "gsk_", _B62 + "{52}"),
    _f("Replicate token", "r8_", _B62 + "{37}"),
    _f("xAI API key", "xai-", _B62 + "{80}"),
    _f("Alibaba Cloud access key id", "LTAI", _B62 + "{20}"),
    _f("Supabase token", "sbp_", "[a-f0-9]{40}"),
    _f("Brevo (Sendinblue) API key", "xkeysib-", "[a-f0-9]{64}-" + _B62 + "{16}"),
    _f("Dynatrace token", "dt0c01.", r"[A-Z0-9]{24}\.[A-Z0-9]{64}"),
    *_each("EasyPost key", "EZAK EZTK", _B62 + "{54}"),
    *_each("PlanetScale token", "pscale_tkn_ pscale_pw_ pscale_oauth_", r"[\w.=-]{32,64}", ""),
    *_each("Fly.io token", "fo1_ fm2_", _URLSAFE + "{43,}", ""),
    _f("RubyGems key", "rubygems_", "[a-f0-9]{48}"),
    *_each("Shippo token", "shippo_live_ shippo_test_", "[a-f0-9]{40}"),
    _f("1Password service account token", "ops_eyJ", r"[\w+/=-]{100,}", ""),
    _f("Infracost key", "ico-", _B62 + "{32}"),
    _f("Prefect key", "pnu_", _B62 + "{36}"),
    _f("ReadMe key", "rdme_", "[a-z0-9]{70}"),
    _f("Frame.io token", "fio-u-", r"[\w=-]{64}"),
    _f("Typeform token", "tfp_", r"[\w.=-]{59}"),
    _f("Notion token", "ntn_", _B62 + "{46}"),
    _f("Notion integration secret", "secret_", _B62 + "{43}"),
    _f("Sourcegraph token", "sgp_", r"(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}"),
    _f("Heroku API key", "HRKU-AA", _URLSAFE + "{58}"),
    *_each("Docker Hub token", "dckr_pat_ dckr_oat_", _URLSAFE + "{27,}", ""),
    _f("Contentful token", "CFPAT-", _URLSAFE + "{43}"),
    _f("Buildkite token", "bkua_", "[a-f0-9]{40}"),
    _f("Artifactory key", "AKCp", _B62 + "{69}"),
    _f("Airtable token", "pat", _B62 + r"{14}\.[a-f0-9]{64}"),
    _f("Mapbox secret token", "sk.eyJ", r"[\w.-]{60,}", ""),
    _f("Dropbox token", "sl.", r"[\w.=-]{130,}", ""),
    _f("Figma token", "figd_", _URLSAFE + "{40,}", ""),
    _f("Clojars token", "CLOJARS_", "[a-z0-9]{60}"),
)

# Formats with no fixed prefix, found by their shape; tried on runs starting with these.
_SHAPES: tuple[tuple[str, Format], ...] = tuple(
    (
        first,
        Format(
            "Discord bot token", "", re.compile(r"[MNO][\w-]{23,25}\.[\w-]{6}\.[\w-]{27,38}" + _END)
        ),
    )
    for first in "MNO"
)


# Formats with their marker inside the token (`…-us12`, `…8Q~…`, `….atlasv1.…`): tried on
# runs that contain the marker.
_INNER: tuple[tuple[str, Format], ...] = (
    ("-us", Format("Mailchimp API key", "", re.compile(r"[0-9a-f]{32}-us[0-9]{1,2}" + _END))),
    (
        "Q~",
        Format(
            "Azure AD client secret",
            "",
            re.compile(r"(?<![\w~.-])[\w~.]{3}[0-9]Q~[\w~.-]{31,34}(?![\w~.-])"),
        ),
    ),
    (
        ".atlasv1.",
        Format(
            "Terraform Cloud token",
            "",
            re.compile(r"(?<![\w-])[a-z0-9]{14}\.atlasv1\.[\w=-]{60,70}(?![\w=-])"),
        ),
    ),
)
# Webhook URLs: the secret is the path after a fixed host and folder.
_WEBHOOKS: tuple[tuple[str, Format], ...] = (
    (
        "hooks.slack.com/",
        Format(
            "Slack webhook",
            "",
            re.compile(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[\w+/-]{20,120})"),
            "v",
        ),
    ),
    (
        "/api/webhooks/",
        Format(
            "Discord webhook",
            "",
            re.compile(r"/api/webhooks/[0-9]{17,20}/(?P<v>[\w-]{60,100})"),
            "v",
        ),
    ),
)

_BY_HEAD: dict[str, tuple[Format, ...]] = {}
for _format in FORMATS:
    _BY_HEAD[_format.prefix[:2]] = (*_BY_HEAD.get(_format.prefix[:2], ()), _format)
_BY_FIRST: dict[str, tuple[Format, ...]] = {}
for _first, _format in _SHAPES:
    _BY_FIRST[_first] = (*_BY_FIRST.get(_first, ()), _format)

# Prefixes that read like the start of any word or password name no key kind.
_WORDLIKE = {"pat", "key-", "secret_", "sl."}
#: Literal prefixes that name a key's kind (longest first); a redaction marker may show them.
KIND_PREFIXES: tuple[str, ...] = tuple(
    sorted(
        {f.prefix for f in FORMATS if len(f.prefix) >= 3 and f.prefix not in _WORDLIKE}
        | {"sk-ant-", "sk-proj-", "sk-svcacct-", "sk-admin-", "eyJ"},
        key=lambda p: (-len(p), p),
    )
)


def may_hold_format(text: str) -> bool:
    """False only when `format_spans(text)` yields nothing: no run of `MIN_RUN` token
    characters (the scan `format_spans` starts with, stopped at the first run) and no
    webhook host."""
    found = _RUNS.match(text)  # always matches: a run, or the end of the text
    if found is not None and found.start("run") >= 0:
        return True
    return _WEBHOOK_HOSTS.search(text) is not None


_WEBHOOK_HOSTS = re.compile("|".join(re.escape(host) for host, _ in _WEBHOOKS))


def format_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, kind) of every token in a known credential format, in no fixed order."""
    for found in _RUNS.finditer(text):
        start, end = found.span("run")
        if start < 0:
            continue
        hit = _match(text, start, end)
        if hit is not None:
            yield hit
    for trigger, fmt in _WEBHOOKS:
        at = text.find(trigger)
        while at >= 0:
            m = fmt.pattern.match(text, at)
            if m is not None and _random(m.group(fmt.group)):
                yield (*m.span(fmt.group), fmt.kind)
            at = text.find(trigger, at + 1)


def _match(text: str, start: int, end: int) -> tuple[int, int, str] | None:
    for fmt in _BY_HEAD.get(text[start : start + 2], ()) + _BY_FIRST.get(text[start], ()):
        m = fmt.pattern.match(text, start)
        if m is not None and _random(m.group(0)[len(fmt.prefix) :]):
            return (*m.span(fmt.group), fmt.kind)
    run = text[start:end]
    for needle, fmt in _INNER:
        if needle in run:
            m = fmt.pattern.search(text, start, end)
            if m is not None and _random(m.group(0)):
                return (*m.span(fmt.group), fmt.kind)
    return None


# Identifiers that happen to fit a format (`gldt-release-notes-for-the-team`,
# `NotificationClient.notify.with_retry_policy`) are made of words; a key's parts are random.
_SEPARATORS = re.compile(r"[-_.~]+")
_WORD = re.compile(r"(?:[a-z]{3,}|[A-Z][a-z]{2,})(?:[A-Z][a-z]{2,})*")  # `notify`, `ServiceClient`


def _random(body: str) -> bool:
    parts = [p for p in _SEPARATORS.split(body) if p]
    words = sum(1 for p in parts if _WORD.fullmatch(p))
    return words < 3 or words < 0.75 * len(parts)
