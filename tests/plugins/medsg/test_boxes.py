"""Reading a box from an answer, the four conventions, and IoU, each against hand-computed values."""

import random

import numpy as np
import pytest

from plugins.medsg.scoring.boxes import (
    BOX_CONVENTIONS,
    iou,
    iou_array,
    list_box_problem,
    parse_box,
    to_pixels,
    to_pixels_array,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "text",
    [
        "(12,40),(88,120)",
        "(12, 40), (88, 120)",
        "[12, 40, 88, 120]",
        "<box>12 40 88 120</box>",
        "<|box_start|>(12,40),(88,120)<|box_end|>",
        "[[12,40,88,120]]",
        "It's in the third image. (12,40),(88,120)",
        "12\n40\t88  120",
    ],
)
def test_the_documented_forms_read_alike(text):
    assert parse_box(text) == (12.0, 40.0, 88.0, 120.0)


def test_gemini_box_2d_the_2_of_the_key_is_no_number():
    text = '```json\n[{"box_2d": [341, 129, 549, 440], "label": "lesion"}]\n```'
    assert parse_box(text) == (341.0, 129.0, 549.0, 440.0)


def test_of_several_boxes_only_the_first_counts():
    assert parse_box("(1,2),(3,4) and (50,60),(70,80)") == (1.0, 2.0, 3.0, 4.0)
    assert parse_box('[{"box_2d": [5, 6, 7, 8]}, {"box_2d": [0, 0, 1000, 1000]}]') == (
        5.0,
        6.0,
        7.0,
        8.0,
    )


def test_negative_decimal_and_exponent_numbers():
    assert parse_box("[-1.5, .25, 3., 4e1]") == (-1.5, 0.25, 3.0, 40.0)
    assert parse_box("(+0.1, -0.2, 1.5E-1, 2)") == (0.1, -0.2, 0.15, 2.0)


def test_a_letter_interrupts_a_run():
    # "30 x 40": the x is no separator, so 10 20 30 is a run of three, then 40 50 60 70.
    assert parse_box("10 20 30 x 40 50 60 70") == (40.0, 50.0, 60.0, 70.0)
    # A colon is no separator either: "Image 2:" does not join the box.
    assert parse_box("Image 2: (1,2),(3,4)") == (1.0, 2.0, 3.0, 4.0)


def test_a_run_may_start_at_any_number_separated_only_by_separators():
    # The documented rule, with its consequence: "2 (" joins the run.
    assert parse_box("Image 2 (10,20),(30,40)") == (2.0, 10.0, 20.0, 30.0)


def test_numbers_inside_words_or_other_numbers_do_not_count():
    assert parse_box("x1 y1 x2 y2") is None
    assert parse_box("v2 10 20 30") is None  # the 2 of v2 is inside a word
    assert parse_box("1.2.3 4 5 6") is None  # 1.2.3 is no number
    assert parse_box("x-5 1 2 3") is None  # a sign after a letter starts nothing


def test_fewer_than_four_numbers_or_no_text():
    assert parse_box("(12,40),(88)") is None
    assert parse_box("") is None
    assert parse_box("I cannot find it.") is None


def test_a_number_that_overflows_is_no_box():
    assert parse_box("[1e999, 1, 2, 3]") is None


def test_a_sentence_end_after_the_box():
    assert parse_box("The box is 10 20 30 40.") == (10.0, 20.0, 30.0, 40.0)


def test_a_list_box_must_be_four_finite_numbers():
    assert parse_box([1, 2, 3.5, 4]) == (1.0, 2.0, 3.5, 4.0)
    assert list_box_problem([1, 2, 3]) == (
        "a box needs exactly 4 numbers [x1, y1, x2, y2], got a list of 3"
    )
    assert list_box_problem([1, True, 3, 4]) == ("a box holds 4 numbers, but item 1 is a boolean")
    assert list_box_problem([1, "2", 3, 4]) == (
        "a box holds 4 numbers, but item 1 is a string ('2')"
    )
    assert "item 3 is a number (inf)" in list_box_problem([1, 2, 3, float("inf")])
    assert "finite" in list_box_problem([1, 2, 3, 10**400])
    with pytest.raises(ValueError, match="got a list of 5"):
        parse_box([1, 2, 3, 4, 5])


