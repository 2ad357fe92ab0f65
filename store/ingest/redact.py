"""Secrets out of text before it is stored (FORMATS §2.4) or served to an agent.

What is caught, each secret replaced by a marker:

1. Credentials that name themselves (`store.secret_formats`: about 120 formats from the rule
   lists of gitleaks and detect-secrets): AWS key ids; GitHub, GitLab, Slack, Hugging Face,
   npm, PyPI, Stripe, SendGrid, Twilio, OpenAI, Anthropic, Google, DigitalOcean, Vault,
   Grafana, Sentry, Databricks, Doppler, Atlassian, Telegram… tokens; Slack and Discord
   webhooks; Azure AD client secrets. Anywhere, with no keyword needed.
2. The security lint's `secret` rule (`lint.secret_spans`): private key blocks, JWTs, long
   random literals assigned to secret-sounding names, passwords in URLs.
3. Context: `Authorization:` headers (Bearer, Basic, token, SSWS…) and bearer tokens,
   `X-Api-Key`-style and `PRIVATE-TOKEN` headers, a URL's user info, `--password` style
   flags.
4. Command lines: `curl -u user:pw`, `mysql -pPW`, `docker login -p PW` (podman, helm, …),
   `sshpass -p PW`, `redis-cli -a PW`, `echo PW | docker login --password-stdin`,
   `echo PW | sudo -S …` and `sudo -S … <<< PW`, `.netrc`
   lines.
5. A secret-sounding name and its value (`secret_names.named_spans`): `.env` / config lines
   (`DB_PASSWORD=x`), quoted JSON / YAML fields (`"password": "x"`, also with escaped quotes:
   JSON inside a string), URL query and
   connection-string parameters (`?access_token=…`, `;AccountKey=…`); after a password name
   (`password is X`, `password: X`, `PGPASSWORD=X`) any value that is not a word, code or a
   reference; after a secret, token, credential or API/access/private key name
   (`…with secret q8Zr3Vt+… was revoked`, `token: …`) a random-looking value.

Left alone: references and placeholders (`$TOKEN`, `${VAR}`, `<token>`, `sk-...`, `xxxx`,
`your-key`), plain words (`the password is incorrect`), code (`password=hash(pw)`,
`key=lambda x: x[1]`, `auth_token=environment_key`), and hashes, ids, paths and base64 data
unless a secret-sounding name introduces them.

Measured by `librarian bench --only secrets` (README): every one of 96 generated formats
(288 samples; the rules before these caught 26), no redaction and so no false positive in
the corpus transcripts, ~28 MB/s on transcript-like text.

Each secret becomes `[REDACTED]`, or `[REDACTED:abcd]` when it is at least 16 characters long
and starts with a prefix that names its kind (`AKIA`, `ghp_`, `sk-a`, `glpa`): at most four
characters of that fixed prefix, never characters of the random part. A marker is never
longer than 15 characters, so text grows by at most that much per secret; markers are never
matched again, and text is redacted until it no longer changes: `redact` is idempotent.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from store.ingest.secret_names import NAME_ROOTS, is_reference, named_spans
from store.secret_formats import KIND_PREFIXES, format_spans, may_hold_format
from store.skills.lint import secret_spans

REDACTED = "[REDACTED]"

_MAX_PASSES = 4
#: Values at least this long may keep their kind prefix in the marker.
_PREFIX_MIN = 16
_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,4}")
_KIND = re.compile("|".join(map(re.escape, KIND_PREFIXES)))
_MARKER = re.compile(r"\[REDACTED(?::[A-Za-z0-9_-]{1,4})?\]")

# Rules match the lowercased text (offsets kept) and start with a literal where they can, so
# the regex engine skips ahead instead of trying every position: ~10x faster on large text.
# The `v` group is the secret; the rest is the context that says so.
_AUTH_HEADER = re.compile(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"'`]?"
    r"(?:(?:bearer|basic|token|digest|negotiate|apikey|ssws|sso-key)[ \t]+)?"
    r"(?P<v>[^\s\"',;]{4,})"
)
_BEARER = re.compile(r"bearer[ \t]+(?P<v>[a-z0-9._~+/=-]{8,})")
_HEADER_VALUE = r"[\"']?[ \t]*:[ \t]*[\"']?(?P<v>[^\s\"',;]{4,})"
_KEY_HEADER = re.compile(
    r"x-(?:api-key|auth-token|access-token|api-token|amz-security-token|goog-api-key"
    r"|vault-token|functions-key|figma-token|hasura-admin-secret|shopify-access-token"
    r"|gitlab-token|consul-token|nomad-token)" + _HEADER_VALUE
)
_PRIVATE_TOKEN = re.compile(r"private-token" + _HEADER_VALUE)  # GitLab's header
_URL_USERINFO = re.compile(r"://[^\s:/@'\"`<>]{0,64}:(?P<v>[^\s/@'\"`<>]{1,128})@")
_FLAG = re.compile(
    r"--(?:password|passwd|pass|passphrase|token|api-key|secret|client-secret|auth-token"
    r"|access-token|http-password|ftp-password|proxy-password|db-password)"
    r"(?:=|[ \t]+)[\"']?(?P<v>[^\s\"']{1,512})"
)
# Command lines that carry a password as an argument. Case matters for these flags (`-p` is
# mysql's password, `-P` its port), so they match the original text. Values shorter than four
# characters are documentation (`mysql -pPW`), not passwords.
_CMD_END = r"[^\n|;&]{0,300}?"
_CURL_USER = re.compile(
    rf"curl\b{_CMD_END}[ \t](?:-u|--user|-U|--proxy-user)(?:[ \t]+|=)?[\"']?"
    r"[^\s:\"'@]{0,64}:(?P<v>[^\s\"'`]{4,128})"
)
_MYSQL = re.compile(
    r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump)\b"
    rf"{_CMD_END}[ \t]-p[\"']?(?P<v>[^\s\"'`]{{4,128}})"
)
_LOGIN = re.compile(
    r"(?:docker|podman|buildah|skopeo|nerdctl|helm|oras|crane|cf)(?:[ \t]+registry)?[ \t]+"
    rf"login\b{_CMD_END}[ \t]-p(?:[ \t]+|=)[\"']?(?P<v>[^\s\"'`]{{4,256}})"
)
_SSHPASS = re.compile(r"sshpass[ \t]+-p[ \t]*[\"']?(?P<v>[^\s\"'`]{4,256})")
_REDIS_CLI = re.compile(rf"redis-cli\b{_CMD_END}[ \t]-a[ \t]+[\"']?(?P<v>[^\s\"'`]{{4,256}})")
# `echo PW | docker login --password-stdin`: the echoed value is the password.
_STDIN_PASSWORD = re.compile(
    r"(?:echo|printf)[ \t]+(?:-n[ \t]+)?[\"']?(?P<v>[^\s\"'`|]{4,256})[\"']?[ \t]*\|"
    r"[^\n;&]{0,200}--password-stdin"
)
# `echo PW | sudo -S cmd` (`-kS`, `--stdin`, `sudo -S cmd <<< PW`): sudo reads its password
# from standard input, so the echoed or here-string value is the password. Quotes may come
# escaped (`echo \\"PW\\"`: a command inside a tool call's JSON).
_SUDO_STDIN = re.compile(
    r"(?:echo|printf)[ \t]+(?:-n[ \t]+)?(?:\\?[\"'])?(?P<v>[^\s\"'`|\\]{4,256})(?:\\?[\"'])?"
    r"[ \t]*\|[ \t]*sudo[ \t]+(?:-[A-Za-z]*S[A-Za-z]*|--stdin)\b"
)
_SUDO_HERE = re.compile(
    r"sudo[ \t]+(?:-[A-Za-z]*S[A-Za-z]*|--stdin)\b[^\n;&|<]{0,200}<<<[ \t]*(?:\\?[\"'])?"
    r"(?P<v>[^\s\"'`\\]{4,256})"
)
_NETRC = re.compile(r"machine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+(?P<v>\S+)")


def _starts_word(m: re.Match[str], text: str) -> bool:
    """The match starts a word: at the start, after a non-word character, or after an escaped
    newline or tab (`\\n`, `\\t`: a multi-line command inside a tool call's JSON)."""
    start = m.start()
    if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
        return True
    return start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nt"


def _tokenish(m: re.Match[str], text: str) -> bool:
    """Tokens mix letters and digits, or cases mid-word (base64), or are long; the words after
    "Bearer" or "Authorization:" in prose do neither."""
    value = text[m.start("v") : m.end("v")]
    digits = any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    mixed = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return _starts_word(m, text) and (digits or mixed or len(value) >= 24)


def _anywhere(m: re.Match[str], text: str) -> bool:
    return True


class _Rule(NamedTuple):
    pattern: re.Pattern[str]
    # Substrings (of the lowercased text) the pattern needs one of; none when it starts with
    # a literal, which the regex engine finds as fast as `in` would.
    triggers: tuple[str, ...]
    accept: Callable[[re.Match[str], str], bool]
    cased: bool = False  # match the original text, not the lowercased copy


_RULES = (
    _Rule(_AUTH_HEADER, (), _tokenish),
    _Rule(_BEARER, (), _tokenish),
    _Rule(_KEY_HEADER, (), _starts_word),
    _Rule(_PRIVATE_TOKEN, (), _starts_word),
    _Rule(_URL_USERINFO, (), _anywhere),
    _Rule(_FLAG, (), _starts_word),
    _Rule(_CURL_USER, (), _starts_word, cased=True),
    _Rule(_MYSQL, ("mysql", "mariadb"), _starts_word, cased=True),
    _Rule(_LOGIN, ("login",), _starts_word, cased=True),
    _Rule(_SSHPASS, (), _starts_word),
    _Rule(_REDIS_CLI, (), _starts_word),
    _Rule(_NETRC, (), _starts_word),
    _Rule(_STDIN_PASSWORD, ("password-stdin",), _starts_word, cased=True),
    _Rule(_SUDO_STDIN, ("sudo",), _starts_word, cased=True),
    _Rule(_SUDO_HERE, ("sudo",), _starts_word, cased=True),
)

# Every rule's required substring: the lint's triggers (key prefixes, "private key", "://",
# secret-sounding names), this module's names, headers, schemes and commands. Provider
# formats need none: `format_spans` has its own cheap scan.
_TRIGGERS = (
    "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "sk-", "xox",
    "aiza", "k_live_", "private key", "eyj", "://", "secret", "pass", "token", "key", "auth",
    "bearer", "credential", "pw", "sig", "curl", "mysql", "mariadb", "login", "redis-cli",
    "sudo", "licen",
)  # fmt: skip


def _alternation(words: tuple[str, ...] | list[str]) -> str:
    """A regex matching where any of `words` starts, factored by first character
    (`a(?:iza|kia|uth)|…`): the engine tries one branch per position instead of every word.
    Only for `search`: a word that is a prefix of another stands for both."""
    rests: dict[str, list[str]] = {}
    for word in words:
        rests.setdefault(word[0], []).append(word[1:])
    branches = []
    for first, rest in sorted(rests.items()):
        if "" in rest:
            branches.append(re.escape(first))
        elif len(rest) == 1:
            branches.append(re.escape(first + rest[0]))
        else:
            branches.append(f"{re.escape(first)}(?:{_alternation(rest)})")
    return "|".join(branches)


_TRIGGER = re.compile(_alternation(_TRIGGERS))  # faster than 29 `in` tests or a flat `|`


def redact(text: str) -> str:
    """`text` with every detected secret replaced by a `[REDACTED…]` marker; idempotent."""
    # A marker can give a rule the context it lacked (`…aAuthorization:` becomes
    # `…]Authorization:`, a word start), so text that changed is redacted again until it
    # stays the same; text without secrets takes one pass.
    low = _lowered(text)
    if _quiet(text, low):
        return text
    for _ in range(_MAX_PASSES):
        done = _redact_once(text, low)
        if done == text:
            break
        text, low = done, _lowered(done)
    return text


def _quiet(text: str, low: str) -> bool:
    """True when `_candidate_spans` can yield nothing, so `redact` leaves `text` as it is:
    the gates `_candidate_spans` itself applies, without running any rule (`low`:
    `_lowered(text)`). Most text the warm tier redacts (one clause at a time) is quiet."""
    return _TRIGGER.search(low) is None and not may_hold_format(text)


def _redact_once(text: str, low: str) -> str:
    """One pass of every rule over `text` (`low`: `_lowered(text)`)."""
    if not text:
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
    """`[REDACTED:abcd]` when a long secret starts with a prefix naming its kind (at most four
    characters of that prefix), else `[REDACTED]`."""
    kind = _KIND.match(secret) if len(secret) >= _PREFIX_MIN else None
    shown = _PREFIX.match(secret, 0, min(4, kind.end())) if kind else None
    return f"[REDACTED:{shown.group(0)}]" if shown else REDACTED


def _candidate_spans(text: str, low: str) -> Iterator[tuple[int, int]]:
    for start, end, _kind in format_spans(text):
        if not is_reference(text[start:end]):
            yield start, end
    if _TRIGGER.search(low) is None:  # no other rule here or in the lint can match
        return
    yield from secret_spans(text)
    for rule in _RULES:
        if not rule.triggers or any(trigger in low for trigger in rule.triggers):
            for m in rule.pattern.finditer(text if rule.cased else low):
                start, end = m.span("v")
                if not is_reference(text[start:end]) and rule.accept(m, text):
                    yield start, end
    yield from named_spans(text, low)
    for first, last in _escaped_windows(text, low):  # `{\\"token\\": \\"…\\"}`: JSON in a string
        window = text[first:last]
        view, lands, removed = _unescaped(window)
        for start, end in named_spans(view, _lowered(view)):
            yield (
                first + _original(lands, removed, start),
                first + _original(lands, removed, end - 1) + 1,
            )


#: Backslashes that escape a quote (`\\"`, `\\\\\\"`: JSON or shell text inside a string).
_ESCAPES = re.compile(r"\\+(?=[\"'])")
#: A secret-sounding name (`named_spans`' roots) right before an escaped field or assignment
#: (`token\\": \\"`, `password=\\"`); how far before its root a name may start, and how far
#: after the field its value may end.
_ESCAPED_NAME = re.compile(
    rf"(?:{'|'.join(NAME_ROOTS)})[a-z0-9_-]{{0,40}}"
    r"(?:\\+[\"'][ \t]*:|[ \t]*=[ \t]*\\+[\"'])"
)
_NAME_REACH = 80
_VALUE_REACH = 600


def _escaped_windows(text: str, low: str) -> list[tuple[int, int]]:
    """The stretches of `text` around each escaped field or assignment that a secret-sounding
    name comes right before (merged where they overlap); none in most text."""
    if '\\"' not in text and "\\'" not in text:
        return []
    windows: list[tuple[int, int]] = []
    for m in _ESCAPED_NAME.finditer(low):
        first = max(0, m.start() - _NAME_REACH)
        last = min(len(text), m.end() + _VALUE_REACH)
        if windows and first <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(last, windows[-1][1]))
        else:
            windows.append((first, last))
    return windows


def _unescaped(text: str) -> tuple[str, list[int], list[int]]:
    """`text` without the backslashes that escape its quotes, so `\\"password\\": \\"x\\"`
    reads as the JSON field it is, with what maps its offsets back: where each cut lands in
    the view, and how many characters were removed up to it."""
    parts: list[str] = []
    lands: list[int] = []
    removed: list[int] = []
    pos = total = 0
    for m in _ESCAPES.finditer(text):
        parts.append(text[pos : m.start()])
        total += m.end() - m.start()
        lands.append(m.end() - total)
        removed.append(total)
        pos = m.end()
    parts.append(text[pos:])
    return "".join(parts), lands, removed


def _original(lands: list[int], removed: list[int], offset: int) -> int:
    """The offset in the original text of `offset` in its unescaped view."""
    at = bisect.bisect_right(lands, offset) - 1
    return offset + (removed[at] if at >= 0 else 0)


# -- merging -------------------------------------------------------------------------------------


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
