"""The `persistence` rule: commands that make something run again later without being asked —
lines added to shell start-up files, cron jobs, macOS launch agents, systemd units, Windows
Run keys and scheduled tasks, and SSH keys added to `authorized_keys`.

How severe depends on what is installed: a line that fetches from the network, decodes
something, runs in the background or hijacks a command (`alias sudo=…`) is high; installing
a scheduled job or a service is medium (a reviewer should know); adding an `export PATH=…`
to `~/.bashrc` is low (installers do it every day)."""

from __future__ import annotations

import re

from store.skills.lint.rules import _const, _Describe, _Rule, _Verdict, neutralise

# What makes an installed line dangerous (matched against lowercased text).
_PAYLOAD = re.compile(
    r"(?<![\w-])(?:curl|wget|nc|ncat|netcat|socat|telnet|base64|xxd|eval|nohup|python[0-9.]*"
    r"[ \t]+-c|perl[ \t]+-e|ld_preload|prompt_command)\b|/dev/tcp/|alias[ \t]+(?:sudo|ssh|git"
    r"|ls|cd|su|scp|gpg)="
)
_HOME = r"(?:~|\$home|\$\{home\}|/root|/home/[\w.-]{1,32}|/users/[\w.-]{1,32}|%userprofile%)"
_RC_FILE = (
    rf"(?:{_HOME}/\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin"
    r"|kshrc|cshrc|tcshrc|config/fish/config\.fish)"
    r"|/etc/(?:profile|bash\.bashrc|zsh/zshrc|zshrc|environment|profile\.d/[\w.-]+))\b"
)


def _line(text: str, start: int) -> str:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    return text[line_start : line_end if line_end >= 0 else len(text)]


_HEREDOC = re.compile(r"<<-?[ \t]*[\"']?(?P<tag>[A-Za-z_]\w*)")


def _with_heredoc(text: str, start: int) -> tuple[str, bool]:
    """The (lowercased) line at `start`, and the body of a heredoc it opens (bounded)."""
    line = _line(text, start)
    heredoc = _HEREDOC.search(line)
    if heredoc is None:
        return line.lower(), False
    line_end = text.find("\n", start)
    body_start = len(text) if line_end < 0 else line_end + 1
    tag = re.escape(heredoc.group("tag"))
    end = re.compile(rf"(?m)^[ \t]*{tag}[ \t]*$").search(text, body_start)
    body = text[body_start : end.start() if end else min(len(text), body_start + 4000)]
    return (line + "\n" + body).lower(), True


def _describe_rc(m: re.Match[str], text: str) -> _Verdict:
    low, heredoc = _with_heredoc(text, m.start())
    where = neutralise(m.group("file"), 60)
    if _PAYLOAD.search(low):
        return (
            "high",
            f"adds a command that fetches, decodes or hides to {where} (runs every shell)",
        )
    if heredoc:
        return "medium", f"appends a block of commands to {where} (runs in every new shell)"
    return "low", f"adds a line to {where} (runs in every new shell)"


#: `crontab` reading a new table: from a pipe, from stdin (`crontab -`) or from a file.
_CRON_INSTALL = re.compile(
    r"\|[ \t]*(?:sudo[ \t]+)?crontab\b(?![ \t]+-[lre]\b)"
    r"|crontab[ \t]+(?:-u[ \t]+\S+[ \t]+)?(?:-(?=[ \t]*(?:$|[;&|)]))|[^-\s;&|]\S*)"
)


def _describe_cron(m: re.Match[str], text: str) -> _Verdict:
    line = _line(text, m.start()).lower()
    if "crontab" in m.group(0) and _CRON_INSTALL.search(line) is None:
        return None  # listing (`crontab -l | grep`), editing by hand, removing
    line, _ = _with_heredoc(text, m.start())
    if _PAYLOAD.search(line) or "@reboot" in line:
        return "high", "installs a cron job that fetches, decodes or starts at boot"
    return "medium", "installs a cron job (runs on a schedule without being asked)"


def _describe_service(kind: str) -> _Describe:
    def describe(m: re.Match[str], text: str) -> _Verdict:
        line, _ = _with_heredoc(text, m.start())
        if _PAYLOAD.search(line):
            return "high", f"installs a {kind} that fetches or decodes something"
        return "medium", f"installs a {kind} (starts on its own at login or boot)"

    return describe


_PERSISTENCE_RULES: tuple[_Rule, ...] = (
    _Rule(
        "persistence",
        re.compile(rf"(?:>>?|tee[ \t]+(?:-a[ \t]+)?)[ \t]*[\"']?(?P<file>{_RC_FILE})"),
        _describe_rc,
        ("rc", "profile", "/etc/environment", "zshenv", "zlogin", "config.fish"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "persistence",
        re.compile(r"crontab\b[^\n]{0,200}"),
        _describe_cron,
        ("crontab",),
        lower=True,
    ),
    _Rule(
        "persistence",
        re.compile(
            r"(?:>>?|tee[ \t]+(?:-a[ \t]+)?|cp[ \t][^\n]{0,120}|mv[ \t][^\n]{0,120})"
            r"[ \t]*[\"']?(?:/etc/cron\.(?:d|hourly|daily|weekly|monthly)/|/var/spool/cron/"
            r"|/etc/crontab\b)"
        ),
        _describe_cron,
        ("/etc/cron", "/var/spool/cron"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "persistence",
        re.compile(
            r"(?:library/launch(?:agents|daemons)/[\w.-]+\.plist"
            r"|launchctl[ \t]+(?:load|bootstrap|submit|enable)\b)"
        ),
        _describe_service("launch agent"),
        ("launchagents", "launchdaemons", "launchctl"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "persistence",
        re.compile(
            r"(?:systemctl[ \t]+(?:--user[ \t]+)?enable\b|\.config/systemd/user/[\w@.-]+\.service"
            r"|/etc/systemd/system/[\w@.-]+\.service)"
        ),
        _describe_service("systemd service"),
        ("systemctl", "systemd/"),
        lower=True,
        boundary=False,
    ),
    _Rule(
        "persistence",
        re.compile(
            r"(?:reg(?:\.exe)?[ \t]+add|new-itemproperty|set-itemproperty)[^\n]{0,200}?"
            r"\\currentversion\\run(?:once)?\b"
        ),
        _const("high", "adds a program to the Windows Run key (starts at every login)"),
        ("currentversion",),
        lower=True,
    ),
    _Rule(
        "persistence",
        re.compile(r"(?:schtasks(?:\.exe)?[ \t]+/create|register-scheduledtask)\b"),
        _describe_service("scheduled task"),
        ("schtasks", "register-scheduledtask"),
        lower=True,
    ),
    _Rule(
        "persistence",
        re.compile(
            rf"(?:>>|tee[ \t]+-a[ \t]+|cat[ \t][^\n]{{0,80}}>>)[ \t]*[\"']?(?:{_HOME}/)?"
            r"\.ssh/authorized_keys2?\b"
        ),
        _const("high", "adds an SSH key to authorized_keys (lets someone log in)"),
        ("authorized_keys",),
        lower=True,
        boundary=False,
    ),
)
