"""all-MiniLM-L6-v2's layers in numpy for embedding.py: GELU, LayerNorm, a layer's weights, the
dense layers' fixed-shape GEMMs with the BLAS kernel's measured row alignment, and the cosine
scores. Each is written so that a row's result depends on that row alone (embedding.py's
SentenceEncoder._forward and docs/nap-engine.md, "Determinism").

Part of the NAP engine's fingerprint (label_store.fingerprint), with embedding.py. No Django.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np

_F32 = np.float32
# Abramowitz & Stegun 7.1.26: erfc(z) ~= poly(t) * exp(-z^2), t = 1 / (1 + p z), z >= 0, with an
# absolute error below 1.5e-7, i.e. about one float32 ulp of 1.0: as exact as float32 GELU gets.
# numpy has no vectorised erf, and BERT's GELU is the erf form, not the tanh approximation.
_AS_P = _F32(0.3275911)
_AS_A = tuple(_F32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_INV_SQRT2 = _F32(1.0 / math.sqrt(2.0))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, x * Phi(x), as BERT's ``hidden_act="gelu"``, in float32.

    2 Phi(x) = erfc(-x / sqrt 2): with e = erfc(|x| / sqrt 2) (Abramowitz & Stegun 7.1.26,
    see _AS_*), that is e for x < 0 and 2 - e for x >= 0, so the negative tail (where
    1 + erf nearly cancels) keeps its relative precision. Error vs math.erf on [-12, 12]:
    2.2e-7 relative to max(|gelu(x)|, 1), at most 2.5 float32 ulps of the result (tested).

    Speed: the ~20 elementwise passes run over cache-sized blocks (2.5x faster than whole
    arrays, which are re-read from memory by every pass and page-faulted in when fresh).
    """
    x = np.ascontiguousarray(x, dtype=_F32)
    out = np.empty_like(x)
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, flat_x.size, _GELU_BLOCK):
        _gelu_block(flat_x[start : start + _GELU_BLOCK], flat_out[start : start + _GELU_BLOCK])
    return out


_GELU_BLOCK = 32 * 1536  # elements: ~200 KB per buffer, three buffers stay in L2


def _gelu_block(x: np.ndarray, out: np.ndarray) -> None:
    """gelu() on one block, into out. |x| / sqrt 2 is clipped at 9 (erfc(9) ~ 4e-37): beyond,
    exp(-z^2) would be a float32 subnormal, slow on x86. The x >= 0 branch is arithmetic
    (e + [x >= 0] * (2 - 2e)) since np.where on a random mask is several times slower."""
    z = np.abs(x)
    z *= _INV_SQRT2
    np.minimum(z, _F32(9.0), out=z)
    t = np.multiply(z, _AS_P, out=out)
    t += _F32(1.0)
    np.reciprocal(t, out=t)
    a1, a2, a3, a4, a5 = _AS_A
    poly = np.multiply(t, a5)
    for a in (a4, a3, a2, a1):
        poly += a
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    z *= poly  # z = e = erfc(|x| / sqrt 2)
    np.multiply(z, _F32(-2.0), out=t)
    t += _F32(2.0)
    t *= x >= 0
    t += z  # t = 2 Phi(x)
    t *= x
    t *= _F32(0.5)


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in place on x (a buffer the caller owns); returns x."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.square(x).mean(axis=-1, keepdims=True)
    var += _F32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


