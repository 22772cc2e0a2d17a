"""A URL is read under the same limits as a local file: real HTTP servers on
127.0.0.1, each answering as a hostile or broken server would (an endless
body, a gzip-encoded bomb, a stall, an error status, a redirect elsewhere, a
folder's listing), and each cut off or refused with a reason that names it."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.server
import io
import socket
import subprocess
import sys
import threading
import time
import warnings
import zlib
from pathlib import Path

import pytest

import explicit_audit as ea
from explicit_audit.reading.limits import Limits
from explicit_audit.reading.remote import url_digest

ROOT = Path(__file__).resolve().parents[1]
PLANS = ROOT / "data" / "plans" / "arborist_runs.jsonl"
LINE = PLANS.read_bytes().split(b"\n", 1)[0] + b"\n"
#: What a hostile server sends at most, so that a client that does not stop still ends;
#: a client that stops leaves it far below (socket buffers hold a few MiB).
SERVER_CAP = 64 << 20
#: Blank lines, as a gzip-encoded body: 96 MiB that travel as about 100 KB.
BOMB = gzip.compress(b"\n" * (96 << 20), compresslevel=9)
#: 2,400 whole lines of decisions (1.4 MB), the body a transfer that breaks off delivers.
CUT = (ROOT / "data" / "decisions" / "2026-02_strict.jsonl").read_bytes() * 2


class _Hostile(http.server.BaseHTTPRequestHandler):
    """Answers by path; ``server.sent`` counts the body bytes it wrote."""

    def log_message(self, *args):
        pass

    def _head(self, status=200, length=None, **headers):
        self.send_response(status)
        self.send_header("Content-Type", headers.pop("content_type", "application/x-ndjson"))
        if length is not None:
            self.send_header("Content-Length", str(length))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()

    def _send(self, data: bytes) -> bool:
        if self.server.stop.is_set() or self.server.sent >= SERVER_CAP:
            return False
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            return False
        self.server.sent += len(data)
        return True

    def do_GET(self):
        port = self.server.server_address[1]
        path = self.path
        self.server.asked.append(dict(self.headers))
        if path == "/plans.jsonl":
            data = PLANS.read_bytes()
            self._head(length=len(data))
            self._send(data)
        elif path == "/endless.jsonl":
            self._head()
            block = LINE * 256
            while self._send(block):
                pass
        elif path == "/encoded-endless.jsonl":
            self._head(Content_Encoding="gzip")
            # After a full flush a block's bytes do not depend on what came before:
            # the same bytes, sent again and again, are one endless gzip stream.
            packer = zlib.compressobj(9, zlib.DEFLATED, 31)
            block = LINE * 4096
            self._send(packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH))
            again = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
            while self._send(again):
                pass
        elif path == "/encoded-bomb.jsonl":
            self._head(length=len(BOMB), Content_Encoding="gzip")
            self._send(BOMB)
        elif path == "/encoded-plans.jsonl":
            data = gzip.compress(PLANS.read_bytes())
            self._head(length=len(data), Content_Encoding="gzip")
            self._send(data)
        elif path == "/cut.jsonl":  # whole lines, then the connection closes short of its length
            self._head(length=2 * len(CUT))
            self._send(CUT)
            self.close_connection = True
        elif path == "/plans.jsonl.gz":  # a gzip file, compressed again for the transfer
            data = gzip.compress(gzip.compress(PLANS.read_bytes()))
            self._head(length=len(data), Content_Encoding="gzip")
            self._send(data)
        elif path == "/brotli.jsonl":
            self._head(length=4, Content_Encoding="br")
            self._send(b"\x0b\x02\x80\x0a")
        elif path == "/stall.jsonl":
            self._head(length=len(LINE) * 100)
            self._send(LINE)
            self.server.stop.wait(30)
        elif path == "/drip.jsonl":
            self._head()
            while self._send(LINE):
                self.server.stop.wait(0.2)
        elif path.startswith("/status/"):
            status = int(path.rsplit("/", 1)[1])
            self._head(status, length=5)
            self._send(b"error")
        elif path == "/to-file":
            self._head(302, length=0, Location="file:///etc/passwd")
        elif path == "/to-host":
            self._head(302, length=0, Location=f"http://localhost:{port}/plans.jsonl")
        elif path == "/to-path":
            self._head(302, length=0, Location="/plans.jsonl")
        elif path == "/logs/":
            page = b"<html><body><a href='plans.jsonl'>plans.jsonl</a></body></html>"
            self._head(length=len(page), content_type="text/html; charset=utf-8")
            self._send(page)
        else:
            self._head(404, length=0)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client hanging up on an endless body is what the tests ask of it


@pytest.fixture
def hostile():
    """A hostile HTTP server on 127.0.0.1, in a thread; its base URL."""
    server = _Server(("127.0.0.1", 0), _Hostile)
    server.stop = threading.Event()
    server.sent = 0
    server.asked = []  # the headers of each request
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}"
    server.stop.set()
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def _load(source, **options) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source, progress=False, **options)


def _file_reasons(audit: ea.Audit) -> list[str]:
    rejected = audit.rejected
    return rejected.loc[rejected["kind"] == "file", "reason"].tolist()


def _timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


def test_an_endless_body_is_cut_off_at_max_file_bytes(hostile):
    server, base = hostile
    bound = 2 << 20
    audit, took = _timed(lambda: _load(f"{base}/endless.jsonl", limits={"max_file_bytes": bound}))
    assert any("max_file_bytes" in reason for reason in _file_reasons(audit))
    assert server.sent < SERVER_CAP // 2  # the client stopped reading, not the server
    facts = ea.provenance(audit).files.iloc[0]
    assert facts["bytes"] == bound  # the hash covers the bytes taken, no more
    assert len(audit.tables["plans"]) == bound // len(LINE)
    assert took < 20


def test_an_endless_gzip_encoded_body_is_cut_off(hostile):
    server, base = hostile
    bound = 2 << 20
    url = f"{base}/encoded-endless.jsonl"
    audit, took = _timed(lambda: _load(url, limits={"max_file_bytes": bound}))
    reasons = _file_reasons(audit)
    assert any("after decompression" in reason for reason in reasons)
    assert any("more than max_file_bytes" in reason for reason in reasons)
    assert server.sent < SERVER_CAP // 2
    assert took < 20


def test_a_gzip_encoded_bomb_stops_at_max_gzip_ratio(hostile):
    _, base = hostile
    audit = _load(f"{base}/encoded-bomb.jsonl", limits={"max_gzip_ratio": 2})
    assert any("max_gzip_ratio" in reason for reason in _file_reasons(audit))
    facts = ea.provenance(audit).files.iloc[0]
    # The bytes hashed are the bytes sent (compressed), as a local .gz file's are.
    assert (facts["bytes"], facts["sha256"]) == (len(BOMB), hashlib.sha256(BOMB).hexdigest())


def test_a_gzip_encoded_file_loads_as_the_plain_one(hostile):
    _, base = hostile
    encoded = _load(f"{base}/encoded-plans.jsonl")
    plain = _load(PLANS)
    assert encoded.rejected.empty
    assert encoded.tables["plans"]["run_id"].tolist() == plain.tables["plans"]["run_id"].tolist()


def test_a_server_that_stalls_after_its_headers_is_named_by_idle_timeout(hostile):
    _, base = hostile
    audit, took = _timed(lambda: _load(f"{base}/stall.jsonl", limits={"idle_timeout": 1}))
    (reason,) = _file_reasons(audit)
    assert "idle_timeout (1 s)" in reason
    assert len(audit.tables["plans"]) == 1  # the line that came before the stall is kept
    assert took < 10


def test_a_server_that_never_ends_is_named_by_total_timeout(hostile):
    _, base = hostile
    audit, took = _timed(
        lambda: _load(f"{base}/drip.jsonl", limits={"total_timeout": 2, "idle_timeout": 1})
    )
    assert any("total_timeout (2 s)" in reason for reason in _file_reasons(audit))
    assert took < 10


def test_a_server_that_does_not_accept_is_named_by_connect_timeout():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    waiting = []
    try:
        # The listener accepts nothing: once its queue is full, a connection waits.
        for _ in range(4):
            held = socket.socket()
            held.setblocking(False)
            held.connect_ex(listener.getsockname())
            waiting.append(held)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/plans.jsonl"
        started = time.monotonic()
        with pytest.raises(ea.AuditError, match=r"connect_timeout \(1 s\)"):
            _load(url, limits={"connect_timeout": 1})
        assert time.monotonic() - started < 10
    finally:
        for held in waiting:
            held.close()
        listener.close()


def test_a_refused_connection_says_so():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ea.AuditError, match=rf"127\.0\.0\.1:{port} refuses the connection"):
        _load(f"http://127.0.0.1:{port}/plans.jsonl")


def test_a_refused_connection_is_one_line_in_the_command_line():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        where = f"127.0.0.1:{probe.getsockname()[1]}"
    url = f"http://{where}/plans.jsonl"
    finished = subprocess.run(
        [sys.executable, "-m", "explicit_audit.cli", "verify", url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert finished.returncode == 2
    assert finished.stderr.strip().splitlines() == [
        f"explicit-audit verify: {url}: the server at {where} refuses the connection"
    ]


def test_a_host_that_does_not_resolve_says_so():
    with pytest.raises(ea.AuditError, match=r"host name nowhere\.invalid is not found"):
        _load("http://nowhere.invalid/plans.jsonl", limits={"connect_timeout": 5})


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/status/404", r"no such file \(the server answers 404 Not Found\)"),
        ("/status/403", r"access refused \(the server answers 403 Forbidden\)"),
        ("/status/500", r"the server answers 500 Internal Server Error"),
        ("/status/503", r"the server answers 503 Service Unavailable"),
        ("/to-file", r"the server redirects to file:///etc/passwd, off the URL's scheme or host"),
        ("/logs/", r"the server answers with an HTML page"),
        ("/brotli.jsonl", r"the server sends Content-Encoding 'br', which is not read"),
    ],
)
def test_an_answer_that_is_not_a_file_is_refused_naming_why(hostile, path, said):
    _, base = hostile
    with pytest.raises(ea.AuditError, match=rf"{path}: {said}"):
        _load(f"{base}{path}")


def test_a_redirect_to_another_host_is_not_followed(hostile):
    server, base = hostile
    with pytest.raises(ea.AuditError, match=r"redirects to http://localhost:\d+/plans\.jsonl"):
        _load(f"{base}/to-host")
    assert server.sent == 0  # the other host was never asked


def test_a_redirect_on_the_same_host_is_followed(hostile):
    _, base = hostile
    audit = _load(f"{base}/to-path")
    assert len(audit.tables["plans"]) == len(_load(PLANS).tables["plans"])


def test_storage_options_reach_the_http_client(hostile):
    server, base = hostile
    # A request header given through storage_options travels with each request, and
    # a client option aiohttp does not know is an error naming it.
    audit = _load(f"{base}/plans.jsonl", storage_options={"headers": {"X-Audit": "1"}})
    assert len(audit.tables["plans"]) == len(_load(PLANS).tables["plans"])
    assert [asked.get("X-Audit") for asked in server.asked] == ["1", "1"]  # opened, read
    assert {asked.get("Accept-Encoding") for asked in server.asked} == {"gzip"}
    with pytest.raises(TypeError, match="no_such_option"):
        _load(f"{base}/plans.jsonl", storage_options={"client_kwargs": {"no_such_option": 1}})


def test_the_digest_of_a_url_is_bounded(hostile):
    _, base = hostile
    with pytest.raises(OSError, match="more than max_file_bytes"):
        url_digest(f"{base}/endless.jsonl", Limits(max_file_bytes=1 << 20))


def test_storage_options_are_for_the_pandas_engine():
    with pytest.raises(ea.AuditError, match='storage_options= is for engine="pandas"'):
        ea.load("memory://logs/", engine="dask", storage_options={"key": "k"})


class _Zeros(io.RawIOBase):
    """A stream that never ends, as ``/dev/zero`` piped to standard input."""

    def readable(self):
        return True

    def readinto(self, buffer):
        buffer[:] = b"\n" * len(buffer)
        return len(buffer)


def test_an_endless_stream_is_cut_off_at_max_file_bytes():
    bound = 1 << 20
    audit = _load(_Zeros(), limits={"max_file_bytes": bound})
    assert any("more than max_file_bytes" in reason for reason in _file_reasons(audit))
    assert ea.provenance(audit).files.iloc[0]["bytes"] == bound


def test_the_dask_engine_reads_a_url_under_the_same_bounds(hostile):
    pytest.importorskip("dask")
    _, base = hostile
    lazy = _load(f"{base}/endless.jsonl", engine="dask", limits={"max_file_bytes": 2 << 20})
    assert any("more than max_file_bytes" in reason for reason in _file_reasons(lazy.compute()))
    stalled = _load(f"{base}/stall.jsonl", engine="dask", limits={"idle_timeout": 1}).compute()
    assert any("idle_timeout (1 s)" in reason for reason in _file_reasons(stalled))


def test_a_server_that_sends_more_than_it_says_is_named_in_a_few_words():
    # Every request answered with the log and more bytes than its Content-Length (a HEAD
    # too): the client's error quoted those bytes, and the message held the log itself.
    data = b"".join(PLANS.read_bytes().splitlines(keepends=True)[:20])  # one packet's worth
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(data)
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                with connection:
                    connection.recv(65536)
                    connection.sendall(answer + data + b"junk past Content-Length\n" * 10)

    threading.Thread(target=serve, daemon=True).start()
    try:
        with pytest.raises(ea.AuditError) as raised:
            _load(f"http://127.0.0.1:{listener.getsockname()[1]}/plans.jsonl")
    finally:
        listener.close()
    said = str(raised.value)
    assert "plans.jsonl" in said and len(said) < 1000, said[:2000]


def test_a_transfer_that_breaks_off_keeps_every_line_that_arrived(hostile, tmp_path):
    # aiohttp raised the break at the read after it, before the bytes it had received:
    # 1,651, 1,223 or 2,400 of 2,400 whole lines loaded, by when the break came, and a line
    # that arrived whole rejected as cut.
    _, base = hostile
    (tmp_path / "cut.jsonl").write_bytes(CUT)
    expected = ea.load(tmp_path / "cut.jsonl", progress=False)
    for _ in range(3):
        with pytest.warns(ea.RejectedRowsWarning, match="the transfer broke off"):
            audit = ea.load(f"{base}/cut.jsonl", progress=False)
        assert len(audit.decisions) == len(expected.decisions) == 2400
        rejected = audit.rejected
        assert rejected["source_line"].tolist() == [0]
        assert "the transfer broke off" in rejected["reason"].iloc[0]
        assert int(audit.sources["bytes"].iloc[0]) == len(CUT)


def test_a_gzip_file_compressed_again_for_the_transfer_loads_as_the_file(hostile):
    # One layer undone, the file's own gzip was split into "lines": every one rejected.
    _, base = hostile
    audit = ea.load(f"{base}/plans.jsonl.gz", progress=False)
    expected = ea.load(PLANS, progress=False)
    assert audit.rejected.empty, audit.rejected["reason"].tolist()[:2]
    assert audit.plans["run_id"].tolist() == expected.plans["run_id"].tolist()
    assert audit.plans["source_line"].tolist() == expected.plans["source_line"].tolist()
