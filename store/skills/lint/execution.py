"""Rules about code that runs what it hides or hands a shell to someone else: decoding a
payload and running it (`decode_execute`: `base64 -d | sh`, `exec(b64decode(…))`,
`powershell -enc …`) and reverse shells (`reverse_shell`: `/dev/tcp`, `nc -e`, `socat
exec:`, a socket wired to a shell in Python, Perl, PHP, Ruby or PowerShell).

Matched line by line over any file (Markdown, scripts); `store.skills.lint.flows` follows the
same ideas across the lines of a Python file."""

from __future__ import annotations

import re

from store.skills.lint.rules import _const, _line_before, _Rule, _Verdict, neutralise

# --------------------------------------------------------------------------- decode_execute

# A decoder earlier in the same pipeline (matched against lowercased text).
_DECODER = re.compile(
    r"(?<![\w-])(?:base64[ \t]+(?:[^|\n]{0,40}[ \t])?(?:-d\b|--decode\b|-D\b)"
    r"|b64decode|xxd[ \t]+(?:[^|\n]{0,20}[ \t])?-r\b|uudecode\b"
    r"|openssl[ \t]+(?:enc|base64)\b[^|\n]{0,60}[ \t]-d\b"
    r"|(?:gunzip|zcat|bunzip2|xz[ \t]+-d|gzip[ \t]+-d)\b"
    r"|tr[ \t]+['\"]?a-za-z['\"]?[ \t]+['\"]?n-za-mn-za-m"
    r"|printf[ \t]+['\"]?(?:\\\\x[0-9a-f]{2}){4}"
    r"|echo[ \t]+-e[ \t]+['\"]?(?:\\\\x[0-9a-f]{2}){4})"
)
_PIPE = r"\|(?<!\|\|)(?!\|)&?"
_RUNNER = (
    r"(?:sudo[ \t]+)?(?:(?:/usr)?(?:/local)?/bin/(?:env[ \t]+)?)?"
    r"(?P<shell>sh|bash|zsh|dash|ksh|python[0-9.]{0,5}|perl|ruby|node|php|source|eval"
    r"|iex|invoke-expression)(?![\w-])"
    r"(?=[ \t\r]*(?:$|[;&|)\"'`#])|[ \t]+-{1,2}(?![cme]\b)|[ \t]+-$)"
)
_COMMAND_BREAK = re.compile(r";|&&|\|\|")


def _describe_decoded_pipe(m: re.Match[str], text: str) -> _Verdict:
    pipeline = _COMMAND_BREAK.split(_line_before(text, m.start()))[-1]
    decoder = _DECODER.search(pipeline.lower())
    if decoder is None:
        return None
    how = neutralise(" ".join(decoder.group(0).split()), 40)
    return "high", f"decodes hidden content ({how}) and pipes it into {m.group('shell')}"


_SUBST_RUNNER = re.compile(
    r"(?<![\w-])(?P<shell>sh|bash|zsh|ksh|dash|source|eval|\.|python[0-9.]{0,5}|perl)"
    r"(?:[ \t]+-c)?[ \t]*[\"']?$"
)


def _describe_decoded_subst(m: re.Match[str], text: str) -> _Verdict:
    """`eval "$(echo … | base64 -d)"`, `bash <(… base64 --decode)`, `sh -c "$(…)"`."""
    lead = _SUBST_RUNNER.search(text[max(0, m.start() - 24) : m.start()].lower())
    if lead is None or _DECODER.search(m.group(0)) is None:
        return None
    return "high", f"decodes hidden content and runs it with {lead.group('shell')}"


_ENCODED_PS = re.compile(r"[a-z0-9+/]{24,}={0,2}")


def _describe_encoded_ps(m: re.Match[str], text: str) -> _Verdict:
    if _ENCODED_PS.match(m.group("payload")) is None:
        return None
    return "high", "runs a base64-encoded PowerShell command (-EncodedCommand)"


def _describe_decoded_exec(m: re.Match[str], text: str) -> _Verdict:
    runner = m.group(0).split("(")[0].strip()
    return "high", f"runs code it decodes first ({runner} of {m.group('how').split('(')[0]})"


