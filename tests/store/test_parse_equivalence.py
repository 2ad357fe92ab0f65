"""The parser's and the redactor's fast paths (issue 11's speed budget) change no output.

- The parser's output on the corpus transcripts and on synthetic sessions is what it was
  before the fast paths (digests recorded on 2026-12-07, before them). A deliberate change
  to what the parser produces must record new digests: run this file with
  `LIBRARIAN_PRINT_DIGESTS=1` and copy them in.
- The block line reader yields what the old readline-based one did, at any block size.
- `quick_init` classes are built as their dataclass `__init__` builds them.
- `redact`'s quiet gate only skips text no rule can match, on every string of the redaction
  tests, the generated secret samples, the corpus and a synthetic session.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import io
import json
import os
import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from store.ingest import redact as redact_module
from store.ingest import warm
from store.ingest.transcript import parse_session, records
from store.models import ParsedSession
from store.models.quick import quick_init
from store.models.sessions import (
    ExtractedEdge,
    ExtractedNode,
    ToolResult,
    ToolUse,
    TranscriptMessage,
)
from store.secret_formats import format_spans, may_hold_format
from tooling.evaluation.redaction import transcript_texts
from tooling.synthetic.data import synthetic_session
from tooling.synthetic.secrets import secret_samples

HERE = Path(__file__).parent

# -- the parser's output, before and after ------------------------------------------------------

_SESSION_FIELDS = (
    "session_id",
    "project",
    "branch",
    "client_version",
    "started_at",
    "ended_at",
    "turns",
    "tool_calls",
    "errors",
    "skills_used",
    "skipped",
    "compactions",
    "labels",
)
_MESSAGE_FIELDS = (
    "index",
    "file",
    "line_start",
    "line_end",
    "uuid",
    "role",
    "kind",
    "text",
    "timestamp",
    "is_sidechain",
    "agent_id",
    "is_meta",
)


def _digest(parsed: ParsedSession) -> str:
    """The parser's output (absolute paths aside) as a digest of its fields' JSON."""
    doc: dict[str, Any] = {name: getattr(parsed, name) for name in _SESSION_FIELDS}
    doc["messages"] = [
        {
            **{name: getattr(m, name) for name in _MESSAGE_FIELDS},
            "tool_uses": [[u.id, u.name, u.input_text, u.skill] for u in m.tool_uses],
            "tool_results": [[r.tool_use_id, r.text, r.is_error] for r in m.tool_results],
        }
        for m in parsed.messages
    ]
    text = json.dumps(doc, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _check(name: str, path: Path, expected: str) -> None:
    parsed = parse_session(path)
    assert isinstance(parsed, ParsedSession), parsed
    found = _digest(parsed)
    if os.environ.get("LIBRARIAN_PRINT_DIGESTS"):
        print(f'    "{name}": "{found}",')
    assert found == expected, f"{name}: the parser's output changed"


SYNTHETIC = {  # (bytes, seed): the bench session's size and two others
    (1 << 20, 11): "2dcd6ca52e418a48129ea7a172e57b9f7d68d9e9d891b7a45d8ca8af10d03e0e",
    (200_000, 3): "eb08521401af01f3207c714bf7eaa8bec69388a1d43e66d4c619e4058a301c28",
    (300_000, 5): "17630e1e57ed5dea6a599df9a075c3f247aa10cda63981c777ec818a3db2cc5f",
}


@pytest.mark.parametrize(("size", "seed"), sorted(SYNTHETIC))
def test_a_synthetic_session_parses_as_before(tmp_path: Path, size: int, seed: int) -> None:
    path = tmp_path / f"s{size}-{seed}.jsonl"
    synthetic_session(path, size, seed=seed)
    _check(path.name, path, SYNTHETIC[size, seed])


CORPUS = {  # under shared/corpus/transcripts
    "d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": (
        "405ec1b887331a19ef92c4a89ae5b820d0d52669a76470633d490d5d9913a9f1"
    ),
    "d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": (
        "7325c021f9f34b252790cc691b93213f9506cca46023837d6dbc714df30f8d7b"
    ),
    "d-kimuson-claude-code-viewer/agent-test-hash-123.jsonl": (
        "dd2c29a7e0025336b44366af6996a044285feb37107e912548d5b95325e4aa52"
    ),
    "d-kimuson-claude-code-viewer/agent-test-hash-456.jsonl": (
        "9b958c1fa7e55183105986a9ebe322218b5bb5cde3bc43d2afc3fd990c6ddc65"
    ),
    "d-kimuson-claude-code-viewer/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": (
        "824415289cbbb9477b56640b486853a6c7d3456f799446eda2824f37fce86baf"
    ),
    "daaain-claude-code-log/edge_cases.jsonl": (
        "9ecebd2bbc4b0915f705c3fb800798b9e8f98e47697be999aa7153cc58e33ae3"
    ),
    "daaain-claude-code-log/representative_messages.jsonl": (
        "7c56a8fd5b10cb486cef4dd7da4ec14e03b71221be12353146221107ae33ef62"
    ),
    "daaain-claude-code-log/session_b.jsonl": (
        "5734a4c72fae63837c72e972a589fbc11e9382ed18986b0ad2d5c47833ad9348"
    ),
    "daaain-claude-code-log/todowrite_examples.jsonl": (
        "4e2808f9a6bbe900acf77605daf6cf568bf86efaf6fdafd931eac3c26790ad2f"
    ),
    "simonw-claude-code-transcripts/sample_session.json": (
        "62549bb751f337b76117a6187041abecb95fb7becd1ad2e47144b46750e99f7b"
    ),
    "simonw-claude-code-transcripts/sample_session.jsonl": (
        "3d09dbf26a620778bca1de9de55e69eba160f1dc2cebbf52f391a71ca89b9ec5"
    ),
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_a_corpus_transcript_parses_as_before(corpus_dir: Path, name: str) -> None:
    path = corpus_dir / "transcripts" / name
    if not path.is_file():
        pytest.skip(f"not in this corpus: {name}")
    _check(name, path, CORPUS[name])


# -- the line reader -----------------------------------------------------------------------------


def _old_read_lines(handle: IO[bytes], size: int, chunk: int, most: int) -> Iterator[bytes | None]:
    """The reader before blocks: one `readline` per line, overlong lines dropped chunk by
    chunk (as it was, with its chunk and line limits as arguments)."""
    remaining = size

    def read() -> bytes:
        nonlocal remaining
        if remaining <= 0:
            return b""
        data = handle.readline(min(chunk, remaining))
        remaining = remaining - len(data) if data else 0
        return data

    while first := read():
        if first.endswith(b"\n"):
            yield first
            continue
        parts, held, dropped = [first], len(first), False
        while not parts[-1].endswith(b"\n") and (piece := read()):
            held += len(piece)
            if held > most:
                while not piece.endswith(b"\n") and (piece := read()):
                    pass
                dropped = True
                break
            parts.append(piece)
        yield None if dropped else b"".join(parts)


_PIECES = st.sampled_from([b"a", b"bc", b"defghij", b"\n", b"\n", b'{"type": "user"}', b"\xef"])


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(_PIECES, max_size=40),
    chunk=st.integers(1, 12),
    most=st.integers(1, 30),
    cut=st.integers(-5, 5),
)
def test_the_block_reader_reads_what_the_line_reader_read(
    pieces: list[bytes], chunk: int, most: int, cut: int
) -> None:
    data = b"".join(pieces)
    size = max(0, len(data) + cut)  # fewer bytes than the file holds, or more (it shrank)
    old = list(_old_read_lines(io.BytesIO(data), size, chunk, max(most, chunk)))
    saved = records._CHUNK, records.MAX_LINE_BYTES
    records._CHUNK, records.MAX_LINE_BYTES = chunk, max(most, chunk)
    try:
        new = list(records._read_lines(io.BytesIO(data), size))
    finally:
        records._CHUNK, records.MAX_LINE_BYTES = saved
    assert new == old


# -- quick_init ----------------------------------------------------------------------------------


def _twin(cls: type) -> type:
    """`cls` as `dataclass(frozen=True)` makes it, with the generated `__init__`."""
    names = {f.name: f.default for f in dataclasses.fields(cls)}
    namespace = {n: d for n, d in names.items() if d is not dataclasses.MISSING}
    namespace["__annotations__"] = {f.name: f.type for f in dataclasses.fields(cls)}
    return dataclasses.dataclass(frozen=True)(type(cls.__name__, (), namespace))


@pytest.mark.parametrize(
    ("cls", "args"),
    [
        (ToolUse, ("t1", "Bash", '{"command":"ls"}')),
        (ToolResult, ("t1", "out", True)),
        (TranscriptMessage, (3, "a.jsonl", 4, 5, "u", "user", "prompt", "hi", "2026")),
        (ExtractedNode, ("k", "DISCOVERY", "s", "e", "f", 1, 2, 0.5, "warm", "keywords")),
        (ExtractedEdge, ("a", "b", "informed")),
    ],
)
def test_a_quick_init_class_is_built_as_its_dataclass_builds_it(
    cls: type, args: tuple[Any, ...]
) -> None:
    twin = _twin(cls)
    assert str(inspect.signature(cls)) == str(inspect.signature(twin))
    ours, theirs = cls(*args), twin(*args)
    assert vars(ours) == vars(theirs)
    assert list(vars(ours)) == list(vars(theirs))  # the same order too
    assert repr(ours) == repr(theirs)
    assert hash(ours) == hash(theirs)
    assert dataclasses.replace(ours) == ours
    assert pickle.loads(pickle.dumps(ours)) == ours
    with pytest.raises(dataclasses.FrozenInstanceError):
        ours.first = 1
    with pytest.raises(TypeError):
        cls()


def test_quick_init_refuses_what_it_cannot_copy() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    for cls in (Slotted, Factory):
        with pytest.raises(TypeError):
            quick_init(cls)


# -- redaction's quiet gate ----------------------------------------------------------------------


def _test_strings() -> list[str]:
    """Every string constant of the redaction tests."""
    found: list[str] = []
    for path in sorted(HERE.glob("test_*.py")):
        if "redact" in path.name or "secret" in path.name:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found.append(node.value)
    return found


@pytest.fixture(scope="module")
def texts(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    session = tmp_path_factory.mktemp("quiet") / "session.jsonl"
    synthetic_session(session, 150_000)
    found = [*_test_strings(), *(s.text for s in secret_samples())]
    found += list(transcript_texts(session))
    corpus = Path(os.environ.get("LIBRARIAN_CORPUS", HERE.parents[1].parent / "shared/corpus"))
    for path in sorted((corpus / "transcripts").rglob("*.json*")):
        found += list(transcript_texts(path))
    # clauses and lines too: the warm tier redacts pieces, not whole messages
    found += [piece for text in found[:5000] for piece in re.split(r"(?<=[.\n])", text)]
    return found


def _ungated(text: str) -> str:
    """`redact` without the gate: every pass runs every rule."""
    for _ in range(redact_module._MAX_PASSES):
        done = redact_module._redact_once(text, redact_module._lowered(text))
        if done == text:
            break
        text = done
    return text


def test_quiet_text_is_text_no_rule_matches(texts: list[str]) -> None:
    quiet = 0
    for text in texts:
        low = redact_module._lowered(text)
        if redact_module._quiet(text, low):
            quiet += 1
            assert list(redact_module._candidate_spans(text, low)) == [], text
        if not may_hold_format(text):
            assert list(format_spans(text)) == [], text
    assert quiet > len(texts) // 3  # the gate does skip most text


def test_redact_answers_as_without_the_gate(texts: list[str]) -> None:
    changed = 0
    for text in texts:
        out = redact_module.redact(text)
        assert out == _ungated(text), text
        changed += out != text
    assert changed > 100  # the samples' secrets, at least


def test_the_factored_trigger_finds_what_the_plain_alternation_finds(texts: list[str]) -> None:
    plain = re.compile("|".join(map(re.escape, redact_module._TRIGGERS)))
    words = [*redact_module._TRIGGERS, *(t[:-1] for t in redact_module._TRIGGERS), "x k e y"]
    for text in [*words, *(redact_module._lowered(t) for t in texts)]:
        assert bool(redact_module._TRIGGER.search(text)) == bool(plain.search(text)), text


def test_the_warm_tier_finds_the_same_with_or_without_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "session.jsonl"
    synthetic_session(path, 120_000, seed=7)
    parsed = parse_session(path)
    assert isinstance(parsed, ParsedSession)
    gated = warm.extract_warm(parsed)
    monkeypatch.setattr(redact_module, "_quiet", lambda text, low: False)
    assert warm.extract_warm(parsed) == gated
