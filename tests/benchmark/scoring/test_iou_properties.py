"""Property tests for the three IoU functions: bounds, symmetry, identity."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugins.medvidbench.scoring.metrics.dense_captioning import (
    activitynet_iou,
    activitynet_iou_matrix,
)
from plugins.medvidbench.scoring.metrics.stg import box_iou
from plugins.medvidbench.scoring.metrics.tal import hull_iou

pytestmark = pytest.mark.unit

coordinate = st.floats(min_value=0, max_value=10_000, allow_nan=False)
frame = st.integers(min_value=0, max_value=100_000)


@st.composite
def segments(draw, values=coordinate):
    a, b = draw(values), draw(values)
    return (min(a, b), max(a, b))


@st.composite
def boxes(draw):
    x1, x2 = sorted((draw(coordinate), draw(coordinate)))
    y1, y2 = sorted((draw(coordinate), draw(coordinate)))
    return [x1, y1, x2, y2]


@given(segments(), segments())
def test_hull_iou_is_bounded_and_symmetric(a, b):
    assert 0.0 <= hull_iou(a, b) <= 1.0
    assert hull_iou(a, b) == hull_iou(b, a)


@given(segments())
def test_hull_iou_of_a_segment_with_itself_is_one_unless_empty(a):
    assert hull_iou(a, a) == (1.0 if a[1] > a[0] else 0.0)


@given(boxes(), boxes())
def test_box_iou_is_bounded_and_symmetric(a, b):
    forward = box_iou(np.array([a]), np.array([b]))[0]
    backward = box_iou(np.array([b]), np.array([a]))[0]
    assert 0.0 <= forward <= 1.0 + 1e-12
    assert forward == pytest.approx(backward, rel=1e-12, abs=1e-12)


@given(boxes())
def test_box_iou_of_a_box_with_itself_is_one_unless_tiny(a):
    area = (a[2] - a[0]) * (a[3] - a[1])
    iou = box_iou(np.array([a]), np.array([a]))[0]
    if area >= 1e-6:
        assert iou == pytest.approx(1.0)
    else:
        assert iou <= 1.0


@given(segments(frame), segments(frame))
def test_activitynet_iou_is_bounded_and_symmetric(a, b):
    assert 0.0 <= activitynet_iou(a, b) < 1.0
    assert activitynet_iou(a, b) == activitynet_iou(b, a)


@given(segments(frame))
def test_activitynet_iou_of_a_segment_with_itself_is_one_but_for_epsilon(a):
    expected = 1.0 if a[1] > a[0] else 0.0
    assert activitynet_iou(a, a) == pytest.approx(expected, abs=1e-7)


@given(
    st.lists(segments(frame), min_size=1, max_size=6),
    st.lists(segments(frame), min_size=1, max_size=6),
)
def test_the_iou_matrix_equals_the_scalar_iou_bit_for_bit(predicted, reference):
    matrix = activitynet_iou_matrix(np.array(predicted), np.array(reference))
    assert matrix.tolist() == [[activitynet_iou(p, r) for r in reference] for p in predicted]