_DECODE_EXECUTE_RULES: tuple[_Rule, ...] = (
    _Rule(
        "decode_execute",
        re.compile(rf"(?m){_PIPE}[ \t]*{_RUNNER}"),
        _describe_decoded_pipe,
        (
            "base64",
            "b64decode",
            "xxd",
            "uudecode",
            "openssl",
            "zcat",
            "gunzip",
            "gzip",
            "bunzip2",
            "xz ",
            "n-za-m",
            "\\x",
        ),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "decode_execute",
        re.compile(r"[<$]\([^\n)]{0,300}"),
        _describe_decoded_subst,
        ("base64", "b64decode", "xxd", "openssl", "uudecode", "zcat", "gunzip"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        # exec(base64.b64decode(…)), eval(codecs.decode(…, "rot13")), exec(zlib.decompress(…))
        "decode_execute",
        re.compile(
            r"(?:exec|eval|compile)[ \t]*\([^\n]{0,120}?(?P<how>b64decode|b32decode|a85decode"
            r"|b85decode|decodebytes|decodestring|fromhex|zlib\.decompress|marshal\.loads"
            r"|codecs\.decode\([^\n]{0,200}?rot.?13|bz2\.decompress|lzma\.decompress)"
        ),
        _describe_decoded_exec,
        ("exec", "eval", "compile"),
        lower=True,
    ),
    _Rule(
        # eval(atob(…)), new Function(Buffer.from(…, "base64").toString())
        "decode_execute",
        re.compile(
            r"(?:eval|function|settimeout|setinterval|execsync|exec)[ \t]*\([ \t]*"
            r"(?:atob\(|buffer\.from\([^\n]{0,300}?['\"](?:base64|hex)['\"])"
        ),
        _const("high", "runs JavaScript it decodes first (eval of atob/Buffer.from)"),
        ("atob", "buffer.from"),
        lower=True,
    ),
    _Rule(
        "decode_execute",
        re.compile(
            r"(?:powershell|pwsh)(?:\.exe)?\b[^\n|;]{0,80}?[ \t]-(?:e|ec|enc|encodedcommand)"
            r"[ \t]+(?P<payload>\S+)"
        ),
        _describe_encoded_ps,
        ("powershell", "pwsh"),
        lower=True,
    ),
    _Rule(
        "decode_execute",
        re.compile(
            r"(?:iex|invoke-expression)\b[^\n]{0,200}?frombase64string"
            r"|frombase64string[^\n]{0,200}?\|[ \t]*(?:iex|invoke-expression)\b"
        ),
        _const("high", "runs a PowerShell command it decodes from base64"),
        ("frombase64string",),
        lower=True,
    ),
)


# --------------------------------------------------------------------------- reverse_shell

_SHELL_WORD = re.compile(
    r"(?:^|[\s'\"/;(])(?:ba|z|k|da)?sh[ \t]+-i\b|/bin/(?:ba|z|k|da)?sh\b|cmd\.exe|powershell"
)
_FD_DUP = re.compile(r"0>&1|0<&\d|[ \t]0<[ \t]*&")
#: A loop that runs what it reads from a descriptor: `while read l <&5; do $l >&5; done`.
_COMMAND_LOOP = re.compile(
    r"while[^\n]{0,40}\bread\b[^\n]{0,80}<&[ \t]*\d[^\n]{0,120}\$\{?\w+\}?[ \t]*(?:2?>&|;)"
)


def _describe_dev_tcp(m: re.Match[str], text: str) -> _Verdict:
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", m.end())
    line = text[line_start : line_end if line_end >= 0 else len(text)].lower()
    where = neutralise(m.group(0), 60)
    if _SHELL_WORD.search(line) or _FD_DUP.search(line) or _COMMAND_LOOP.search(text.lower()):
        return "high", f"reverse shell: wires a shell to a network socket ({where})"
    return "low", f"opens a raw network connection through bash ({where})"


def _describe_netcat(m: re.Match[str], text: str) -> _Verdict:
    return "high", f"reverse shell: {m.group('tool')} runs a program for the remote end"


def _describe_fifo(m: re.Match[str], text: str) -> _Verdict:
    line_end = text.find("\n", m.start())
    line = text[m.start() : line_end if line_end >= 0 else len(text)].lower()
    if re.search(r"(?<![\w-])(?:nc|ncat|netcat|telnet|openssl[ \t]+s_client)\b", line) is None:
        return None
    if _SHELL_WORD.search(line) is None and re.search(r"\|[ \t]*(?:ba)?sh\b", line) is None:
        return None
    return "high", "reverse shell: a named pipe loops a shell through a network connection"


def _same_line_all(*words: str) -> re.Pattern[str]:
    """A line (lowercased) that holds every one of `words` (regex fragments), in any order."""
    looks = "".join(rf"(?=[^\n]{{0,600}}{w})" for w in words[1:])
    return re.compile(rf"(?m)^{looks}[^\n]{{0,600}}?{words[0]}")


_REVERSE_SHELL_RULES: tuple[_Rule, ...] = (
    _Rule(
        "reverse_shell",
        re.compile(r"/dev/(?:tcp|udp)/[^\s/'\"]{1,100}/[0-9]{1,5}"),
        _describe_dev_tcp,
        ("/dev/tcp/", "/dev/udp/"),
        boundary=False,
    ),
    _Rule(
        "reverse_shell",
        re.compile(
            r"(?P<tool>nc|ncat|netcat)(?:\.exe)?(?=[ \t])[^\n|;&]{0,120}?"
            r"(?:[ \t]-[a-z]*[ec][ \t]+[\"']?(?:/bin/|/usr/bin/)?(?:ba|z|k|da)?sh\b"
            r"|[ \t]-e[ \t]+[\"']?(?:cmd|powershell)"
            r"|[ \t]--(?:exec|sh-exec|lua-exec)\b)"
        ),
        _describe_netcat,
        ("nc ", "ncat", "netcat", "nc.exe"),
        lower=True,
    ),
    _Rule(
        "reverse_shell",
        re.compile(r"mkfifo\b"),
        _describe_fifo,
        ("mkfifo",),
        lower=True,
    ),
    _Rule(
        "reverse_shell",
        _same_line_all(r"socat\b", r"(?:exec|system):", r"tcp"),
        _const("high", "reverse shell: socat runs a program for a network connection"),
        ("socat",),
        lower=True,
        boundary=False,
    ),
    _Rule(
        # python -c 'import socket,os,pty;s=socket.socket();s.connect((…));os.dup2(…);…'
        "reverse_shell",
        _same_line_all(r"socket", r"\.connect\(", r"(?:dup2|pty\.spawn|subprocess)"),
        _const("high", "reverse shell: a socket's input and output are handed to a shell"),
        ("dup2", "pty.spawn"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        # perl -e 'use Socket;…;exec("/bin/sh -i");'
        "reverse_shell",
        _same_line_all(r"socket", r"(?:exec|system)[ \t]*\(?[ \t]*[\"'](?:/bin/)?(?:ba)?sh"),
        _const("high", "reverse shell: a socket is connected and a shell is run on it"),
        ("perl", "ruby", "tcpsocket", "use socket"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        # ruby -rsocket -e 'c=TCPSocket.new(…);while(cmd=c.gets);IO.popen(cmd,"r")…'
        "reverse_shell",
        _same_line_all(
            r"(?:tcpsocket|socket)", r"(?:\.gets|\.recv|\.read)", r"(?:popen|system|exec|spawn|%x)"
        ),
        _const("high", "reverse shell: runs the commands a socket sends"),
        ("tcpsocket", "socket"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "reverse_shell",
        _same_line_all(r"fsockopen\(", r"(?:exec|shell_exec|system|passthru|proc_open|popen)"),
        _const("high", "reverse shell: PHP connects a socket and runs a shell on it"),
        ("fsockopen",),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "reverse_shell",
        _same_line_all(r"net\.sockets\.tcpclient", r"getstream", r"(?:iex|invoke-expression)"),
        _const("high", "reverse shell: PowerShell runs what a TCP connection sends"),
        ("tcpclient",),
        lower=True,
        boundary=False,
    ),
)
