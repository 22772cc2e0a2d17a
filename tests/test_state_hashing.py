"""The audit state's hashing of the bytes audited, against ``hashlib`` over the same bytes."""

from __future__ import annotations

import gzip
import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from explicit_audit.state.lines import scan


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=3000),
    cut=st.tuples(st.integers(0, 3100), st.integers(0, 3100)),
)
def test_hashing_a_range_equals_hashlib_over_its_bytes(tmp_path_factory, data, cut):
    path = tmp_path_factory.mktemp("scan") / "log.jsonl"
    path.write_bytes(data)
    start, stop = min(cut), max(cut)
    start = min(start, len(data))
    before = hashlib.sha256(data[:start])
    found = scan(path, start, stop, hasher=before.copy(), index=False)
    assert found.read == max(start, min(stop, len(data)))
    assert found.hasher.hexdigest() == hashlib.sha256(data[: found.read]).hexdigest()
    # No line is indexed: the hash at the last line end is the one before the range.
    assert found.at_line.hexdigest() == before.hexdigest() and not len(found.lines)
    assert found.gzip == (start == 0 and stop > 0 and data[:2] == b"\x1f\x8b")


def test_hashing_without_an_index_equals_hashing_with_one(tmp_path):
    lines = [f'{{"n": {n}, "pad": "{"x" * (n % 97)}"}}\n'.encode() for n in range(40_000)]
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"".join(lines))  # past one read's buffer
    size = path.stat().st_size
    indexed = scan(path, 0, size)
    plain = scan(path, 0, size, index=False)
    assert plain.read == indexed.read == size
    assert plain.hasher.hexdigest() == indexed.hasher.hexdigest()
    assert len(indexed.lines) == 40_000 and not indexed.gzip


def test_a_gzip_file_is_told_by_its_first_bytes_when_only_hashed(tmp_path):
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n'))
    assert scan(path, 0, path.stat().st_size, index=False).gzip
    one = tmp_path / "one.jsonl"
    one.write_bytes(b"\x1f")  # the magic's first byte only
    assert not scan(one, 0, 1, index=False).gzip
