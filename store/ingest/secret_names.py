"""Secrets found by the name that introduces them, in whatever syntax the name comes in.

A secret-sounding name (password, passphrase, secret, token, credential(s), an API / access /
private… key, auth, sig) followed by its value:

- `.env` and shell lines: `DB_PASSWORD=hunter2`, `export SECRET_KEY="…"`;
- quoted JSON / YAML fields: `"password": "correct horse"`, `api_key: '…'`;
- URL query and connection-string parameters: `?access_token=…`, `;Password=…;`;
- a password name and a connector in prose, config or code: `the password is X`,
  `password: X`, `PGPASSWORD=X`: any value that is not a word, code or a reference;
- a secret, token, credential or qualified key name, then (after at most a few short words) a
  random-looking value: `…with secret q8Zr3Vt+… was revoked`, `the API key for staging is …`.

What is not a secret here: references and placeholders (`$TOKEN`, `${VAR}`, `%VAR%`, `<token>`,
`sk-...`, `xxxx`, `your-key`), plain words (`the password is incorrect`, `password: string`),
code (`password=hash(pw)`, `auth_token=environment_key`, `self.password`), a bare `key`
(`key=lambda x: x[1]`, `unique_key='id'`), and hex strings, UUIDs, paths and numbers unless the
name comes right before them (`client_secret: 3f…`, `_authToken=<uuid>`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_REFERENCE_PREFIXES = ("$", "<", "{", "[redacted", "***", "os.environ", "process.env")
_WINDOWS_VARIABLE = re.compile(r"%[a-z_][a-z0-9_]*%(?:$|[\\/])")  # `%APPDATA%`, `%HOME%\x`
# A placeholder word in one case (`your`, `YOUR`, `Your`) at an edge of the value or next to
# punctuation (`your-token`, `ghp_your_token`, `AKIA…EXAMPLE`); random tokens hold `yOUr`
# or `3yourC` now and then.
_WORDS = "|".join(
    form
    for word in ("your", "example", "placeholder", "changeme", "change_me")
    for form in (word, word.upper(), word.title())
)
_PLACEHOLDER = re.compile(rf"(?<![A-Za-z0-9])(?:{_WORDS})|(?:{_WORDS})(?![A-Za-z0-9])|xxxx|XXXX")
_FILLER = frozenset("xX*.-_•…")
_SPECIAL_TOKEN = re.compile(r"\[[A-Z_]+\]|<\|?[a-z_]+\|?>")  # `[MASK]`, `<pad>`, `<|endoftext|>`
_NOT_SECRETS = frozenset({"true", "false", "none", "null", "nil", "yes", "no", "on", "off"})


def is_reference(value: str) -> bool:
    """Variables, templates, elisions and placeholders: `$TOKEN`, `<token>`, `sk-...`, `xxxx`,
    `YOUR_KEY`, `your-token-here`, `AKIA…EXAMPLE`."""
    low = value.lower().rstrip("\"'`,;:!?)]}*")
    return (
        not low
        or low in _NOT_SECRETS
        or low.startswith(_REFERENCE_PREFIXES)
        or _WINDOWS_VARIABLE.match(low) is not None
        or "..." in low  # an elision: `sk-...`, `ghp_... (required)`, `?key=…`
        or "…" in low
        or _PLACEHOLDER.search(value) is not None
        or set(low) <= _FILLER
        or _SPECIAL_TOKEN.fullmatch(value) is not None
    )


# -- names -----------------------------------------------------------------------------------------

_PASSWORD_NAME = re.compile(r"(?:passwords?|passwd|passphrase|pwd|pw|(?:^|[_-])pass)$")
_SECRET_ENDING = re.compile(r"(?:secret|token|credentials?|licen[cs]e)$")
_KEY_QUALIFIER = re.compile(
    r"(?:api|access|private|secret|auth|signing|encryption|master|license|account|subscription"
    r"|service|client|app|deploy|admin|storage|sas|shared_?access|ssh)[ _-]?key$"
)
# `.env` names (any secret-sounding ending); a bare `…key` only with a value that looks random.
_ENV_NAME = re.compile(
    r"(?:password|passwd|secret|token|api_?key|access_?key|private_?key|auth"
    r"|credentials?)$|(?:^|[_.-])(?:pass|key)$"
)
# Quoted JSON / YAML fields; in them a bare `key:` is any mapping key, so only longer names.
_FIELD_NAME = re.compile(
    r"(?:password|passwd|secret|token|api_?key|access_?key|private_?key|credentials?)$"
)
_QUERY_NAME = re.compile(
    r"password|passwd|pwd|pass|token|access_token|refresh_token|id_token|api_key|apikey|key"
    r"|secret|client_secret|auth|sig|signature|x-amz-signature|x-amz-security-token"
    r"|accountkey|sharedaccesskey"  # Azure connection strings: `…;AccountKey=…;`
)

# -- what follows a name ---------------------------------------------------------------------------

# A quoted value is everything between its quotes; a bare one ends at a space.
_QUOTED = r"(?<=\")[^\"\n]{1,512}(?=\")|(?<=')[^'\n]{1,512}(?=')"
# A bare value also ends at an escaped newline or tab (`\\n`: a file written by a command) and
# at an escaped quote (`=\\"…\\"`: JSON inside a string, which `redact` reads unescaped).
_BARE = r"(?:[^\s\"'`\\]|\\(?![nrt\"']))"
_ENV_ASSIGN = re.compile(
    rf"(?P<gap>[ \t]*)=[ \t]*(?P<q>[\"']?)(?P<v>{_QUOTED}|(?:[^\s\"'\\]|\\(?![nrt\"'])){{1,512}})"
)
# What may come before a name at the start of its line: a file's line number as Claude Code's
# Read shows it (`    9→`, `9\t`, escaped `9\\t`), a comment mark (a commented-out line is
# still a secret), `export `, a dotted prefix (`spring.db.`).
_ENV_LEAD = re.compile(
    r"[ \t]*(?:[0-9]{1,7}(?:→|\t|\\t)[ \t]*)?(?:#[ \t]*)?(?:export[ \t]+)?(?:[a-z0-9_-]+\.)*"
)
_FIELD_VALUE = re.compile(rf"[\"']?[ \t]*:[ \t]*[\"'](?P<v>{_QUOTED})")
_QUERY_VALUE = re.compile(r"=(?P<v>[^&#;\s\"'<>]{1,512})")
# A closing quote, a connector, spaces; then maybe a few short words ("for staging is").
_CONNECTOR = re.compile(
    r"[\"'`\]]*[ \t]*(?P<c>:=|=>|->|→|[:=]|(?:is|was|are|were|of|to|as|equals)(?=[ \t]))?[ \t]*"
)
_FILLER_WORD = re.compile(r"[a-z]{1,12}[ \t]+")
_WORD = re.compile(r"[ \t]+[a-z]{1,12}")
_OPEN = re.compile(r"[\"'`]?")
_RANDOM_VALUE = re.compile(r"[A-Za-z0-9+/=_.~-]{16,1024}")
_PASSWORD_VALUE = re.compile(rf"{_BARE}{{1,128}}")
_QUOTED_VALUE = {q: re.compile(rf"[^{q}\n]{{1,128}}(?={q})") for q in "\"'`"}

# Cheap first passes, one per name root (a literal first, so the engine skips ahead): the rest
# of the name, then the start of one of the forms above. Most hits (`PASSED`, `max_tokens`,
# `the token expired`) fail here, in C; the few left are parsed exactly in Python.
_REST = r"[a-z0-9_-]*"
_GAP = r"[\"'`\]]*[ \t]*(?:(?::=|=>|->|→|[:=])[ \t]*)?"
_ASSIGNED = r"[ \t]*="
_THEN_PASSWORD = (
    r"[\"'`\]]*[ \t]*(?::=|=>|->|→|[:=]|(?:is|was|are|were|of|to|as|equals)[ \t])"
    r"|(?:[ \t]+[a-z]{1,12}){1,4}[ \t]*(?::|(?:is|was)[ \t])"  # "for the admin user is"
    r"|[ \t]+[^\s\"'`]*[0-9]"  # "user admin, password Xy7pq2Lm9"
    r"|[ \t]+[\"'`][^\s\"'`]*[0-9]"  # SQL's "WITH PASSWORD 'Xy7pq2Lm9'", "password `Xy7…`"
)  # fmt: skip
_THEN_RANDOM = (
    rf"{_GAP}(?:[a-z]{{1,12}}[ \t]+{_GAP}){{0,4}}[\"'`]?[a-z0-9+/=_.~-]{{16}}"
    rf"|[\"']?[ \t]*:[ \t]*[\"']|{_ASSIGNED}"
)
_FIRST_PASS = {
    root: re.compile(f"{root}{_REST}(?:{then})")
    for root, then in (
        ("pass", _THEN_PASSWORD),
        ("pw", _THEN_PASSWORD),
        ("secret", _THEN_RANDOM),
        ("token", _THEN_RANDOM),
        ("credential", _THEN_RANDOM),
        ("licen", _THEN_RANDOM),
        ("key", _THEN_RANDOM),
        ("auth", _ASSIGNED),
        ("sig", _ASSIGNED),
    )
}
#: The roots a secret-sounding name holds (what `redact` looks for before an escaped field).
NAME_ROOTS = tuple(_FIRST_PASS)
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")
_NAME_REST = re.compile(_REST)
_MAX_NAME = 80
_LOOKAHEAD = 200  # a value starts at most this far after its name, on the same line


def named_spans(text: str, low: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every value a secret-sounding name introduces. `low` is `text`
    lowercased with the same offsets."""
    seen: set[int] = set()
    for root, first_pass in _FIRST_PASS.items():
        if root not in low:
            continue
        for hit in first_pass.finditer(low):
            start = hit.start()
            while start > 0 and hit.start() - start < _MAX_NAME and low[start - 1] in _NAME_CHARS:
                start -= 1
            if start and low[start - 1] == "\\" and low[start] in "nrt":
                start += 1  # `\\nDB_PASSWORD=`: the name starts after an escaped newline
            rest = _NAME_REST.match(low, hit.start() + len(root))
            end = rest.end() if rest else hit.start() + len(root)
            if end in seen:  # `secret_access_key`: one name, two roots
                continue
            seen.add(end)
            span = _value_after(text, low, start, end)
            if span is not None:
                yield span


