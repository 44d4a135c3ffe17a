"""The ground-truth loader: the official format in, malformed records out with index and field."""

import json

import pytest

from plugins.medvidbench.scoring import GroundTruthError, Task, load_ground_truth
from plugins.medvidbench.scoring.ground_truth import (
    CaptionSegment,
    CvsTarget,
    SkillTarget,
    StgTarget,
    TalTarget,
)

from .factories import gt_record, sample_of

pytestmark = pytest.mark.unit


def rejected(source) -> str:
    with pytest.raises(GroundTruthError) as caught:
        load_ground_truth(source)
    return str(caught.value)


def test_sample_fields_come_from_the_official_record():
    record = gt_record("tal", "1.0-2.0 seconds.", [{"spans": [{"start": 1, "end": 2}]}], fps="2.0")
    record["metadata"].update(
        video_id="kcOqlifSukA", input_video_start_frame="22425", input_video_end_frame="25124"
    )
    record["conversations"].insert(0, {"from": "system", "value": "You are helpful."})
    sample = sample_of(record)
    assert sample.id == "kcOqlifSukA&&22425&&25124&&2.0"
    assert (sample.task, sample.dataset, sample.fps) == (Task.TAL, "AVOS", 2.0)
    assert sample.question == "What happens in the video?"
    assert sample.reference == "1.0-2.0 seconds."
    assert sample.target == TalTarget(spans=((1.0, 2.0),))


def test_dataset_falls_back_to_dataset_name():
    record = gt_record("next_action", "tying")
    del record["data_source"]
    record["dataset_name"] = "CoPESD"
    assert sample_of(record).dataset == "CoPESD"


def test_suffixes_route_to_the_pooled_caption_tasks():
    assert sample_of(gt_record("dense_captioning_gemini", "x", [[]])).task is Task.DENSE_CAPTIONING
    assert sample_of(gt_record("video_summary_gpt", "x")).task is Task.VIDEO_SUMMARY
    assert sample_of(gt_record("region_caption_gemini", "x")).task is Task.REGION_CAPTION


def test_structured_targets_per_task():
    stg = sample_of(gt_record("stg", "x", [{"bbox_dict": {"1.0": [1, 2, 3, 4], "2.0": None}}]))
    assert stg.target == StgTarget(boxes=(("1.0", (1.0, 2.0, 3.0, 4.0)), ("2.0", None)))
    dvc = sample_of(
        gt_record(
            "dense_captioning_gpt",
            "x",
            [{"dc_segments": [{"start": "1", "end": 2, "caption": "c"}]}],
        )
    )
    assert dvc.target.segments == (CaptionSegment(1.0, 2.0, "c"),)
    cvs = sample_of(
        gt_record("cvs_assessment", "x", [{"cvs_scores": {"two_structures": 1, "total": 3}}])
    )
    assert cvs.target == CvsTarget(components={"two_structures": 1})
    skill = sample_of(
        gt_record("skill_assessment", "x", [{"skill_level": "E", "skill_scores": {"A": 3}}])
    )
    assert skill.target == SkillTarget(level_known=True, aspects={"A": 3})


def test_checksum_is_of_the_file_bytes(tmp_path):
    path = tmp_path / "gt.json"
    path.write_text(json.dumps([gt_record("next_action", "tying")]))
    import hashlib

    assert load_ground_truth(path).checksum == hashlib.sha256(path.read_bytes()).hexdigest()


# --- malformed files -----------------------------------------------------------


def broken(**changes):
    record = gt_record("tal", "0-1", [{"spans": [{"start": 0, "end": 1}]}])
    for key, value in changes.items():
        if value is None:
            record.pop(key, None)
        else:
            record[key] = value
    return [gt_record("next_action", "tying"), record]


def test_not_json():
    assert rejected(b'[{"id": 1} {"id": 2}]') == (
        "The ground-truth file was rejected (1 problem(s)):\n"
        "  - not valid JSON: Expecting ',' delimiter at byte 12, after 1 complete row"
    )


