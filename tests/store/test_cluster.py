"""Clustering of embedding vectors: the exact path against scipy directly, the kNN path against
the exact path, the sparse linkage for components too big for the exact step, and `assign`."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from store.patterns import cluster as cluster_module
from store.patterns.cluster import (
    EXACT_LIMIT,
    ClusterStats,
    _condensed_cosine,
    _exact_labels,
    _graph_average_linkage,
    assign,
    cluster,
)

D = 384


def unit(rows: npt.ArrayLike) -> npt.NDArray[np.float64]:
    x = np.asarray(rows, dtype=np.float64)
    normalised: npt.NDArray[np.float64] = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return normalised


def random_units(rng: np.random.Generator, n: int) -> npt.NDArray[np.float64]:
    return unit(rng.standard_normal((n, D)))


def around(
    rng: np.random.Generator, centre: npt.NDArray[np.float64], size: int, sigma: float
) -> npt.NDArray[np.float64]:
    """`size` unit vectors: the centre plus Gaussian noise. In 384-d the cosine distance
    between two such points is about 1 - 1/(1 + 384·sigma²): 0.13 at sigma 0.02, 0.38 at 0.04."""
    return unit(centre + sigma * rng.standard_normal((size, D)))


def blobs(
    rng: np.random.Generator, sizes: list[int], sigma: float
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]:
    """Well-separated groups (random centres in 384-d are ~orthogonal), shuffled."""
    centres = random_units(rng, len(sizes))
    x = np.vstack([around(rng, c, s, sigma) for c, s in zip(centres, sizes, strict=True)])
    truth = np.repeat(np.arange(len(sizes)), sizes)
    order = rng.permutation(len(x))
    return x[order].astype(np.float32), truth[order]


def canonical(labels: npt.ArrayLike) -> list[int]:
    """Labels renumbered by first appearance: equal lists mean equal partitions."""
    seen: dict[int, int] = {}
    return [seen.setdefault(int(label), len(seen)) for label in np.asarray(labels)]


def scipy_reference(x: npt.ArrayLike, threshold: float = 0.4) -> list[int]:
    tree = linkage(pdist(np.asarray(x, dtype=np.float64), "cosine"), method="average")
    return canonical(fcluster(tree, t=threshold, criterion="distance"))


def nested(rng: np.random.Generator, groups: int) -> npt.NDArray[np.float32]:
    """Groups of 2-3 sub-groups whose spread straddles the cut: average linkage splits some
    groups and not others, while each group stays far (distance ~1) from every other."""
    parts = []
    for _ in range(groups):
        centre = random_units(rng, 1)[0]
        spread = rng.uniform(0.015, 0.045)
        for _ in range(int(rng.integers(2, 4))):
            sub = unit(centre + spread * rng.standard_normal(D))
            parts.append(around(rng, sub, int(rng.integers(5, 14)), rng.uniform(0.015, 0.03)))
    x = np.vstack(parts)
    return x[rng.permutation(len(x))].astype(np.float32)


# -- the exact path -------------------------------------------------------------------------


def test_well_separated_groups_are_recovered_and_far_points_are_singletons() -> None:
    rng = np.random.default_rng(1)
    x, truth = blobs(rng, [15, 9, 22, 4, 12, 30], sigma=0.02)
    noise = random_units(rng, 6).astype(np.float32)
    labels, stats = cluster(np.vstack([x, noise]))
    assert labels.dtype == np.int64
    assert canonical(labels) == canonical(np.concatenate([truth, np.arange(6) + 100]))
    assert list(labels[:5]) == canonical(labels)[:5]  # canonical: numbered by first row
    assert stats == ClusterStats(len(labels), "exact", 1, len(labels), 0, stats.seconds)


@pytest.mark.parametrize("sigma", [0.03, 0.037, 0.04, 0.043, 0.05])
def test_exact_path_equals_scipy_on_structure_around_the_cut(sigma: float) -> None:
    rng = np.random.default_rng(int(sigma * 1000))
    sizes = [int(s) for s in rng.integers(10, 40, size=25)]
    x, _ = blobs(rng, sizes, sigma=sigma)
    x = x[:500]
    assert len(x) == 500
    labels, stats = cluster(x)
    assert stats.method == "exact"
    reference = scipy_reference(x)
    assert canonical(labels) == reference
    assert len(x) > len(set(reference)) > len(sizes) // 2  # neither all merged nor all apart


def test_condensed_distances_match_pdist() -> None:
    x = random_units(np.random.default_rng(2), 57)
    assert np.allclose(_condensed_cosine(x), pdist(x, "cosine"), atol=1e-12)


def test_the_cut_is_inclusive_like_fcluster() -> None:
    # Two points at cosine distance exactly 0.5 (all values exact in binary).
    x = np.zeros((2, D))
    x[0, 0] = 1.0
    x[1, :4] = 0.5
    assert list(cluster(x, threshold=0.5)[0]) == [0, 0]
    assert list(cluster(x, threshold=np.nextafter(0.5, 0.0))[0]) == [0, 1]
    assert canonical(cluster(x, threshold=0.5)[0]) == scipy_reference(x, threshold=0.5)


# -- the kNN path ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def nested_2k() -> npt.NDArray[np.float32]:
    x = nested(np.random.default_rng(3), groups=95)
    assert 2_000 <= len(x) <= EXACT_LIMIT
    return x[:2_000]


def test_knn_path_equals_exact_path(nested_2k: npt.NDArray[np.float32]) -> None:
    exact, exact_stats = cluster(nested_2k)
    knn, stats = cluster(nested_2k, exact_limit=50)
    assert exact_stats.method == "exact"
    assert stats.method == "knn"
    assert stats.largest_component <= 50  # every component took the exact step
    assert stats.components < len(set(exact.tolist()))  # some components were split
    assert list(knn) == list(exact)


def test_both_paths_are_deterministic(nested_2k: npt.NDArray[np.float32]) -> None:
    first, _ = cluster(nested_2k, exact_limit=50, threads=2)
    again, _ = cluster(nested_2k.copy(), exact_limit=50, threads=2)
    single, _ = cluster(nested_2k, exact_limit=50, threads=1)
    assert list(first) == list(again) == list(single)
    giant, stats = cluster(nested_2k, exact_limit=20, threads=2)
    assert stats.largest_component > 20  # some components took the graph linkage
    assert list(giant) == list(cluster(nested_2k, exact_limit=20, threads=2)[0])
    assert list(giant) == list(first)  # the graph was complete within the cut: exact
    exact = cluster(nested_2k[:600])[0]
    assert list(exact) == list(cluster(nested_2k[:600])[0])


def test_giant_components_take_the_graph_linkage() -> None:
    rng = np.random.default_rng(4)
    x, truth = blobs(rng, [80, 60, 95, 70], sigma=0.02)
    noise = random_units(rng, 5).astype(np.float32)
    labels, stats = cluster(np.vstack([x, noise]), exact_limit=30)
    assert stats.method == "knn"
    assert stats.largest_component == 95
    assert stats.knn_k > 32  # saturated rows were re-queried with a larger k
    assert canonical(labels) == canonical(np.concatenate([truth, np.arange(5) + 100]))


def test_graph_linkage_with_missing_pairs_never_mixes_groups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Capping k far below the group size leaves most pairs within the cut unknown: groups
    # may split, but no cluster takes members from two groups.
    monkeypatch.setattr(cluster_module, "K_CAP", 8)
    rng = np.random.default_rng(5)
    x, truth = blobs(rng, [60, 45, 70], sigma=0.03)
    labels, stats = cluster(x, exact_limit=10, k=4)
    assert stats.method == "knn"
    assert stats.knn_k == 8
    for label in set(labels.tolist()):
        assert len(set(truth[labels == label].tolist())) == 1


@pytest.mark.parametrize("seed", [6, 7, 8])
def test_graph_linkage_given_every_pair_within_the_cut_is_exact(seed: int) -> None:
    x = unit(nested(np.random.default_rng(seed), groups=8))
    i, j = np.triu_indices(len(x), k=1)
    within = _condensed_cosine(x) <= 0.4  # condensed order is the triu order
    left, right = i[within].astype(np.int64), j[within].astype(np.int64)
    labels = _graph_average_linkage(x, left, right, 0.4)
    assert list(labels) == list(_exact_labels(x, 0.4)) == scipy_reference(x)
    assert len(x) > len(set(labels.tolist())) > 8


def test_a_chained_giant_component_matches_the_exact_path() -> None:
    # A random walk of centres: one component (neighbours along the walk are within the cut)
    # that average linkage cuts into many clusters.
    rng = np.random.default_rng(12)
    centres = [random_units(rng, 1)[0]]
    for _ in range(119):
        centres.append(unit(centres[-1] + 0.025 * rng.standard_normal(D)))
    x = np.vstack([around(rng, c, 5, 0.02) for c in centres]).astype(np.float32)
    labels, stats = cluster(x, exact_limit=100)
    assert stats.method == "knn"
    assert stats.largest_component > 100
    assert list(labels) == list(cluster(x)[0])
    assert len(set(labels.tolist())) > 5


# -- edge cases -----------------------------------------------------------------------------


def test_empty_and_single() -> None:
    labels, stats = cluster(np.zeros((0, D), dtype=np.float32))
    assert labels.dtype == np.int64
    assert labels.shape == (0,)
    assert (stats.n, stats.components, stats.largest_component) == (0, 0, 0)
    one, stats = cluster(random_units(np.random.default_rng(7), 1).astype(np.float32))
    assert list(one) == [0]
    assert stats.n == 1


@pytest.mark.parametrize("exact_limit", [None, 5])
def test_duplicates(exact_limit: int | None) -> None:
    rng = np.random.default_rng(8)
    a, b, c = random_units(rng, 3).astype(np.float32)
    x = np.vstack([np.repeat(a[None], 40, axis=0), np.repeat(b[None], 3, axis=0), c[None]])
    x = x[rng.permutation(len(x))]
    labels, _ = cluster(x, exact_limit=exact_limit)
    expected = [0 if np.array_equal(row, a) else 1 if np.array_equal(row, b) else 2 for row in x]
    assert canonical(labels) == canonical(expected)


def test_zero_rows_are_far_from_everything() -> None:
    x = np.zeros((3, D), dtype=np.float32)
    x[0, 0] = x[1, 0] = 1.0
    assert list(cluster(x)[0]) == [0, 0, 1]


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="2-D"):
        cluster(np.zeros(D))
    bad = random_units(np.random.default_rng(9), 3)
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cluster(bad)
    with pytest.raises(ValueError, match="at least 1"):
        cluster(bad, k=0)


# -- assign ---------------------------------------------------------------------------------


def test_assign_joins_near_clusters_and_refuses_far_vectors() -> None:
    rng = np.random.default_rng(10)
    x, truth = blobs(rng, [12, 20, 9], sigma=0.02)
    labels, _ = cluster(x)
    centres = [x[labels == label].mean(axis=0) for label in range(3)]
    new = np.vstack([around(rng, centres[2], 1, 0.02), random_units(rng, 1)])
    new = np.vstack([new, around(rng, centres[0], 1, 0.02)]).astype(np.float32)
    assert list(assign(new, x, labels)) == [2, -1, 0]
    assert len(set(truth.tolist())) == 3


def test_assign_uses_the_average_and_an_inclusive_threshold() -> None:
    members = np.zeros((2, D), dtype=np.float32)
    members[0, 0] = members[1, 1] = 1.0
    labels = np.array([4, 4])
    new = np.zeros((2, D), dtype=np.float32)
    new[0, 0] = 1.0  # distances 0 and 1: average 0.5
    new[1, :4] = 0.5  # distances 0.5 and 0.5
    assert list(assign(new, members, labels, threshold=0.5)) == [4, 4]
    assert list(assign(new, members, labels, threshold=np.nextafter(0.5, 0.0))) == [-1, -1]


def test_assign_prefers_the_closest_then_the_smaller_label() -> None:
    members = np.zeros((4, D), dtype=np.float32)
    members[0, 0] = members[1, 0] = 1.0  # two clusters at the same place: labels 7 and 3
    members[2, :2] = members[3, :2] = np.sqrt(0.5)  # label 5: 45 degrees away
    labels = np.array([7, 3, 5, -1])
    new = np.zeros((3, D), dtype=np.float32)
    new[0, 0] = 1.0
    new[1, :2] = np.sqrt(0.5)
    new[2, 2] = 1.0
    assert list(assign(new, members, labels)) == [3, 5, -1]
    assert list(assign(new[:0], members, labels)) == []
    assert list(assign(new, members, np.full(4, -1))) == [-1, -1, -1]


def test_graph_linkage_survives_many_exact_ties() -> None:
    """Real node texts repeat verbatim: a giant component full of duplicates (distance 0
    everywhere, rounded differently from each side) still clusters, deterministically."""
    rng = np.random.default_rng(7)
    centres = random_units(rng, 6)
    rows = np.repeat(centres, 150, axis=0)  # 900 rows, 6 groups of exact duplicates
    rows = np.vstack([rows, around(rng, centres[0], 300, 0.05)])
    first, _ = cluster(rows, exact_limit=100, k=8)
    again, _ = cluster(rows, exact_limit=100, k=8)
    assert first.tolist() == again.tolist()
    for g in range(6):
        assert len(set(first[g * 150 : (g + 1) * 150].tolist())) == 1
    assert len(set(first[[0, 150, 300, 450, 600, 750]].tolist())) == 6
