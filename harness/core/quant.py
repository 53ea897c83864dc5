"""Packing of integer quantization codes into MLX's uint32 words (numpy only).

Codes are laid little-end first: code t of a word sits at bits [t*bits, (t+1)*bits).
"""
from __future__ import annotations

import numpy as np


def pack(codes, bits: int) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.int64)
    per_word = 32 // bits
    if 32 % bits or codes.shape[-1] % per_word:
        raise ValueError(f"cannot pack last axis {codes.shape[-1]} at {bits} bits")
    if codes.min(initial=0) < 0 or codes.max(initial=0) >= (1 << bits):
        raise ValueError(f"codes outside [0, {1 << bits})")
    grouped = codes.reshape(codes.shape[:-1] + (-1, per_word)).astype(np.uint64)
    shifts = (np.arange(per_word, dtype=np.uint64) * np.uint64(bits))
    return np.bitwise_or.reduce(grouped << shifts, axis=-1).astype(np.uint32)
