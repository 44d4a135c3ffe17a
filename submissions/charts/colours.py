"""Colours of the entry page's charts and the arithmetic that keeps them readable: WCAG 2.x
relative luminance and contrast ratio, a sequential scale for the heatmap, and the text colour
that reads best on a fill. Plain Python (no Django), so the tests check every colour."""

from __future__ import annotations

import itertools

# The heatmap's sequential scale (light to dark blue, as ColorBrewer's "Blues"): one hue whose
# lightness carries the value, readable in greyscale and by the common colour-vision deficiencies.
SCALE_STOPS: tuple[tuple[float, str], ...] = (
    (0.0, "#eff5fb"),
    (0.25, "#bdd7ee"),
    (0.5, "#6baed6"),
    (0.75, "#2171b5"),
    (1.0, "#08306b"),
)
# Text on a heatmap cell is black or white, whichever contrasts more: with pure black and white
# the worse of the two best choices is still 4.58:1 on any fill (WCAG AA for text is 4.5:1).
DARK_TEXT = "#000000"
LIGHT_TEXT = "#ffffff"
# A cell without a value: white with a grey outline and a dash.
MISSING_FILL = "#ffffff"
MISSING_STROKE = "#8a939d"

# The bar chart (on white): the bar, its empty track, the interval whisker, the board's best.
BAR_FILL = "#4f86c6"
TRACK_FILL = "#eef0f3"
TRACK_STROKE = "#8a939d"
WHISKER = "#1d232b"
BEST_MARK = "#b3261e"
TEXT = "#1d232b"
MUTED_TEXT = "#5d6874"
BACKGROUND = "#ffffff"


def _rgb(colour: str) -> tuple[int, int, int]:
    value = colour.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def _hex(rgb: tuple[float, float, float]) -> str:
    return "#" + "".join(f"{round(channel):02x}" for channel in rgb)


def relative_luminance(colour: str) -> float:
    """WCAG 2.x relative luminance of an sRGB colour "#rrggbb" (0: black, 1: white)."""

    def linear(channel: int) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(channel) for channel in _rgb(colour))
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast_ratio(first: str, second: str) -> float:
    """WCAG contrast ratio of two colours, 1 (none) to 21 (black on white)."""
    lighter, darker = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def scale_colour(share: float) -> str:
    """The heatmap's fill for `share` of a metric's scale (clamped to 0..1), interpolated
    between the neighbouring stops in sRGB."""
    share = min(1.0, max(0.0, share))
    for (low, low_colour), (high, high_colour) in itertools.pairwise(SCALE_STOPS):
        if share <= high:
            t = (share - low) / (high - low)
            a, b = _rgb(low_colour), _rgb(high_colour)
            return _hex(tuple(x + (y - x) * t for x, y in zip(a, b, strict=True)))  # type: ignore[arg-type]
    return SCALE_STOPS[-1][1]


def text_colour_on(fill: str) -> str:
    """Black or white, whichever contrasts more with `fill`."""
    if contrast_ratio(DARK_TEXT, fill) >= contrast_ratio(LIGHT_TEXT, fill):
        return DARK_TEXT
    return LIGHT_TEXT
