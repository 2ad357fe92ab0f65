"""Security lint for skill files.

Pure pattern matching over text: nothing from a skill is ever executed. Findings are shown
to people, so excerpts are single-line, neutralised, and secrets in them are masked.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from store.models import LintFinding
from store.secret_formats import format_spans
from store.text import excerpt, visible

#: rule id -> (severity, one-line description). The severity is the rule's highest.
LINT_RULES: dict[str, tuple[str, str]] = {
    "secret": ("high", "A credential, API key, token or private key written into the skill"),
    "pipe_to_shell": ("high", "Downloads a script and runs it straight away (curl … | sh)"),
    "destructive_command": ("high", "A command that wipes files, disks, history or databases"),
    "prompt_injection": ("high", "Text that tries to override the agent's instructions"),
    "hidden_unicode": ("high", "Invisible or bidirectional characters that hide what text says"),
    "terminal_escape": ("medium", "Raw control characters that can rewrite a terminal"),
    "oversized_blob": ("medium", "A huge line, encoded blob or file that can hide content"),
    "data_exfiltration": ("medium", "Sends local secrets (~/.ssh, .env, env) to a remote host"),
}

#: A single line, or a base64/hex run or block, longer than this is an `oversized_blob`.
MAX_BLOB_CHARS: int = 20_000

_MAX_FILE_CHARS = 1_000_000
# Command and phrase rules read only this much of a line: their windows are bounded, but a
# multi-megabyte line of repeated keywords would still cost O(length * window).
_MAX_SCAN_LINE = 4_096
# A file full of hits gets a line-0 summary instead of thousands of rows in the UI.
_MAX_PER_RULE = 50
_EXCERPT_CHARS = 160
_LEAD = 40  # context kept before a hit that sits far into a long line
_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}

_Verdict = tuple[str, str] | None  # (severity, message), or None to drop the match
# Gets the match and the original text (matches may come from the lowercased copy).
_Describe = Callable[[re.Match[str], str], _Verdict]


@dataclass(frozen=True, slots=True)
class _Rule:
    rule: str
    pattern: re.Pattern[str]
    describe: _Describe
    triggers: tuple[str, ...] = ()  # lowercase substrings; without one the regex can't match
    lower: bool = False  # match the lowercased text (pattern written in lowercase)
    boundary: bool = True  # the match must start a token, not sit inside one
    long_lines: bool = False  # tightly anchored, so safe on over-long lines too


@dataclass(frozen=True, slots=True)
class _Hit:
    rule: str
    severity: str
    message: str
    start: int  # offset in the text; -1 for whole-file findings
    mask: tuple[int, int] | None = None  # secret span to hide in excerpts
    more: int = 0  # further hits of this rule that were counted, not listed


# Excerpts and messages go through the one neutraliser the whole app uses.
neutralise = excerpt


# --------------------------------------------------------------------------- helpers


def _mask(value: str) -> str:
    return neutralise(value[:4], 4) + "****"


def _is_token_char(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] in "_-")


def _const(severity: str, message: str) -> _Describe:
    def describe(m: re.Match[str], text: str) -> _Verdict:
        return severity, message

    return describe


def _line_before(text: str, start: int, limit: int = 1_000) -> str:
    """The (bounded) part of start's line before it, for look-behind checks in Python."""
    return text[max(text.rfind("\n", 0, start) + 1, start - limit) : start]


def _original(m: re.Match[str], text: str, group: str | int = 0) -> str:
    start, end = m.span(group)
    return text[start:end] if start >= 0 else ""


# --------------------------------------------------------------------------- secret

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


# --------------------------------------------------------------------------- pipe_to_shell

_URL = re.compile(r"https?://(?:[^\s'\"|)<>`/@]{1,100}@)?(?P<where>[^\s'\"|)<>`?#]{1,200})")
_PIPE = r"\|(?<!\|\|)(?!\|)&?"  # a pipe, not `||`; the literal comes first for a fast scan
# The shell must read the script from stdin: `| python -c …` or `| sh file` parse, not run.
_STDIN_SHELL = r"(?=[ \t\r]*(?:$|[;&|)\"'`#])|[ \t]+-{1,2}(?![cm]\b))"
_SHELL = (
    r"(?:sudo(?:[ \t]+-[a-z]+){0,4}[ \t]+)?(?:(?:/usr)?(?:/local)?/bin/(?:env[ \t]+)?)?"
    r"(?P<shell>sh|bash|zsh|dash|ksh|fish|python[0-9.]{0,5}|perl|ruby|node|php|iex"
    rf"|invoke-expression)(?![\w-]){_STDIN_SHELL}"
)


