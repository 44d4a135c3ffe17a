import pytest

from plugins.medvidbench.scoring.labels import load_action_labels
from plugins.medvidbench.scoring.metrics.next_action import class_list, score_next_action
from plugins.medvidbench.scoring.tasks import NAP_ACC

from .factories import gt_record, make_test_set

pytestmark = pytest.mark.unit
LABELS = load_action_labels()


def nap_record(label, dataset="AVOS", question="What is the next action?"):
    return gt_record("next_action", label, dataset=dataset, question=question)


class WordOverlap:
    """A stand-in for the MiniLM encoder: picks the candidate sharing most words.

    The encoder itself is tested against sentence-transformers in test_embedding.py;
    here it is the rule around it that is under test. Calls are recorded.
    """

    def __init__(self):
        self.calls = []

    def __call__(self, pairs):
        self.calls.append(list(pairs))
        return [
            max(
                range(len(candidates)),
                key=lambda i: (
                    len(set(q.lower().split()) & set(candidates[i].lower().split())),
                    -i,
                ),
            )
            for q, candidates in pairs
        ]


def nap(records, predictions, nearest_class=None):
    test_set = make_test_set(*records)
    items = list(zip(test_set.samples, predictions, strict=True))
    return score_next_action(items, LABELS, nearest_class or WordOverlap())


def refuse(pairs):
    raise AssertionError("exact labels must not reach the encoder")


def test_exact_label_after_strip_needs_no_embedding():
    outcome = nap([nap_record("tying"), nap_record("cutting")], ["  tying\n", "tying"], refuse)
    assert outcome.metrics[NAP_ACC].value == 0.5
    assert outcome.parsed == [True, True]


def test_other_text_maps_to_the_most_similar_class_case_sensitively():
    similar = WordOverlap()
    outcome = nap([nap_record("tying")], ["Tying the knot"], similar)
    assert outcome.metrics[NAP_ACC].value == 1.0
    assert outcome.parsed == [False]
    assert similar.calls == [[("Tying the knot", ("cutting", "tying", "suturing"))]]


def test_empty_answer_still_maps_to_some_class():
    outcome = nap([nap_record("cutting")], [""])
    assert outcome.metrics[NAP_ACC].scored == 1
    assert outcome.metrics[NAP_ACC].value == 1.0  # WordOverlap picks the first class on a tie


def test_reference_outside_the_class_list_is_skipped():
    outcome = nap([nap_record("dancing"), nap_record("tying")], ["dancing", "tying"])
    assert (outcome.metrics[NAP_ACC].value, outcome.metrics[NAP_ACC].scored) == (1.0, 1)
    assert outcome.parsed == [None, True]  # a skipped sample is not an unparsed answer


def test_no_counted_sample_means_no_value():
    assert nap([nap_record("dancing")], ["dancing"]).metrics[NAP_ACC].value is None


def test_copesd_legacy_names_map_on_both_sides():
    outcome = nap(
        [
            nap_record("hold flap with forceps", "CoPESD"),
            nap_record("stabilize flap with forceps", "CoPESD"),
        ],
        ["stabilize flap with forceps", "hold flap with forceps"],
        refuse,
    )
    assert outcome.metrics[NAP_ACC].value == 1.0


def test_legacy_names_are_not_mapped_outside_copesd():
    assert nap([nap_record("hold flap with forceps", "AVOS")], ["x"]).metrics[NAP_ACC].value is None


def test_nurvid_takes_the_first_procedure_in_file_order():
    question = "During Subcutaneous Injection Insulin, what is the next step?"
    assert (
        class_list("NurViD", question, LABELS)
        == LABELS.nurvid_by_procedure["Subcutaneous Injection"]
    )


def test_nurvid_without_a_known_procedure_uses_the_sorted_union():
    classes = class_list("NurViD", "What comes next?", LABELS)
    assert classes == tuple(sorted(set(classes)))
    assert "Handwashing" in classes
    assert "Defibrillate" in classes


def test_datasets_without_a_list_use_their_sorted_unique_reference_labels():
    similar = WordOverlap()
    records = [
        nap_record(label, "EgoSurgery") for label in ("cut tissue", "suture skin", "suture skin")
    ]
    outcome = nap(records, ["cut tissue", "suture the skin", "cut"], similar)
    classes = ("cut tissue", "suture skin")
    assert similar.calls == [[("suture the skin", classes), ("cut", classes)]]
    assert outcome.metrics[NAP_ACC].value == pytest.approx(2 / 3)
    assert outcome.metrics[NAP_ACC].per_dataset == {"EgoSurgery": pytest.approx(2 / 3)}


def test_accuracy_is_pooled_over_samples_with_per_dataset_breakdown():
    records = [
        nap_record("tying"),
        nap_record("preparation", "CholecT50"),
        nap_record("preparation", "CholecT50"),
    ]
    outcome = nap(records, ["tying", "preparation", "gallbladder-extraction"], refuse)
    assert outcome.metrics[NAP_ACC].value == pytest.approx(2 / 3)
    assert outcome.metrics[NAP_ACC].per_dataset == {"AVOS": 1.0, "CholecT50": 0.5}
