"""Each decision's (subject domain, set of self-declared flags) as one small code.

:func:`row_keys` numbers the combinations a decisions table holds, which are
few, without hashing: each row's flags become a bit mask (one bit per distinct
flag), the mask is packed next to the domain code, and the packed keys are
numbered in increasing order. It gives each code's domain and flags back too,
so that a policy resolves a combination once, not a row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._core.lists import FlatList, range_positions

__all__ = ["row_keys", "small_codes"]


def small_codes(count: int) -> type:
    """The smallest signed integer type that numbers ``count`` things."""
    for dtype in (np.int8, np.int16, np.int32):
        if count <= np.iinfo(dtype).max:
            return dtype
    return np.int64


def _compact(key: np.ndarray, bound: int) -> np.ndarray:
    """Number the distinct values of a non-negative key 0, 1, 2, ... (in value order)."""
    if bound <= max(4 * len(key), 1 << 16):
        seen = np.zeros(bound, dtype=bool)
        seen[key] = True
        number = np.cumsum(seen, dtype=np.int64) - 1
        return np.take(number.astype(small_codes(bound)), key)
    return pd.factorize(key, sort=True)[0].astype(np.int64)


#: Values of a row read one position at a time; longer rows are reduced whole.
_POSITIONS = 8


def _row_masks(offsets: np.ndarray, lengths: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """Per row, the bitwise or of its values' ``bits`` (one zero appended after the values).

    ``lengths`` are the rows' lengths. Differences of a running sum give
    each row's sum in two passes (``reduceat`` costs about ten nanoseconds
    per row, empty or not), and a row's sum is its or unless it holds a bit
    twice, or a zero: exactly the rows whose sum has fewer set bits than the
    row has values (a repeated bit carries, and wrapping in the unsigned type
    only drops bits). Those few are or-ed value by value.
    """
    running = np.zeros(len(bits), dtype=bits.dtype)
    np.cumsum(bits[:-1], out=running[1:])
    mask = np.diff(np.take(running, offsets))
    several = np.flatnonzero(np.bitwise_count(mask) != lengths)
    if not len(several):
        return mask
    starts, last = offsets[several], offsets[several + 1] - 1
    # A row shorter than the position reads its last value again, which the or absorbs.
    joined = np.take(bits, starts)
    for position in range(1, min(_POSITIONS, int((last - starts).max()) + 1)):
        joined |= np.take(bits, np.minimum(starts + position, last))
    longer = np.flatnonzero(last - starts >= _POSITIONS)
    if len(longer):
        # Start and end of each such row, in turn: every other reduction is
        # the gap from one row's end to the next row's start, and is dropped.
        bounds = np.empty(2 * len(longer), dtype=np.int64)
        bounds[0::2] = starts[longer]
        bounds[1::2] = last[longer] + 1
        joined[longer] = np.bitwise_or.reduceat(bits, bounds)[0::2]
    mask[several] = joined
    return mask


#: Bits of a (domain, flags) key packed in 16 bits: numbered with one table, no hashing.
_PACKED_BITS = 16


def row_keys(
    domain_codes: np.ndarray, n_domains: int, flags: FlatList, codes: np.ndarray, names: list
) -> tuple[np.ndarray, ...]:
    """A code per row naming its (domain, set of flags), and what each code names.

    Order and repeats of flags are ignored. ``codes`` numbers each flat flag
    into ``names`` (:meth:`FlatList.codes`). Each row's flags become a bit
    mask (62 distinct flags per word), packed next to the domain code, and
    the packed keys are numbered in increasing order.

    Parameters
    ----------
    domain_codes : ndarray
        Each row's subject domain as a code below ``n_domains``.
    n_domains : int
    flags : FlatList
        The rows' self-declared flags.
    codes : ndarray
        Each flat flag of ``flags`` as a code into ``names``.
    names : list
        The distinct flags.

    Returns
    -------
    tuple of ndarray
        The code of each row; the domain of each code; and each flag of
        each code as a code into ``names`` with its owner, owners in order.
    """
    # In int32, as Arrow counts them: the lengths are compared once per word.
    lengths = np.subtract(flags.offsets[1:], flags.offsets[:-1], dtype=np.int32)
    shift = (max(n_domains, 1) - 1).bit_length()
    if shift + len(names) <= _PACKED_BITS:
        return _packed_keys(domain_codes, shift, flags, lengths, codes, len(names))
    key = _wide_keys(domain_codes, n_domains, flags, lengths, codes, len(names))
    return (key, *_described_by_rows(key, domain_codes, flags, codes))


def _described_by_rows(
    key: np.ndarray, domain_codes: np.ndarray, flags: FlatList, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each code's domain and flags, read from its last row (see :func:`row_keys`)."""
    representative = np.zeros(int(key.max()) + 1 if len(key) else 0, dtype=np.int64)
    representative[key] = np.arange(len(key))
    # Gathered from those rows alone: codes are few, rows many.
    counts = flags.lengths[representative]
    positions, _ = range_positions(flags.offsets[representative], counts)
    owner = np.repeat(np.arange(len(representative)), counts)
    return domain_codes[representative], codes[positions], owner


