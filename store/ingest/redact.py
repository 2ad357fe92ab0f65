"""Secrets out of transcript text before it is stored or sent anywhere (FORMATS §2.4).

Two sources of spans:

- the security lint's `secret` rule (`lint.secret_spans`): provider key formats, private key
  blocks, long random literals assigned to secret-sounding names, passwords in URLs;
- rules for what transcripts leak and skill files rarely do: `Authorization:` headers and
  bearer tokens, any password in a URL's user info or query string, `--password` style flags,
  and `.env` / config lines whose name says secret (`DB_PASSWORD=hunter2`).

The lint skips short or word-like values because skill files are full of documentation
examples; here a real `postgres://user:pass@host` is still a password, so only obvious
references and placeholders (`$TOKEN`, `${VAR}`, `<token>`, `sk-...`, `xxxx`) are left alone.

Each secret becomes `[REDACTED]`, or `[REDACTED:abcd]` (its first four characters, which name
the key kind, e.g. `AKIA`, `ghp_`, `sk-a`) when it is at least 16 characters long. A marker is
never longer than 15 characters, so text grows by at most that much per secret, and markers
are never matched again: `redact` is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from store.skills.lint import secret_spans

REDACTED = "[REDACTED]"

#: Values at least this long keep their first four characters in the marker.
_PREFIX_MIN = 16
_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,4}")
_MARKER = re.compile(r"\[REDACTED(?::[A-Za-z0-9_-]{1,4})?\]")

# Rules match the lowercased text (offsets kept) and start with a literal where they can, so
# the regex engine skips ahead instead of trying every position: ~10x faster on large text.
# The `v` group is the secret; the rest is the context that says so.
_AUTH_HEADER = re.compile(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?:bearer|basic|token|digest|negotiate|apikey)[ \t]+)?(?P<v>[^\s\"',;]{4,})"
)
_BEARER = re.compile(r"bearer[ \t]+(?P<v>[a-z0-9._~+/=-]{8,})")
_KEY_HEADER = re.compile(
    r"x-(?:api-key|auth-token|access-token|api-token|amz-security-token)[\"']?"
    r"[ \t]*:[ \t]*[\"']?(?P<v>[^\s\"',;]{4,})"
)
_URL_USERINFO = re.compile(r"://[^\s:/@'\"`<>]{0,64}:(?P<v>[^\s/@'\"`<>]{1,128})@")
_URL_QUERY = re.compile(
    r"[?&;](?:password|passwd|pwd|pass|token|access_token|refresh_token|id_token|api_key"
    r"|apikey|key|secret|client_secret|auth|sig|signature|x-amz-signature"
    r"|x-amz-security-token)=(?P<v>[^&#\s\"'<>]{1,512})"
)
_FLAG = re.compile(
    r"--(?:password|passwd|token|api-key|secret|auth-token|access-token)"
    r"(?:=|[ \t]+)[\"']?(?P<v>[^\s\"']{1,512})"
)
# A quoted value is everything between its quotes; a bare one ends at a space or a comment.
_QUOTED = r"(?<=\")[^\"\n]{1,512}(?=\")|(?<=')[^'\n]{1,512}(?=')"
# `NAME=value` lines (.env files, `export`), and `"…password": "value"` fields (JSON, YAML);
# in JSON/YAML a bare `key:` is any mapping key, so only longer names count there.
_ENV_LINE = re.compile(
    r"(?m)^[ \t]*(?:export[ \t]+)?(?P<name>[a-z_][a-z0-9_.-]{0,80})(?P<gap>[ \t]*)="
    rf"[ \t]*[\"']?(?P<v>{_QUOTED}|[^\s\"'#]{{1,512}})"
)
_FIELD = re.compile(
    r"(?:password|passwd|secret|token|api_?key|access_?key|private_?key|credentials?)"
    rf"[\"']?[ \t]*:[ \t]*[\"'](?P<v>{_QUOTED})"
)
_SECRET_NAME = re.compile(
    r"(?:password|passwd|secret|token|api_?key|access_?key|private_?key|auth"
    r"|credentials?)$|(?:^|[_.-])(?:pass|key)$"
)


def _starts_word(m: re.Match[str], text: str) -> bool:
    return m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")


def _tokenish(m: re.Match[str], text: str) -> bool:
    """Tokens mix letters and digits, or cases mid-word (base64), or are long; the words after
    "Bearer" or "Authorization:" in prose do neither."""
    value = text[m.start("v") : m.end("v")]
    digits = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return _starts_word(m, text) and (digits or mixed or len(value) >= 24)


def _env_line(m: re.Match[str], text: str) -> bool:
    """`DB_PASSWORD=x`, `SECRET_KEY = "x"`; but `token = get_token()` is code, not config."""
    name = text[m.start("name") : m.end("name")]
    return _SECRET_NAME.search(name.lower()) is not None and (not m.group("gap") or name.isupper())


def _anywhere(m: re.Match[str], text: str) -> bool:
    return True


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    trigger: str  # a substring the pattern cannot match without
    accept: Callable[[re.Match[str], str], bool]


_RULES = (
    _Rule(_AUTH_HEADER, "authorization", _tokenish),
    _Rule(_BEARER, "bearer", _tokenish),
    _Rule(_KEY_HEADER, "x-", _starts_word),
    _Rule(_URL_USERINFO, "://", _anywhere),
    _Rule(_URL_QUERY, "=", _anywhere),
    _Rule(_FLAG, "--", _starts_word),
    _Rule(_ENV_LINE, "=", _env_line),
    _Rule(_FIELD, ":", _anywhere),
)

# Every rule's required substring: the lint's triggers (key prefixes, "private key", "://",
# secret-sounding names) and this module's names, headers and schemes.
_TRIGGERS = (
    "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox",
    "aiza", "k_live_", "private key", "eyj", "://", "secret", "pass", "token", "key", "auth",
    "bearer", "credential", "pwd", "sig",
)  # fmt: skip
_TRIGGER = re.compile("|".join(map(re.escape, _TRIGGERS)))  # faster than 24 `in` tests
_REFERENCE_PREFIXES = ("$", "%", "<", "{", "[redacted", "***", "os.environ", "process.env")
_PLACEHOLDER_WORDS = ("your", "example", "placeholder", "changeme", "change_me", "xxxx")
_FILLER = frozenset("xX*.-_•…")
_NOT_SECRETS = frozenset({"true", "false", "none", "null", "nil", "yes", "no", "on", "off"})


def redact(text: str) -> str:
    """`text` with every detected secret replaced by a `[REDACTED…]` marker; idempotent."""
    low = _lowered(text)
    if _TRIGGER.search(low) is None:  # no rule here or in the lint can match
        return text
    spans = _merged(_candidate_spans(text, low), _markers(text))
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out += [text[pos:start], _marker(text[start:end])]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _lowered(text: str) -> str:
    low = text.lower()
    # A few characters (İ) lowercase to two; offsets into `text` must stay valid.
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _marker(secret: str) -> str:
    """`[REDACTED:abcd]` for long secrets (the prefix names the key kind), else `[REDACTED]`."""
    prefix = _PREFIX.match(secret) if len(secret) >= _PREFIX_MIN else None
    return f"[REDACTED:{prefix.group(0)}]" if prefix else REDACTED


def _candidate_spans(text: str, low: str) -> Iterator[tuple[int, int]]:
    yield from secret_spans(text)
    for rule in _RULES:
        if rule.trigger in low:
            for m in rule.pattern.finditer(low):
                start, end = m.span("v")
                if not _is_reference(low[start:end]) and rule.accept(m, text):
                    yield start, end


def _is_reference(value: str) -> bool:
    """Variables, templates, elisions and placeholders: `$TOKEN`, `<token>`, `sk-...`, `xxxx`."""
    low = value.lower().rstrip("\"'`,;)")
    return (
        not low
        or low in _NOT_SECRETS
        or low.startswith(_REFERENCE_PREFIXES)
        or low.endswith(("...", "…"))
        or any(word in low for word in _PLACEHOLDER_WORDS)
        or set(low) <= _FILLER
    )


def _markers(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _MARKER.finditer(text)] if "[REDACTED" in text else []


def _merged(
    candidates: Iterator[tuple[int, int]], markers: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """Sorted, non-overlapping spans; anything overlapping an existing marker is left as is."""
    spans: list[tuple[int, int]] = []
    at = 0  # both lists are sorted: one sweep over the markers
    for start, end in sorted(candidates):
        while at < len(markers) and markers[at][1] <= start:
            at += 1
        if start >= end or (at < len(markers) and markers[at][0] < end):
            continue
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans
