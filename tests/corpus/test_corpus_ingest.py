"""All of the corpus transcripts through the real library: every session is ingested, the
skipped-line counts are what the files contain, and every node's evidence is verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from store.embed import FastEmbedder
from store.events import stepping_clock
from store.ingest.redact import redact
from store.ingest.transcript import find_session_files, parse_session
from store.library import Library
from store.models import ParsedSession
from store.verify import verify

pytestmark = pytest.mark.corpus


def _texts(parsed: ParsedSession) -> dict[tuple[str, int, int], str]:
    """The text of every message (and its tool results), by (file, first line, last line)."""
    texts = {}
    for m in parsed.messages:
        parts = [m.text, *(r.text for r in m.tool_results), *(u.input_text for u in m.tool_uses)]
        texts[(m.file, m.line_start, m.line_end)] = "\n".join(p for p in parts if p)
    return texts


def test_corpus_transcripts_ingest(
    corpus_dir: Path,
    tmp_path: Path,
    _embedder: FastEmbedder,  # noqa: PT019 - used, not set up
) -> None:
    root = corpus_dir / "transcripts"
    files = find_session_files(root)
    with Library(tmp_path / "lib", embedder=_embedder, clock=stepping_clock()) as library:
        report = library.ingest([root])
        assert report.failed == ()
        assert report.ingested == report.files == len(files)
        sessions = {s.session_id: s for s in library.sessions()}
        edge = next(s for s in sessions.values() if s.skipped.get("not_an_object"))
        assert edge.skipped == {"bad_field": 3, "not_an_object": 3, "unknown_type": 1}
        parsed = {}
        for path in files:
            result = parse_session(path)
            assert isinstance(result, ParsedSession)
            parsed[result.session_id] = _texts(result)
        nodes = library.nodes()
        assert nodes
        for node in nodes:
            texts = parsed[node.session_id]
            source = [
                t
                for (f, a, b), t in texts.items()
                if f == node.file and a <= node.line_end and b >= node.line_start  # within it
            ]
            assert any(node.evidence in redact(t) for t in source), node
        assert library.ingest([root]).unchanged == len(files)
        assert verify(library).ok
