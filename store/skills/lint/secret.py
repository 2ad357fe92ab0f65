"""The `secret` rule: provider key formats, private key blocks, passwords in URLs and literal
secrets assigned to secret-sounding names; also `secret_spans`, which `redact` uses to blank
the same secrets out of transcripts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from store.secret_formats import format_spans
from store.skills.lint.rules import (
    _Describe,
    _Hit,
    _is_token_char,
    _mask,
    _original,
    _Rule,
    _run,
    _Texts,
    _texts,
    _Verdict,
    neutralise,
)

_PLACEHOLDER_MARKERS = (
    "example", "xxx", "your", "placeholder", "dummy", "fake", "sample", "redacted",
    "changeme", "change_me", "change-me", "replace", "insert", "here", "todo", "demo",
    "test", "mock", "1234", "abcd", "abc123", "0000", "secret", "token", "password",
    "api_key", "apikey", "api-key", "<", ">", "{", "}", "$", "%", "...", "…", "***",
)  # fmt: skip
_REPEATED = re.compile(r"(.)\1{3}")


def _is_placeholder(value: str) -> bool:
    """True for the fake keys docs show in examples (sk-..., YOUR_KEY, ghp_xxxx, ${VAR})."""
    low = value.lower()
    if any(marker in low for marker in _PLACEHOLDER_MARKERS):
        return True
    return _REPEATED.search(value) is not None or len(set(value)) < 8


def _looks_random(value: str) -> bool:
    """Real keys mix letters and digits; prose, paths and identifiers rarely do."""
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return has_digit and has_alpha and "://" not in value and not value.startswith(("/", "."))


def _secret(kind: str, check_random: bool = True) -> _Describe:
    def describe(m: re.Match[str], text: str) -> _Verdict:
        value = _original(m, text, "v")
        if _is_token_char(text, m.end("v")):  # part of a longer token: not this key format
            return None
        if _is_placeholder(value) or (check_random and not _looks_random(value)):
            return None
        return "high", f"{kind} ({_mask(value)})"

    return describe


_ANTHROPIC_KEY = _secret("Anthropic API key")
_OPENAI_KEY = _secret("OpenAI-style API key")


def _describe_sk(m: re.Match[str], text: str) -> _Verdict:
    return (_ANTHROPIC_KEY if m.group("v").startswith("sk-ant-") else _OPENAI_KEY)(m, text)


_PEM_BODY = re.compile(r"[A-Za-z0-9+/]{40,}")
_PEM_HEADER = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_RUN = re.compile(r"[A-Za-z0-9+/=\s]{0,20000}")  # key material when END is missing


def _describe_pem(m: re.Match[str], text: str) -> _Verdict:
    # Docs show the BEGIN line with "..." under it; only real key material counts.
    if _PEM_BODY.search(text, m.end(), m.end() + 400) is None:
        return None
    return "high", f"{m.group(0).strip('-').removeprefix('BEGIN ')} block"


_KEY_NAMES = ("apikey", "api_key", "api-key", "accesskey", "access_key", "access-key",
              "privatekey", "private_key", "private-key", "authkey", "auth_key", "auth-key",
              "secretkey", "secret_key", "secret-key")  # fmt: skip


def _describe_assignment(m: re.Match[str], text: str) -> _Verdict:
    value = _original(m, text, "v")
    if _is_placeholder(value) or not _looks_random(value):
        return None
    name = _identifier_before(text, m.end("kw"))
    if m.group("kw").lower() == "key" and not name.lower().endswith(_KEY_NAMES):
        return None  # `key: "…"` alone is any YAML key; `api_key: "…"` is a credential
    name = neutralise(name, 60)
    return "high", f"`{name}` set to a literal secret ({_mask(value)})"


_NAME_TAIL = re.compile(r"[\w.-]{1,60}$")


def _identifier_before(text: str, end: int) -> str:
    """The whole identifier ending at `end` (client_secret, DB_PASSWORD, apiToken)."""
    found = _NAME_TAIL.search(text, max(0, end - 60), end)
    return found.group(0) if found else text[max(0, end - 20) : end]


_ENV_PREFIX = re.compile(r"[ \t]*(?:export[ \t]+)?[A-Z0-9_]{0,40}")


def _describe_env(m: re.Match[str], text: str) -> _Verdict:
    line_start = text.rfind("\n", 0, m.start()) + 1
    if _ENV_PREFIX.fullmatch(text, line_start, m.start()) is None:
        return None  # only KEY=value lines, as in .env files and shell exports
    return _describe_assignment(m, text)


_SECRET_RULES: tuple[_Rule, ...] = (
    _Rule(
        "secret",
        re.compile(r"(?P<v>A(?:KIA|SIA)(?<![\w-]A[KS]IA)[A-Z0-9]{16})"),
        _secret("AWS access key id", check_random=False),
        ("akia", "asia"),
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(
            r"aws_?secret_?(?:access_?)?key[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*[\"']?"
            r"(?P<v>[a-z0-9/+=]{40})(?![a-z0-9/+=])"
        ),
        _secret("AWS secret access key"),
        ("secret",),
        lower=True,
        boundary=False,
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(
            r"(?P<v>gh[pousr]_(?<![\w-]gh[pousr]_)[A-Za-z0-9]{36,251}"
            r"|github_pat_(?<![\w-]github_pat_)[A-Za-z0-9_]{22,251})"
        ),
        _secret("GitHub token"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(r"(?P<v>sk-(?<![\w-]sk-)(?:ant-)?[A-Za-z0-9_-]{20,200})"),
        _describe_sk,
        ("sk-",),
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(r"(?P<v>xox[baprs]-(?<![\w-]xox[baprs]-)[A-Za-z0-9-]{10,250})"),
        _secret("Slack token"),
        ("xox",),
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(r"(?P<v>AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35})"),
        _secret("Google API key", check_random=False),
        ("aiza",),
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(r"(?P<v>[sr]k_live_(?<![\w-][sr]k_live_)[0-9A-Za-z]{24,247})"),
        _secret("Stripe live key"),
        ("k_live_",),
        long_lines=True,
    ),
    _Rule(
        "secret",
        _PEM_HEADER,
        _describe_pem,
        ("private key",),
        boundary=False,
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(
            r"(?P<v>eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{8,4000}"
            r"\.eyJ[A-Za-z0-9_-]{8,8000}\.[A-Za-z0-9_-]{16,2000})"
        ),
        _secret("JSON Web Token", check_random=False),
        ("eyj",),
        long_lines=True,
    ),
    _Rule(
        "secret",
        re.compile(r"://[^\s:/@'\"`<>]{1,64}:(?P<v>[^\s:/@'\"`<>]{1,128})@"),
        _secret("password in a URL"),
        ("://",),
        boundary=False,
        long_lines=True,
    ),
)

# A quoted literal assigned to a secret-sounding name (code, YAML, JSON), or a .env line.
_ASSIGNMENT_RULES: tuple[_Rule, ...] = (
    *(
        # One literal-led pattern per name ending; `…key` names are checked in Python.
        _Rule(
            "secret",
            re.compile(
                rf"(?P<kw>{word}(?:[_-]?(?:key|value))?)[\"']?[ \t]*(?:=>|:=|=|:)[ \t]*"
                r"[rbuf]?[\"'`](?P<v>[^\"'`\s]{12,256})[\"'`]"
            ),
            _describe_assignment,
            (word,),
            lower=True,
            boundary=False,
            long_lines=True,
        )
        for word in ("password", "passwd", "secret", "token", "key")
    ),
    *(
        _Rule(
            "secret",
            re.compile(rf"(?m)(?P<kw>{word})=(?P<v>[^\"'`\s]{{12,256}})[ \t]*\r?$"),
            _describe_env,
            (word.lower() + "=",),
            boundary=False,
            long_lines=True,
        )
        for word in ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "KEY")
    ),
)


def _secret_hits(t: _Texts) -> list[_Hit]:
    specific = list(_run(_SECRET_RULES, t))
    spans = [h.mask for h in specific if h.mask is not None]
    # A provider key inside `api_key = "…"` is already reported by its own pattern.
    generic = [
        h
        for h in _run(_ASSIGNMENT_RULES, t)
        if h.mask is None or not any(s < h.mask[1] and h.mask[0] < e for s, e in spans)
    ]
    return specific + generic


def _format_hits(text: str, known: Sequence[_Hit]) -> list[_Hit]:
    """Keys in the provider formats `redact` knows (`store.secret_formats`) that the rules
    above did not report; documentation placeholders (`hf_xxxx…`, `YOUR_TOKEN`) excepted."""
    taken = [h.mask for h in known if h.mask is not None]
    hits = []
    for start, end, kind in format_spans(text):
        value = text[start:end]
        if _is_placeholder(value) or any(s < end and start < e for s, e in taken):
            continue
        hits.append(_Hit("secret", "high", f"{kind} ({_mask(value)})", start, (start, end)))
    return hits


def secret_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the secrets the `secret` rule finds, sorted, not overlapping.

    Key values are the spans lint masks; a private key block spans its body, so the BEGIN and
    END lines stay readable once the caller blanks the span out.
    """
    hits = _secret_hits(_texts(text, text.split("\n")))
    spans = sorted(h.mask if h.mask is not None else _pem_span(text, h.start) for h in hits)
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _pem_span(text: str, start: int) -> tuple[int, int]:
    """The body of the private key block whose BEGIN line starts at `start`."""
    header = _PEM_HEADER.match(text, start)
    body_start = header.end() if header else start
    end = text.find("-----END", body_start, body_start + 20_000)
    if end < 0:  # no END line: the key material runs to the end of the base64 lines
        run = _PEM_RUN.match(text, body_start)
        end = run.end() if run else body_start
    body = text[body_start:end]
    return body_start + len(body) - len(body.lstrip()), end - (len(body) - len(body.rstrip()))