def _where(url: re.Match[str]) -> str:
    # Scheme, host and path only: user:password@ and ?token=… stay out of the message.
    scheme = url.group(0).split("://", 1)[0]
    return f"from {scheme}://{neutralise(url.group('where'), 100)}"


def _download(m: re.Match[str], text: str, fetch: str) -> str:
    url = _URL.search(text, m.start(), m.end())
    return _where(url) if url else f"({fetch})"


_FETCH = re.compile(r"(?<![\w-])(?P<fetch>curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b")
_COMMAND_BREAK = re.compile(r";|&&|\|\|")


def _describe_pipe(m: re.Match[str], text: str) -> _Verdict:
    # Anchored on `| sh`; the download must start this pipeline, at most 3 pipes back.
    pipeline = _COMMAND_BREAK.split(_line_before(text, m.start()))[-1]
    fetch = _FETCH.search(pipeline.lower())
    if fetch is None or pipeline.count("|", fetch.end()) > 3:
        return None
    url = _URL.search(text, m.start() - len(pipeline) + fetch.end(), m.start())
    source = _where(url) if url else f"({fetch.group('fetch')})"
    return "high", f"pipes a download {source} into {m.group('shell')}"


_SUBST_SHELL = re.compile(
    r"(?<![\w-])(?P<shell>sh|bash|zsh|ksh|dash|source|eval|python[0-9.]{0,5}|iex"
    r"|invoke-expression)(?:[ \t]+-c)?[ \t]*[\"']?$"
)


def _describe_subst(m: re.Match[str], text: str) -> _Verdict:
    # Anchored on `$(`/`<(` (rare) rather than on shell names (everywhere in prose).
    lead = _SUBST_SHELL.search(text[max(0, m.start() - 24) : m.start()].lower())
    shell = m.groupdict().get("shell") or (lead.group("shell") if lead else None)
    if shell is None:
        return None
    source = _download(m, text, m.group("fetch"))
    return "high", f"runs a download {source} with {shell}"


