"""The corpus through the real pipeline, then measured against the labels.

A fresh library in a temporary folder ingests every session under the corpus `transcripts`
folder with the warm tier alone (no LLM), exactly as `librarian ingest` would; its nodes are
then mapped back to corpus-relative files and scored by `measure`.
"""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from store.embed import Embedder, FastEmbedder
from store.events import stepping_clock
from store.ingest.transcript import find_session_files, parse_session
from store.library import Library
from store.models import ParsedSession
from store.quality.labels import LABELS_DIR, Labels, load_labels
from store.quality.measure import Candidate, QualityReport, measure, narration_reason


def run_quality(
    transcripts: Path,
    labels_dir: Path = LABELS_DIR,
    *,
    workdir: Path | None = None,
    embedder: Embedder | None = None,
) -> QualityReport:
    """Ingest `transcripts` into a fresh library (under `workdir`, else a temporary folder)
    and measure its nodes against the labels in `labels_dir`."""
    labels = load_labels(labels_dir)
    with _fresh_ingest(transcripts, "quality-", workdir, embedder) as library:
        candidates = corpus_candidates(library, transcripts)
    return measure(candidates, labels, check_labels(labels, transcripts))


@contextmanager
def _fresh_ingest(
    transcripts: Path, prefix: str, workdir: Path | None, embedder: Embedder | None
) -> Iterator[Library]:
    """`transcripts` ingested into a fresh library on the stepping clock (under `workdir`,
    else a temporary folder; the model is cached beside it)."""
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=workdir) as scratch:
        models = (workdir or Path(scratch)) / "models"
        with Library(
            Path(scratch) / "library",
            embedder=embedder or FastEmbedder(models),
            clock=stepping_clock(),
        ) as library:
            library.ingest([transcripts])
            yield library


def run_unlabelled(
    transcripts: Path, *, workdir: Path | None = None, embedder: Embedder | None = None
) -> dict[str, Any]:
    """A second report on sessions nobody labelled (a tuning set kept outside the project):
    the same fresh warm-tier ingest, then what reached the queue — every pending node to be
    read against the rubric, the narration count, and why the rest was suppressed. With no
    labels there is no precision or coverage: judges score the pending nodes."""
    with _fresh_ingest(transcripts, "quality-tune-", workdir, embedder) as library:
        candidates = corpus_candidates(library, transcripts)
        reasons = Counter(
            _reason_kind(n.suppressed_reason or "")
            for n in library.nodes()
            if n.status == "suppressed"
        )
    pending = [c for c in candidates if c.status == "pending"]
    return {
        "sessions": len(find_session_files(transcripts)),
        "pending": len(pending),
        "narration": sum(bool(narration_reason(c.summary)) for c in pending),
        "nodes_by_status": dict(sorted(Counter(c.status for c in candidates).items())),
        "pending_nodes": [
            {
                "file": c.file,
                "lines": [c.line_start, c.line_end],
                "type": c.type,
                "summary": c.summary,
            }
            for c in pending
        ],
        "suppressed_by_reason": dict(reasons.most_common()),
    }


def _reason_kind(reason: str) -> str:
    """A suppression reason without its particulars (what is in brackets or quotes)."""
    return re.sub(r"\s*\(.*$|`[^`]*`", "…", reason).strip() or "(none)"


def corpus_candidates(library: Library, transcripts: Path) -> list[Candidate]:
    """Every node of the library whose session lives under `transcripts`, with its file
    relative to that folder (a node's `file` is relative to its session's main file)."""
    folders = {}
    for main in find_session_files(transcripts):
        parsed = parse_session(main)
        if isinstance(parsed, ParsedSession):
            folders[parsed.session_id] = main.parent
    root = Path(transcripts).resolve()
    candidates = []
    for node in library.nodes():
        folder = folders.get(node.session_id)
        if folder is None:
            continue
        candidates.append(
            Candidate(
                file=(folder / node.file).resolve().relative_to(root).as_posix(),
                line_start=node.line_start,
                line_end=node.line_end,
                type=node.type,
                summary=node.summary,
                status=node.status,
            )
        )
    return sorted(candidates, key=lambda c: (c.file, c.line_start, c.line_end, c.type))


def check_labels(labels: Labels, transcripts: Path) -> list[str]:
    """Ways the labels and the corpus disagree (a changed file makes its labels stale)."""
    problems = []
    for labelled in labels.files:
        path = transcripts / labelled.file
        if not path.is_file():
            problems.append(f"{labelled.file}: labelled but not in the corpus")
        elif hashlib.sha256(path.read_bytes()).hexdigest() != labelled.sha256:
            problems.append(f"{labelled.file}: changed since it was labelled (stale labels)")
    for path in sorted(Path(transcripts).rglob("*.jsonl")):
        name = path.relative_to(transcripts).as_posix()
        if name not in labels.names:
            problems.append(f"{name}: in the corpus but not labelled")
    return problems