def test_a_cut_off_file_is_named_as_such():
    assert rejected(b"[{") == (
        "The ground-truth file was rejected (1 problem(s)):\n"
        "  - row 0: the file ends early, at byte 2, inside the first row: it looks cut off "
        "(an interrupted upload or copy); upload the whole file"
    )


def test_not_a_list():
    assert "expected a JSON list of records, got an object" in rejected({"records": []})


def test_no_records():
    assert "the file holds no records" in rejected([])


def test_record_not_an_object():
    assert "row 1: expected a JSON object, got a string" in rejected(
        [gt_record("next_action", "t"), "tal"]
    )


def test_missing_qa_type():
    assert "row 1, field 'qa_type': expected a non-empty string" in rejected(broken(qa_type=None))


def test_unknown_qa_type():
    assert "row 1, field 'qa_type': unknown qa_type 'captioning'" in rejected(
        broken(qa_type="captioning")
    )


def test_missing_conversations():
    assert "row 1, field 'conversations': expected a non-empty list of turns" in rejected(
        broken(conversations=None)
    )


def test_no_answer_turn():
    message = rejected(broken(conversations=[{"from": "human", "value": "q"}]))
    assert (
        "row 1, field 'conversations': no 'gpt' or 'assistant' turn holds the reference answer"
        in message
    )


def test_turn_with_non_string_value():
    message = rejected(broken(conversations=[{"from": "human", "value": 3}]))
    assert (
        "row 1, field 'conversations[0]': expected an object with 'from' and a string 'value'"
        in message
    )


def test_metadata_without_fps():
    records = broken()
    del records[1]["metadata"]["fps"]
    assert "row 1, field 'metadata.fps': expected a non-empty string or number" in rejected(records)


def test_fps_not_a_number():
    records = broken()
    records[1]["metadata"]["fps"] = "fast"
    assert "row 1, field 'metadata.fps': expected a number, got 'fast'" in rejected(records)


def test_fps_zero():
    records = broken()
    records[1]["metadata"]["fps"] = "0"
    assert "row 1, field 'metadata.fps': expected a positive number, got '0'" in rejected(records)


def test_no_dataset():
    message = rejected(broken(data_source=None))
    assert (
        "row 1, field 'data_source': expected the source dataset in 'data_source' or 'dataset_name'"
        in message
    )


def test_tal_span_with_text_start():
    message = rejected(broken(struc_info=[{"spans": [{"start": "zero", "end": 1}]}]))
    assert "row 1, field 'struc_info[0].spans[0].start': expected a number, got 'zero'" in message


def test_tal_struc_info_not_a_list():
    assert "row 1, field 'struc_info': expected a list of items with 'spans'" in rejected(
        broken(struc_info="0-1")
    )


def test_stg_key_that_is_not_a_number():
    records = [gt_record("stg", "x", [{"bbox_dict": {"first": [1, 2, 3, 4]}}])]
    assert (
        "row 0, field 'struc_info.bbox_dict['first']': timestamp keys must be numbers"
        in rejected(records)
    )


def test_dense_caption_segment_with_bad_start():
    records = [
        gt_record("dense_captioning_gpt", "x", [[{"start": "soon", "end": 2, "caption": "c"}]])
    ]
    assert "row 0, field 'struc_info segment 0': start and end must be numbers" in rejected(records)


def test_cvs_score_that_is_not_an_integer():
    records = [gt_record("cvs_assessment", "x", [{"cvs_scores": {"two_structures": "2"}}])]
    message = rejected(records)
    assert (
        "row 0, field 'struc_info[0].cvs_scores.two_structures': expected an integer score, got '2'"
        in message
    )


def test_skill_level_that_is_not_a_string():
    records = [gt_record("skill_assessment", "x", [{"skill_level": 2, "skill_scores": {}}])]
    assert "row 0, field 'struc_info[0].skill_level': expected a string, got 2" in rejected(records)


def test_every_bad_record_is_listed():
    records = broken(qa_type=None) + broken(data_source=None)
    message = rejected(records)
    assert "(2 problem(s))" in message
    assert "row 1, field 'qa_type'" in message
    assert "row 3, field 'data_source'" in message


def test_missing_file(tmp_path):
    assert "cannot read" in rejected(tmp_path / "missing.json")