def _value_after(text: str, low: str, start: int, end: int) -> tuple[int, int] | None:
    """The secret value that the name `low[start:end]` introduces, if there is one."""
    name = low[start:end]
    assigned = low.startswith("=", end)
    if assigned and start and low[start - 1] in "?&;" and _QUERY_NAME.fullmatch(name):
        query = _QUERY_VALUE.match(low, end)
        return _unless_reference(text, query.span("v")) if query else None
    if _ENV_NAME.search(name) and _at_line_start(low, start):
        found = _env_value(text, low, start, end)
        if found is not None:
            return found
    if _FIELD_NAME.search(name):
        field = _FIELD_VALUE.match(low, end)
        if field is not None:
            return _unless_reference(text, field.span("v"))
    if _PASSWORD_NAME.search(name):
        # `pwd` is also a shell command and `pass` a verb ("pass as …"): `:` / `=` only.
        verb = name in ("pass", "pwd", "pw") or name.endswith(("pwd", "pw"))
        return _password_after(text, low, end, only_symbols=verb)
    if _SECRET_ENDING.search(name) or qualified_key(name, low, start):
        return _random_after(text, low, end)
    return None


def _unless_reference(text: str, span: tuple[int, int]) -> tuple[int, int] | None:
    return None if is_reference(text[span[0] : span[1]]) else span


