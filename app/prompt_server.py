"""The resident ranker behind the UserPromptSubmit hook (`librarian hook prompt-server`).

One per library: it holds the runtime folder's lock for the library, loads the library and
the embedding model once, and answers the hook over a Unix socket only this user can reach
(`store.skills.prompt_context.ranker_paths`): it ranks the prompt with `suggest`, keeps the
skills whose text the prompt fits (cosine of the prompt with the skill's card or use text at
or above `prompt_hook.floor`), masks every text for secrets, and replies with the hook's
stdout. It logs each retrieval (tool `user-prompt`; the prompt masked and cut to 300
characters) once a second passes with no prompt waiting, so a write never holds up an
answer. It leaves after `prompt_hook.idle_minutes` without a prompt, on a `stop` request, or
when its library folder is gone. It never runs anything from a skill.

The hook starts it (detached, isolated: `python -E -P -m app`) when a prompt finds no
ranker; until it is up, the hook answers from the lexical index alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from store.config import Config
from store.embed import FastEmbedder
from store.ingest.redact import redact
from store.library import Library
from store.paths import LibraryPaths
from store.search import Searcher
from store.skills.prompt_context import (
    MAX_INPUT,
    TOOL,
    Pick,
    Request,
    Settings,
    hook_output,
    parse_request,
    ranker_paths,
    render,
)
from store.skills.prompt_lexical import LOGGED_QUERY_CHARS
from store.skills.prompt_rank import choose

#: A connection that sends nothing for this long is dropped.
READ_SECONDS = 2.0
#: How often the idle clock is looked at while no prompt comes.
TICK_SECONDS = 1.0
#: How often the catalog is checked for changes another process made (a scan, a retirement).
SYNC_SECONDS = 2.0
#: Retrievals queued at most before they are written even while prompts keep coming.
MAX_PENDING = 50


class Ranker:
    """The library, the model and the settings, loaded once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        config = Config(LibraryPaths(root).config, create=False)  # never created here
        # one thread: a single short prompt embeds faster without onnxruntime's thread pool
        # competing with whatever else runs (measured: 18 ms p50 against 32, and no spikes)
        embedder = FastEmbedder(
            LibraryPaths(root).models,
            model_name=str(config.get("embedding.model")),
            max_length=int(config.get("embedding.max_length")),
            threads=1,
        )
        # a library this user cannot write is ranked all the same (its retrievals not logged)
        writable = LibraryPaths(root).writable()
        self.library = Library(root, embedder=embedder, read_only=not writable)
        self.settings = Settings.from_config(root / "config.toml")
        self.library.sync_index()
        self.library.embedder.embed(["warm up the model"])
        self.searcher = Searcher(self.library.kernel)
        self.synced = time.monotonic()
        #: Retrievals to log, written when no prompt is waiting (a write must not hold up
        #: the next prompt's answer).
        self.pending: list[tuple[Request, list[Pick]]] = []

    def answer(self, request: Request) -> tuple[str, list[Pick]]:
        if time.monotonic() - self.synced > SYNC_SECONDS:  # a scan by another process
            self.library.sync_index(embed=False)
            self.synced = time.monotonic()
        picks = choose(
            request.prompt,
            self.settings,
            embed=self.library.embedder.embed,
            rank=self.searcher.suggest_one,
            cosines=self.library.similarities,
        )
        return hook_output(render(picks, self.settings.max_chars)), picks

    def queue(self, request: Request, picks: list[Pick]) -> None:
        if picks:
            self.pending.append((request, picks))
        if len(self.pending) >= MAX_PENDING:
            self.flush()

    def flush(self) -> None:
        """Log the queued retrievals; a busy library loses them (the answers already went)."""
        pending, self.pending = self.pending, []
        for request, picks in pending:
            with contextlib.suppress(Exception):
                self.log(request, picks)

    def log(self, request: Request, picks: list[Pick]) -> None:
        if not picks:
            return
        hits = [("skill", p.name, rank, p.relevance) for rank, p in enumerate(picks, start=1)]
        query = redact(" ".join(request.prompt.split()))[:LOGGED_QUERY_CHARS]
        project = self.library.project_for(request.cwd) if request.cwd else ""
        self.library.log_retrieval(
            TOOL, query, hits, project=project, session_id=request.session_id
        )

    def close(self) -> None:
        self.flush()
        self.library.close()


def serve(root: Path) -> int:
    """Run the ranker for the library at `root` until idle; 0 also when another one runs."""
    paths = ranker_paths(root)
    if paths is None or not (root / "library.db").is_file():
        return 0
    sock_path, lock_path = paths
    with open(lock_path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another ranker serves this library
        ranker = Ranker(root)
        try:
            _loop(ranker, sock_path)
        finally:
            ranker.close()
            with contextlib.suppress(OSError):
                sock_path.unlink()
    return 0


def _loop(ranker: Ranker, sock_path: Path) -> None:
    with contextlib.suppress(OSError):
        sock_path.unlink()  # a socket left by a ranker that died (we hold the lock)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        old = os.umask(0o177)
        try:
            server.bind(str(sock_path))
        finally:
            os.umask(old)
        os.chmod(sock_path, 0o600)
        server.listen(16)
        server.settimeout(TICK_SECONDS)
        idle_limit = ranker.settings.idle_minutes * 60
        last = time.monotonic()
        while time.monotonic() - last < idle_limit and ranker.root.is_dir():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                ranker.flush()  # a quiet second: write what was served
                continue
            last = time.monotonic()
            if _handle(ranker, conn) == "stop":
                return


def _handle(ranker: Ranker, conn: socket.socket) -> str:
    with conn:
        conn.settimeout(READ_SECONDS)
        try:
            message = _read(conn)
        except (OSError, ValueError):
            return ""
        if message.get("op") == "stop":
            _reply(conn, {"stopped": True})
            return "stop"
        request = parse_request(json.dumps({**message, "hook_event_name": "UserPromptSubmit"}))
        picks: list[Pick] = []
        output = ""
        if request is not None:
            try:
                output, picks = ranker.answer(request)
            except Exception:  # a prompt the ranker cannot rank: no context, keep serving
                output, picks = "", []
        _reply(conn, {"output": output})
    if request is not None:
        ranker.queue(request, picks)
    return ""


def _read(conn: socket.socket) -> dict[str, Any]:
    data = b""
    while b"\n" not in data and len(data) < MAX_INPUT:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    message = json.loads(data.split(b"\n", 1)[0] or b"{}")
    return message if isinstance(message, dict) else {}


def _reply(conn: socket.socket, data: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(json.dumps(data, ensure_ascii=True).encode("ascii") + b"\n")


def stop(root: Path, seconds: float = 2.0) -> bool:
    """Ask the library's ranker to leave; True when one answered."""
    paths = ranker_paths(root)
    if paths is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(seconds)
            client.connect(str(paths[0]))
            client.sendall(b'{"op": "stop"}\n')
            return b"stopped" in client.recv(1024)
    except OSError:
        return False
