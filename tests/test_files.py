"""Every file accounted for: unlistable folders, unreadable files, links, skipped names,
rotated logs, and provenance hashed from the bytes that were checked."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pytest
from conftest import make_receipt

import explicit_audit as ea
from explicit_audit.cli import main

ROOT = Path(__file__).parent.parent
PYTHON = sys.executable


def _line(record: dict) -> str:
    return json.dumps(record) + "\n"


def _receipts(count: int, **changes) -> str:
    return "".join(_line(make_receipt(query=f"q{i}", **changes)) for i in range(count))


def _strict(text: str) -> dict:
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _load(source) -> ea.Audit:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source)


def _as(bound: list[str] | None = None) -> tuple[list[str], dict]:
    """The command that starts this environment's interpreter, and its environment.

    ``bound`` is what :func:`_locked_down` returns: a prefix that makes file
    modes bind (empty when they bind already).
    """
    env = {**os.environ, "HOME": tempfile.gettempdir(), "PYTHONPATH": str(ROOT)}
    return [*(bound or []), PYTHON], env


def _cli(*argv: str, cwd: Path, bound: list[str] | None = None, timeout: float = 120):
    """Run the command in its own process (under ``bound`` when given)."""
    python, env = _as(bound)
    return subprocess.run(
        [*python, "-m", "explicit_audit.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def shared_tmp():
    """A folder of its own, whose locked parts are opened again before it is removed."""
    folder = Path(tempfile.mkdtemp(prefix="ea-files-"))
    yield folder
    for root, dirs, _ in os.walk(folder):
        for name in dirs:
            os.chmod(Path(root, name), 0o755)
    shutil.rmtree(folder)


def _locked_down(path: Path) -> list[str]:
    """``chmod 000`` ``path``; the prefix that runs a command so that the mode binds.

    Root reads and lists whatever a mode says, through two capabilities
    (``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``). As root, the command runs
    without them (util-linux's ``setpriv`` drops them from its bounding set):
    still root, the owner of the checkout and of ``path``, so it imports the
    kit from wherever the checkout is, and ``path``'s owner bits (none) bind.
    As any other user the mode binds already.
    """
    path.chmod(0)
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root, these checks need util-linux's setpriv to bind a mode")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.mark.parametrize("engine", ["pandas", "dask"])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_that_cannot_be_listed_exits_2_and_names_it(shared_tmp, engine, as_json):
    data = shared_tmp / "data"
    (data / "locked").mkdir(parents=True)
    (data / "ok.jsonl").write_text(_receipts(2), encoding="utf-8")
    (data / "locked" / "bad.jsonl").write_text("{not json\n", encoding="utf-8")
    data.chmod(0o755)
    user = _locked_down(data / "locked")
    argv = ["verify", "data", "--engine", engine, *(["--json"] if as_json else [])]
    done = _cli(*argv, cwd=shared_tmp, bound=user)
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "data/locked: the folder cannot be listed (Permission denied)" in err
    assert "Traceback" not in err
    if as_json:
        document = _strict(done.stdout.decode("utf-8"))
        assert document["exit_status"] == 2 and document["clean"] is None
        assert document["error"]["file"] == "data/locked"
        assert document["error"]["type"] == "UnreadableFileError"
    else:
        assert done.stdout == b""


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_a_file_that_cannot_be_opened_exits_2_and_names_it(shared_tmp, engine):
    data = shared_tmp / "data"
    data.mkdir()
    data.chmod(0o755)
    (data / "ok.jsonl").write_text(_receipts(2), encoding="utf-8")
    (data / "ok.jsonl").chmod(0o644)
    secret = data / "secret.jsonl"
    secret.write_text(_receipts(1), encoding="utf-8")
    user = _locked_down(secret)
    done = _cli("verify", "data", "--json", "--engine", engine, cwd=shared_tmp, bound=user)
    assert done.returncode == 2, done.stderr.decode()
    document = _strict(done.stdout.decode("utf-8"))
    assert document["error"]["file"] == "data/secret.jsonl"
    assert "the file cannot be read (Permission denied)" in document["error"]["message"]


def test_an_unlistable_folder_is_a_file_level_rejection_in_python(shared_tmp):
    data = shared_tmp / "data"
    (data / "locked").mkdir(parents=True)
    data.chmod(0o755)
    (data / "ok.jsonl").write_text(_receipts(2), encoding="utf-8")
    (data / "ok.jsonl").chmod(0o644)
    user = _locked_down(data / "locked")
    script = (
        "import warnings, explicit_audit as ea\n"
        "warnings.simplefilter('ignore')\n"
        "audit = ea.load('data')\n"
        "print(audit.rejected[['source_file', 'source_line', 'kind', 'reason']]"
        ".to_json(orient='records'))\n"
    )
    python, env = _as(user)
    done = subprocess.run(
        [*python, "-c", script],
        cwd=shared_tmp,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout) == [
        {
            "source_file": "data/locked",
            "source_line": 0,
            "kind": "file",
            "reason": "cannot list the folder: Permission denied",
        }
    ]


def test_an_io_error_on_read_is_a_file_level_rejection(tmp_path):
    # Reading /proc/self/mem at offset 0 fails with EIO on the first read.
    (tmp_path / "ok.jsonl").write_text(_receipts(1), encoding="utf-8")
    (tmp_path / "x.jsonl").symlink_to("/proc/self/mem")
    audit = _load(tmp_path)
    rejected = audit.rejected.to_dict("records")
    assert [(r["source_file"], r["source_line"], r["kind"], r["reason"]) for r in rejected] == [
        (str(tmp_path / "x.jsonl"), 0, "file", "cannot read: Input/output error")
    ]
    with pytest.raises(ea.InputError, match=r"x\.jsonl"):
        ea.load(tmp_path, strict=True)


def test_linked_folders_are_followed_once_by_real_path(tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere" / "receipts"
    elsewhere.mkdir(parents=True)
    (elsewhere / "r.jsonl").write_text(_receipts(3), encoding="utf-8")
    data = tmp_path / "data"
    data.mkdir()
    (data / "receipts").symlink_to(elsewhere)
    (data / "again").symlink_to(elsewhere)  # the same real folder: read once
    (elsewhere / "loop").symlink_to(tmp_path / "data")  # back up: a loop
    audit = _load(data)
    assert len(audit.receipts) == 3
    assert audit.files == [str(data / "again" / "r.jsonl")]
    skipped = audit.sources.dropna(subset=["skipped"]).set_index("source_file")["skipped"]
    assert set(skipped.index) == {str(data / "receipts"), str(data / "again" / "loop")}
    assert all(reason.startswith("a link to a folder already read") for reason in skipped)
    assert main(["summary", str(data)]) == 0
    assert re.search(r"^\s*receipts\s+3$", capsys.readouterr().out, re.MULTILINE)


def test_a_folder_is_read_under_its_own_name_not_a_link_to_it(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "r.jsonl").write_text(_receipts(1), encoding="utf-8")
    (tmp_path / "a_link").symlink_to(tmp_path / "b")  # sorts first, read second
    audit = _load(tmp_path)
    assert audit.files == [str(tmp_path / "b" / "r.jsonl")]
    skipped = audit.sources.dropna(subset=["skipped"])[["source_file", "skipped"]]
    assert skipped.values.tolist() == [
        [
            str(tmp_path / "a_link"),
            f"a link to a folder already read ({tmp_path / 'b'}): not read again",
        ]
    ]


def test_a_link_to_a_file_already_read_is_listed_as_skipped(tmp_path):
    (tmp_path / "r.jsonl").write_text(_receipts(2), encoding="utf-8")
    (tmp_path / "s.jsonl").symlink_to(tmp_path / "r.jsonl")  # sorts after its target
    (tmp_path / "a.jsonl").symlink_to(tmp_path / "z.jsonl")  # sorts before it: read second
    (tmp_path / "z.jsonl").write_text(_receipts(1), encoding="utf-8")
    audit = _load(tmp_path)
    assert audit.files == [str(tmp_path / "r.jsonl"), str(tmp_path / "z.jsonl")]
    assert len(audit.receipts) == 3
    skipped = dict(
        audit.sources.dropna(subset=["skipped"])[["source_file", "skipped"]].itertuples(index=False)
    )
    assert skipped == {
        str(tmp_path / "s.jsonl"): (
            f"a link to a file already read ({tmp_path / 'r.jsonl'}): not read again"
        ),
        str(tmp_path / "a.jsonl"): (
            f"a link to a file already read ({tmp_path / 'z.jsonl'}): not read again"
        ),
    }
    # The same file named again by another path: listed, naming the one read.
    (tmp_path / "sub").mkdir()
    again = _load([tmp_path / "r.jsonl", tmp_path / "sub" / ".." / "r.jsonl"])
    assert again.files == [str(tmp_path / "r.jsonl")]
    (reason,) = again.sources["skipped"].dropna()
    assert reason == f"the same file as one already read ({tmp_path / 'r.jsonl'}): not read again"


def test_a_dangling_link_is_named_a_dangling_link(tmp_path):
    (tmp_path / "r.jsonl").write_text(_receipts(1), encoding="utf-8")
    (tmp_path / "gone").symlink_to(tmp_path / "rotated-away")
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "rotated-away.jsonl")
    (tmp_path / "loop.jsonl").symlink_to(tmp_path / "loop.jsonl")
    audit = _load(tmp_path)
    skipped = audit.sources.set_index("source_file")["skipped"]
    target = tmp_path / "rotated-away"
    assert skipped[str(tmp_path / "gone")] == (
        f"a dangling link (its target {target} does not exist): not read"
    )
    reasons = dict(zip(audit.rejected.source_file, audit.rejected.reason, strict=True))
    assert reasons[str(tmp_path / "gone.jsonl")] == (
        f"cannot read: a dangling link (its target {target}.jsonl does not exist)"
    )
    looping = reasons[str(tmp_path / "loop.jsonl")]
    assert looping.startswith("cannot read: a link in a loop of links")


def test_files_skipped_for_their_name_are_listed_and_counted(tmp_path, capsys):
    (tmp_path / "r.jsonl").write_text(_receipts(2), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a log", encoding="utf-8")
    (tmp_path / ".draft.jsonl").write_text("{not json\n", encoding="utf-8")
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "old.jsonl").write_text("{not json\n", encoding="utf-8")
    audit = _load(tmp_path)
    skipped = dict(
        audit.sources.dropna(subset=["skipped"])[["source_file", "skipped"]].itertuples(index=False)
    )
    assert skipped == {
        str(tmp_path / ".cache"): "a hidden folder: not read",
        str(tmp_path / ".draft.jsonl"): "a hidden file: not read",
        str(tmp_path / "notes.txt"): (
            "no suffix the kit reads (.jsonl, .ndjson, .json, .jsonl.gz, .ndjson.gz, .json.gz, "
            ".yaml, .yml): not read"
        ),
    }
    assert audit.files == [str(tmp_path / "r.jsonl")]
    assert audit.sources.loc[audit.sources["skipped"].notna(), "values_read"].eq(0).all()
    assert main(["verify", str(tmp_path)]) == 0
    assert "3 file(s) or folder(s) skipped for their name" in capsys.readouterr().out
    assert main(["verify", str(tmp_path), "--json"]) == 0
    document = _strict(capsys.readouterr().out)
    assert len(document["provenance"]["skipped"]) == 3
    assert [f["source_file"] for f in document["provenance"]["files"]] == [
        str(tmp_path / "r.jsonl")
    ]


def test_rotated_logs_are_read_by_their_base_suffix(tmp_path):
    (tmp_path / "dec.jsonl").write_text(_receipts(1), encoding="utf-8")
    (tmp_path / "dec.jsonl.1").write_text(_receipts(2) + "{cut\n", encoding="utf-8")
    (tmp_path / "dec.jsonl.2.gz").write_bytes(gzip.compress(_receipts(3).encode()))
    pretty = json.dumps(make_receipt(), indent=2) + "\n"
    (tmp_path / "out.json.1").write_text(pretty * 2, encoding="utf-8")
    audit = _load(tmp_path)
    counts = audit.sources.set_index("source_file")[["values_read", "loaded", "rejected"]]
    assert counts.loc[str(tmp_path / "dec.jsonl.1")].tolist() == [3, 2, 1]
    assert counts.loc[str(tmp_path / "dec.jsonl.2.gz")].tolist() == [3, 3, 0]
    assert counts.loc[str(tmp_path / "out.json.1")].tolist() == [2, 2, 0]
    assert len(audit.receipts) == 1 + 2 + 3 + 2
    assert audit.rejected["source_line"].tolist() == [3]


@pytest.mark.parametrize("engine", ["pandas", "dask"])
def test_provenance_hashes_the_bytes_the_loader_read(tmp_path, capsys, engine):
    body = _receipts(5).encode() + b"{cut\n"
    (tmp_path / "r.jsonl").write_bytes(body)
    packed = gzip.compress(_receipts(2).encode())
    (tmp_path / "p.jsonl.gz").write_bytes(packed)
    assert main(["verify", str(tmp_path), "--json", "--engine", engine]) == 1
    files = {
        Path(f["source_file"]).name: f
        for f in _strict(capsys.readouterr().out)["provenance"]["files"]
    }
    assert files["r.jsonl"]["sha256"] == hashlib.sha256(body).hexdigest()
    assert files["r.jsonl"]["bytes"] == len(body)
    assert files["p.jsonl.gz"]["sha256"] == hashlib.sha256(packed).hexdigest()


def test_a_large_file_read_in_ranges_is_hashed_on_dask(tmp_path):
    body = _receipts(400).encode()
    (tmp_path / "big.jsonl").write_bytes(body)
    lazy = ea.load(tmp_path, engine="dask", blocksize=len(body) // 5)
    assert lazy.receipts.npartitions >= 5
    sources = lazy.accounting().sources
    assert sources["sha256"].tolist() == [hashlib.sha256(body).hexdigest()]
    assert sources["bytes"].tolist() == [len(body)]


def test_the_hash_covers_exactly_the_lines_checked_while_a_writer_appends(tmp_path):
    # A writer appends as fast as it can while verify runs: the read ends (the file is
    # read as it was when opened), and the published SHA-256 is that of the bytes
    # checked, a prefix of the file as it ends up, holding values_read lines.
    log = tmp_path / "live.jsonl"
    line = _line(make_receipt()).encode()
    log.write_bytes(line * 20_000)
    writer = subprocess.Popen(
        [
            PYTHON,
            "-c",
            "import sys, time\n"
            "line = open(sys.argv[1], 'rb').readline()\n"
            "with open(sys.argv[1], 'ab', buffering=0) as f:\n"
            # At most 64 MiB in all, fast: the disk is shared.
            "    end, left = time.monotonic() + 30, 64 << 20\n"
            "    while time.monotonic() < end and left > 0:\n"
            "        left -= f.write(line * 20)\n"
            "        time.sleep(0.0005)\n",
            str(log),
        ]
    )
    try:
        time.sleep(0.2)
        done = _cli("verify", str(log), "--json", cwd=tmp_path)
    finally:
        writer.kill()
        writer.wait()
    document = _strict(done.stdout.decode("utf-8"))
    (shown,) = document["provenance"]["files"]
    final = log.read_bytes()
    assert len(final) > shown["bytes"]  # the writer went on after the read
    prefix = final[: shown["bytes"]]
    assert shown["sha256"] == hashlib.sha256(prefix).hexdigest()
    assert prefix.count(b"\n") == shown["values_read"] == shown["loaded"]


def test_a_line_being_written_when_the_file_was_opened_is_read_to_its_end(tmp_path):
    # The size a file has when opened may fall inside the line a writer is appending
    # (the system shows a write's bytes as they are copied): the read ends at that
    # line's end, never inside it, and the digest covers exactly what was read.
    from explicit_audit.reading.content import PIECE_BYTES, FileReader
    from explicit_audit.reading.limits import Limits

    log = tmp_path / "live.jsonl"
    line = _line(make_receipt()).encode()
    whole = PIECE_BYTES // len(line) + 10  # more than a piece: the first comes before the end
    for rest, read in ((line[40:] + line * 5, line * whole), (line[40:60], None)):
        log.write_bytes(line * (whole - 1) + line[:40])
        reader = FileReader(log, Limits())
        pieces = iter(reader)
        first = next(pieces)  # the file is open, its size taken, and the read not at its end
        with open(log, "ab") as writer:
            writer.write(rest)
        data = first.data + b"".join(piece.data for piece in pieces)
        if read is None:  # a line the writer has not finished: read as it was, cut short
            assert data == line * (whole - 1) + line[:40]
            continue
        assert data == read
        assert reader.digest.bytes == len(read)
        assert reader.digest.sha256 == hashlib.sha256(read).hexdigest()


@pytest.mark.parametrize("command", ["verify", "summary"])
def test_a_fifo_or_a_link_to_dev_zero_never_hangs(tmp_path, command):
    data = tmp_path / "data"
    data.mkdir()
    (data / "r.jsonl").write_text(_receipts(2), encoding="utf-8")
    os.mkfifo(data / "pipe.jsonl")
    (data / "zero.jsonl").symlink_to("/dev/zero")
    done = _cli(command, "data", *(["--json"] if command == "verify" else []), cwd=tmp_path)
    assert done.returncode == (1 if command == "verify" else 0), done.stderr.decode()
    if command == "verify":
        document = _strict(done.stdout.decode("utf-8"))
        rejected = {
            f["source_file"]: f["detail"]
            for f in document["findings"]
            if f["check"] == "rejected_rows"
        }
        assert rejected == {
            "data/pipe.jsonl": "a FIFO, not a regular file: not read",
            "data/zero.jsonl": "a device, not a regular file: not read",
        }
        files = {f["source_file"]: f["sha256"] for f in document["provenance"]["files"]}
        assert files["data/pipe.jsonl"] is None and files["data/zero.jsonl"] is None
        assert files["data/r.jsonl"] == hashlib.sha256((data / "r.jsonl").read_bytes()).hexdigest()
    else:
        assert "data/pipe.jsonl" in done.stdout.decode()


# Names as bytes ------------------------------------------------------------------------------


def test_names_that_are_not_utf8_are_read_hashed_and_listed_apart(tmp_path, capsys):
    folder = os.path.join(os.fsencode(tmp_path), b"d\xe9")  # a folder name that is not UTF-8
    os.mkdir(folder)
    raw = os.path.join(folder, b"r\xe9.jsonl")  # the byte 0xE9
    literal = os.path.join(folder, b"r\\xe9.jsonl")  # a backslash, then x, e, 9
    with open(raw, "wb") as stream:
        stream.write(_receipts(1).encode())
    with open(literal, "wb") as stream:
        stream.write(_receipts(2).encode())
    shown = f"{tmp_path}/d\\xe9"
    shown_raw, shown_literal = f"{shown}/r\\xe9.jsonl", f"{shown}/r\\\\xe9.jsonl"
    audit = _load(os.fsdecode(folder))
    assert audit.receipts["source_file"].astype(str).value_counts().to_dict() == {
        shown_literal: 2,
        shown_raw: 1,
    }
    assert main(["verify", os.fsdecode(folder), "--json"]) == 0
    document = _strict(capsys.readouterr().out)
    digests = {f["source_file"]: f["sha256"] for f in document["provenance"]["files"]}
    with open(raw, "rb") as stream:
        raw_digest = hashlib.sha256(stream.read()).hexdigest()
    with open(literal, "rb") as stream:
        literal_digest = hashlib.sha256(stream.read()).hexdigest()
    assert digests == {shown_literal: literal_digest, shown_raw: raw_digest}
    assert document["data"] == shown


@pytest.mark.parametrize("command", ["verify", "summary"])
def test_a_data_argument_that_is_not_utf8_gives_utf8_output(tmp_path, command):
    folder = os.path.join(os.fsencode(tmp_path), b"d\xe9")
    os.mkdir(folder)
    with open(os.path.join(folder, b"r.jsonl"), "wb") as stream:
        stream.write(_receipts(1).encode())
    python, env = _as(None)
    json_flag = ["--json"] if command == "verify" else []
    for argument, status in ((b"d\xe9", 0), (b"gone\xe9", 2)):
        done = subprocess.run(
            [*python, "-m", "explicit_audit.cli", command, argument, *json_flag],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == status, done.stderr.decode("utf-8", "replace")
        text = done.stdout.decode("utf-8")  # strict: every byte written is UTF-8
        done.stderr.decode("utf-8")
        assert "Traceback" not in done.stderr.decode("utf-8")
        if command == "verify":
            document = _strict(text)
            assert document["data"] == os.fsdecode(argument).encode(
                "utf-8", "surrogateescape"
            ).decode("utf-8", "backslashreplace")
        else:
            assert status == 2 or "d\\xe9/r.jsonl" in text


# The command line's contract -----------------------------------------------------------------


def test_the_exit_status_survives_a_reader_that_stops_early(tmp_path):
    # Enough findings that the output outgrows the pipe's buffer: the write fails.
    (tmp_path / "bad.jsonl").write_text("{not json\n" * 20_000, encoding="utf-8")
    python, env = _as(None)
    verify = subprocess.Popen(
        [*python, "-m", "explicit_audit.cli", "verify", str(tmp_path), "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    first = verify.stdout.readline()  # as `| head -1` does, then it goes away
    verify.stdout.close()
    status = verify.wait(timeout=120)
    err = verify.stderr.read().decode()
    verify.stderr.close()
    assert first == b"{\n"
    assert status == 1, err
    assert "Traceback" not in err


def test_text_output_escapes_control_characters_in_ids_and_names(tmp_path, capsys):
    name = "r\x1b[2K\r\x1b[32mALL CLEAN\n.jsonl"
    receipt = make_receipt(scope="space", query="weekly plan")
    receipt["request_id"] = "req-1\x1b[2K\r\x1b[32mALL CLEAN"
    (tmp_path / name).write_text(_line(receipt) + "{not json\n", encoding="utf-8")
    assert main(["verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out
    shown = f"{tmp_path}/r\\x1b[2K\\x0d\\x1b[32mALL CLEAN\\x0a.jsonl"
    assert f"{shown}:1: space_query [req-1\\x1b[2K\\r\\x1b[32mALL CLEAN]" in out
    assert f"{shown}:2: rejected_row: invalid JSON" in out


def test_a_policy_file_whose_name_is_not_utf8_is_loaded_and_counted(tmp_path):
    folder = os.fsencode(tmp_path)
    policy = (ROOT / "data" / "policies" / "baseline.yaml").read_bytes()
    with open(os.path.join(folder, b"base\xe9.yaml"), "wb") as stream:
        stream.write(policy)
    with open(os.path.join(folder, b"bad\xe9.yaml"), "wb") as stream:
        stream.write(b"policy_id: [\n")
    audit = _load(tmp_path)
    counts = audit.sources.set_index("source_file")[["values_read", "loaded", "rejected"]]
    assert counts.loc[f"{tmp_path}/base\\xe9.yaml"].tolist() == [1, 1, 0]
    assert counts.loc[f"{tmp_path}/bad\\xe9.yaml"].tolist() == [1, 0, 1]
    assert audit.rejected["source_file"].tolist() == [f"{tmp_path}/bad\\xe9.yaml"]
    digests = audit.sources.set_index("source_file")["sha256"]
    assert digests[f"{tmp_path}/base\\xe9.yaml"] == hashlib.sha256(policy).hexdigest()


def test_verify_all_says_exit_2_when_a_file_could_not_be_read(tmp_path):
    (tmp_path / "r.jsonl").write_text(_receipts(1), encoding="utf-8")
    assert ea.verify_all(_load(tmp_path)).exit_status == 0
    (tmp_path / "x.jsonl").symlink_to("/proc/self/mem")
    assert ea.verify_all(_load(tmp_path)).exit_status == 2


def test_a_glob_lists_what_it_matched_but_does_not_read(tmp_path):
    (tmp_path / "r.jsonl").write_text(_receipts(1), encoding="utf-8")
    (tmp_path / "r.csv").write_text("a,b\n", encoding="utf-8")
    audit = _load(str(tmp_path / "r.*"))
    skipped = audit.sources.dropna(subset=["skipped"])
    assert skipped["source_file"].tolist() == [str(tmp_path / "r.csv")]
    assert audit.files == [str(tmp_path / "r.jsonl")]


def test_a_path_too_long_is_a_clean_error(tmp_path, capsys):
    long = str(tmp_path / ("a" * 5000))
    with pytest.raises(ea.AuditError, match="File name too long"):
        ea.load(long)
    assert main(["verify", long, "--json"]) == 2
    captured = capsys.readouterr()
    assert "File name too long" in _strict(captured.out)["error"]["message"]
    assert main(["summary", str(tmp_path / ("a/" * 3000))]) == 2
    assert "File name too long" in capsys.readouterr().err


def test_a_policy_is_hashed_as_it_is_parsed_on_dask(tmp_path):
    # On Dask the policies are parsed when the load is planned; the rows are read
    # at compute time. A policy rewritten in between must keep the hash of the
    # bytes that were parsed, not of the file as it is when the rows are read.
    policy = tmp_path / "baseline.yaml"
    body = (ROOT / "data" / "policies" / "baseline.yaml").read_bytes()
    policy.write_bytes(body)
    (tmp_path / "r.jsonl").write_text(_receipts(1), encoding="utf-8")
    lazy = ea.load(tmp_path, engine="dask")
    policy.write_bytes(body.replace(b"baseline", b"changed!"))
    digests = lazy.accounting().sources.set_index("source_file")["sha256"]
    assert digests[str(policy)] == hashlib.sha256(body).hexdigest()
    assert list(lazy.policies) == ["baseline"]


def test_report_on_a_folder_that_cannot_be_listed_exits_2_and_names_it(shared_tmp):
    data = shared_tmp / "data"
    (data / "locked").mkdir(parents=True)
    data.chmod(0o755)
    (data / "ok.jsonl").write_text(_receipts(2), encoding="utf-8")
    (data / "ok.jsonl").chmod(0o644)
    out = shared_tmp / "out"
    out.mkdir()
    out.chmod(0o777)
    user = _locked_down(data / "locked")
    notebooks = str(ROOT / "notebooks")
    done = _cli(
        "report", "data", "--out", "out", "--notebooks", notebooks, cwd=shared_tmp, bound=user
    )
    err = done.stderr.decode()
    assert done.returncode == 2, err
    assert "data/locked: the folder cannot be listed (Permission denied)" in err
    assert "Traceback" not in err
    assert list(out.iterdir()) == []


def test_a_file_is_read_as_it_was_when_opened(tmp_path):
    from explicit_audit.reading.content import PIECE_BYTES, FileReader
    from explicit_audit.reading.limits import Limits

    # More than one piece, so that lines can be appended while it is read.
    log = tmp_path / "live.jsonl"
    line = _line(make_receipt()).encode()
    body = line * (PIECE_BYTES // len(line) + 100)
    log.write_bytes(body)
    reader = FileReader(log, Limits())
    pieces = iter(reader)
    read = [next(pieces).data]
    with open(log, "ab") as stream:
        stream.write(line * 1000)  # a writer appends after the open
    read.extend(piece.data for piece in pieces)
    assert b"".join(read) == body
    assert reader.digest == (len(body), hashlib.sha256(body).hexdigest())
