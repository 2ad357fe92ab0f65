"""Agglomerative clustering of embedding vectors: cosine distance, average linkage, cut at a
distance threshold (0.4 by default). Pure and headless: numpy, scipy and hnswlib only.

The cut is inclusive, as in scipy's `fcluster(Z, t=threshold, criterion="distance")`: two
clusters merge while the average cosine distance over all their cross pairs is <= threshold.

Two paths:

- exact (n <= `exact_limit`): the condensed cosine-distance matrix (float64, from blocks of
  matrix products, clipped to [0, 2]), scipy average linkage, `fcluster` at the threshold.
- kNN (n > `exact_limit`): an hnswlib k-nearest-neighbour graph with every returned pair's
  distance recomputed exactly (float64); a row whose neighbours all fall within the cut is
  re-queried with a doubled k, up to `K_CAP`, so the graph is complete near the cut; then the
  connected components of the pairs within the cut. Average linkage never merges across two
  such components (every cross pair is beyond the cut, so every cross average is), so each
  component of at most `exact_limit` rows goes through the exact path on its own rows: the
  same partition as the exact path on the whole set. A larger component goes through
  `_graph_average_linkage`: average linkage that keeps one sum vector per cluster (for unit
  vectors the average cosine distance of A and B is exactly 1 - sum(A)·sum(B) / (|A|·|B|)) and
  only the cluster pairs within the cut as merge candidates, in O(m·d + pairs) memory. Given
  every pair within the cut it is exact average linkage, not an estimate: no pair is assumed
  to be at any distance.

Approximation (kNN path only): the graph may lack pairs within the cut, because hnswlib is
approximate (recall) or because a row has more than `K_CAP` neighbours within the cut. A
missing pair can leave two components apart that the exact path would join (in the tests and
in 20k-row checks against brute force every pair within the cut was found), and, inside a
component larger than `exact_limit`, it can withhold a candidate merge: clusters that share no
known pair within the cut do not merge. Either way clusters can only come out split, never
mixed.

Determinism: hnswlib inserting on several threads builds a different graph each run. So the
rows are split into `KNN_SHARDS` fixed contiguous shards, each built on one thread with
`random_seed=100` and items added in row order (a reproducible graph); the shards build in
parallel (hnswlib releases the GIL) and each is queried for every row (queries are read-only,
so multi-threaded queries are reproducible). The shard count depends on n only, never on
`threads`, so the labels are the same for any thread count. At 100k rows two single-threaded
shards built in 50 s against 52 s for one index on two threads; querying both took 36 s
against 21 s for one (hnswlib alone, idle machine).

Measured on this 2-core machine (384-d float32 unit vectors, centre + Gaussian noise; wall
time, CPU time and peak RSS of a fresh process including numpy/scipy imports; the machine was
shared with other jobs, load average ~5, so wall times are inflated, CPU times less so):

    exact   2,000:   0.2-0.3 s wall,   0.7-0.8 s CPU,  0.16 GB
    exact   5,000:   0.7-1.5 s wall,   1.4-2.0 s CPU,  0.31-0.33 GB
    exact   8,000:   2.0-4.3 s wall,   3.6-4.7 s CPU,  0.64-0.67 GB
    exact  10,000:   3.1-4.7 s wall,   4.6-5.6 s CPU,  0.94-0.96 GB
    exact  20,000:  19-42 s wall,                      3.34 GB   (for comparison only)
    kNN    20,000:  34 s wall,  23 s CPU,  0.32 GB   (4,000 centres)
    kNN   100,000: 277 s wall, 222 s CPU,  1.10 GB   (20,000 centres; ~85% hnswlib)
    kNN   100,000: 258 s wall, 207 s CPU,  1.19 GB   (one chained 20,007-row component
                                                      through the graph linkage)

The slow case of the graph linkage is a dense group (every row within the cut of more than
`K_CAP` others): 3,000 such rows took 46 s of CPU, since every cluster there is a candidate of
every other.

`EXACT_LIMIT` = 10,000: the exact path needs about 9.4·n² bytes (the condensed matrix and
scipy's working copy), under 1 GB at 10k, and took under 6 s of CPU here (13 s on real
embeddings per an earlier measurement); at 20k it needs 3.3 GB. Larger inputs and components
take the kNN path, whose memory grows about linearly.
"""

from __future__ import annotations