def _at_line_start(low: str, start: int) -> bool:
    """Only `export ` or a dotted prefix before `start` on its line; a line may also start
    after an escaped newline (`\\n`: a file or command inside a tool call's JSON)."""
    if start and low[start - 1] == "`":  # inline code: `DB_PASSWORD=x`
        return True
    escaped = low.rfind("\\n", 0, start)
    line_start = max(low.rfind("\n", 0, start) + 1, escaped + 2 if escaped >= 0 else 0)
    return _ENV_LEAD.fullmatch(low, line_start, start) is not None


def _env_value(text: str, low: str, start: int, end: int) -> tuple[int, int] | None:
    """`DB_PASSWORD=x`, `SECRET_KEY = "x"`; but `token = get_token()` and
    `auth_token=environment_key,` are code, and `CACHE_KEY=users` is no secret."""
    m = _ENV_ASSIGN.match(low, end)
    if m is None:
        return None
    name = text[start:end]
    value = text[m.start("v") : m.end("v")]
    gap = bool(m.group("gap"))
    if (gap and not name.isupper()) or is_reference(value):
        return None
    if name.lower().endswith("key") and qualified_key(name.lower()) is None:
        # `STRIPE_KEY=rk_…` is a key; `CACHE_KEY=users`, `SORT_KEY=2` and ids are not.
        ok = has_digit_and_letter(value) and not (is_code(value) or _is_id_or_hash(value))
    else:
        # `.env` (`NAME=value`): any value; code (`TOKEN = re.compile(…)`, `token=env_key,`):
        # only literals.
        env_file = name.isupper() and not gap
        ok = env_file or bool(m.group("q")) or not is_code(value.rstrip(",;)"))
    return m.span("v") if ok else None


