"""The Bradley-Terry maximum-likelihood fit behind the ratings (docs/ratings.md), batched over
bootstrap rounds, with arithmetic that gives the same bits on every CPU.

Plain numpy, no Django. The house rule is that no published number depends on the CPU, the
batch or the order of work, and machines with AVX-512 run CI, so the numeric path uses only
the operations IEEE 754 rounds exactly (+ - * / and comparisons), elementwise, in a fixed
order: no BLAS (`np.linalg`, `matmul`, `dot`), whose blocking depends on the CPU and the
batch, no `np.sum` over floats along an axis numpy may split for SIMD, and none of numpy's
transcendental ufuncs (`np.exp`, `np.log`, `np.power` dispatch to SIMD code on AVX-512 that
differs in the last bits). Three consequences:

- The fit works on strengths p_i > 0 (P(i beats j) = p_i / (p_i + p_j)), not on log-strengths,
  so a probability is one addition and one division.
- A Newton step d on the log-strengths is applied as p_i <- p_i * f(d_i) with
  f(d) = 1 + d for d >= 0 and 1 / (1 - d) for d < 0: positive for every d, equal to exp(d)
  to second order (so Newton's quadratic convergence is kept) and never a larger move than
  exp(d) (|log f(d)| = log(1 + |d|) <= |d|), which damps the first steps.
- The Newton system is solved by Gaussian elimination written out over the rounds (each
  operation is one elementwise numpy call on a (rows, rounds) slab), and the log needed at the
  end for the Elo scale is `natural_log` below, a fixed polynomial.

Each round is a column of every array and no operation mixes columns, so a round's result
depends only on its own counts: not on B, on the other rounds, or on which rounds are still
iterating (converged rounds leave the batch; a test checks that batching changes no bit).
"""

from __future__ import annotations

import numpy as np

# Convergence: every model's gradient (observed minus expected doubled wins) within this
# fraction of its doubled battle count. At 1e-11 a rating is exact to about 1e-8 Elo, far
# below the 2 decimals published, and still well above the rounding noise of the sums
# (about 1e-15 of the count).
GRADIENT_TOLERANCE = 1e-11
# A step moves no log-strength by more than this (a factor 1 + 3 = 4 up, 1/4 down, about 240
# Elo): far-off starting points approach in a few bounded steps instead of overshooting.
MAX_STEP = 3.0
# Newton from all-equal strengths needs 5 to 15 steps on real data; ratings 3,000 Elo apart
# need about 30. A round still short of the tolerance after this many is a bug, reported.
MAX_ITERATIONS = 200

# ln 2 split in two (fdlibm's constants): the high part has few bits, so exponent * LN2_HIGH
# is exact for any double's exponent, and the low part carries the rest.
LN2_HIGH = 6.93147180369123816490e-01
LN2_LOW = 1.90821492927058770002e-10
SQRT_HALF = 0.70710678118654757
# 1 / (2k + 1) for the atanh series, highest first (Horner's rule); 11 terms reach |s| <=
# 0.1716 (s = (m - 1) / (m + 1) for m in [sqrt(1/2), sqrt(2))) to below 1e-19.
_ATANH_COEFFICIENTS = tuple(1.0 / (2 * k + 1) for k in range(11, -1, -1))


class FitDidNotConverge(RuntimeError):
    """Newton's method stopped short of the tolerance: a defect of this module, not of the
    battles (existence is checked before the fit)."""


def natural_log(x: np.ndarray) -> np.ndarray:
    """ln(x) for finite x > 0, elementwise, to within a few units in the last place, from
    `np.frexp` (exact) and + - * / only, so the same bits on every CPU (np.log is not).

    x = m * 2**e with m in [sqrt(1/2), sqrt(2)), and ln(m) = 2 atanh(s), s = (m - 1)/(m + 1),
    summed as the odd series 2 (s + s**3/3 + s**5/5 + ...) by Horner's rule.
    """
    mantissa, exponent = np.frexp(np.asarray(x, dtype=np.float64))
    low = mantissa < SQRT_HALF
    mantissa = np.where(low, mantissa * 2.0, mantissa)
    exponent = np.where(low, exponent - 1, exponent).astype(np.float64)
    s = (mantissa - 1.0) / (mantissa + 1.0)
    s2 = s * s
    series = np.full_like(s, _ATANH_COEFFICIENTS[0])
    for coefficient in _ATANH_COEFFICIENTS[1:]:
        series = series * s2 + coefficient
    return exponent * LN2_HIGH + (exponent * LN2_LOW + 2.0 * s * series)


def _sum_over_opponents(values: np.ndarray) -> np.ndarray:
    """(M, M, R) -> (M, R): row i's sum over j = 0, 1, ..., M - 1 in that order."""
    total = values[:, 0, :].copy()
    for opponent in range(1, values.shape[1]):
        total += values[:, opponent, :]
    return total