# size [w, h] = [200, 100]: x scales by 200, y by 100.
@pytest.mark.parametrize(
    ("convention", "box", "expected"),
    [
        ("pixel", (10, 20, 30, 40), (10.0, 20.0, 30.0, 40.0)),
        # 100*200/1000 = 20, 200*100/1000 = 20, 500*200/1000 = 100, 1000*100/1000 = 100
        ("norm1000", (100, 200, 500, 1000), (20.0, 20.0, 100.0, 100.0)),
        # 0.25*200 = 50, 0.5*100 = 50, 0.75*200 = 150, 1*100 = 100
        ("unit", (0.25, 0.5, 0.75, 1.0), (50.0, 50.0, 150.0, 100.0)),
        # [y1, x1, y2, x2] = [200, 100, 1000, 500] -> x1 = 20, y1 = 20, x2 = 100, y2 = 100
        ("yxyx_norm1000", (200, 100, 1000, 500), (20.0, 20.0, 100.0, 100.0)),
    ],
)
def test_each_convention_on_a_non_square_size(convention, box, expected):
    assert to_pixels(box, convention, (200, 100)) == expected
    array = to_pixels_array(np.array([box], dtype=np.float64), convention, np.array([[200, 100]]))
    assert tuple(array[0]) == expected


def test_conversions_do_not_clamp():
    assert to_pixels((-100, 0, 1200, 1000), "norm1000", (336, 336)) == (-33.6, 0.0, 403.2, 336.0)


def test_an_unknown_convention_is_refused():
    with pytest.raises(ValueError, match="unknown box format 'xywh'"):
        to_pixels((1, 2, 3, 4), "xywh", (336, 336))


def test_iou_partial_overlap():
    # inter 5x5 = 25, union 100 + 100 - 25 = 175
    assert iou((0, 0, 10, 10), (5, 5, 15, 15)) == 25 / 175


def test_iou_containment():
    # inter 2x2 = 4, union 4 + 100 - 4 = 100
    assert iou((2, 2, 4, 4), (0, 0, 10, 10)) == 0.04
    assert iou((0, 0, 10, 10), (2, 2, 4, 4)) == 0.04


def test_iou_identical_boxes():
    assert iou((3, 4, 30, 40), (3, 4, 30, 40)) == 1.0


def test_touching_edges_and_disjoint_boxes_score_zero():
    assert iou((0, 0, 10, 10), (10, 0, 20, 10)) == 0.0
    assert iou((0, 0, 10, 10), (0, 10, 10, 20)) == 0.0
    assert iou((0, 0, 10, 10), (50, 50, 60, 60)) == 0.0


def test_a_degenerate_predicted_box_scores_zero():
    assert iou((5, 5, 5, 10), (0, 0, 10, 10)) == 0.0  # no width
    assert iou((10, 10, 0, 0), (0, 0, 10, 10)) == 0.0  # turned inside out


def test_a_zero_union_scores_zero():
    # Both boxes are one point: the official code divides 0 by 0 here.
    assert iou((3, 3, 3, 3), (3, 3, 3, 3)) == 0.0


def test_no_plus_one_pixel():
    # inter 1x1 = 1 with xyxy areas 1 and 4 (a +1 convention would give 4 / 9)
    assert iou((0, 0, 1, 1), (0, 0, 2, 2)) == 0.25


def test_the_vectorised_forms_equal_the_scalar_ones_bit_for_bit():
    rng = random.Random("medsg-iou")
    pred, ref, sizes = [], [], []
    for _ in range(3000):
        if rng.random() < 0.5:  # integers: touching edges, equal boxes, points
            pred.append([rng.randint(0, 12) for _ in range(4)])
            ref.append([rng.randint(0, 12) for _ in range(4)])
        else:
            pred.append([rng.uniform(-50, 400) for _ in range(4)])
            ref.append([rng.uniform(0, 336) for _ in range(4)])
        sizes.append([rng.choice((336, 224, 160)), rng.choice((336, 256, 192))])
    pred_array, ref_array = np.array(pred, dtype=np.float64), np.array(ref, dtype=np.float64)
    size_array = np.array(sizes, dtype=np.float64)
    expected = [iou(p, r) for p, r in zip(pred, ref, strict=True)]
    assert iou_array(pred_array, ref_array).tolist() == expected
    for convention in BOX_CONVENTIONS:
        converted = to_pixels_array(pred_array, convention, size_array)
        assert converted.tolist() == [
            list(to_pixels(p, convention, s)) for p, s in zip(pred, sizes, strict=True)
        ]
