"""stdio for `librarian mcp`: lines the SDK would drop or misread are answered here, and
requests in flight when stdin closes are finished before the server exits.

The MCP SDK takes over a second to import: it is imported inside the functions that need it.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from typing import TYPE_CHECKING, Any, Self

from pydantic import ValidationError

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream
    from mcp.shared.message import SessionMessage

_log = logging.getLogger("librarian.mcp")

#: How long requests still running when stdin closes may take to answer.
DRAIN_SECONDS = 30.0


class Outbox:
    """The write side, counting the requests that still owe an answer."""

    def __init__(self, inner: WriteStream[SessionMessage]) -> None:
        import anyio

        self._inner = inner
        self._open: dict[Any, int] = {}
        self._idle = anyio.Event()

    def expect(self, request_id: Any) -> None:
        import anyio

        if self._idle.is_set():
            self._idle = anyio.Event()
        self._open[request_id] = self._open.get(request_id, 0) + 1

    def settle(self, request_id: Any) -> None:
        left = self._open.pop(request_id, 0) - 1
        if left > 0:
            self._open[request_id] = left
        if not self._open:
            self._idle.set()

    async def drained(self) -> None:
        """Return once every request read so far has been answered."""
        if self._open:
            await self._idle.wait()

    async def send_failure(self, problem: Exception) -> None:
        """Answer a line the SDK could not read (the id is unknown: null)."""
        from mcp.types import INVALID_REQUEST, PARSE_ERROR

        if _is_bad_json(problem):
            await self.send_error(None, PARSE_ERROR, BAD_JSON)
        else:
            await self.send_error(None, INVALID_REQUEST, NOT_JSONRPC)

    async def send_error(self, request_id: str | int | None, code: int, message: str) -> None:
        """A JSON-RPC error answer outside the SDK's request handling."""
        from mcp.shared.message import SessionMessage
        from mcp.types import ErrorData, JSONRPCError

        error = ErrorData(code=code, message=message)
        await self._inner.send(
            SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
        )

    async def send(self, item: SessionMessage, /) -> None:
        from mcp.types import JSONRPCError, JSONRPCResponse

        await self._inner.send(item)
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self.settle(item.message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Inbox:
    """The read side: answers undecodable lines itself (the SDK would drop them silently),
    notes each request for the `Outbox`, and holds end-of-input back until the requests in
    flight have answered (the SDK would cancel them), so piping a script in works."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], outbox: Outbox) -> None:
        self._inner = inner
        self._outbox = outbox
        self.last_context: contextvars.Context | None = None

    async def receive(self) -> SessionMessage | Exception:
        import anyio
        from mcp.types import JSONRPCNotification, JSONRPCRequest

        while True:
            try:
                item = await self._inner.receive()
            except anyio.EndOfStream:
                with anyio.move_on_after(DRAIN_SECONDS):
                    await self._outbox.drained()
                raise
            self.last_context = getattr(self._inner, "last_context", None)
            if isinstance(item, Exception):
                await self._outbox.send_failure(item)
                continue
            message = item.message
            if isinstance(message, JSONRPCRequest):
                self._outbox.expect(message.id)
            elif isinstance(message, JSONRPCNotification) and message.method == (
                "notifications/cancelled"
            ):
                # A cancelled request is never answered.
                self._outbox.settle((message.params or {}).get("requestId"))
            return item

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


#: Error messages of the answers the transport gives itself.
BAD_JSON = "parse error: the line is not valid JSON"
NOT_JSONRPC = "invalid request: not a JSON-RPC 2.0 message"
BAD_ID = "invalid request: the id must be a string or an integer"
BAD_METHOD = "invalid request: the method must be a string"
BAD_PARAMS = "invalid params: params must be an object"


class _Drop:
    """A line to ignore without an answer (a notification, or a response, gone wrong)."""


DROP = _Drop()
#: What a screened line gets: None (pass it on to the SDK), `DROP`, or (id, code, message).
Verdict = tuple[str | int | None, int, str] | _Drop | None


def screen(line: str) -> Verdict:
    """Check a line's JSON-RPC envelope before the SDK sees it, for what the SDK gets wrong:
    it answers a request with bad `params` with a null id, and reads a request with an
    object or null id as a notification, which is never answered."""
    from mcp.types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return (None, PARSE_ERROR, BAD_JSON)
    if not isinstance(message, dict):
        return (None, INVALID_REQUEST, NOT_JSONRPC)  # batches included: MCP has none
    has_id = "id" in message
    request_id = message.get("id")
    good_id = isinstance(request_id, str) or (
        isinstance(request_id, int) and not isinstance(request_id, bool)
    )
    if "method" not in message and ("result" in message or "error" in message):
        return None if good_id else DROP  # a response: never answered
    if has_id and not good_id:
        return (None, INVALID_REQUEST, BAD_ID)
    known_id = request_id if has_id else None
    if message.get("jsonrpc") != "2.0" or "method" not in message:
        return (known_id, INVALID_REQUEST, NOT_JSONRPC)
    if not isinstance(message["method"], str):
        return (known_id, INVALID_REQUEST, BAD_METHOD)
    params = message.get("params")
    if params is not None and not isinstance(params, dict):
        return (known_id, INVALID_PARAMS, BAD_PARAMS) if has_id else DROP
    return None


class Screen:
    """Answers the lines `screen` stops, once the write side exists."""

    def __init__(self) -> None:
        import anyio

        self._outbox: Outbox | None = None
        self._ready = anyio.Event()

    def attach(self, outbox: Outbox) -> None:
        self._outbox = outbox
        self._ready.set()

    async def passes(self, line: str) -> bool:
        """True when the line is for the SDK; otherwise it is answered (or dropped) here."""
        verdict = screen(line)
        if verdict is None:
            return True
        if isinstance(verdict, _Drop):
            _log.warning("ignored a malformed notification or response")
            return False
        await self._ready.wait()
        if self._outbox is not None:
            await self._outbox.send_error(*verdict)
        return False


class Lines:
    """stdin as the SDK's stdio transport reads it (an async iterator of text lines), with
    the lines `Screen` stops taken out. Given to the transport as its stdin, because its own
    reader parses each line before anything else sees it (stdout stays the SDK's)."""

    def __init__(self, screen: Screen) -> None:
        import anyio

        self._source = anyio.wrap_file(sys.stdin.buffer)
        self._screen = screen

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> str:
        while True:
            raw: bytes = await self._source.readline()
            if not raw:
                raise StopAsyncIteration
            line = raw.decode("utf-8", errors="replace")
            if await self._screen.passes(line):
                return line


def _is_bad_json(problem: Exception) -> bool:
    if not isinstance(problem, ValidationError):
        return isinstance(problem, ValueError)
    return any(e["type"] == "json_invalid" for e in problem.errors())
