"""Who is acting: config, else git's user, else the OS user."""

from __future__ import annotations

import getpass
import shutil
import subprocess


def git_identity() -> str:
    git = shutil.which("git")
    if git is None:
        return ""
    values = []
    for key in ("user.name", "user.email"):
        try:
            out = subprocess.run(
                [git, "config", "--get", key],
                capture_output=True,
                text=True,
                timeout=2,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return ""
        values.append(out.stdout.strip())
    name, email = values
    if name and email:
        return f"{name} <{email}>"
    return name or email


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def resolve_actor(name: str = "", email: str = "") -> str:
    if name and email:
        return f"{name} <{email}>"
    if name or email:
        return name or email
    return git_identity() or os_user()
