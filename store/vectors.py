"""The hnswlib index over skill discovery surfaces: a cache, rebuilt from SQLite when
missing or stale. Saved to a temp file and renamed, so a crash never leaves half a file."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import hnswlib
import numpy as np
import numpy.typing as npt

from store.db import Database
from store.embed import Embedder, EmbeddingError, Matrix, model_slug

M = 16
EF_CONSTRUCTION = 100
EF_SEARCH = 256
#: Texts embedded per committed transaction of the embedding cache.
EMBED_COMMIT = 256


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


class Vectors:
    """The library's embeddings: the cache in SQLite (one row per model and text hash), the
    embedder that fills it, and the hnswlib index over the served skills' surfaces that
    `sync_index` keeps equal to SQLite."""

    def __init__(
        self,
        db: Database,
        folder: Path,
        configured_model: str,
        make_embedder: Callable[[], Embedder],
        *,
        read_only: bool = False,
    ) -> None:
        self.db = db
        self.folder = folder
        self.read_only = read_only
        self._configured_model = configured_model
        self._make_embedder = make_embedder
        self._embedder: Embedder | None = None
        self._index: VectorIndex | None = None
        self._synced: tuple[tuple[Any, ...], bool] = ((), False)
        self._matrix: tuple[str, Matrix, dict[int, int]] | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    def use(self, embedder: Embedder) -> None:
        """Embed with `embedder` (a test's or the caller's) instead of the configured model."""
        self._embedder = embedder

    @property
    def model_name(self) -> str:
        return self._embedder.model_name if self._embedder else self._configured_model

    @property
    def index(self) -> VectorIndex:
        if self._index is None:
            self._index = VectorIndex(self.folder, model_slug(self.model_name))
        return self._index

    def embed_missing(self, texts: dict[str, str]) -> int:
        """Embed texts (by hash) not yet in the cache for this model; returns how many."""
        if not texts:
            return 0
        model = self.model_name
        with self.db.read() as conn:
            have = {
                row[0]
                for row in conn.execute("SELECT text_hash FROM embeddings WHERE model=?", (model,))
            }
        missing = [(h, t) for h, t in texts.items() if h not in have]
        for start in range(0, len(missing), EMBED_COMMIT):
            chunk = missing[start : start + EMBED_COMMIT]
            vectors = self.embedder.embed([t for _, t in chunk])
            with self.db.write() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO embeddings(model, text_hash, dim, vector)"
                    " VALUES (?,?,?,?)",
                    [
                        (model, h, int(v.shape[0]), v.astype(np.float32).tobytes())
                        for (h, _), v in zip(chunk, vectors, strict=True)
                    ],
                )
        return len(missing)

    def sync_index(self, *, embed: bool = True, force: bool = False) -> bool:
        """Make the vector index match SQLite; True when every surface is indexed.

        Cheap when nothing changed since the last sync in this process.
        """
        seq = self._catalog_signature()
        if not force and self._synced == (seq, True):
            return True
        if embed and not self.read_only:  # embedding stores vectors: a write
            try:
                self.embed_missing(self._unembedded_texts())
            except EmbeddingError:
                embed = False
        total, wanted = self._indexable()
        with self.db.lock:
            index = self.index
            loaded = index.meta is not None or index.load(self._dim())
            if force or not loaded or index.deleted > max(64, len(wanted) // 4):
                labels = sorted(wanted)
                index.build(self.model_name, wanted, labels, self._vectors_for(wanted, labels))
                self._save_index()
            elif index.entries != wanted:
                current = index.entries
                add = {lab: h for lab, h in wanted.items() if current.get(lab) != h}
                labels = sorted(add)
                index.update(
                    add,
                    labels,
                    self._vectors_for(add, labels),
                    [lab for lab in current if lab not in wanted],
                )
                self._save_index()
        self._synced = (seq, len(wanted) == total)
        self.similarities(np.zeros(self._dim(), dtype=np.float32), [])  # warm the matrix
        return len(wanted) == total

    def _save_index(self) -> None:
        if not self.read_only:  # a read-only library keeps its rebuilt index in memory
            self.index.save()

    def _catalog_signature(self) -> tuple[Any, ...]:
        """What the vector index depends on: the skills (a status or version change touches
        `updated_at`), their texts and the model. Retrievals, reviews and other events that
        append to the log leave it alone, so `sync_index` stays a no-op for them."""
        with self.db.read() as conn:
            skills = conn.execute("SELECT count(*), max(updated_at) FROM skills").fetchone()
            texts = conn.execute("SELECT count(*), max(label) FROM skill_texts").fetchone()
        return (*skills, *texts, self.model_name)

    def similarities(self, vector: Matrix, labels: Sequence[int]) -> dict[int, float]:
        """Exact cosine of `vector` with each indexed surface in `labels`, from an in-memory
        matrix of the indexed vectors (built once per index state: one SQL join)."""
        entries = self.index.entries
        fp = self.index.meta.fingerprint if self.index.meta else ""
        if self._matrix is None or self._matrix[0] != fp:
            with self.db.read() as conn:
                rows = [
                    (lab, blob)
                    for lab, blob in conn.execute(
                        "SELECT t.label, e.vector FROM skill_texts t JOIN embeddings e"
                        " ON e.model=? AND e.text_hash=t.text_hash ORDER BY t.label",
                        (self.model_name,),
                    )
                    if entries.get(lab)
                ]
            dim = self._dim()
            matrix = np.frombuffer(b"".join(b for _, b in rows), dtype=np.float32)
            self._matrix = (
                fp,
                matrix.reshape(len(rows), dim) if rows else np.zeros((0, dim), dtype=np.float32),
                {lab: row for row, (lab, _) in enumerate(rows)},
            )
        _, matrix, positions = self._matrix
        present = [lab for lab in labels if lab in positions]
        if not present:
            return {}
        sims = matrix[[positions[lab] for lab in present]] @ vector
        return {lab: float(sim) for lab, sim in zip(present, sims, strict=True)}

    def cached_vectors(self, hashes: set[str]) -> dict[str, Matrix]:
        """Stored embeddings (this model) of the given text hashes."""
        wanted = sorted(hashes)
        found: dict[str, Matrix] = {}
        with self.db.read() as conn:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                for h, blob in conn.execute(
                    f"SELECT text_hash, vector FROM embeddings WHERE model=? AND text_hash IN"
                    f" ({marks})",
                    (self.model_name, *chunk),
                ):
                    found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _unembedded_texts(self) -> dict[str, str]:
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT t.text_hash, t.text FROM skill_texts t WHERE NOT EXISTS"
                " (SELECT 1 FROM embeddings e WHERE e.model=? AND e.text_hash=t.text_hash)",
                (self.model_name,),
            ).fetchall()
        return {h: t for h, t in rows}

    def _indexable(self) -> tuple[int, dict[int, str]]:
        """(number of surfaces, {label: text_hash} of those with a stored embedding)."""
        with self.db.read() as conn:
            total = int(conn.execute("SELECT count(*) FROM skill_texts").fetchone()[0])
            rows = conn.execute(
                "SELECT t.label, t.text_hash FROM skill_texts t JOIN embeddings e"
                " ON e.model=? AND e.text_hash=t.text_hash",
                (self.model_name,),
            ).fetchall()
        return total, {int(label): h for label, h in rows}

    def _vectors_for(self, wanted: Mapping[int, str], labels: list[int]) -> Matrix:
        found = self.cached_vectors({wanted[lab] for lab in labels})
        return _stack([found[wanted[lab]] for lab in labels], self._dim())

    def _dim(self) -> int:
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT dim FROM embeddings WHERE model=? LIMIT 1", (self.model_name,)
            ).fetchone()
        if row:
            return int(row[0])
        return self._embedder.dim if self._embedder is not None else 384


def _stack(vectors: list[Matrix], dim: int) -> Matrix:
    if not vectors:
        return np.zeros((0, dim), dtype=np.float32)
    return np.vstack(vectors).astype(np.float32)
