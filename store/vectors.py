"""The hnswlib index over skill discovery surfaces: a cache, rebuilt from SQLite when
missing or stale. Saved to a temp file and renamed, so a crash never leaves half a file."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import hnswlib
import numpy as np
import numpy.typing as npt

from store.embed import Matrix

M = 16
EF_CONSTRUCTION = 100
EF_SEARCH = 256


def fingerprint(pairs: Iterable[tuple[int, str]]) -> str:
    """A digest of (label, text_hash) pairs: equal digests mean the index is current."""
    digest = hashlib.sha256()
    for label, text_hash in sorted(pairs):
        digest.update(f"{label}:{text_hash}\n".encode())
    return digest.hexdigest()


@dataclass
class IndexMeta:
    model: str
    dim: int
    count: int
    fingerprint: str


class VectorIndex:
    """Cosine hnswlib index; each label remembers the hash of the text it embeds."""

    def __init__(self, folder: Path, model_slug: str) -> None:
        self.bin_path = folder / f"skills.{model_slug}.hnsw"
        self.meta_path = folder / f"skills.{model_slug}.json"
        self.entries_path = folder / f"skills.{model_slug}.entries.json"
        self._index: hnswlib.Index | None = None
        self.meta: IndexMeta | None = None
        self._entries: dict[int, str] = {}

    @property
    def entries(self) -> Mapping[int, str]:
        """label -> text hash (read-only view)."""
        return MappingProxyType(self._entries)

    @property
    def count(self) -> int:
        return len(self._entries)

    @property
    def deleted(self) -> int:
        return 0 if self._index is None else self._index.get_current_count() - len(self._entries)

    def load(self, dim: int) -> bool:
        """Load from disk; False when missing, unreadable or inconsistent (caller rebuilds)."""
        if not (self.bin_path.exists() and self.meta_path.exists() and self.entries_path.exists()):
            return False
        try:
            meta = IndexMeta(**json.loads(self.meta_path.read_text(encoding="utf-8")))
            raw = json.loads(self.entries_path.read_text(encoding="utf-8"))
            entries = {int(k): str(v) for k, v in raw.items()}
            if meta.dim != dim or fingerprint(entries.items()) != meta.fingerprint:
                return False
            index = hnswlib.Index(space="cosine", dim=dim)
            index.load_index(str(self.bin_path), max_elements=max(len(entries), 16))
        except (OSError, ValueError, TypeError, RuntimeError, AttributeError):
            return False
        index.set_ef(EF_SEARCH)
        self._index, self.meta, self._entries = index, meta, entries
        return True

    def build(
        self, model: str, entries: dict[int, str], labels: Sequence[int], vectors: Matrix
    ) -> None:
        """Replace the whole index."""
        dim = int(vectors.shape[1]) if len(vectors) else 384
        index = hnswlib.Index(space="cosine", dim=dim)
        index.init_index(
            max_elements=max(len(labels), 16), ef_construction=EF_CONSTRUCTION, M=M, random_seed=42
        )
        if len(labels):
            index.add_items(vectors, np.asarray(labels, dtype=np.int64), num_threads=2)
        index.set_ef(EF_SEARCH)
        self._index, self._entries = index, dict(entries)
        self.meta = IndexMeta(model, dim, len(entries), fingerprint(entries.items()))

    def update(
        self,
        add: dict[int, str],
        add_labels: Sequence[int],
        add_vectors: Matrix,
        remove: Iterable[int],
    ) -> None:
        """Add, replace and mark-delete in place; the caller saves."""
        assert self._index is not None
        assert self.meta is not None
        for label in remove:
            if label in self._entries:
                self._index.mark_deleted(label)
                del self._entries[label]
        if len(add_labels):
            needed = self._index.get_current_count() + len(add_labels)
            if needed > self._index.get_max_elements():
                self._index.resize_index(max(needed, 2 * self._index.get_max_elements()))
            self._index.add_items(
                add_vectors, np.asarray(add_labels, dtype=np.int64), num_threads=2
            )
            self._entries.update(add)
        self.meta.count = len(self._entries)
        self.meta.fingerprint = fingerprint(self._entries.items())

    def save(self) -> None:
        if self._index is None or self.meta is None:
            return
        self.bin_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.bin_path.with_suffix(".tmp")
        self._index.save_index(str(tmp))
        os.replace(tmp, self.bin_path)
        _atomic_text(self.entries_path, json.dumps({str(k): v for k, v in self._entries.items()}))
        _atomic_text(self.meta_path, json.dumps(self.meta.__dict__))

    def query(self, vector: Matrix, k: int) -> list[tuple[int, float]]:
        """(label, cosine similarity) best first."""
        if self._index is None or not self._entries:
            return []
        k = min(k, len(self._entries))
        self._index.set_ef(max(EF_SEARCH, k))
        labels, distances = self._index.knn_query(vector.reshape(1, -1), k=k)
        return [
            (int(lab), 1.0 - float(dist)) for lab, dist in zip(labels[0], distances[0], strict=True)
        ]

    def vectors(self, labels: Sequence[int]) -> npt.NDArray[np.float32]:
        """The stored vectors of `labels` (all must be present)."""
        assert self._index is not None
        return np.asarray(
            self._index.get_items(list(labels), return_type="numpy"), dtype=np.float32
        )


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
