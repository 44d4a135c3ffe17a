"""Masking the secrets Podium holds for a call in any text that came back from it.

An endpoint may quote the key it was sent ("Invalid API key: sk-...") in an error, or echo the
Authorization header in its answer; whatever Podium keeps or shows of that text (an item's
error, a request's message, its audit row, the pages, the API, the admin, the logs) must not
hold the key. `ChatClient` masks every text it hands on (the reply's text, every error's
message) with the secrets of its call, so nothing downstream has to remember to (docs/inference.md).

What is masked: every run of at least `MIN_MATCH` characters that also occurs in the secret (a
whole key, a truncated one, its tail), and the whole secret wherever it occurs, however short.
Shorter common runs are left alone: any text shares a few characters with any key.
"""

from __future__ import annotations

from collections.abc import Iterable

MASK = "[masked]"
# The shortest part of a secret that is masked on its own: 8 characters of a random key are
# ~48 bits, never in a text by chance, and a shorter tail tells an attacker little.
MIN_MATCH = 8
_BLOCK = MIN_MATCH // 2  # any common run of MIN_MATCH holds a whole aligned block of the secret


def mask_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with every part of the `secrets` described above replaced by `MASK`."""
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        if secret:
            spans.extend(_secret_spans(text, secret))
    if not spans:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces = []
    kept = 0
    for start, end in merged:
        pieces += [text[kept:start], MASK]
        kept = end
    pieces.append(text[kept:])
    return "".join(pieces)


def _secret_spans(text: str, secret: str) -> Iterable[tuple[int, int]]:
    """Where in `text` parts of `secret` of at least MIN_MATCH characters are (and the whole
    secret, when it is shorter)."""
    if len(secret) < MIN_MATCH:
        start = text.find(secret)
        while start >= 0:
            yield start, start + len(secret)
            start = text.find(secret, start + 1)
        return
    # A run of MIN_MATCH common characters contains one of these blocks of the secret whole;
    # each place a block occurs is grown both ways while text and secret agree.
    for offset in range(0, len(secret) - _BLOCK + 1, _BLOCK):
        block = secret[offset : offset + _BLOCK]
        found = text.find(block)
        while found >= 0:
            left, right = found, found + _BLOCK
            s_left, s_right = offset, offset + _BLOCK
            while left > 0 and s_left > 0 and text[left - 1] == secret[s_left - 1]:
                left, s_left = left - 1, s_left - 1
            while right < len(text) and s_right < len(secret) and text[right] == secret[s_right]:
                right, s_right = right + 1, s_right + 1
            if right - left >= MIN_MATCH:
                yield left, right
            found = text.find(block, found + 1)