import bisect
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import hnswlib
import numpy as np
import numpy.typing as npt
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: Largest set (or kNN component) clustered by exact scipy linkage. See the module docstring.
EXACT_LIMIT = 10_000
#: Largest k a saturated row is re-queried with. It bounds the graph to 64 pairs per row, so
#: memory stays O(n) even when real data chains into one dense component (100k MiniLM-like
#: rows at 512 kept ~50M pairs in the graph linkage's sets: 7 GB). Components up to
#: EXACT_LIMIT only need connectivity from the graph, which 64 nearest within the cut keep.
K_CAP = 64
#: Averages closer than this are a tie (the two sides of a pair round differently).
TIE_SLACK = 1e-12
#: hnswlib parameters.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 200
HNSW_SEED = 100
#: Shards of the kNN index (fixed, so the result never depends on `threads`) and the smallest
#: n worth sharding.
KNN_SHARDS = 2
MIN_SHARD_ROWS = 1_000
#: Slack added to the threshold when finding components: a pair whose recomputed distance
#: rounds a hair differently from the exact path's can only merge components (harmless: the
#: exact step then runs on their union), never split one.
COMPONENT_SLACK = 1e-9
#: Entries per float64 block of distances (32 MB).
_BLOCK = 1 << 22


@dataclass(frozen=True)
class ClusterStats:
    """How a `cluster` call ran.

    `components` and `largest_component` describe the kNN graph cut at the threshold (the
    exact path counts the whole set as one component); `knn_k` is the largest k queried
    (k itself, or more when saturated rows were re-queried; 0 on the exact path)."""

    n: int
    method: str
    components: int
    largest_component: int
    knn_k: int
    seconds: float


def cluster(
    vectors: npt.ArrayLike,
    *,
    threshold: float = 0.4,
    exact_limit: int | None = None,
    k: int = 32,
    threads: int = 2,
) -> tuple[Ints, ClusterStats]:
    """Labels (int64, shape (n,)) — canonical: clusters numbered 0.. in order of their
    smallest row index. Deterministic for the same input (whatever `threads`).

    `vectors` has shape (n, d); rows are L2-normalised here again (in float64), and an all-zero
    row is at distance 1 from everything. `exact_limit` defaults to `EXACT_LIMIT`; above it,
    `k` is the number of neighbours first asked of each kNN shard per row (doubled for rows
    saturated within the cut) and `threads` the threads for building and querying the index."""
    start = time.perf_counter()
    limit = EXACT_LIMIT if exact_limit is None else exact_limit
    if k < 1 or threads < 1:
        raise ValueError("k and threads must be at least 1")
    if not np.isfinite(threshold):
        raise ValueError("threshold must be finite")
    x = _normalised(vectors)
    n = x.shape[0]
    if n <= 1 or n <= limit:
        labels = _exact_labels(x, threshold)
        stats = ClusterStats(n, "exact", min(n, 1), n, 0, time.perf_counter() - start)
        return labels, stats

    rows, cols, dists, knn_k = _unique_knn_edges(x, k=k, threshold=threshold, threads=threads)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    count, component = connected_components(graph.tocsr(), directed=False)
    component = np.asarray(component, dtype=np.int64)

    labels = np.empty(n, dtype=np.int64)
    order = np.argsort(component, kind="stable")
    sizes = np.bincount(component, minlength=count)
    next_label = 0
    for c, members in enumerate(np.split(order, np.cumsum(sizes)[:-1])):
        if len(members) <= limit:
            local = _exact_labels(x[members], threshold)
        else:
            inside = (dists <= threshold) & (component[rows] == c)
            position = np.searchsorted(members, rows[inside])
            other = np.searchsorted(members, cols[inside])
            local = _graph_average_linkage(x[members], position, other, threshold)
        labels[members] = local + next_label
        next_label += int(local.max()) + 1
    stats = ClusterStats(n, "knn", int(count), int(sizes.max()), knn_k, time.perf_counter() - start)
    return _canonical(labels), stats


