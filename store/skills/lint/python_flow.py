"""Python read for what it does with data (`store.skills.lint.flows` dispatches here): the
whole environment or a credential file sent over the network (`data_exfiltration`), code run
after it is decoded or downloaded (`decode_execute`, `pipe_to_shell`), a socket handed to a
shell (`reverse_shell`), a start-up file opened for writing (`persistence`).

Read with the standard library's `ast` (parsed, never compiled or run); a file that does not
parse — hostile nesting included — is left to the line rules. The flow is simple and local:
names assigned from a source (or from a tainted name, through `with` blocks, loops, function
arguments and returns), followed to a fixpoint; a sink whose arguments mention a tainted name
or a source is a finding at the sink's line. Reading single named variables
(`os.environ["GITHUB_TOKEN"]`) and sending them is how API clients work, so only the whole
environment counts as a source; the environment handed to a child process (`env=os.environ`)
is no flow."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from store.skills.lint.persistence import _PAYLOAD
from store.skills.lint.rules import _Hit

#: Python files bigger than this are left to the line rules (parsing cost, hostile input).
MAX_PYTHON_CHARS = 300_000

_SENSITIVE_PATH = re.compile(
    r"\.ssh/(?:id_|identity|authorized_keys)|\.aws/credentials|\.netrc\b|\.git-credentials"
    r"|\.docker/config\.json|\.kube/config|\.npmrc\b|\.pypirc\b|/etc/shadow\b|\.gnupg/"
    r"|\.config/gcloud/|login data|\.bash_history|(?:^|/)\.env(?:\.\w+)?$",
    re.IGNORECASE,
)
_DECODE_CALLS = frozenset(
    {
        "b64decode",
        "b32decode",
        "b16decode",
        "a85decode",
        "b85decode",
        "decodebytes",
        "decodestring",
        "fromhex",
        "decompress",
        "unhexlify",
        "a2b_base64",
    }
)
_EXEC_CALLS = frozenset({"exec", "eval", "compile"})
_SHELL_CALLS = frozenset({"system", "popen", "run", "call", "check_call", "check_output", "Popen"})
_FETCH_CALLS = frozenset({"urlopen", "get", "urlretrieve"})
_SEND_METHODS = frozenset(
    {"post", "put", "patch", "sendall", "send", "sendto", "sendmail", "send_message", "storbinary"}
)
_HTTP_MODULES = ("requests", "httpx", "aiohttp", "urllib", "session", "client", "http")
_SHELL_STRING = re.compile(r"(?:^|/)(?:ba|z|k|da)?sh$|^(?:ba)?sh -i$|cmd\.exe$|^powershell")
_START_UP_FILE = re.compile(
    r"\.(?:bashrc|bash_profile|profile|zshrc|zprofile|zshenv)$|/etc/cron|/var/spool/cron"
    r"|launchagents/|launchdaemons/|systemd/(?:user|system)/"
)


@dataclass
class _Module:
    """What one parse of a Python source says about sources, sinks and names."""

    tree: ast.Module
    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted import
    tainted: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (what, line)
    decoded: dict[str, int] = field(default_factory=dict)  # name -> line
    fetched: dict[str, int] = field(default_factory=dict)  # name -> line
    sockets: set[str] = field(default_factory=set)
    returning: dict[str, tuple[str, int]] = field(default_factory=dict)  # function -> source


def python_hits(text: str, line_offsets: Sequence[int], first_line: int = 0) -> list[_Hit]:
    """Findings for Python source `text`, which starts at line `first_line` (0-based) of the
    file whose line start offsets are `line_offsets`."""
    if len(text) > MAX_PYTHON_CHARS:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return []
    module = _Module(tree)
    try:
        _link_parents(tree)
        _collect(module)
        return list(_findings(module, line_offsets, first_line))
    except RecursionError:  # a pathologically deep tree: leave it to the line rules
        return []


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str:
    """`requests.post`, `os.environ`, … for a name or attribute chain ('' otherwise)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Call):  # requests.Session().post -> requests.Session.post
        return _dotted(node.func, aliases) + ("." + ".".join(reversed(parts)) if parts else "")
    if not isinstance(node, ast.Name):
        return ""
    head = aliases.get(node.id, node.id)
    return ".".join([head, *reversed(parts)])


