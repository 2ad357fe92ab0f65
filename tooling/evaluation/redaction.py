"""How well `redact` does: recall on generated secrets, what it redacts in real transcripts,
and its speed on transcript-like text. Shared by the tests and `librarian bench`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from store.ingest.redact import redact
from tooling.synthetic.secrets import SecretSample, secret_samples

#: A secret counts as leaked when this many of its characters in a row survive.
LEAK_WINDOW = 8
#: (file relative to the transcripts folder, value) of every redaction in the corpus that a
#: person read in context and judged a plausible secret; anything else redacted there is a
#: false positive. Empty: the corpus holds no credential.
REVIEWED_CORPUS_SECRETS: frozenset[tuple[str, str]] = frozenset()
_CONTEXT = 40


@dataclass(frozen=True)
class Recall:
    """Samples and formats caught; a format counts only when every sample of it is."""

    samples: int
    samples_caught: int
    formats: int
    formats_caught: int
    missed: tuple[str, ...]  # formats with a sample that leaked
    leaks: tuple[tuple[str, str], ...] = field(default=())  # (format, redacted text)

    @property
    def rate(self) -> float:
        return self.formats_caught / self.formats if self.formats else 1.0


def leaked(sample: SecretSample, redacted: str) -> bool:
    """True when a run of `LEAK_WINDOW` characters of the secret (after its public prefix)
    is still in the redacted text."""
    body = sample.secret[len(sample.shown) :]
    width = min(LEAK_WINDOW, len(body))
    return any(body[i : i + width] in redacted for i in range(len(body) - width + 1))


def measure_recall(
    samples: Sequence[SecretSample] | None = None, redactor: Callable[[str], str] = redact
) -> Recall:
    samples = secret_samples() if samples is None else samples
    kinds: dict[str, bool] = {}
    leaks: list[tuple[str, str]] = []
    for sample in samples:
        out = redactor(sample.text)
        ok = not leaked(sample, out)
        kinds[sample.kind] = kinds.get(sample.kind, True) and ok
        if not ok:
            leaks.append((sample.kind, out))
    missed = tuple(kind for kind, ok in kinds.items() if not ok)
    return Recall(
        samples=len(samples),
        samples_caught=len(samples) - len(leaks),
        formats=len(kinds),
        formats_caught=len(kinds) - len(missed),
        missed=missed,
        leaks=tuple(leaks),
    )


@dataclass(frozen=True)
class Redaction:
    """One secret `redact` found in a file: the value and the text around it."""

    file: str
    value: str
    before: str
    after: str


def transcript_texts(path: Path) -> Iterator[str]:
    """Every string in a transcript file's JSON records (message text, tool input and output,
    ids, timestamps, image data), and lines that are not JSON as they are."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                yield line
                continue
            yield from _strings(record)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def message_texts(path: Path) -> list[str]:
    """The text of each message of a transcript, as ingest archives and redacts it (one
    `redact` call each): prose, tool calls and tool results."""
    from store.ingest.transcript import parse_session
    from store.models import ParseFailure

    parsed = parse_session(path)
    if isinstance(parsed, ParseFailure):
        return []
    texts = []
    for m in parsed.messages:
        parts = [m.text] if m.text else []
        parts += [f"[{u.name}] {u.input_text}" for u in m.tool_uses]
        parts += [("[error] " if r.is_error else "[result] ") + r.text for r in m.tool_results]
        texts.append("\n".join(parts))
    return texts


def transcript_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".jsonl", ".json") and p.is_file())


def redactions(files: Iterable[Path], root: Path) -> tuple[list[Redaction], int]:
    """Every redaction `redact` makes in the files' strings, and the characters read."""
    found: list[Redaction] = []
    size = 0
    for path in files:
        name = str(path.relative_to(root))
        for text in dict.fromkeys(transcript_texts(path)):  # each distinct string once
            size += len(text)
            found += _diff(name, text, redact(text))
    return found, size


def _diff(name: str, text: str, out: str) -> list[Redaction]:
    if out == text:
        return []
    from difflib import SequenceMatcher

    found = []
    matcher = SequenceMatcher(None, text, out, autojunk=False)
    for op, a1, a2, _b1, _b2 in matcher.get_opcodes():
        if op != "equal":
            before = text[max(0, a1 - _CONTEXT) : a1]
            found.append(Redaction(name, text[a1:a2], before, text[a2 : a2 + _CONTEXT]))
    return found


def throughput(texts: Sequence[str], rounds: int = 3) -> float:
    """MB/s of `redact` over `texts` (one call per text, as ingest makes): the best round."""
    size = sum(len(t.encode("utf-8")) for t in texts)
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        for text in texts:
            redact(text)
        best = min(best, time.perf_counter() - started)
    return size / (1 << 20) / best if best > 0 else float("inf")
