"""Rules about shell commands: piping a download into a shell (`pipe_to_shell`), commands that
wipe files, disks, history or databases (`destructive_command`) and commands that send local
secrets to a remote host (`data_exfiltration`)."""

from __future__ import annotations

import re

from store.skills.lint.rules import (
    _const,
    _Describe,
    _line_before,
    _original,
    _Rule,
    _Verdict,
    neutralise,
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


# --------------------------------------------------------------------------- data_exfiltration

# Matched against lowercased text.
_SENSITIVE = (
    r"(?P<path>(?:~|\$home|\$\{home\}|/root|/home/[\w.-]{1,32}|%userprofile%"
    r"|\$env:userprofile)[/\\]\.(?:ssh|aws|gnupg|kube|docker|netrc|npmrc|pypirc"
    r"|git-credentials|config/gcloud|bash_history|zsh_history)[^\s'\"|;&)<>`]{0,80}"
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
            rf"(?:(?:cat|base64|tail|head)[ \t]+[^\n)`]{{0,100}}?{_SENSITIVE}|(?:env|printenv)\b)"
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