def qualified_key(name: str, low: str = "", start: int = 0) -> re.Match[str] | None:
    """`api_key`, `accessKey`, and in prose "API key", "secret key"; not `cache_key`."""
    if not name.endswith("key"):
        return None
    found = _KEY_QUALIFIER.search(name)
    if found is None and name == "key" and start:
        found = _KEY_QUALIFIER.search(low, max(0, start - 24), start + 3)
    return found


def _line_stop(low: str, end: int) -> int:
    line_end = low.find("\n", end, end + _LOOKAHEAD)
    return line_end if line_end >= 0 else min(len(low), end + _LOOKAHEAD)


def _password_after(text: str, low: str, end: int, *, only_symbols: bool) -> tuple[int, int] | None:
    """After a password name, a connector (`is`, `:`, `=`; only `:` / `=` after `pwd`, which
    is also a shell command), then a value people would use as a password."""
    stop = _line_stop(low, end)
    connector = _CONNECTOR.match(low, end, stop)
    word = connector.group("c") if connector else None
    bare = False
    if not word and not only_symbols:
        connector, bare = _connector_after_words(low, end, stop)
        word = connector.group("c") if connector else None
    if connector is None or (not word and not bare) or (only_symbols and (word or "") not in ":="):
        return None
    pos = connector.end()
    quote = text[pos] if pos < stop and text[pos] in "\"'`" else ""
    if quote:
        value = _QUOTED_VALUE[quote].match(text, pos + 1, stop)
        pos += 1
        if value is None or not password_like(value.group(0)):
            # a quote never closed (a command cut short), or closed only much later: the
            # value runs to a space
            value, quote = _PASSWORD_VALUE.match(text, pos, stop), ""
    else:
        value = _PASSWORD_VALUE.match(text, pos, stop)
    if value is None:
        return None
    found = value.group(0) if quote else _uncut(value.group(0).rstrip(".,;:!?)]}"))
    if bare and not (len(found) >= 6 and has_digit_and_letter(found)):
        return None  # with no connector, only a value no word could be
    return (pos, pos + len(found)) if password_like(found) else None


def _uncut(value: str) -> str:
    """A value a tool cut short (`…`, `...` at its end) is the secret's start: at least eight
    characters of it are kept to be masked; a shorter one stays a placeholder (`sk-…`)."""
    for mark in ("…", "..."):
        if value.endswith(mark) and len(value) - len(mark) >= 8:
            return value[: -len(mark)].rstrip(".,;:!?)]}")
    return value


def _connector_after_words(low: str, end: int, stop: int) -> tuple[re.Match[str] | None, bool]:
    """After a password name with no connector: up to four short words and then `is`, `was`
    or `:` ("the password for the admin user is X"); else the value right after the name
    ("user admin, password X": `bare`, which only a value no word could be passes)."""
    pos = end
    for _ in range(4):
        filler = _WORD.match(low, pos, stop)
        if filler is None:
            break
        pos = filler.end()
        more = _CONNECTOR.match(low, pos, stop)
        if more is not None and more.group("c") in ("is", "was", ":"):
            return more, False
    spaced = _CONNECTOR.match(low, end, stop)
    has_gap = spaced is not None and spaced.end() > end and not spaced.group("c")
    return (spaced if has_gap else None), has_gap


