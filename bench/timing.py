"""The one way the bench/ scripts print a latency distribution."""

from __future__ import annotations

import statistics


def report(label: str, times_ms: list[float], *, width: int = 50) -> None:
    """Print p50, p95 and min of `times_ms` (milliseconds) on one line."""
    ordered = sorted(times_ms)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    print(
        f"{label:<{width}} p50 {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   "
        f"min {ordered[0]:6.1f} ms   (n={len(ordered)})"
    )