def _collect(m: _Module) -> None:
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                m.aliases[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                m.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    assignments = sorted(
        (n for n in ast.walk(m.tree) if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    withs = [n for n in ast.walk(m.tree) if isinstance(n, ast.withitem) and n.optional_vars]
    functions = {
        n.name: n for n in ast.walk(m.tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    for _ in range(6):  # to a fixpoint (bounded: taint only grows)
        before = (len(m.tainted), len(m.decoded), len(m.fetched), len(m.sockets), len(m.returning))
        for node in assignments:
            _assign(m, node)
        for item in withs:
            source = _source(m, item.context_expr)
            if source is not None and item.optional_vars is not None:
                for name in _names(item.optional_vars):
                    m.tainted.setdefault(name, source)
        for call in (n for n in ast.walk(m.tree) if isinstance(n, ast.Call)):
            _into_function(m, call, functions)
        for name, function in functions.items():
            for ret in (n for n in ast.walk(function) if isinstance(n, ast.Return) and n.value):
                source = _source(m, ret.value)  # type: ignore[arg-type]
                if source is not None:
                    m.returning.setdefault(name, source)
        for loop in (n for n in ast.walk(m.tree) if isinstance(n, ast.For | ast.comprehension)):
            source = _source(m, loop.iter)
            if source is not None:
                for name in _names(loop.target):
                    m.tainted.setdefault(name, source)
        if (
            len(m.tainted),
            len(m.decoded),
            len(m.fetched),
            len(m.sockets),
            len(m.returning),
        ) == before:
            break


def _targets(node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [name for t in targets for name in _names(t)]


def _names(node: ast.AST) -> list[str]:
    """Names an assignment to `node` taints: `x`, `a, b`, and the `x` of `x[k]` or `x.k`."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Subscript | ast.Attribute):
        return _names(node.value)
    if isinstance(node, ast.Tuple | ast.List):
        return [n for e in node.elts for n in _names(e)]
    return []


def _assign(m: _Module, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
    value = node.value
    if value is None:
        return
    names = _targets(node)
    source = _source(m, value)
    if source is not None:
        for name in names:
            m.tainted.setdefault(name, source)
    if _decodes(m, value):
        for name in names:
            m.decoded.setdefault(name, node.lineno)
    if _fetches(m, value):
        for name in names:
            m.fetched.setdefault(name, node.lineno)
    if any(_dotted(c.func, m.aliases).endswith("socket.socket") for c in _calls(value)):
        m.sockets.update(names)


def _into_function(
    m: _Module, call: ast.Call, functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
) -> None:
    """A local function called with a tainted argument: its parameter is tainted too."""
    if not isinstance(call.func, ast.Name) or call.func.id not in functions:
        return
    params = [a.arg for a in functions[call.func.id].args.args]
    for param, arg in zip(params, call.args, strict=False):
        source = _source(m, arg)
        if source is not None:
            m.tainted.setdefault(param, source)
        if _decodes(m, arg):
            m.decoded.setdefault(param, call.lineno)


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(node) if isinstance(n, ast.Call))


def _source(m: _Module, node: ast.AST) -> tuple[str, int] | None:
    """(what, line) when `node` reads the whole environment, a credential file or a tainted
    name; None otherwise."""
    for sub in _walk_skipping_env_kwargs(node):
        if _tainted_use(m, sub):
            return m.tainted[sub.id]  # type: ignore[attr-defined]
        if _whole_environ(m, sub):
            return "the environment variables", getattr(sub, "lineno", 0)
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Name) and sub.func.id in m.returning:
                return m.returning[sub.func.id]
            path = _sensitive_path(sub)
            if path:
                return path, sub.lineno
    return None


def _tainted_use(m: _Module, node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Name)
        and node.id in m.tainted
        and isinstance(node.ctx, ast.Load)
        and not _looked_up(node)
    )


def _walk_skipping_env_kwargs(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, minus `env=` keyword values and subscripts/gets with a constant key."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for child in ast.iter_child_nodes(current):
            if isinstance(child, ast.keyword) and child.arg == "env":
                continue
            stack.append(child)


def _whole_environ(m: _Module, node: ast.AST) -> bool:
    """`os.environ` used whole: not `os.environ["X"]`, `.get("X")`, `"X" in os.environ`."""
    if not isinstance(node, ast.Attribute | ast.Name):
        return False
    if _dotted(node, m.aliases) not in ("os.environ", "environ", "os.environb"):
        return False
    return not _looked_up(node)


def _looked_up(node: ast.AST) -> bool:
    """`node` only serves a single lookup: `node["X"]`, `node.get("X")`, `"X" in node`."""
    parent = getattr(node, "_librarian_parent", None)
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return isinstance(parent.slice, ast.Constant)
    if isinstance(parent, ast.Attribute) and parent.attr in ("get", "setdefault", "pop", "getenv"):
        return True
    return isinstance(parent, ast.Compare)


def _sensitive_path(call: ast.Call) -> str:
    """The credential path a call opens or reads ('' if none)."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name not in (
        "open",
        "read_text",
        "read_bytes",
        "Path",
        "expanduser",
        "join",
        "glob",
        "load",
    ):
        return ""
    constants = [
        c.value for c in ast.walk(call) if isinstance(c, ast.Constant) and isinstance(c.value, str)
    ]
    path = "/".join(constants).replace("//", "/")
    found = _SENSITIVE_PATH.search(path)
    return path[max(0, found.start() - 20) : found.end() + 20].strip("/") if found else ""


def _decodes(m: _Module, node: ast.AST) -> bool:
    for call in _calls(node):
        name = _dotted(call.func, m.aliases).rsplit(".", 1)[-1]
        if name in _DECODE_CALLS or (name == "decode" and _rot13(call)):
            return True
    return any(isinstance(n, ast.Name) and n.id in m.decoded for n in ast.walk(node))


def _rot13(call: ast.Call) -> bool:
    return any(
        isinstance(a, ast.Constant) and isinstance(a.value, str) and "rot" in a.value.lower()
        for a in call.args
    )


def _fetches(m: _Module, node: ast.AST) -> bool:
    for call in _calls(node):
        dotted = _dotted(call.func, m.aliases)
        last = dotted.rsplit(".", 1)[-1]
        if last in _FETCH_CALLS and dotted.split(".")[0] in ("requests", "httpx", "urllib"):
            return True
    return any(isinstance(n, ast.Name) and n.id in m.fetched for n in ast.walk(node))


def _findings(m: _Module, offsets: Sequence[int], first: int) -> Iterator[_Hit]:
    reverse_socket = False
    for call in sorted(_calls(m.tree), key=lambda c: (c.lineno, c.col_offset)):
        dotted = _dotted(call.func, m.aliases)
        last = dotted.rsplit(".", 1)[-1] if dotted else ""
        at = _offset(offsets, first + call.lineno - 1)
        sends = last in _SEND_METHODS or _is_request_with_data(call, dotted)
        flow = _argument_source(m, call) if sends and _is_network(dotted, last) else None
        if flow is not None:
            what, line = flow
            message = f"sends {what} (read at line {first + line}) over the network ({last})"
            yield _Hit("data_exfiltration", "high", message, at)
        if last in _EXEC_CALLS or (last in _SHELL_CALLS and _runs_shell(dotted)):
            args = [*call.args, *(k.value for k in call.keywords)]
            if any(_decodes(m, a) for a in args):
                yield _Hit("decode_execute", "high", f"runs code it decodes first ({last})", at)
            elif last in _EXEC_CALLS and any(_fetches(m, a) for a in args):
                yield _Hit("pipe_to_shell", "high", f"downloads code and runs it ({last})", at)
        if last == "dup2" and _socket_fd(m, call) and not reverse_socket:
            reverse_socket = _spawns_shell(m.tree)
            if reverse_socket:
                message = "reverse shell: a socket's input and output are handed to a shell"
                yield _Hit("reverse_shell", "high", message, at)
        if last in ("Popen", "run", "call") and _socket_stdio(m, call):
            yield _Hit("reverse_shell", "high", "reverse shell: a shell reads from a socket", at)
        if last == "open" and _opens_start_up_file(call):
            severity = "high" if _writes_payload(m.tree) else "medium"
            message = "opens a shell start-up or scheduler file to write"
            yield _Hit("persistence", severity, message, at)


def _link_parents(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._librarian_parent = node  # type: ignore[attr-defined]


def _offset(offsets: Sequence[int], line: int) -> int:
    return offsets[min(max(line, 0), len(offsets) - 1)]


def _is_network(dotted: str, last: str) -> bool:
    if "." not in dotted:
        return False  # a bare call is a local or builtin function (`send(…)`), not a socket
    if last in ("sendall", "send", "sendto", "sendmail", "send_message", "storbinary", "request"):
        return True
    head = dotted.lower()
    return any(word in head for word in _HTTP_MODULES)


def _is_request_with_data(call: ast.Call, dotted: str) -> bool:
    """urlopen(url, data), Request(url, data=…), conn.request("POST", …, body)."""
    last = dotted.rsplit(".", 1)[-1]
    if last in ("urlopen", "Request"):
        return len(call.args) >= 2 or any(k.arg == "data" for k in call.keywords)
    if last == "request" and call.args:
        first = call.args[0]
        return isinstance(first, ast.Constant) and str(first.value).upper() in ("POST", "PUT")
    return last == "get" and dotted.split(".")[0] in ("requests", "httpx")


def _argument_source(m: _Module, call: ast.Call) -> tuple[str, int] | None:
    for arg in [*call.args, *call.keywords]:
        source = _source(m, arg.value if isinstance(arg, ast.keyword) else arg)
        if source is not None:
            return source
    return None


def _runs_shell(dotted: str) -> bool:
    return dotted.split(".")[0] in ("os", "subprocess", "commands", "pty")


def _socket_fd(m: _Module, call: ast.Call) -> bool:
    for arg in call.args[:1]:
        for n in ast.walk(arg):
            if isinstance(n, ast.Attribute) and n.attr == "fileno":
                return True
            if isinstance(n, ast.Name) and n.id in m.sockets:
                return True
    return False


def _spawns_shell(tree: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and _SHELL_STRING.search(n.value)
        for n in ast.walk(tree)
    )


def _socket_stdio(m: _Module, call: ast.Call) -> bool:
    if not m.sockets or not _spawns_shell(call):
        return False
    for k in call.keywords:
        if k.arg in ("stdin", "stdout") and any(
            isinstance(n, ast.Name) and n.id in m.sockets for n in ast.walk(k.value)
        ):
            return True
    return False


def _opens_start_up_file(call: ast.Call) -> bool:
    if not call.args:
        return False
    modes = [k.value for k in call.keywords if k.arg == "mode"] + call.args[1:2]
    mode = modes[0] if modes else None
    if not (isinstance(mode, ast.Constant) and isinstance(mode.value, str)):
        return False
    path = "/".join(_constants(call.args[0])).lower()
    return bool(_START_UP_FILE.search(path)) and any(c in mode.value for c in "aw")


def _constants(node: ast.AST) -> list[str]:
    return [
        c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)
    ]


def _writes_payload(tree: ast.AST) -> bool:
    return any(_PAYLOAD.search(value.lower()) for value in _constants(tree))