def _solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """x with matrix[:, :, r] @ x[:, r] = rhs[:, r] for every round r: symmetric Gaussian
    elimination (LDL^T) without pivoting, every matrix here being symmetric positive
    definite, one elementwise numpy call per row, in a fixed order.

    `matrix` is (n, n, R) and only its lower triangle is read; it is overwritten with the
    multipliers. `rhs` is (n, R). Row by row touches half the cells the full update would,
    with no (n, n, R) temporary: about 4 times faster for 50 models.
    """
    n = matrix.shape[0]
    rhs = rhs.copy()
    for pivot in range(n - 1):
        multipliers = matrix[pivot + 1 :, pivot] / matrix[pivot, pivot]
        for row in range(pivot + 1, n):
            # A[row, j] -= l[row] * A[j, pivot] for pivot < j <= row (A[pivot, j] by symmetry).
            matrix[row, pivot + 1 : row + 1] -= (
                multipliers[row - pivot - 1] * matrix[pivot + 1 : row + 1, pivot]
            )
        rhs[pivot + 1 :] -= multipliers * rhs[pivot]
        matrix[pivot + 1 :, pivot] = multipliers
    solution = np.empty_like(rhs)
    for pivot in range(n - 1, -1, -1):
        value = rhs[pivot] / matrix[pivot, pivot]
        for later in range(pivot + 1, n):
            value -= matrix[later, pivot] * solution[later]
        solution[pivot] = value
    return solution


def fit_strengths(
    wins: np.ndarray, included: np.ndarray, start: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The maximum-likelihood strengths of every round, and the Newton steps each took.

    `wins` is (M, M, R) float64: wins[i, j, r] is twice the number of battles model i won
    against j in round r plus the number they tied (a tie is half a win for each side, so
    doubled counts are integers). `included` is (M, R) bool: the models each round fits;
    every other model's row and column of `wins` must be zero, and its strength comes back
    as 1. `start` (M,) is the strengths every round starts from (all equal by default; the
    bootstrap starts from the full data's fit, a few steps from each round's). The directed
    graph "i beat or tied j" restricted to a round's included models must be strongly
    connected (the caller checks; it is what makes the maximum exist).

    Returns `strengths` (M, R), scaled so each round's strongest included model has 1, and
    `iterations` (R,) int. The log-likelihood in theta = ln p is concave; Newton's method on
    it solves (L + lambda u u^T) d = g each step, with g the gradient (observed minus expected
    doubled wins), L its negative Hessian (a graph Laplacian with weights
    N_ij P_ij P_ji) and u the included models' indicator: the rank-one term fixes the free
    overall scale without singling out a model (g is orthogonal to u, so d is L's solution
    with sum of d over u equal to 0).
    """
    models, _, rounds = wins.shape
    strengths = np.ones((models, rounds))
    iterations = np.zeros(rounds, dtype=np.int64)
    if rounds == 0:
        return strengths, iterations
    # The active rounds' arrays; a round that converges leaves all of them at once.
    active = np.arange(rounds)
    played = wins + wins.transpose(1, 0, 2)  # N_ij, doubled battles between i and j
    won = _sum_over_opponents(wins)
    scale = np.maximum(_sum_over_opponents(played), 1.0)
    inside = included.astype(np.float64)
    p = np.ones((models, rounds))
    if start is not None:
        p = np.where(included, np.asarray(start, dtype=np.float64)[:, None], 1.0)
    for step in range(MAX_ITERATIONS + 1):
        beats = p[:, None, :] + p[None, :, :]
        np.divide(p[:, None, :], beats, out=beats)  # P_ij = p_i / (p_i + p_j)
        expected = played * beats  # N_ij P_ij
        gradient = won - _sum_over_opponents(expected)
        worst = np.max(np.abs(gradient) / scale, axis=0)
        converged = worst <= GRADIENT_TOLERANCE
        if converged.any():
            strengths[:, active[converged]] = p[:, converged]
            iterations[active[converged]] = step
            keep = ~converged
            if not keep.any():
                return strengths, iterations
            active, p, won, scale, inside, gradient = (
                active[keep],
                p[:, keep],
                won[:, keep],
                scale[:, keep],
                inside[:, keep],
                gradient[:, keep],
            )
            played, beats, expected = played[:, :, keep], beats[:, :, keep], expected[:, :, keep]
        if step == MAX_ITERATIONS:
            break
        hessian = expected
        hessian *= beats.transpose(1, 0, 2)  # N_ij P_ij P_ji, the Laplacian's weights
        diagonal = _sum_over_opponents(hessian)
        size = inside[0].copy()
        trace = diagonal[0].copy()
        for model in range(1, models):
            size += inside[model]
            trace += diagonal[model]
        gauge = trace / (size * size)
        np.negative(hessian, out=hessian)
        hessian += inside[:, None, :] * inside[None, :, :] * gauge
        for model in range(models):
            # An excluded model's row and column are zero: 1 on its diagonal keeps it at d = 0.
            hessian[model, model] += np.where(inside[model] > 0, diagonal[model], 1.0)
        change = _solve(hessian, gradient)
        largest = np.max(np.abs(change), axis=0)
        change *= np.where(largest > MAX_STEP, MAX_STEP / np.maximum(largest, MAX_STEP), 1.0)
        factor = np.where(change >= 0, 1.0 + change, 1.0 / (1.0 - np.minimum(change, 0.0)))
        p = p * factor
        p = p / np.max(p * inside, axis=0)
        p = np.where(inside > 0, p, 1.0)
    raise FitDidNotConverge(
        f"{active.size} bootstrap round(s) did not converge in {MAX_ITERATIONS} Newton steps"
    )