def _random_after(text: str, low: str, end: int) -> tuple[int, int] | None:
    """After a secret, token or key name, a random-looking value: right after it, after a
    connector, or after at most three short words ("the API key for staging is …")."""
    stop = _line_stop(low, end)
    connector = _CONNECTOR.match(low, end, stop)
    pos = connector.end() if connector else end
    tight = True
    for _ in range(3):
        filler = _FILLER_WORD.match(low, pos, stop)
        if filler is None:
            break
        more = _CONNECTOR.match(low, filler.end(), stop)
        pos, tight = (more.end() if more else filler.end()), False
    opened = _OPEN.match(text, pos, stop)
    pos = opened.end() if opened else pos
    value = _RANDOM_VALUE.match(text, pos, stop)
    if value is None:
        return None
    found = value.group(0).rstrip(".")
    if not random_looking(found, tight=tight) or is_reference(found):
        return None
    return pos, pos + len(found)


# -- values ----------------------------------------------------------------------------------------

# Code, not a literal: a call, indexing, a template, attribute access (`self.password`).
_CODE = re.compile(r"[()\[\]{}<>]|^[A-Za-z_]{2,}(?:\.[A-Za-z_]+)+$")
# A word or an identifier: `incorrect`, `Required`, `String`, `userPassword`, `DB_PASS`.
_PLAIN = re.compile(r"[A-Za-z][a-z]*(?:[A-Z][a-z]{2,})*|[A-Z][A-Z_]*|[a-z]+(?:[_-][a-z]+)*")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_PATH_STARTS = ("/", "~/", "./", "../")
_EXTENSION = re.compile(r"\.[a-z][a-z0-9]{0,4}$")
_WORD_FOLDER = re.compile(r"(?<=/)[a-z_.-]{3,}(?=/|$)")
# Pieces of a value: words (`Access`, `token`, `API`) and numbers. Random strings break into
# pieces of one or two characters; identifiers and prose into words.
_PIECE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_MAX_MEAN_PIECE = 3.2


def _is_id_or_hash(value: str) -> bool:
    return _UUID.fullmatch(value.lower()) is not None or _HEX.fullmatch(value) is not None


def is_code(value: str) -> bool:
    return _CODE.search(value) is not None or _PLAIN.fullmatch(value) is not None


def has_digit_and_letter(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def password_like(value: str) -> bool:
    """A password as people write one: not a word, code, a path or a reference."""
    if not 4 <= len(value) <= 128 or is_reference(value) or "://" in value:
        return False
    if _is_path(value) or is_code(value):
        return False
    return len(value) >= 6 if value.isdigit() else True


def _is_path(value: str) -> bool:
    """`/home/dev/app.py`, `./build/out`, `~/.ssh/id_ed25519`; but a base64 secret may start
    with a slash too (`/H5c1eLgS…`): a path has a file extension or word-like folders."""
    if not value.startswith(_PATH_STARTS):
        return False
    return _EXTENSION.search(value) is not None or len(_WORD_FOLDER.findall(value)) >= 2


def random_looking(value: str, *, tight: bool) -> bool:
    """Random characters, not words: many short pieces, digits with letters or both cases.
    Hex and UUIDs (hashes, ids) only right after the name (`tight`)."""
    core = value.rstrip("=")
    if len(core) < 16 or _is_path(value) or core.isdigit():
        return False
    if _is_id_or_hash(core):
        return tight and len(set(core.lower())) >= 8
    if not has_digit_and_letter(core) and (core.lower() == core or core.upper() == core):
        return False
    pieces = _PIECE.findall(core)
    if len(pieces) < 4:
        return False
    # Short pieces, or a long run of letters no language spells (`Hajlyqmndgz`: one vowel in
    # eleven), which random base62 makes often enough.
    return sum(map(len, pieces)) <= _MAX_MEAN_PIECE * len(pieces) or any(
        len(p) >= 8 and sum(c in "aeiouAEIOU" for c in p) * 6 < len(p) for p in pieces
    )
