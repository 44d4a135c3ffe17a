"""Bootstrap weights as every plugin's contributions take them (docs/statistics.md): a batch of
replicates is a C-contiguous (B, n) int64 array of non-negative sample weights, and a weighted
sum is reduced one contiguous 1-D row at a time, so a replicate's bits never depend on the other
rows of its batch, on B or on the CPU. Plain Python + numpy, no Django."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def as_weights(weights: np.ndarray | Sequence[Sequence[int]], n_samples: int) -> np.ndarray:
    """A checked (B, n_samples) C-contiguous int64 batch; a 1-D vector is one replicate."""
    array = np.asarray(weights)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != n_samples:
        raise ValueError(f"weights must have shape (B, {n_samples}), not {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"weights must be integers, not {array.dtype}")
    array = np.ascontiguousarray(array, dtype=np.int64)
    if (array < 0).any():
        raise ValueError("weights must not be negative")
    return array


def row_sums(products: np.ndarray) -> np.ndarray:
    """Each row's `np.add.reduce`, one contiguous 1-D row at a time: the pairwise sum of
    `np.mean` over the same values, independent of the other rows and of B."""
    out = np.empty(products.shape[0], dtype=np.float64)
    for row in range(products.shape[0]):
        out[row] = np.add.reduce(products[row])
    return out