def _unique_knn_edges(
    x: Floats, *, k: int, threshold: float, threads: int
) -> tuple[Ints, Ints, Floats, int]:
    """`_knn_edges` over the distinct rows only, plus a zero-distance edge from every repeated
    row to its first occurrence. Exact duplicates (real node texts repeat verbatim) degrade
    hnswlib's graph — queries keep returning the same few copies — so they never enter it."""
    _, first, inverse = np.unique(x, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    if len(first) == x.shape[0]:
        return _knn_edges(x, k=k, threshold=threshold, threads=threads)
    order = np.sort(first)  # distinct rows in input order: deterministic shards
    if len(order) > 1:
        u_rows, u_cols, u_dists, knn_k = _knn_edges(
            x[order], k=k, threshold=threshold, threads=threads
        )
    else:
        u_rows = u_cols = np.zeros(0, dtype=np.int64)
        u_dists, knn_k = np.zeros(0), 0
    representative = first[inverse]  # each row's first occurrence
    repeated = np.flatnonzero(representative != np.arange(x.shape[0]))
    rows = np.concatenate([order[u_rows], representative[repeated]]).astype(np.int64)
    cols = np.concatenate([order[u_cols], repeated]).astype(np.int64)
    dists = np.concatenate([u_dists, np.zeros(len(repeated))])
    low, high = np.minimum(rows, cols), np.maximum(rows, cols)
    return low, high, dists, knn_k


def assign(
    new_vectors: npt.ArrayLike,
    member_vectors: npt.ArrayLike,
    member_labels: npt.ArrayLike,
    *,
    threshold: float = 0.4,
) -> Ints:
    """Incremental step: for each new vector, the existing label it joins (average cosine
    distance to that cluster's members <= threshold, the best such cluster; ties -> smaller
    label) or -1. New vectors that join nothing are then clustered among themselves by the
    caller (via cluster()). Members labelled below 0 (unclustered) are ignored."""
    new = _normalised(new_vectors)
    members = _normalised(member_vectors)
    labels = np.asarray(member_labels, dtype=np.int64).reshape(-1)
    if labels.shape[0] != members.shape[0]:
        raise ValueError("member_vectors and member_labels differ in length")
    result = np.full(new.shape[0], -1, dtype=np.int64)
    keep = labels >= 0
    if new.shape[0] == 0 or not keep.any():
        return result
    if new.shape[1] != members.shape[1]:
        raise ValueError("new_vectors and member_vectors differ in dimension")
    members, labels = members[keep], labels[keep]
    order = np.argsort(labels, kind="stable")
    members, labels = members[order], labels[order]
    names, starts, counts = np.unique(labels, return_index=True, return_counts=True)
    step = max(1, _BLOCK // members.shape[0])
    for lo in range(0, new.shape[0], step):
        distance = np.clip(1.0 - new[lo : lo + step] @ members.T, 0.0, 2.0)
        average = np.add.reduceat(distance, starts, axis=1) / counts
        best = np.argmin(average, axis=1)  # first minimum: the smaller label on a tie
        joins = average[np.arange(len(best)), best] <= threshold
        result[lo : lo + step] = np.where(joins, names[best], -1)
    return result


def _normalised(vectors: npt.ArrayLike) -> Floats:
    """Rows as float64 unit vectors (all-zero rows stay zero); checks shape and finiteness."""
    x = np.array(vectors, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {x.shape}")
    if x.shape[0] and not np.isfinite(x).all():
        raise ValueError("vectors contain NaN or infinity")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    x /= norms
    return x


def _canonical(labels: npt.NDArray[np.integer]) -> Ints:
    """Relabel 0..C-1 in order of each cluster's smallest row index."""
    if labels.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first), dtype=np.int64)
    canonical: Ints = rank[inverse.reshape(-1)]
    return canonical


def _condensed_cosine(x: Floats) -> Floats:
    """Cosine distances of unit rows in scipy's condensed order (row i: pairs (i, i+1..n-1)),
    from float64 matrix products over blocks of rows, clipped to [0, 2]."""
    n = x.shape[0]
    condensed = np.empty(n * (n - 1) // 2, dtype=np.float64)
    step = max(1, _BLOCK // max(n, 1))
    at = 0
    for lo in range(0, n - 1, step):
        hi = min(lo + step, n - 1)
        block = 1.0 - x[lo:hi] @ x[lo:].T
        np.clip(block, 0.0, 2.0, out=block)
        for i in range(lo, hi):
            row = block[i - lo, i - lo + 1 :]
            condensed[at : at + len(row)] = row
            at += len(row)
    return condensed


def _exact_labels(x: Floats, threshold: float) -> Ints:
    """Average linkage on the full distance matrix, cut at `threshold` (inclusive)."""
    n = x.shape[0]
    if n <= 1:
        return np.zeros(n, dtype=np.int64)
    tree = linkage(_condensed_cosine(x), method="average")
    return _canonical(np.asarray(fcluster(tree, t=threshold, criterion="distance")))


def _pair_distances(x: Floats, rows: Ints, ids: Ints) -> Floats:
    """Exact cosine distances between each row `rows[i]` and its candidates `ids[i, :]`."""
    out = np.empty(ids.shape, dtype=np.float64)
    step = max(1, _BLOCK // max(ids.shape[1] * x.shape[1], 1))
    for lo in range(0, len(rows), step):
        left = x[rows[lo : lo + step]]
        right = x[ids[lo : lo + step]]
        out[lo : lo + step] = 1.0 - np.einsum("bd,bkd->bk", left, right)
    np.clip(out, 0.0, 2.0, out=out)
    return out


class _Shard:
    """One hnswlib index over the contiguous rows [lo, hi), labelled by row index."""

    def __init__(self, x32: npt.NDArray[np.float32], lo: int, hi: int) -> None:
        self.lo, self.hi = lo, hi
        self.x32 = x32
        self.index = hnswlib.Index(space="cosine", dim=x32.shape[1])
        self.index.init_index(
            max_elements=hi - lo,
            M=HNSW_M,
            ef_construction=HNSW_EF_CONSTRUCTION,
            random_seed=HNSW_SEED,
        )

    def build(self) -> None:
        """Insert the rows in order on one thread: the same graph on every run."""
        ids = np.arange(self.lo, self.hi, dtype=np.int64)
        self.index.add_items(self.x32[self.lo : self.hi], ids, num_threads=1)

    def query(self, x: Floats, rows: Ints, k: int, threads: int) -> Ints:
        """The ids of about the k nearest shard rows to each of `rows` (k <= shard size)."""
        self.index.set_ef(max(2 * k, 64))
        try:
            ids, _ = self.index.knn_query(self.x32[rows], k=k, num_threads=threads)
            return np.asarray(ids, dtype=np.int64)
        except RuntimeError:
            # hnswlib could not find k results (a poorly connected graph): brute force.
            return self._brute_force(x, rows, k)

    def _brute_force(self, x: Floats, rows: Ints, k: int) -> Ints:
        out = np.empty((len(rows), k), dtype=np.int64)
        shard = x[self.lo : self.hi]
        step = max(1, _BLOCK // shard.shape[0])
        for lo in range(0, len(rows), step):
            similarity = x[rows[lo : lo + step]] @ shard.T
            top = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
            out[lo : lo + step] = np.sort(top, axis=1) + self.lo
        return out


def _knn_edges(
    x: Floats, *, k: int, threshold: float, threads: int
) -> tuple[Ints, Ints, Floats, int]:
    """The kNN graph's pairs within the cut (plus `COMPONENT_SLACK`), one per unordered pair
    (low row, high row, exact distance), and the largest k queried. Each shard is asked for the
    k nearest rows to every row; a row whose answers from a shard all fall within the cut is
    asked again with a doubled k, until some answer is beyond the cut, the shard is exhausted
    or k is `K_CAP`, so the graph is complete near the cut but for hnswlib's recall."""
    n = x.shape[0]
    x32 = np.ascontiguousarray(x, dtype=np.float32)
    shard_count = KNN_SHARDS if n >= KNN_SHARDS * MIN_SHARD_ROWS else 1
    bounds = [n * s // shard_count for s in range(shard_count + 1)]
    shards = [_Shard(x32, bounds[s], bounds[s + 1]) for s in range(shard_count)]
    with ThreadPoolExecutor(max_workers=min(threads, shard_count)) as pool:
        list(pool.map(_Shard.build, shards))

    found_rows: list[Ints] = []
    found_ids: list[Ints] = []
    found_dists: list[Floats] = []
    pending = np.arange(n, dtype=np.int64)
    k_now = min(k, n - 1)
    largest = k_now
    while len(pending):
        largest = k_now
        saturated = np.zeros(len(pending), dtype=bool)
        for shard in shards:
            size = shard.hi - shard.lo
            want = min(k_now + 1, size)  # +1: the row itself may be among the results
            ids = shard.query(x, pending, want, threads)
            dists = _pair_distances(x, pending, ids)
            if want < size:
                saturated |= (dists <= threshold).all(axis=1)
            keep = (ids != pending[:, None]) & (dists <= threshold + COMPONENT_SLACK)
            found_rows.append(np.broadcast_to(pending[:, None], ids.shape)[keep])
            found_ids.append(ids[keep])
            found_dists.append(dists[keep])
        if k_now >= min(K_CAP, n - 1):
            break
        pending = pending[saturated]
        k_now = min(2 * k_now, K_CAP, n - 1)

    rows = np.concatenate(found_rows)
    cols = np.concatenate(found_ids)
    dists = np.concatenate(found_dists)
    # One edge per unordered pair (re-queries and both directions repeat pairs).
    low, high = np.minimum(rows, cols), np.maximum(rows, cols)
    _, first = np.unique(low * n + high, return_index=True)
    return low[first], high[first], dists[first], largest


def _graph_average_linkage(x: Floats, left: Ints, right: Ints, threshold: float) -> Ints:
    """Average linkage of the unit rows `x` cut at `threshold`, knowing only which pairs of rows
    are within the cut (`left[i]`, `right[i]`: unordered, no repeats) instead of the full
    matrix. Memory O(m·d + pairs).

    For unit vectors the average cosine distance between clusters A and B is exactly
    1 - sum(A)·sum(B) / (|A|·|B|), so each cluster keeps only its sum vector and averages are
    computed when needed. Each cluster also keeps its candidates: the clusters within the cut
    of it. A merged cluster C = A ∪ B can be within the cut of X only if A or B is (the average
    over C is a weighted mean of the two), so C's candidates are found among A's and B's. Given
    every pair of rows within the cut, this is exact average linkage.

    Merges follow the nearest-neighbour chain (average linkage is reducible, so the chain
    builds the same hierarchy as merging the globally closest pair first): grow a chain of
    nearest candidates until two clusters are each other's nearest, then merge them. A cluster
    without candidates is final: every later merge it could join is a weighted mean of
    averages beyond the cut. Ties go to the previous chain link, then to the smaller id, so the
    result is deterministic."""
    m = x.shape[0]
    sums = x.copy()  # sums[slot[c]]: the sum of cluster c's rows
    slot: list[int] = list(range(m))
    size: list[int] = [1] * m
    parent: list[int] = list(range(m))
    near: dict[int, set[int]] = {i: set() for i in range(m)}
    for a, b in zip(left.tolist(), right.tolist(), strict=True):
        near[a].add(b)
        near[b].add(a)

    def averages(c: int, others: list[int]) -> Floats:
        sizes = np.array([size[o] for o in others], dtype=np.float64) * size[c]
        dots = sums[[slot[o] for o in others]] @ sums[slot[c]]
        values: Floats = np.clip(1.0 - dots / sizes, 0.0, 2.0)
        return values

    def merge(a: int, b: int) -> None:
        new = len(size)
        slot.append(slot[a])
        sums[slot[a]] += sums[slot[b]]
        size.append(size[a] + size[b])
        parent.append(new)
        parent[a] = parent[b] = new
        union = near.pop(a) | near.pop(b)
        union -= {a, b}
        others = sorted(union)
        kept: set[int] = set()
        if others:
            within = averages(new, others) <= threshold
            for o, keep in zip(others, within.tolist(), strict=True):
                candidates = near[o]
                candidates.discard(a)
                candidates.discard(b)
                if keep:
                    candidates.add(new)
                    kept.add(o)
        near[new] = kept

    start = 0
    while start < len(size):
        if near.get(start):
            chain = [start]
            while chain:
                top = chain[-1]
                if top not in near:  # merged from further down a chain closed by a tie
                    chain.pop()
                    continue
                others = sorted(near[top])
                values = averages(top, others) if others else np.zeros(0)
                beyond = values > threshold  # the cut seen differently by rounding: drop
                for o in np.asarray(others)[beyond].tolist():
                    near[top].discard(o)
                    near[o].discard(top)
                if beyond.all():  # final (also when there are no candidates)
                    chain.pop()
                    continue
                values[beyond] = np.inf
                at = int(np.argmin(values))  # the first minimum: the smallest id
                previous = chain[-2] if len(chain) > 1 else -1
                if previous in near[top]:
                    back = bisect.bisect_left(others, previous)
                    if values[back] <= values[at] + TIE_SLACK:  # rounding is not a reason
                        at = back
                if others[at] == previous:
                    chain.pop()
                    chain.pop()
                    merge(top, previous)
                else:
                    chain.append(others[at])
        start += 1

    roots = np.empty(m, dtype=np.int64)
    for i in range(m):
        root = i
        while parent[root] != root:
            root = parent[root]
        roots[i] = root
        node = i
        while parent[node] != root:  # path compression
            parent[node], node = root, parent[node]
    return _canonical(roots)
