"""The NAP label store: class lists' embeddings kept on disk between processes, never other
bits than computing them gives (plugins/medvidbench/scoring/label_store.py)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from plugins.medvidbench.scoring import label_store
from plugins.medvidbench.scoring.embedding import SentenceEncoder
from plugins.medvidbench.scoring.label_store import LabelStore, default_folder, fingerprint

pytestmark = pytest.mark.unit

AVOS = ("cutting", "tying", "suturing")
CHOLEC = ("preparation", "clipping-and-cutting", "gallbladder-dissection")
QUERIES = ["tie the knot", "cut the suture", "", "clip the duct"]


@pytest.fixture(scope="module")
def plain() -> SentenceEncoder:
    """An encoder without a store: what the stored values must equal."""
    return SentenceEncoder.from_package(memo_size=0)


def stored_files(folder: Path) -> list[Path]:
    """The lists' files (`<fingerprint>/<digest>.npy`), not the answers' (`sequences/`)."""
    return sorted(folder.glob("*/*.npy"))


def stored_answers(folder: Path) -> list[Path]:
    return sorted(folder.glob("*/sequences/*/*.npy"))


def counting_computations(encoder: SentenceEncoder) -> list[int]:
    """Record how many token sequences each forward pass of `encoder` computes."""
    counts: list[int] = []
    computed = encoder._computed
    encoder._computed = lambda sequences: counts.append(len(sequences)) or computed(sequences)
    return counts


def test_a_later_encoder_reads_the_lists_and_gets_the_same_bits(tmp_path, plain):
    first = SentenceEncoder.from_package(label_store=tmp_path)
    pairs = [(query, AVOS) for query in QUERIES] + [(query, CHOLEC) for query in QUERIES]
    assert first.nearest_candidates(pairs) == plain.nearest_candidates(pairs)
    files = stored_files(tmp_path)
    assert len(files) == 2
    assert not list(tmp_path.rglob("*.tmp"))

    later = SentenceEncoder.from_package(label_store=tmp_path)
    counts = counting_computations(later)
    assert later._candidate_embeddings(AVOS).tobytes() == plain.encode(list(AVOS)).tobytes()
    assert later._candidate_embeddings(CHOLEC).tobytes() == plain.encode(list(CHOLEC)).tobytes()
    # Only the check of the first list read: its first label ("cutting"), embedded afresh.
    assert counts == [1]


def test_a_store_that_does_not_match_this_machine_is_not_used(tmp_path, plain, caplog):
    SentenceEncoder.from_package(label_store=tmp_path).most_similar(["tie"], list(AVOS))
    (path,) = stored_files(tmp_path)
    tampered = np.load(path)
    tampered[0, 0] = np.nextafter(tampered[0, 0], np.float32(2))  # one ulp: other bits
    np.save(path, tampered)

    later = SentenceEncoder.from_package(label_store=tmp_path)
    with caplog.at_level(logging.WARNING, logger=label_store.__name__):
        embeddings = later._candidate_embeddings(AVOS)
    assert embeddings.tobytes() == plain.encode(list(AVOS)).tobytes()
    assert "does not match this machine" in caplog.text
    assert later._label_store.usable is False
    # Not used again in this process, not even for a list it has not read yet.
    SentenceEncoder.from_package(label_store=tmp_path).most_similar(["clip"], list(CHOLEC))
    assert later._label_store.get(CHOLEC, 384, embed=later.encode) is None


def test_a_file_of_the_wrong_shape_is_ignored_and_rewritten(tmp_path, plain, caplog):
    store = LabelStore(tmp_path, "fingerprint")
    store.put(AVOS, np.zeros((2, 384), dtype=np.float32))  # two rows for three labels
    with caplog.at_level(logging.WARNING, logger=label_store.__name__):
        assert store.get(AVOS, 384, embed=plain.encode) is None
    assert "shape or dtype" in caplog.text

    encoder = SentenceEncoder.from_package(label_store=tmp_path)
    encoder._label_store = store
    assert encoder._candidate_embeddings(AVOS).tobytes() == plain.encode(list(AVOS)).tobytes()
    stored = store.get(AVOS, 384, embed=plain.encode)
    assert stored.tobytes() == plain.encode(list(AVOS)).tobytes()


def test_an_unreadable_file_is_ignored(tmp_path, plain, caplog):
    store = LabelStore(tmp_path, "fingerprint")
    store.put(AVOS, np.zeros((3, 384), dtype=np.float32))
    (path,) = stored_files(tmp_path)
    path.write_bytes(b"\x93NUMPY broken")
    with caplog.at_level(logging.WARNING, logger=label_store.__name__):
        assert store.get(AVOS, 384, embed=plain.encode) is None
    assert "ignoring" in caplog.text


def test_a_store_that_cannot_be_written_is_given_up_and_scoring_goes_on(tmp_path, plain):
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    encoder = SentenceEncoder.from_package(label_store=blocked)
    assert encoder.most_similar(QUERIES, list(AVOS)) == plain.most_similar(QUERIES, list(AVOS))
    assert encoder._label_store.writable is False


def test_a_store_that_cannot_be_written_is_still_read(tmp_path, plain):
    SentenceEncoder.from_package(label_store=tmp_path).most_similar(["tie"], list(AVOS))
    encoder = SentenceEncoder.from_package(label_store=tmp_path)
    store = encoder._label_store
    store._path(CHOLEC).mkdir()  # a folder where CHOLEC's file would go: the write fails
    pairs = [("clip", CHOLEC), ("tie", AVOS)]
    assert encoder.nearest_candidates(pairs) == plain.nearest_candidates(pairs)
    assert store.writable is False
    assert store.get(AVOS, 384, embed=plain.encode) is not None
    assert not list(tmp_path.rglob("*.tmp"))


def test_the_fingerprint_names_the_settings_and_the_model_files(tmp_path):
    engine, weights = tmp_path / "engine.py", tmp_path / "model.safetensors"
    engine.write_text("code")
    weights.write_bytes(b"weights")
    settings = {"num_heads": 12, "max_seq_length": 256, "blas_threads": 1}

    def named(**changed) -> str:
        return fingerprint(
            engine_source=engine, model_files=[weights], settings={**settings, **changed}
        )

    same = named()
    assert named() == same
    assert len(same) == 32
    assert named(max_seq_length=128) != same
    assert named(blas_threads=None) != same
    engine.write_text("other code")
    assert named() != same
    engine.write_text("code")
    assert named() == same
    os.utime(weights, ns=(1, 1))  # a reinstall: another modification time
    assert named() != same


def test_the_folder_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PODIUM_NAP_LABEL_STORE", str(tmp_path / "labels"))
    assert default_folder() == tmp_path / "labels"
    for off in ("", "off", "OFF", " none "):
        monkeypatch.setenv("PODIUM_NAP_LABEL_STORE", off)
        assert default_folder() is None
    monkeypatch.delenv("PODIUM_NAP_LABEL_STORE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_folder() == tmp_path / "cache" / "podium" / "nap-labels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_folder() == Path.home() / ".cache" / "podium" / "nap-labels"


def test_answers_are_kept_by_token_sequence_and_read_back_with_the_same_bits(tmp_path, plain):
    first = SentenceEncoder.from_package(label_store=tmp_path)
    pairs = [(query, AVOS) for query in QUERIES]
    assert first.nearest_candidates(pairs) == plain.nearest_candidates(pairs)
    assert len(stored_answers(tmp_path)) == len(QUERIES)
    assert not list(tmp_path.rglob("*.tmp"))

    later = SentenceEncoder.from_package(label_store=tmp_path)
    counts = counting_computations(later)
    # "Tie the knot" has the tokens of "tie the knot" (the tokenizer lowercases): stored too.
    texts = ["Tie the knot", *QUERIES]
    assert later.encode(texts).tobytes() == plain.encode(texts).tobytes()
    assert counts == [1]  # only the store's check: one sequence embedded afresh
    assert later.encode(["a new answer", *QUERIES]).tobytes() == (
        plain.encode(["a new answer", *QUERIES]).tobytes()
    )
    assert counts == [1, 1]  # the new answer alone; the others from the memo
    assert len(stored_answers(tmp_path)) == len(QUERIES) + 1


def test_a_tampered_answer_file_makes_the_store_unused(tmp_path, plain, caplog):
    SentenceEncoder.from_package(label_store=tmp_path).encode(["tie the knot"])
    (path,) = stored_answers(tmp_path)
    tampered = np.load(path)
    tampered[0] = np.nextafter(tampered[0], np.float32(2))
    np.save(path, tampered)

    later = SentenceEncoder.from_package(label_store=tmp_path)
    with caplog.at_level(logging.WARNING, logger=label_store.__name__):
        row = later.encode(["tie the knot"])
    assert row.tobytes() == plain.encode(["tie the knot"]).tobytes()
    assert "does not match this machine" in caplog.text
    assert later._label_store.usable is False


def test_a_misshapen_answer_file_is_ignored_and_rewritten(tmp_path, plain, caplog):
    SentenceEncoder.from_package(label_store=tmp_path).encode(["tie the knot"])
    (path,) = stored_answers(tmp_path)
    np.save(path, np.zeros(5, dtype=np.float32))
    later = SentenceEncoder.from_package(label_store=tmp_path)
    with caplog.at_level(logging.WARNING, logger=label_store.__name__):
        row = later.encode(["tie the knot"])
    assert row.tobytes() == plain.encode(["tie the knot"]).tobytes()
    assert "shape or dtype" in caplog.text
    assert np.load(path).tobytes() == row[0].tobytes()


def test_the_memo_is_bounded_and_class_lists_never_go_through_it(plain):
    encoder = SentenceEncoder.from_package(memo_size=2)
    encoder._candidate_embeddings(AVOS)
    assert len(encoder._answers) == 0
    counts = counting_computations(encoder)
    assert encoder.encode(QUERIES).tobytes() == plain.encode(QUERIES).tobytes()
    assert len(encoder._answers) == 2  # the two most recently used
    assert encoder.encode(QUERIES[-2:]).tobytes() == plain.encode(QUERIES[-2:]).tobytes()
    assert counts == [len(QUERIES)]
    assert encoder.encode(QUERIES[:1]).tobytes() == plain.encode(QUERIES[:1]).tobytes()
    assert counts == [len(QUERIES), 1]
