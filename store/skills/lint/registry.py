"""The `registry_redirect` rule: commands and config lines that send package installs to
another registry (npm, yarn, pnpm, pip, uv, poetry, gem, go, cargo, conda) or turn off the
checks that vouch for what is downloaded.

A registry the package manager uses by default (registry.npmjs.org, pypi.org, …) is no
finding. Any other is medium — a company mirror is legitimate, but a reviewer should know
where installs will come from — and high over plain http or to a bare IP address, where
anyone on the path can serve the packages. Turning checksum or TLS verification off is
medium."""

from __future__ import annotations

import re

from store.skills.lint.rules import _const, _Describe, _Rule, _Verdict, neutralise

OFFICIAL_HOSTS = frozenset(
    {
        "registry.npmjs.org",
        "registry.yarnpkg.com",
        "pypi.org",
        "pypi.python.org",
        "files.pythonhosted.org",
        "test.pypi.org",
        "proxy.golang.org",
        "sum.golang.org",
        "rubygems.org",
        "index.rubygems.org",
        "crates.io",
        "index.crates.io",
        "static.crates.io",
        "conda.anaconda.org",
        "repo.anaconda.com",
    }
)

_URL = re.compile(
    r"(?P<scheme>https?|git\+https?)://(?:[^\s'\"@/]{1,100}@)?(?P<host>[^\s'\":/]{1,200})"
)
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$|^\[?[0-9a-f:]+\]?$")


def _verdict(url_text: str, tool: str) -> _Verdict:
    url = _URL.search(url_text)
    if url is None:
        if url_text.strip().lower() in ("direct", "off"):
            return "medium", f"{tool}: fetches modules without the checksum proxy ({url_text})"
        return None
    host = url.group("host").lower()
    if host in OFFICIAL_HOSTS:
        return None
    where = neutralise(f"{url.group('scheme')}://{host}", 80)
    if url.group("scheme").endswith("http") or _IP.match(host):
        return "high", f"{tool}: installs packages from {where} (no TLS or a bare address)"
    return "medium", f"{tool}: installs packages from another registry ({where})"


_SCOPED = re.compile(r"@[\w.-]+:registry|--scope[ =]@")


def _describe(tool: str) -> _Describe:
    def describe(m: re.Match[str], text: str) -> _Verdict:
        verdict = _verdict(text[m.start("url") : m.end("url")], tool)
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)].lower()
        if verdict is not None and verdict[0] == "medium" and _SCOPED.search(line):
            # Only one @scope's packages come from there: no other install is redirected.
            return "low", verdict[1].replace("another registry", "a registry for one scope")
        return verdict

    return describe


_VALUE = r"[ \t]*=?[ \t]*[\"']?(?P<url>[^\s'\"]{1,300})"

_SPECS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (pattern on lowercased text, tool, triggers)
    (r"(?:npm|pnpm|yarn)[ \t]+(?:config[ \t]+)?set[ \t]+(?:@[\w.-]+:)?registry" + _VALUE, "npm",
     ("registry",)),
    (r"(?:npm|npx|pnpm|yarn)[ \t][^\n;&|]{0,200}?--registry" + _VALUE, "npm", ("--registry",)),
    (r"(?m)^[ \t]*(?:@[\w.-]+:)?registry[ \t]*=[ \t]*[\"']?(?P<url>[^\s'\"]{1,300})", ".npmrc",
     ("registry",)),
    (r"(?:echo|printf)[^\n]{0,40}[\"']?(?:@[\w.-]+:)?registry=(?P<url>[^\s'\"]{1,300})", ".npmrc",
     ("registry=",)),
    (r"(?:npmregistryserver|npm_config_registry|yarn_registry)" + _VALUE, "npm", ("registry",)),
    (r"pip3?[ \t]+config[ \t]+set[ \t]+\S*(?:index-url|extra-index-url)" + _VALUE, "pip",
     ("index-url",)),
    (r"(?:pip[0-9.]*|uv[ \t]+pip|pipx|poetry|uv)[ \t][^\n;&|]{0,200}?(?:--(?:extra-)?index-url|"
     r"--index|-i)[ \t]*=?[ \t]*[\"']?(?P<url>https?://[^\s'\"]{1,300})", "pip",
     ("index-url", "--index", "-i ")),
    (r"(?:pip_index_url|pip_extra_index_url|uv_index_url|uv_extra_index_url|uv_default_index"
     r"|poetry_repositories_\w+_url)" + _VALUE, "pip", ("index_url", "uv_default_index",
                                                         "poetry_repositories")),
    (r"(?:^|(?<=[\s'\"])|(?<=\\n))(?:extra-)?index-url[ \t]*=[ \t]*(?P<url>[^\s'\"\\]{1,300})",
     "pip.conf", ("index-url",)),
    (r"poetry[ \t]+source[ \t]+add[ \t]+(?:--\S+[ \t]+)*\S+[ \t]+(?P<url>\S{1,300})", "poetry",
     ("poetry",)),
    (r"gem[ \t]+sources?[ \t]+(?:--add|-a)[ \t]+(?P<url>\S{1,300})", "gem", ("gem",)),
    (r"bundle[ \t]+config[ \t]+(?:set[ \t]+)?(?:--global[ \t]+)?mirror\.\S+[ \t]+"
     r"(?P<url>\S{1,300})", "bundler", ("mirror.",)),
    (r"(?:go[ \t]+env[ \t]+-w[ \t]+)?goproxy[ \t]*=[ \t]*[\"']?(?P<url>[^\s'\",|]{1,300})", "go",
     ("goproxy",)),
    (r"conda[ \t]+config[ \t]+--(?:add|prepend|append)[ \t]+channels[ \t]+(?P<url>\S{1,300})",
     "conda", ("channels",)),
    (r"(?m)^[ \t]*registry[ \t]*=[ \t]*[\"'](?P<url>(?:sparse\+)?https?://[^\s'\"]{1,300})",
     "cargo", ("registry",)),
)  # fmt: skip

_NO_VERIFY = (
    (r"gosumdb[ \t]*=[ \t]*[\"']?off\b", "go: turns off the checksum database (GOSUMDB=off)",
     ("gosumdb",)),
    (r"(?:goinsecure|goflags[ \t]*=[ \t]*[\"']?-insecure)\b", "go: fetches modules without TLS",
     ("goinsecure", "-insecure")),
    (r"--trusted-host[ \t=]+\S+", "pip: trusts a host without TLS verification (--trusted-host)",
     ("--trusted-host",)),
    (r"(?:npm|yarn|pnpm)[ \t]+config[ \t]+set[ \t]+strict-ssl[ \t]+false\b",
     "npm: turns off TLS verification for the registry (strict-ssl false)", ("strict-ssl",)),
    (r"node_tls_reject_unauthorized[ \t]*=[ \t]*[\"']?0\b",
     "node: turns off TLS verification for every download (NODE_TLS_REJECT_UNAUTHORIZED=0)",
     ("node_tls_reject_unauthorized",)),
)  # fmt: skip

_REGISTRY_RULES: tuple[_Rule, ...] = (
    *(
        _Rule(
            "registry_redirect",
            re.compile(pattern),
            _describe(tool),
            triggers,
            lower=True,
            boundary=False,
        )
        for pattern, tool, triggers in _SPECS
    ),
    *(
        _Rule(
            "registry_redirect",
            re.compile(pattern),
            _const("medium", message),
            triggers,
            lower=True,
        )
        for pattern, message, triggers in _NO_VERIFY
    ),
)