class _Layer:
    """One BERT encoder layer's weights as (in, out) for x @ W, and Q/K/V fused.

    The weights are stored (out, in); the (in, out) matrices are their transposed views, not
    copies: BLAS packs either layout into the same panels (the same bits, measured), at a
    GEMM cost ~3% higher than a contiguous copy, while copying them took ~50 ms of every
    process's start (and reading them ~45 ms more, now memory-mapped).
    """

    __slots__ = ("ao_b", "ao_w", "ln1_b", "ln1_w", "qkv_b", "qkv_w")
    __slots__ += ("in_w", "in_b", "out_w", "out_b", "ln2_w", "ln2_b")

    def __init__(self, w: Mapping[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> np.ndarray:
            return np.asarray(w[prefix + name], dtype=_F32)

        att = "attention.self."
        self.qkv_w = np.concatenate([get(att + f"{n}.weight") for n in ("query", "key", "value")]).T
        self.qkv_b = np.concatenate([get(att + f"{n}.bias") for n in ("query", "key", "value")])
        self.ao_w = get("attention.output.dense.weight").T
        self.ao_b = get("attention.output.dense.bias")
        self.ln1_w = get("attention.output.LayerNorm.weight")
        self.ln1_b = get("attention.output.LayerNorm.bias")
        self.in_w = get("intermediate.dense.weight").T
        self.in_b = get("intermediate.dense.bias")
        self.out_w = get("output.dense.weight").T
        self.out_b = get("output.dense.bias")
        self.ln2_w = get("output.LayerNorm.weight")
        self.ln2_b = get("output.LayerNorm.bias")


#: Token rows per dense-layer GEMM (_dense). A multiple of the tiles of OpenBLAS's sgemm
#: kernels (4, 6, 8, 12, 16 rows), so that no block has a partial tile. 48 reaches ~90% of
#: the speed of one GEMM over all rows on the AVX-512 EPYC machine; larger blocks gain
#: little and pad a short batch more.
ROW_BLOCK = 48


def _dense(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """(rows, k) @ (k, m) as GEMMs of exactly ROW_BLOCK rows each (rows is a multiple of it).

    Not one (rows, k) GEMM: its shape would vary with the batch, and so could a row's bits
    (see SentenceEncoder._forward).
    """
    out = np.empty((x.shape[0], weight.shape[1]), dtype=_F32)
    for first in range(0, x.shape[0], ROW_BLOCK):
        np.matmul(x[first : first + ROW_BLOCK], weight, out=out[first : first + ROW_BLOCK])
    return out


def row_alignment(layer: _Layer) -> int:
    """The smallest a dividing ROW_BLOCK such that, in _dense's GEMMs, a row's bits depend on
    its offset in the block modulo a alone; ROW_BLOCK if there is none.

    Measured, not assumed: an optimised sgemm kernel computes its tile's rows with more
    than one instruction order (OpenBLAS's Haswell kernels: offsets 0-5 and 6-11 of every
    12 differ; its SkylakeX and Sandybridge kernels: every offset alike, a = 1). A block of
    one repeated row shows it, since a GEMM never mixes one row's data into another's
    result: the classes of offsets whose results are the same bits are the kernel's. Each
    dense layer's shape is probed with two rows; the answer is their least common multiple.
    A few microseconds, once per encoder.
    """
    alignment = 1
    for seed, weight in itertools.product(
        (1, 2), (layer.qkv_w, layer.ao_w, layer.in_w, layer.out_w)
    ):
        row = np.random.default_rng(seed).standard_normal(weight.shape[0]).astype(_F32)
        results = [out.tobytes() for out in _dense(np.tile(row, (ROW_BLOCK, 1)), weight)]
        period = next(
            a
            for a in range(1, ROW_BLOCK + 1)
            if ROW_BLOCK % a == 0 and all(results[o] == results[o % a] for o in range(ROW_BLOCK))
        )
        alignment = math.lcm(alignment, period)
    return alignment if ROW_BLOCK % alignment == 0 else ROW_BLOCK


# Query rows per block in cosine_scores: bounds the float64 product buffer to ~16 MB.
_SCORE_BLOCK_ELEMENTS = 2_000_000


def cosine_scores(queries: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Dot products of unit rows, (n, d) x (m, d) -> (n, m) float64, each pair on its own.

    Not ``queries @ candidates.T``: a GEMM may give two equal candidate rows different
    scores by their position (measured with OpenBLAS's Sandybridge kernels: "Tying" at
    index 2 beat the equal "tying" at index 1), and its summation order varies with the
    CPU. Here each float32 x float32 product is exact in float64, and the 384 products of a
    pair are summed by numpy's pairwise sum along a contiguous row, whose order is fixed by
    the row length. So a score depends only on its two embeddings, not on the batch, the
    position or the CPU's BLAS kernels.
    """
    queries = np.asarray(queries, dtype=np.float64)
    candidates = np.asarray(candidates, dtype=np.float64)
    out = np.empty((len(queries), len(candidates)), dtype=np.float64)
    block = max(1, _SCORE_BLOCK_ELEMENTS // max(1, candidates.size))
    for start in range(0, len(queries), block):
        products = queries[start : start + block, None, :] * candidates[None, :, :]
        out[start : start + block] = products.sum(axis=-1)
    return out
