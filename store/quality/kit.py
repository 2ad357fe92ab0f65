"""A judging kit: the review queue of some sessions, one JSON record per node, for a judge
who did not write the rules (issue 11's *judged* figure).

`build_kit` ingests transcript folders into a fresh library with the warm tier alone (exactly
as `librarian ingest` would), then writes, per pending node (and per suppressed node when
asked), its id, the session file it comes from, its line range, type, summary, evidence and
the archived transcript around the evidence (±`radius` messages), every text redacted again,
control characters neutralised and long messages trimmed. The judge reads the record alone:
nothing in it needs the library.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from store.embed import Embedder, FastEmbedder
from store.events import stepping_clock
from store.ingest.redact import redact
from store.ingest.transcript import find_session_files, parse_session
from store.library import Library
from store.models import ContextMessage, Node, ParsedSession
from store.sessions import review
from store.text import neutralise

#: Messages shown either side of a node's evidence.
RADIUS = 15
#: Characters kept of a message around the evidence, and of one the evidence comes from.
AROUND_CHARS, EVIDENCE_CHARS = 700, 2500


@dataclass(frozen=True)
class KitReport:
    """What a kit holds: records written, by status, and the sessions read."""

    path: Path
    pending: int
    suppressed: int
    sessions: int


def build_kit(
    folders: Sequence[Path],
    out: Path,
    *,
    radius: int = RADIUS,
    suppressed: bool = False,
    workdir: Path | None = None,
    embedder: Embedder | None = None,
) -> KitReport:
    """Ingest `folders` into a fresh library (under `workdir`, else a temporary folder) and
    write one JSON line per pending node (and suppressed node, when `suppressed`) to `out`."""
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kit-", dir=workdir) as scratch:
        models = (workdir or Path(scratch)) / "models"
        with Library(
            Path(scratch) / "library",
            embedder=embedder or FastEmbedder(models),
            clock=stepping_clock(),
        ) as library:
            library.ingest(list(folders))
            mains = _session_files(folders)
            statuses = ("pending", "suppressed") if suppressed else ("pending",)
            nodes = [n for s in statuses for n in library.nodes(status=s)]
            nodes.sort(key=lambda n: (mains.get(n.session_id, ""), n.file, n.line_start, n.type))
            counts = {s: 0 for s in statuses}
            out.parent.mkdir(parents=True, exist_ok=True)
            with out.open("w", encoding="utf-8") as sink:
                for record in _records(library, nodes, mains, radius):
                    counts[record["status"]] += 1
                    sink.write(json.dumps(record, ensure_ascii=False) + "\n")
    return KitReport(out, counts["pending"], counts.get("suppressed", 0), len(mains))


def _session_files(folders: Sequence[Path]) -> dict[str, str]:
    """Session id -> its main transcript's path, as given (so a judge can open it)."""
    found: dict[str, str] = {}
    for folder in folders:
        for main in find_session_files(folder):
            parsed = parse_session(main)
            if isinstance(parsed, ParsedSession):
                found.setdefault(parsed.session_id, main.as_posix())
    return found


def _records(
    library: Library, nodes: Sequence[Node], mains: dict[str, str], radius: int
) -> Iterator[dict[str, Any]]:
    for node in nodes:
        around = review.context(library.db, node, radius)
        yield {
            "id": node.node_id,
            "session_file": mains.get(node.session_id, ""),
            "file": node.file,
            "lines": [node.line_start, node.line_end],
            "type": node.type,
            "summary": _safe(node.summary),
            "evidence": _safe(node.evidence, EVIDENCE_CHARS),
            "status": node.status,
            "suppressed_reason": node.suppressed_reason,
            "confidence": node.confidence,
            "informativeness": node.informativeness,
            "context": [_message(m) for m in around],
        }


def _message(m: ContextMessage) -> dict[str, Any]:
    return {
        "lines": [m.line_start, m.line_end],
        "role": m.role,
        "kind": m.kind,
        "error": m.is_error,
        "evidence": m.in_range,
        "text": _safe(m.text, EVIDENCE_CHARS if m.in_range else AROUND_CHARS),
    }


def _safe(text: str, limit: int = 0) -> str:
    """Redacted again (the archive already is), control characters neutralised, trimmed to
    its head and tail around a marked cut."""
    clean = neutralise(redact(text))
    if limit and len(clean) > limit:
        head = clean[: limit * 2 // 3]
        tail = clean[-(limit - len(head)) :]
        clean = f"{head}\n[… {len(clean) - limit} characters cut …]\n{tail}"
    return clean
