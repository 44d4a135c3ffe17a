"""The re-run (and hosted evaluation): each question as one text-only user message, and the
model's answers written as a predictions file that reads back as the same answers."""

import json
from pathlib import Path

import pytest

from benchmark.plugins import DemoFiles, Rerun
from plugins.clinicalqa.plugin import plugin
from plugins.clinicalqa.rerun import rerun

from .factories import make_test_set, mc, oe

pytestmark = pytest.mark.unit

ROOT = Path("/nonexistent/media")


@pytest.fixture
def test_set():
    return make_test_set(mc("mc-1", "A"), oe("oe-1"), mc("mc-2", "D"))


def test_it_is_the_plugins_rerun():
    assert plugin.rerun is rerun
    assert isinstance(rerun, Rerun)


def test_a_multiple_choice_question_lists_its_options_and_asks_for_the_letter(test_set):
    (index, build), *_ = rerun.questions(test_set, ROOT, 8, [0])
    assert index == 0
    assert build() == [
        {
            "type": "text",
            "text": "Which organ does question mc-1 ask about?\n\n"
            "A. the liver\nB. the kidneys\nC. the lungs\nD. the heart\n\n"
            "Answer with the letter.",
        }
    ]


def test_an_open_ended_question_is_sent_as_written_without_its_reference(test_set):
    [(index, build)] = list(rerun.questions(test_set, ROOT, 8, [1]))
    assert index == 1
    assert build() == [{"type": "text", "text": "How is the condition of question oe-1 treated?"}]


def test_questions_follow_the_indexes_given(test_set):
    assert [index for index, _ in rerun.questions(test_set, ROOT, 8, [2, 0])] == [2, 0]
    assert [index for index, _ in rerun.questions(test_set, ROOT, 8, range(3))] == [0, 1, 2]


def test_there_are_no_media(test_set, tmp_path):
    assert rerun.media_paths(test_set, 8) == []
    assert rerun.media_paths(test_set, 8, [0]) == []
    assert rerun.missing_media(test_set, ROOT, 8) == []
    files = DemoFiles(test_set=tmp_path / "t.json", entries=())
    assert rerun.write_demo_media(files, test_set, tmp_path, 8) == (
        0,
        "Demo clinical QA: its questions are text only, no media to put in place.",
    )
    assert list(tmp_path.iterdir()) == []


def test_answers_to_file_to_check_predictions_gives_the_same_answers(test_set):
    answers = {0: "Answer: A", 1: "Rest and fluids.\nSee a doctor.", 2: "(d)"}
    data = rerun.predictions_file(test_set, answers, {})
    assert json.loads(data) == [
        {"id": "mc-1", "answer": "Answer: A"},
        {"id": "oe-1", "answer": "Rest and fluids.\nSee a doctor."},
        {"id": "mc-2", "answer": "(d)"},
    ]
    checked = plugin.check_predictions(data, test_set, options={}, max_prediction_chars=100)
    assert checked == (answers[0], answers[1], answers[2])
    result, _ = plugin.score(test_set, checked, options={})
    assert result.metrics == {"accuracy": 1.0}


def test_a_missing_answer_is_empty_and_control_characters_are_dropped(test_set):
    data = rerun.predictions_file(test_set, {0: "B\x00\x07", 2: "\ud800C"}, {})
    checked = plugin.check_predictions(data, test_set, options={}, max_prediction_chars=None)
    assert checked == ("B", "", "C")