def _word_bits(codes: np.ndarray, word: int, width: int, n_names: int) -> np.ndarray:
    """Each flat flag's bit within word ``word`` (0 outside it), and one zero appended."""
    bit_type = np.uint8 if width <= 8 else np.uint16 if width <= 16 else np.uint64
    # The appended zero makes the end of the last row a valid position.
    bits = np.zeros(len(codes) + 1, dtype=bit_type)
    if n_names <= 62:
        np.left_shift(bit_type(1), codes.astype(bit_type), out=bits[:-1])
    else:
        in_word = (codes >= word) & (codes < word + width)
        shifted = np.left_shift(np.uint64(1), np.clip(codes - word, 0, 61).astype(np.uint64))
        bits[:-1] = np.where(in_word, shifted, 0)
    return bits


def _packed_keys(
    domain_codes: np.ndarray,
    shift: int,
    flags: FlatList,
    lengths: np.ndarray,
    codes: np.ndarray,
    n_names: int,
) -> tuple[np.ndarray, ...]:
    """:func:`row_keys` where the domain and every flag fit in 16 bits.

    The keys are built in 16 bits, numbered with a table of every possible
    key, and each one's domain and flags read back from its bits: a million
    rows of int64 key arithmetic are fresh 8 MB arrays each.
    """
    key = _row_masks(flags.offsets, lengths, _word_bits(codes, 0, n_names, n_names))
    key = key.astype(np.uint16)
    key <<= shift
    # Domain codes are below 1 << shift: the or cannot lose a bit.
    np.bitwise_or(key, domain_codes, out=key, casting="unsafe")
    seen = np.zeros(1 << (shift + n_names), dtype=bool)
    seen[key] = True
    number = np.cumsum(seen) - 1
    combo = np.take(number.astype(small_codes(len(number))), key)
    # Each code's domain and flags are read from its key: no row of it is needed.
    keys = np.flatnonzero(seen)
    flag_bits = (keys[:, None] >> (shift + np.arange(n_names))) & 1
    owner, flag_codes = np.nonzero(flag_bits)  # owner by owner, as rows are read
    return combo, keys & ((1 << shift) - 1), flag_codes, owner


def _wide_keys(
    domain_codes: np.ndarray,
    n_domains: int,
    flags: FlatList,
    lengths: np.ndarray,
    codes: np.ndarray,
    n_names: int,
) -> np.ndarray:
    """:func:`row_keys`'s codes, a word of flags at a time (keys of any width)."""
    key, bound = domain_codes, max(n_domains, 1)
    for word in range(0, n_names, 62):
        width = min(62, n_names - word)
        bits = _word_bits(codes, word, width, n_names)
        mask = _row_masks(flags.offsets, lengths, bits).astype(np.int64)
        shift = (bound - 1).bit_length()
        if shift + width <= 62:
            key, bound = key | (mask << shift), 1 << (shift + width)
        else:
            mask = _compact(mask, 1 << width)
            key, bound = key * (int(mask.max()) + 1) + mask, 1 << 62
        key = _compact(key, bound)
        bound = int(key.max()) + 1 if len(key) else 1
    return key if n_names else _compact(key, bound)
