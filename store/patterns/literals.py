"""The write gate's first check: what in a draft is true only of the sessions it came from.

Ticket ids, dates, commit SHAs, absolute paths and home folders, host names and addresses,
user names, port numbers, e-mail addresses and tokens (what redaction already masked) are
found in a draft's prose — its description and its body up to the evidence — and become
named parameters (`{host}`, `{project_root}`, `{commit}`, …) with a short "Parameters" section
that says what each stands for. The literal text is kept beside the draft, so the reviewer
sees every replacement in the draft's diff and can keep a literal on purpose (it is then left
as it was). Detection is by rules, deterministic, never by guessing at ordinary words: a bare
word is only a user or host name when the sessions' own paths or commands say it is one.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from store.models.governance import Replacement
from store.models.patterns import Draft

#: What each parameter stands for, by kind (the Parameters section).
MEANING = {
    "project_root": "the root folder of the repository you work in",
    "home": "your home folder",
    "path": "an absolute path on your machine",
    "user": "your user name on the machine",
    "host": "the host you work against (a server, cluster or service address)",
    "port": "the port the service listens on",
    "commit": "the commit in question",
    "ticket": "the ticket or issue in question",
    "date": "the date in question",
    "email": "an e-mail address",
    "token": "a credential: pass it in from your secret store, never write it down",
}
#: Parameter name per kind (the first of each kind; then `_2`, `_3`, …).
NAMES = {k: k for k in MEANING}
#: Top-level names that only exist inside a network: a host under one is always transient.
INTERNAL_TLDS = frozenset({"internal", "local", "lan", "corp", "intra", "private", "svc", "home"})
#: Top-level domains a public host name may end in (others are file names: `values.yaml`).
PUBLIC_TLDS = frozenset(
    {"com", "net", "org", "io", "dev", "cloud", "app", "ai", "co", "us", "eu", "uk", "de",
     "fr", "nl", "ch", "se", "no", "fi", "jp", "in", "biz", "info", "tech"}
)  # fmt: skip
#: A label that says a public host is one environment's machine, not a durable name.
_ENVIRONMENT = re.compile(
    r"(?i)^(?:.*\d.*|staging|stage|stg|prod|production|preprod|dev|test|qa|uat|sandbox|"
    r"internal|int|local|corp|canary|blue|green|eu-west-\d|us-east-\d)$"
)
#: Public hosts whose name teaches something (documentation, package registries): kept.
PUBLIC_HOSTS = frozenset(
    {
        "github.com",
        "gitlab.com",
        "pypi.org",
        "npmjs.com",
        "registry.npmjs.org",
        "docs.python.org",
        "docs.github.com",
        "developer.mozilla.org",
        "stackoverflow.com",
        "kubernetes.io",
        "postgresql.org",
        "www.postgresql.org",
        "example.com",
        "example.org",
    }
)
#: Ticket-like words that name a standard, not a ticket.
NOT_TICKETS = frozenset(
    {"UTF", "SHA", "ISO", "RFC", "CVE", "HTTP", "TLS", "SSL", "AES", "RSA", "PEP", "ES",
     "ECMA", "IPV", "MD", "TS", "X", "CP", "WIN", "K", "P", "S", "E", "W", "C", "GPT"}
)  # fmt: skip

_TOKEN = re.compile(r"\[REDACTED(?::[^\]\s]{1,16})?\]")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
_HOME = re.compile(
    r"(?<![\w.~/-])(?:/home|/Users|/root(?=/|\b))(?:/(?P<user>[A-Za-z0-9._-]{1,32}))?"
)
_WINHOME = re.compile(r"(?i)\b[A-Z]:\\Users\\(?P<user>[A-Za-z0-9._-]{1,32})")
_ABSPATH = re.compile(r"(?<![\w.~/:-])/(?:[\w.@+-]+/)+[\w.@+-]+")
_SYSTEM = (
    "/dev/", "/etc/", "/usr/", "/bin/", "/sbin/", "/lib/", "/proc/", "/sys/", "/opt/",
    "/var/lib/", "/var/log/", "/var/run/", "/run/",
)  # fmt: skip
_URL_HOST = re.compile(
    r"(?i)\b(?:https?|postgres(?:ql)?|redis|mysql|amqp|grpc|wss?)://"
    r"(?:[^\s/@]+@)?(?P<host>[A-Za-z0-9.-]+)(?::(?P<port>\d{2,5}))?"
)
_FQDN = re.compile(
    r"(?i)(?<![\w@./-])(?P<host>(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,12})"
    r"(?::(?P<port>\d{2,5}))?(?![\w-])"
)
_IP = re.compile(r"(?<![\w.])(?P<host>(?:\d{1,3}\.){3}\d{1,3})(?::(?P<port>\d{2,5}))?(?![\w.])")
_LOCAL_PORT = re.compile(r"(?i)\blocalhost:(?P<port>\d{2,5})\b")
_PORT_WORD = re.compile(r"(?i)(?:--port[= ]|\bport\s+|-p\s+)(?P<port>\d{2,5})\b")
_HOST_FLAG = re.compile(r"(?:--host[= ]|\bhost[= ]|-h\s+)(?P<host>[A-Za-z][\w.-]{1,62}\w)\b")
_SHA = re.compile(r"(?<![\w-])(?P<sha>[0-9a-f]{7,40})(?![\w-])")
_SHA_CONTEXT = re.compile(r"(?i)\b(commit|sha|revision|rev|cherry-pick|checkout|revert|bisect)")
_TICKET = re.compile(
    r"(?<![\w-])(?P<ticket>[A-Z][A-Z0-9]{1,9}-\d{1,6})(?![\w-])"
    r"|(?i:\b(?:issue|ticket|pr|pull request|bug|incident)\s+)(?P<ref>#\d{2,7})\b"
)
_DATE = re.compile(
    r"(?<![\w-])(?P<date>(?:19|20)\d\d-[01]\d-[0-3]\d(?:[T ][0-2]\d:[0-5]\d(?::[0-5]\d(?:\.\d+)?)?"
    r"(?:Z|[+-][0-2]\d:?[0-5]\d)?)?|[0-3]?\d/[01]?\d/(?:19|20)\d\d)(?![\w-])"
)


@dataclass
class Known:
    """What the sessions say about the machine: project roots (from `cwd`), user names (from
    home folders in those roots)."""

    project_roots: tuple[str, ...] = ()
    users: tuple[str, ...] = ()

    @classmethod
    def from_projects(cls, projects: Iterable[str]) -> Known:
        roots = sorted({p.rstrip("/") for p in projects if p.startswith("/") and p.count("/") > 1})
        users = sorted(
            {m["user"] for r in roots if (m := _HOME.match(r)) is not None and m["user"]}
        )
        return cls(tuple(sorted(roots, key=len, reverse=True)), tuple(users))


@dataclass
class Parameterizer:
    """Finds transient literals and names them; the same literal always gets one name."""

    known: Known = field(default_factory=Known)
    keep: frozenset[str] = frozenset()
    found: dict[str, tuple[str, str]] = field(default_factory=dict)  # literal -> (kind, name)
    counts: dict[str, int] = field(default_factory=dict)

    def find(self, text: str) -> None:
        """Record the transient literals of `text` (longest, most specific first)."""
        for literal, kind in self._literals(text):
            if literal not in self.found:
                self.found[literal] = (kind, self._name(kind))
            self.counts[literal] = self.counts.get(literal, 0) + 1

    def apply(self, text: str) -> str:
        """`text` with every recorded literal not kept replaced by its `{name}`, wherever it
        stands alone (a port inside a longer number, a user name outside `user@`, stay)."""
        for literal in sorted(self.found, key=len, reverse=True):
            if literal in self.keep:
                continue
            kind, name = self.found[literal]
            edge_before = r"(?<![\w.-])" if literal[:1].isalnum() else ""
            edge_after = (
                r"(?=@)" if kind == "user" else (r"(?![\w-])" if literal[-1:].isalnum() else "")
            )
            # Parameter names are [a-z0-9_]: nothing in "{name}" is special to `re.sub`.
            text = re.sub(edge_before + re.escape(literal) + edge_after, "{" + name + "}", text)
        return text

    def replacements(self) -> list[Replacement]:
        """Every literal found, in order of its parameter name."""
        return sorted(
            (
                Replacement(
                    parameter="{" + name + "}",
                    kind=kind,
                    literal=literal,
                    count=self.counts.get(literal, 0),
                    meaning=MEANING[kind],
                    kept=literal in self.keep,
                )
                for literal, (kind, name) in self.found.items()
            ),
            key=lambda r: (_order(r.parameter), r.literal),
        )

    def _name(self, kind: str) -> str:
        base = NAMES[kind]
        taken = {name for k, name in self.found.values() if k == kind}
        if base not in taken:
            return base
        number = 2
        while f"{base}_{number}" in taken:
            number += 1
        return f"{base}_{number}"

    def _literals(self, text: str) -> list[tuple[str, str]]:
        spans: list[tuple[int, int, str, str]] = []  # (start, end, literal, kind)

        def add(start: int, end: int, kind: str) -> None:
            if end > start and not any(s < end and start < e for s, e, _, _ in spans):
                spans.append((start, end, text[start:end], kind))

        for m in _TOKEN.finditer(text):
            add(m.start(), m.end(), "token")
        for m in _EMAIL.finditer(text):
            add(m.start(), m.end(), "email")
        for root in self.known.project_roots:
            for m in re.finditer(re.escape(root) + r"(?![\w.-])", text):
                add(m.start(), m.end(), "project_root")
        for m in _HOME.finditer(text):
            add(m.start(), m.end(), "home")
        for m in _WINHOME.finditer(text):
            add(m.start(), m.end(), "home")
        for m in _ABSPATH.finditer(text):
            if not m.group(0).startswith(_SYSTEM) and m.group(0).count("/") >= 3:
                add(m.start(), m.end(), "path")
        for pattern in (_URL_HOST, _FQDN, _IP):
            for m in pattern.finditer(text):
                host = m.group("host").rstrip(".")
                if _transient_host(host, url=pattern is _URL_HOST):
                    add(m.start("host"), m.start("host") + len(host), "host")
                if m.group("port"):
                    add(m.start("port"), m.end("port"), "port")
        for pattern in (_LOCAL_PORT, _PORT_WORD):
            for m in pattern.finditer(text):
                add(m.start("port"), m.end("port"), "port")
        for m in _HOST_FLAG.finditer(text):
            add(m.start("host"), m.end("host"), "host")
        for user in self.known.users:
            for m in re.finditer(rf"(?<![\w.-]){re.escape(user)}@", text):
                add(m.start(), m.end() - 1, "user")
        for m in _SHA.finditer(text):
            sha = m.group("sha")
            has_both = any(c.isdigit() for c in sha) and any(c.isalpha() for c in sha)
            near = _SHA_CONTEXT.search(text[max(0, m.start() - 40) : m.start()])
            if has_both and (near or len(sha) >= 12):
                add(m.start(), m.end(), "commit")
        for m in _TICKET.finditer(text):
            if m.group("ticket"):
                if m.group("ticket").split("-")[0] not in NOT_TICKETS:
                    add(m.start("ticket"), m.end("ticket"), "ticket")
            else:
                add(m.start("ref"), m.end("ref"), "ticket")
        for m in _DATE.finditer(text):
            add(m.start(), m.end(), "date")
        return [(literal, kind) for _, _, literal, kind in sorted(spans)]


def _order(parameter: str) -> tuple[str, int]:
    """`{host}` before `{host_2}` before `{host_10}`."""
    base, _, number = parameter.strip("{}").rpartition("_")
    if base and number.isdigit():
        return base, int(number)
    return parameter.strip("{}"), 1


def _transient_host(host: str, *, url: bool) -> bool:
    """An internal host, an IP address, or a public name of one environment's machine (a
    host in a URL is one whatever its name, unless it is a well-known public one)."""
    lowered = host.lower()
    if lowered in PUBLIC_HOSTS or _is_version(host) or lowered == "localhost":
        return False
    labels = lowered.split(".")
    if all(p.isdigit() for p in labels):
        return len(labels) == 4  # an IPv4 address
    if len(labels) < 2:
        return url
    tld = labels[-1]
    if tld in INTERNAL_TLDS or lowered.endswith(".cluster.local"):
        return True
    if tld not in PUBLIC_TLDS:
        return False  # a file name (values.yaml, app.py) or a module path
    return url or any(_ENVIRONMENT.match(label) for label in labels[:-2])


def _is_version(host: str) -> bool:
    """`1.2.3`-like strings the IP or host rules would catch."""
    parts = host.split(".")
    return all(p.isdigit() for p in parts) and (len(parts) != 4 or any(int(p) > 255 for p in parts))


# -- a drafted SKILL.md ---------------------------------------------------------------------

EVIDENCE = "\n## Evidence\n"
PARAMETERS = "## Parameters"


def prose(text: str) -> tuple[str, str, str, str]:
    """(frontmatter up to the description, the description value, the rest of the frontmatter
    and the body up to the evidence, the evidence) of a drafted SKILL.md."""
    head, sep, rest = text.partition('\ndescription: "')
    if not sep:
        return text, "", "", ""
    raw, _, after = rest.partition("\n")
    description = json.loads('"' + raw)
    body, ev, evidence = after.partition(EVIDENCE)
    return head, description, body, ev + evidence


def parameterize(
    literal: str, known: Known, keep: Iterable[str] = (), found: Sequence[Replacement] = ()
) -> tuple[str, list[Replacement]]:
    """A drafted SKILL.md with its transient literals replaced (those in `keep` left as
    they are) and a Parameters section before the evidence; and every replacement. `found`:
    literals found before (a revision keeps the draft's own list)."""
    head, description, body, evidence = prose(literal)
    if not description:
        return literal, []
    finder = Parameterizer(known, frozenset(keep))
    if found:
        for r in found:
            finder.found[r.literal] = (r.kind, r.parameter.strip("{}"))
            finder.counts[r.literal] = r.count
    else:
        finder.find(description)
        finder.find(body)
    replacements = finder.replacements()
    new_description = finder.apply(description)
    new_body = finder.apply(body).rstrip("\n") + "\n"
    used = [r for r in replacements if not r.kept]
    if used:
        new_body += "\n" + section(used)
    text = (
        head
        + "\ndescription: "
        + json.dumps(new_description, ensure_ascii=False)
        + "\n"
        + new_body
        + evidence
    )
    return text, replacements


def section(used: Sequence[Replacement]) -> str:
    """The Parameters section: one line per parameter, never the literal it replaced."""
    lines = [
        PARAMETERS,
        "",
        "Fill these in for your own work: they stood for values that were true only of the"
        " sessions this skill was learned from.",
        "",
    ]
    seen: set[str] = set()
    for r in used:
        if r.parameter not in seen:
            seen.add(r.parameter)
            lines.append(f"- `{r.parameter}`: {r.meaning}")
    return "\n".join(lines) + "\n"


def draft_diff(draft: Draft) -> str:
    """The draft against its literal text: every replacement (and the Parameters section)."""
    lines = difflib.unified_diff(
        draft.literal.splitlines(),
        draft.content.splitlines(),
        fromfile=f"{draft.name} (as learned)",
        tofile=f"{draft.name} (with parameters)",
        lineterm="",
    )
    return "\n".join(lines)