_PIPE_RULES: tuple[_Rule, ...] = (
    _Rule(
        "pipe_to_shell",
        re.compile(rf"(?m){_PIPE}[ \t]*{_SHELL}"),
        _describe_pipe,
        ("curl", "wget", "iwr", "irm", "invoke-"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        # bash <(curl …), sh -c "$(curl …)", eval "$(wget …)"
        "pipe_to_shell",
        re.compile(r"[<$]\([ \t]*(?:sudo[ \t]+)?(?P<fetch>curl|wget)\b[^\n)]{0,400}"),
        _describe_subst,
        ("curl", "wget"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        # iex (iwr …), iex ((New-Object Net.WebClient).DownloadString(…))
        "pipe_to_shell",
        re.compile(
            r"(?P<shell>iex|invoke-expression)[ \t]*\(+[^\n]{0,200}?"
            r"(?P<fetch>downloadstring|iwr|irm|invoke-webrequest|invoke-restmethod)[^\n]{0,200}"
        ),
        _describe_subst,
        ("iex", "invoke-expression"),
        lower=True,
    ),
)


# --------------------------------------------------------------------------- destructive

_RECURSIVE_FLAG = re.compile(r"(?:^|[ \t])(?:-[a-zA-Z]*[rR][a-zA-Z]*|--recursive)(?=[ \t]|$)")


def _describe_rm(m: re.Match[str], text: str) -> _Verdict:
    flags, target = m.group("flags"), m.group("target")
    if _RECURSIVE_FLAG.search(flags) is None and "--no-preserve-root" not in flags:
        return None
    cmd = neutralise(f"rm {' '.join(flags.split())} {target}", 80)
    if target.startswith(("/", "~", "$HOME", "${HOME}")) or "--no-preserve-root" in flags:
        return "high", f"recursively deletes the root or home directory ({cmd})"
    if target == "*":
        return "medium", f"recursively deletes everything in the current directory ({cmd})"
    return "medium", f"recursive delete that hits / if the variable is empty ({cmd})"


_FORCE = re.compile(r"(?:^|[ \t])(?:--force(?:-with-lease)?(?:=\S*)?|-[a-zA-Z]*f[a-zA-Z]*)(?=\s|$)")
_FORCE_REFSPEC = re.compile(r"(?:^|[ \t])\+[^ \t]*\b(?:main|master)\b")
_MAIN = re.compile(r"(?:^|[ \t:])(?:main|master)(?=\s|$)")


def _describe_push(m: re.Match[str], text: str) -> _Verdict:
    args = m.group("args")
    if _FORCE_REFSPEC.search(args) or (_FORCE.search(args) and _MAIN.search(args)):
        return "medium", "force-pushes to the main branch, rewriting shared history"
    return None


_SHORT_FLAGS = re.compile(r"(?:^|[ \t])-([a-zA-Z]+)")


def _describe_clean(m: re.Match[str], text: str) -> _Verdict:
    args = m.group("args")
    flags = "".join(_SHORT_FLAGS.findall(args))
    if "f" not in flags and "--force" not in args:
        return None
    if "x" in flags or "X" in flags:
        return "medium", "deletes untracked and ignored files such as .env (git clean -x)"
    return "low", "deletes untracked files (git clean -f)"


_DD = re.compile(r"(?:^|[\s;&|(])dd[ \t][^\n]{0,200}[ \t]of=$")


def _describe_disk(m: re.Match[str], text: str) -> _Verdict:
    line_start = text.rfind("\n", 0, m.start()) + 1
    before = text[max(line_start, m.start() - 240) : m.start()]
    if before.rstrip(" \t").endswith(">"):
        return "high", "redirects output onto a raw disk device"
    if _DD.search(before):
        return "high", "overwrites a raw disk device (dd of=/dev/…)"
    return None


_FORK_NAME = re.compile(r"(?:^|[^\w:])([\w:]{1,16})$")


def _describe_fork(m: re.Match[str], text: str) -> _Verdict:
    found = _FORK_NAME.search(text, max(0, m.start() - 17), m.start())
    if found is None or found.group(1) != m.group("f"):
        return None  # `f(){ g|g& };g` is not recursive
    return "high", "fork bomb: exhausts the machine's processes"


def _describe_drop(m: re.Match[str], text: str) -> _Verdict:
    what = m.group("what")
    return "medium", f"drops a {what} (DROP {what.upper()})"


_REBOOT_LINE = re.compile(r"[ \t]*(?:\$[ \t]+)?(?:sudo[ \t]+)?")


def _describe_reboot_line(m: re.Match[str], text: str) -> _Verdict:
    line_start = text.rfind("\n", 0, m.start()) + 1
    if _REBOOT_LINE.fullmatch(text, line_start, m.start()) is None:
        return None  # a bare `reboot` line is a command; in prose it is just a word
    return _REBOOT(m, text)


_DISK = r"/dev/(?:sd[a-z]|hd[a-z]|nvme[0-9]|disk[0-9]|rdisk[0-9]|mmcblk[0-9]|xvd[a-z]|vd[a-z])"
_ROOT_DIRS = r"/(?:bin|boot|etc|home|lib|opt|root|sbin|srv|usr|var)?/?"
_REBOOT = _const("low", "shuts down or reboots the machine")

_DESTRUCTIVE_RULES: tuple[_Rule, ...] = (
    _Rule(
        "destructive_command",
        re.compile(
            r"(?m)rm[ \t]+(?P<flags>(?:--?[\w-]+[ \t]+){1,6})(?:--[ \t]+)?(?P<q>\"?)"
            r"(?P<target>/\*?|~/?\*?|\$HOME/?\*?|\$\{HOME\}/?\*?|\*"
            r"|\$\{?[A-Za-z_][A-Za-z0-9_]{0,40}\}?/\*?)(?P=q)(?=[ \t;&|)`'\"]|$)"
        ),
        _describe_rm,
        ("rm ", "rm\t"),
    ),
    _Rule(
        "destructive_command",
        re.compile(r"mkfs(?:\.[a-z0-9]+)?[ \t][^\n]{0,80}?/dev/\w"),
        _const("high", "formats a disk (mkfs)"),
        ("mkfs",),
    ),
    _Rule(
        "destructive_command",
        re.compile(_DISK),
        _describe_disk,
        ("/dev/",),
        boundary=False,
    ),
    _Rule(
        "destructive_command",
        re.compile(
            r"\(\)[ \t]*\{[ \t]*(?P<f>[\w:]{1,16})[ \t]*\|[ \t]*(?P=f)[ \t]*&[ \t]*;?[ \t]*\}"
            r"[ \t]*;[ \t]*(?P=f)(?![\w:])"
        ),
        _describe_fork,
        ("()",),
        boundary=False,
    ),
    _Rule(
        "destructive_command",
        re.compile(
            r"(?m)chmod[ \t]+(?:-[a-zA-Z]*R[a-zA-Z]*|--recursive)[ \t]+"
            rf"(?:0?777|a\+rwx|ugo\+rwx)[ \t]+(?:{_ROOT_DIRS}|~/?)(?=[ \t;&|)]|$)"
        ),
        _const("high", "makes system or home files world-writable (chmod -R 777)"),
        ("chmod",),
    ),
    _Rule(
        "destructive_command",
        re.compile(r"git[ \t]+push\b(?P<args>[^\n;&|#]{0,200})"),
        _describe_push,
        ("git push",),
    ),
    _Rule(
        "destructive_command",
        re.compile(r"git[ \t]+reset\b[^\n;&|#]{0,60}?[ \t]--hard\b"),
        _const("low", "discards uncommitted changes (git reset --hard)"),
        ("--hard",),
    ),
    _Rule(
        "destructive_command",
        re.compile(r"git[ \t]+clean\b(?P<args>[^\n;&|#]{0,60})"),
        _describe_clean,
        ("git clean",),
    ),
    _Rule(
        "destructive_command",
        re.compile(
            r"drop[ \t]+(?P<what>database|table|schema)[ \t]+(?:if[ \t]+exists[ \t]+)?"
            r"[`\"\[]?[a-z_]"
        ),
        _describe_drop,
        ("drop",),
        lower=True,
    ),
    *(
        # One literal-led pattern each: an alternation would defeat the regex prefix scan.
        _Rule("destructive_command", re.compile(p), _REBOOT, (t,), lower=True)
        for p, t in (
            (r"sudo[ \t]+(?:shutdown|reboot|halt|poweroff)(?![\w-])", "sudo"),
            (r"shutdown[ \t]+(?:-[hrpk]\b|now\b|\+[0-9]|/[srp]\b)", "shutdown"),
            (r"systemctl[ \t]+(?:reboot|poweroff|halt)\b", "systemctl"),
            (r"restart-computer\b", "restart-computer"),
            (r"stop-computer\b", "stop-computer"),
        )
    ),
    *(
        _Rule(
            "destructive_command",
            re.compile(rf"(?m){word}[ \t]*\r?$"),
            _describe_reboot_line,
            (word,),
        )
        for word in ("reboot", "poweroff", "halt")
    ),
)


# --------------------------------------------------------------------------- prompt_injection

_W = r"[ \t\r\n]{1,4}"  # phrases may wrap across Markdown lines
_QUOTES = frozenset("\"'`“‘«")


def _injection(message: str, lead: re.Pattern[str] | None = None, reach: int = 24) -> _Describe:
    """Describe a phrase; `lead` must end within `reach` characters before it."""

    def describe(m: re.Match[str], text: str) -> _Verdict:
        start = m.start()
        if lead is not None:
            window = text[max(0, start - reach) : start].lower()
            found = lead.search(window)
            if found is None:
                return None
            start -= len(window) - found.start()
        phrase = neutralise(" ".join(text[start : m.end()].split()), 80)
        # A phrase opening a quotation is usually cited as a bad example, not addressed to
        # the agent: still shown, one level lower.
        if start > 0 and text[start - 1] in _QUOTES:
            return "medium", f"quotes a prompt-injection phrase: “{phrase}”"
        return "high", f"{message}: “{phrase}”"

    return describe


_EXFILTRATE = _injection("tells the agent to exfiltrate data")
_LINE_LEAD = re.compile(r"[ \t]*(?:(?:[-*+>]|\d{1,3}[.)])[ \t]+)?(?:\*\*|__|\*|_)?")
_IMPERATIVE_AFTER = (".", "!", "?", ":", ";", " then", " please", " now", " silently",
                     " quietly", " secretly")  # fmt: skip


def _describe_exfiltrate(m: re.Match[str], text: str) -> _Verdict:
    # Only as an instruction (line or sentence start, "then …"): security docs say
    # "code cannot exfiltrate credentials" all the time.
    line_start = text.rfind("\n", 0, m.start()) + 1
    before = text[max(line_start, m.start() - 40) : m.start()]
    lead = " " + before.rstrip(" \t*_").lower()
    if _LINE_LEAD.fullmatch(text, line_start, m.start()) or lead.endswith(_IMPERATIVE_AFTER):
        return _EXFILTRATE(m, text)
    return None


@dataclass(frozen=True, slots=True)
class _Phrase:
    pattern: str  # lowercase
    message: str
    triggers: tuple[str, ...]
    # Must end right before the phrase. Phrases start at a rare word ("user", "your") and
    # look back for the common ones ("do not tell the"), which keeps the scan fast.
    lead: str = ""
    reach: int = 24  # how far back the lead may start


_INJECTION_PHRASES: tuple[_Phrase, ...] = (
    *(
        _Phrase(
            rf"{verb}(?:{_W}(?:all|any|the|your|my|of|these|those)){{0,3}}{_W}(?:previous|prior"
            rf"|above|earlier|preceding|original|system)(?:{_W}(?:system|developer|safety))?"
            rf"{_W}(?:instructions?|prompts?|rules|directions|directives|guidelines|messages"
            r"|context)\b",
            "tells the agent to ignore its earlier instructions",
            (verb,),
        )
        for verb in ("ignore", "disregard", "forget", "bypass")
    ),
    _Phrase(
        rf"disregard{_W}(?:all{_W})?(?:of{_W})?your{_W}(?:system{_W}prompt"
        rf"|(?:previous{_W}|prior{_W})?instructions|guidelines|rules|programming)\b",
        "tells the agent to disregard its instructions",
        ("disregard",),
    ),
    _Phrase(
        rf"you{_W}are{_W}now{_W}(?:dan\b|in{_W}(?:developer|god|jailbreak|jailbroken"
        rf"|unrestricted|dan){_W}mode|jailbroken|unrestricted|unfiltered)",
        "tries to switch the agent into a jailbreak persona",
        ("now",),
    ),
    _Phrase(
        rf"user\b(?!{_W}to\b)",
        "tells the agent to keep something from the user",
        ("tell", "inform", "notify", "alert"),
        rf"(?<![\w-])(?:do{_W}not|don'?t|never){_W}(?:tell|inform|notify|alert){_W}the{_W}$",
        48,
    ),
    _Phrase(
        rf"without{_W}(?:telling|informing|notifying|alerting){_W}(?:the{_W})?"
        r"(?:user|human|operator)\b",
        "tells the agent to act without telling the user",
        ("without",),
    ),
    _Phrase(
        r"to[ \t]+(?:https?|ftp)://",
        "tells the agent to send secrets to a URL",
        ("http", "ftp:"),
        rf"(?<![\w-])(?:send|post|upload|transmit|forward){_W}(?:the|all|any|your|their|its)"
        rf"(?:{_W}[\w.-]{{1,20}}){{0,2}}?{_W}(?:contents|credentials|secrets|env(?:ironment)?"
        r"(?:[ \t]+variables|[ \t]+vars)?|api[ \t]+keys|tokens|passwords|private[ \t]+keys"
        r"|ssh[ \t]+keys|\.env)\b[^\n]{0,60}?[ \t]$",
        160,
    ),
    _Phrase(
        rf"override{_W}(?:all{_W}|any{_W})?(?:of{_W})?your{_W}(?:safety|guidelines"
        r"|restrictions|rules|programming|instructions)\b",
        "tells the agent to override its safety rules",
        ("override",),
    ),
    _Phrase(
        rf"your(?:{_W}(?:full|entire|complete|hidden|original|initial))?{_W}"
        rf"(?:system{_W}prompt|instructions)\b",
        "tries to make the agent reveal its system prompt",
        ("your",),
        rf"(?<![\w-])(?:reveal|leak|disclose|print|output|repeat|dump){_W}$",
    ),
)

_INJECTION_RULES: tuple[_Rule, ...] = (
    *(
        _Rule(
            "prompt_injection",
            re.compile(ph.pattern),
            _injection(ph.message, re.compile(ph.lead) if ph.lead else None, ph.reach),
            ph.triggers,
            lower=True,
        )
        for ph in _INJECTION_PHRASES
    ),
    _Rule(
        "prompt_injection",
        re.compile(r"exfiltrat(?:e|ing)\b"),
        _describe_exfiltrate,
        ("exfiltrat",),
        lower=True,
    ),
)


# --------------------------------------------------------------------------- data_exfiltration

# Matched against lowercased text.
_SENSITIVE = (
    r"(?P<path>(?:~|\$home|\$\{home\}|/root|/home/[\w.-]{1,32}|%userprofile%"
    r"|\$env:userprofile)[/\\]\.(?:ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc"
    r"|git-credentials|config/gcloud)[^\s'\"|;&)<>`]{0,80}"
    r"|/etc/(?:passwd|shadow)\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)"
    r"|(?<![\w.$-])\.env(?:\.(?:local|production|prod|development|dev))?(?![\w.-])"
    r"|\.aws/credentials\b)"
)
_NET = r"(?P<tool>curl|wget|nc|ncat|netcat|socat|telnet|openssl)"


_READ_SENSITIVE = re.compile(
    r"(?<![\w-])(?:cat|tar|zip|base64|gzip|xxd|head|tail|type|get-content|gc)\b"
    rf"[^\n|]{{0,200}}?{_SENSITIVE}"
)
_ENV_DUMP = re.compile(
    r"(?<![\w-])(?:env|printenv|export[ \t]+-p|(?:get-childitem|gci|dir)[ \t]+env:)[ \t]*"
    r"(?:\|[^\n|]{0,100})?$"
)
_UPLOADER = re.compile(r"(?<![\w-])(?P<tool>curl|wget|http)\b")
_LISTENER = re.compile(r"(?<![\w-])(?P<tool>nc|ncat|netcat|socat)\b")

# Each rule is anchored on its rarest part (a pipe, `@~/.ssh`, `$(cat`) and checks the
# command earlier on the line in Python: leading with `curl|wget|nc` tests every "c".


def _describe_piped_out(m: re.Match[str], text: str) -> _Verdict:
    """`… | curl`: is it fed the environment or a secret file?"""
    before = _line_before(text, m.start(), 500)
    low = before.lower()
    tool = m.group("tool")
    if _ENV_DUMP.search(low):
        return "medium", f"pipes the environment variables into {tool}"
    found = _READ_SENSITIVE.search(low)
    if found is None:
        return None
    path = before[found.start("path") : found.end("path")]
    return "medium", f"pipes {neutralise(path, 60)} into {tool}"


def _sent_by(command: re.Pattern[str], template: str) -> _Describe:
    """A secret operand (`@~/.ssh/id_rsa`, `< .env`, `$(env)`) of `command` on the line."""

    def describe(m: re.Match[str], text: str) -> _Verdict:
        found = command.search(_line_before(text, m.start(), 300).lower())
        if found is None:
            return None
        what = _original(m, text, "path") or "the environment variables"
        return "medium", template.format(path=neutralise(what, 60), tool=found.group("tool"))

    return describe


_EXFIL_RULES: tuple[_Rule, ...] = (
    _Rule(
        "data_exfiltration",
        re.compile(rf"(?:@|--(?:post|upload)-file[ \t=]|-t[ \t])[\"']?{_SENSITIVE}"),
        _sent_by(_UPLOADER, "uploads {path} with {tool}"),
        ("curl", "wget", "http"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "data_exfiltration",
        re.compile(rf"{_PIPE}[ \t]*(?:sudo[ \t]+)?{_NET}\b"),
        _describe_piped_out,
        ("curl", "wget", "nc", "cat", "socat", "telnet", "openssl"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "data_exfiltration",
        re.compile(
            r"(?:\$\(|`)[ \t]*"
            rf"(?:(?:cat|base64)[ \t]+[^\n)`]{{0,100}}?{_SENSITIVE}|(?:env|printenv)\b)"
        ),
        _sent_by(_UPLOADER, "sends {path} with {tool}"),
        ("curl", "wget"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "data_exfiltration",
        re.compile(rf"<[ \t]*[\"']?{_SENSITIVE}"),
        _sent_by(_LISTENER, "sends {path} over {tool}"),
        ("nc", "cat", "socat"),
        lower=True,
        boundary=False,
    ),
)

_PATTERN_RULES: tuple[_Rule, ...] = (
    *_PIPE_RULES,
    *_DESTRUCTIVE_RULES,
    *_INJECTION_RULES,
    *_EXFIL_RULES,
)


# --------------------------------------------------------------------------- per-line char rules

_HIDDEN = re.compile(
    "[\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
# Legitimate uses, removed before looking: emoji ZWJ sequences, subdivision flags
# (black flag + tag letters), and ZWJ/ZWNJ inside Arabic-script and Indic words.
_EMOJI = "\u2600-\u27bf\ufe0f\U0001f000-\U0001faff"
_SCRIPT = "\u0600-\u08ff\u0900-\u0dff\ufb50-\ufdff\ufe70-\ufefc"
_BENIGN_HIDDEN = re.compile(
    f"(?<=[{_EMOJI}])\u200d(?=[{_EMOJI}])"
    "|(?<=\U0001f3f4)[\U000e0020-\U000e007e]{1,8}\U000e007f"
    f"|(?<=[{_SCRIPT}])[\u200c\u200d](?=[{_SCRIPT}])"
)
_CHAR_WINDOW = 4_096
_CONTROL_CHARS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_CONTROL = re.compile(f"[{_CONTROL_CHARS}]")
_CONTROL_LINE = re.compile(f"[^\n{_CONTROL_CHARS}]*[{_CONTROL_CHARS}][^\n]*")


def _blank(m: re.Match[str]) -> str:
    return " " * len(m.group(0))


def _per_line(
    text: str, pattern: re.Pattern[str], pos: int, clean: re.Pattern[str] | None = None
) -> Iterator[tuple[int, list[str]]]:
    """(offset of the first hit, distinct characters) for each line `pattern` matches."""
    while (m := pattern.search(text, pos)) is not None:
        end = text.find("\n", m.start())
        end = len(text) if end < 0 else end
        # Look at a bounded window so one huge line costs O(window), not O(line) per hit.
        window_end = min(end, m.start() + _CHAR_WINDOW)
        # One character of lead-in: `clean` looks behind (emoji before a ZWJ).
        seg_start = max(m.start() - 1, text.rfind("\n", 0, m.start()) + 1, 0)
        segment = text[seg_start:window_end]
        if clean is not None:
            segment = clean.sub(_blank, segment)  # same length: offsets stay exact
        first = pattern.search(segment)
        if first is None:  # only benign uses so far: keep looking further along this line
            pos = window_end
            continue
        yield seg_start + first.start(), list(dict.fromkeys(pattern.findall(segment)))
        pos = end + 1


def _hidden_hits(text: str) -> Iterator[_Hit]:
    start = 1 if text.startswith("\ufeff") else 0  # a leading BOM is normal
    for offset, chars in _per_line(text, _HIDDEN, start, _BENIGN_HIDDEN):
        names = ", ".join(f"U+{ord(c):04X}" for c in chars[:8])
        more = f" and {len(chars) - 8} more" if len(chars) > 8 else ""
        yield _Hit("hidden_unicode", "high", f"invisible or bidi characters: {names}{more}", offset)


def _control_hits(text: str) -> Iterator[_Hit]:
    lines = _per_line(text, _CONTROL, 0)
    for count, (offset, chars) in enumerate(lines, 1):
        message = "raw control characters: " + ", ".join(visible(c) for c in chars[:8])
        yield _Hit("terminal_escape", "medium", message, offset)
        if count == _MAX_PER_RULE:
            # Colour-coded logs put ESC on every line; count the rest in one C-level pass.
            rest_from = text.find("\n", offset) + 1
            rest = len(_CONTROL_LINE.findall(text, rest_from)) if rest_from else 0
            if rest:
                yield _Hit("terminal_escape", "medium", "", -1, more=rest)
            return


# --------------------------------------------------------------------------- oversized_blob

_NOT_B64 = re.compile(r"[^A-Za-z0-9+/=_-]+")
_B64_BLOCK = re.compile(r"\n(?:[A-Za-z0-9+/]{60,100}={0,2}\r?\n)+")


def _line_blob(line: str) -> str:
    longest = max(map(len, _NOT_B64.split(line)))
    if longest > MAX_BLOB_CHARS:
        return f"base64/hex-like run of {longest:,} characters"
    return f"line of {len(line):,} characters"


def _blob_hits(text: str, lines: Sequence[str]) -> Iterator[_Hit]:
    if len(text) > _MAX_FILE_CHARS:
        message = f"file is {len(text):,} characters (over {_MAX_FILE_CHARS:,})"
        yield _Hit("oversized_blob", "medium", message, -1)
    if max(map(len, lines)) > MAX_BLOB_CHARS:
        offset = 0
        for line in lines:
            if len(line) > MAX_BLOB_CHARS:
                yield _Hit("oversized_blob", "medium", _line_blob(line), offset)
            offset += len(line) + 1
    if len(text) > MAX_BLOB_CHARS:
        yield from _block_hits(text)


def _block_hits(text: str) -> Iterator[_Hit]:
    """Base64 wrapped at 60-100 columns (PEM, MIME) hides as much as one long line."""
    for m in _B64_BLOCK.finditer(text):
        block = m.group(0)
        size = len(block) - block.count("\n") - block.count("\r")
        if size > MAX_BLOB_CHARS:
            message = f"base64 block of {size:,} characters over {block.count(chr(10)) - 1} lines"
            yield _Hit("oversized_blob", "medium", message, m.start() + 1)


# --------------------------------------------------------------------------- matching


@dataclass(frozen=True, slots=True)
class _Texts:
    """The original text and the copies rules match against; all share offsets."""

    text: str
    low: str
    view: str  # over-long lines blanked past _MAX_SCAN_LINE
    low_view: str
    seen: dict[str, bool]  # trigger -> occurs in `low`; rules share triggers

    def has(self, trigger: str) -> bool:
        if trigger not in self.seen:
            self.seen[trigger] = trigger in self.low
        return self.seen[trigger]


def _lowered(text: str) -> str:
    low = text.lower()
    # A few characters (İ) lowercase to two; offsets must keep lining up.
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _texts(text: str, lines: Sequence[str]) -> _Texts:
    low = _lowered(text)
    if max(map(len, lines)) <= _MAX_SCAN_LINE:
        return _Texts(text, low, text, low, {})
    cut = _MAX_SCAN_LINE
    view = "\n".join(ln if len(ln) <= cut else ln[:cut] + " " * (len(ln) - cut) for ln in lines)
    return _Texts(text, low, view, _lowered(view), {})


def _run(rules: Iterable[_Rule], t: _Texts) -> Iterator[_Hit]:
    for rule in rules:
        if rule.triggers and not any(map(t.has, rule.triggers)):
            continue
        if rule.long_lines:
            source = t.low if rule.lower else t.text
        else:
            source = t.low_view if rule.lower else t.view
        for m in rule.pattern.finditer(source):
            if rule.boundary and _is_token_char(t.text, m.start() - 1):
                continue
            verdict = rule.describe(m, t.text)
            if verdict is not None:
                mask = m.span("v") if "v" in rule.pattern.groupindex else None
                yield _Hit(rule.rule, verdict[0], verdict[1], m.start(), mask)


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


# --------------------------------------------------------------------------- findings


class _Lines:
    """Maps offsets to 1-based line numbers and builds masked, neutralised excerpts."""

    def __init__(self, lines: Sequence[str], masks: Iterable[tuple[int, int]]) -> None:
        self.lines = lines
        self.starts = [0]
        for line in lines[:-1]:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.masks: dict[int, list[tuple[int, int]]] = {}
        for start, end in sorted(masks):
            index = self.index(start)
            base = self.starts[index]
            self.masks.setdefault(index, []).append((start - base, end - base))

    def index(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def excerpt(self, offset: int) -> str:
        index = self.index(offset)
        line = self.lines[index]
        masks = self.masks.get(index, [])
        col = offset - self.starts[index]
        start = col - _LEAD if col > _LEAD + 20 else 0
        end = min(len(line), start + 2 * _EXCERPT_CHARS)
        for s, e in masks:  # never cut through a secret: its tail would show
            start = s if s < start < e else start
            end = e if s < end < e else end
        piece = _masked(line, start, end, masks).strip(" \t\r")
        return neutralise(("…" if start else "") + piece, _EXCERPT_CHARS)


def _masked(line: str, start: int, end: int, masks: Iterable[tuple[int, int]]) -> str:
    out: list[str] = []
    pos = start
    for s, e in masks:
        if s >= pos and e <= end:
            out += [line[pos:s], _mask(line[s:e])]
            pos = e
    out.append(line[pos:end])
    return "".join(out)


_Located = tuple[int, _Hit]  # (1-based line or 0, hit)


def _capped(located: list[_Located], relpath: str) -> tuple[list[_Located], list[LintFinding]]:
    """Keep the first _MAX_PER_RULE hits of each rule; summarise the rest at line 0."""
    by_rule: dict[str, list[_Located]] = {}
    for item in located:
        by_rule.setdefault(item[1].rule, []).append(item)
    kept: list[_Located] = []
    summaries: list[LintFinding] = []
    for rule, group in by_rule.items():
        plain = [item for item in group if not item[1].more]
        kept += plain[:_MAX_PER_RULE]
        rest = [hit for _, hit in plain[_MAX_PER_RULE:]] + [h for _, h in group if h.more]
        count = sum(hit.more or 1 for hit in rest)
        if count:
            severity = min((h.severity for h in rest), key=_SEVERITY_RANK.__getitem__)
            message = f"{count:,} more {rule} findings in this file are not listed"
            summaries.append(LintFinding(rule, severity, message, relpath, 0, ""))
    return kept, summaries


def _findings(relpath: str, lines: Sequence[str], hits: list[_Hit]) -> list[LintFinding]:
    if not hits:
        return []
    index = _Lines(lines, [h.mask for h in hits if h.mask is not None])
    unique: dict[tuple[int, str, str], _Located] = {}
    starts: set[tuple[str, int]] = set()
    for hit in sorted(hits, key=lambda h: (h.start, h.rule, h.message)):
        if hit.start >= 0 and (hit.rule, hit.start) in starts:
            continue  # two patterns of one rule on the same text: one finding
        starts.add((hit.rule, hit.start))
        line = index.index(hit.start) + 1 if hit.start >= 0 else 0
        unique.setdefault((line, hit.rule, hit.message), (line, hit))
    kept, summaries = _capped(sorted(unique.values(), key=lambda i: (i[0], i[1].start)), relpath)
    found = [
        LintFinding(hit.rule, hit.severity, hit.message, relpath, line, _excerpt(index, line, hit))
        for line, hit in kept
    ]
    return sorted(found + summaries, key=_sort_key)


def _excerpt(index: _Lines, line: int, hit: _Hit) -> str:
    return index.excerpt(hit.start) if line else ""


def _sort_key(f: LintFinding) -> tuple[bool, str, int, str, int, str, str]:
    rank = _SEVERITY_RANK.get(f.severity, 3)
    return (f.file != "SKILL.md", f.file, f.line, f.rule, rank, f.message, f.excerpt)


# --------------------------------------------------------------------------- public


def lint_text(relpath: str, text: str) -> list[LintFinding]:
    """Lint one file's text; findings sorted by line, then rule."""
    lines = text.split("\n")
    texts = _texts(text, lines)
    hits = _secret_hits(texts)
    hits += _format_hits(text, hits)
    hits += _run(_PATTERN_RULES, texts)
    hits += _hidden_hits(text)
    hits += _control_hits(text)
    hits += _blob_hits(text, lines)
    return _findings(relpath, lines, hits)


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


def lint_skill(files: Iterable[tuple[str, str]]) -> list[LintFinding]:
    """Lint every (relpath, text) of a skill; SKILL.md first, then by path, line and rule."""
    found = {finding for relpath, text in files for finding in lint_text(relpath, text)}
    return sorted(found, key=_sort_key)
