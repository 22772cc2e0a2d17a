"""engine="dask": the same tables and the same answers as the in-memory engine.

Every public function is run on both engines and compared, on the bundled
data and on generated files spread over many partitions, on a real
``distributed.LocalCluster`` (2 worker processes, 1 thread each) and on the
synchronous scheduler.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import dask
import numpy as np
import pandas as pd
import pytest
from conftest import make_receipt, quiet_load, sorted_categories

import explicit_audit as ea
from explicit_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"


@pytest.fixture(params=["synchronous", "cluster"])
def scheduler(request, cluster):
    """Each test runs once on the synchronous scheduler and once on the LocalCluster."""
    if request.param == "cluster":
        with dask.config.set(scheduler=cluster.get):
            yield request.param
    else:
        with dask.config.set(scheduler="synchronous"):
            yield request.param


def _quiet_load(source, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(source, progress=False, **options)


def assert_same_table(memory: pd.DataFrame, lazy) -> None:
    assert list(lazy.columns) == list(memory.columns)
    computed = lazy.compute()
    pd.testing.assert_frame_equal(sorted_categories(memory), sorted_categories(computed))


def assert_same_audit(memory: ea.Audit, lazy: ea.Audit) -> ea.Audit:
    """Every table of ``lazy`` equals ``memory``'s, computed in one pass; the computed audit."""
    assert lazy.engine == "dask" and list(lazy.tables) == list(memory.tables)
    computed = lazy.compute()
    assert computed.engine == "pandas"
    for name, table in memory.tables.items():
        assert list(lazy.tables[name].columns) == list(table.columns)
        pd.testing.assert_frame_equal(
            sorted_categories(table), sorted_categories(computed.tables[name])
        )
    for name in ("rejected", "sources"):
        pd.testing.assert_frame_equal(
            sorted_categories(getattr(memory, name)), sorted_categories(getattr(computed, name))
        )
    assert computed.files == memory.files
    return computed


@pytest.fixture(scope="module")
def loaded():
    """The bundled data in memory, and lazily in partitions of 256 KiB (large files split)."""
    return _quiet_load(DATA), _quiet_load(DATA, engine="dask", blocksize=256 << 10)


def lazy_held(lazy: ea.Audit) -> ea.Audit:
    """``lazy`` with its partitions read once and held (still Dask tables)."""
    with dask.config.set(scheduler="synchronous"):
        return lazy.persist()


@pytest.fixture(scope="module")
def bundled(loaded):
    """As :func:`loaded`, the lazy tables read once (the reading has tests of its own)."""
    memory, lazy = loaded
    return memory, lazy_held(lazy)


def test_nothing_is_read_until_computed(monkeypatch):
    calls = []
    import explicit_audit.partitioned.graph as planned

    monkeypatch.setattr(planned, "read_part", lambda *a, **k: calls.append(a) or 1 / 0)
    audit = ea.load(DATA, engine="dask")
    assert calls == []
    assert audit.engine == "dask"
    assert "not read yet" in repr(audit)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ZeroDivisionError):
        audit.receipts.compute()


def test_meta_is_the_in_memory_tables_columns_and_dtypes(loaded):
    memory, lazy = loaded
    assert list(lazy.tables) == list(memory.tables)
    for name, table in memory.tables.items():
        meta = lazy.tables[name]._meta
        assert list(meta.columns) == list(table.columns), name
        for column in table.columns:
            left, right = table[column].dtype, meta[column].dtype
            if isinstance(left, pd.CategoricalDtype):
                assert isinstance(right, pd.CategoricalDtype), (name, column)
            else:
                assert left == right, (name, column, left, right)


def test_tables_rejected_and_sources_equal_in_memory(loaded, scheduler):
    memory, lazy = loaded
    assert lazy.tables["receipts"].npartitions > len(memory.files) - 4  # large files are split
    assert_same_audit(memory, lazy)
    assert lazy.summary().equals(memory.summary())
    assert dict(lazy.policies) == dict(memory.policies)


def test_every_check_equals_in_memory(bundled, scheduler):
    memory, lazy = bundled
    pairs = [
        (ea.check_receipts(memory), ea.check_receipts(lazy)),
        (ea.check_presentations(memory), ea.check_presentations(lazy.presentations)),
        (ea.check_plans(memory.plans), ea.check_plans(lazy.plans)),
        (ea.check_requests(memory.requests), ea.check_requests(lazy.requests)),
        (
            ea.check_decisions(memory.decisions, memory.policies),
            ea.check_decisions(lazy.decisions, lazy.policies),
        ),
    ]
    for expected, got in pairs:
        assert isinstance(got, pd.DataFrame)
        pd.testing.assert_frame_equal(expected, got)
    assert sum(len(expected) for expected, _ in pairs) > 0  # the sample data has findings
    memory_result, lazy_result = ea.verify_all(memory), ea.verify_all(lazy)
    pd.testing.assert_frame_equal(memory_result.findings, lazy_result.findings)
    assert memory_result.checked == lazy_result.checked
    assert lazy_result.to_dict() == memory_result.to_dict()


def test_per_row_answers_equal_in_memory(bundled, scheduler):
    memory, lazy = bundled
    assert_same_table(ea.plan_verdicts(memory.plans), ea.plan_verdicts(lazy.plans))
    for policy in memory.policies.values():
        assert_same_table(ea.replay(memory.decisions, policy), ea.replay(lazy.decisions, policy))
    window = ("2025-03-02", "2025-03-06")
    assert_same_table(
        ea.within_time_window(memory.receipts, *window),
        ea.within_time_window(lazy.receipts, *window),
    )


@pytest.mark.parametrize("by", [None, "withheld_audience", "scope", ["withheld_audience", "kind"]])
def test_withheld_views_equal_in_memory(bundled, by):
    memory, lazy = bundled
    with dask.config.set(scheduler="synchronous"):
        for overall in (False, True):
            pd.testing.assert_frame_equal(
                ea.withheld_summary(memory.receipts, by, overall=overall),
                ea.withheld_summary(lazy.receipts, by, overall=overall),
            )
        who = by or "withheld_audience"
        pd.testing.assert_frame_equal(
            ea.withheld_queries(memory.receipts, who), ea.withheld_queries(lazy.receipts, who)
        )
        pd.testing.assert_frame_equal(
            ea.withheld_oracle(memory.receipts, who), ea.withheld_oracle(lazy.receipts, who)
        )


def test_sweep_sums_partition_counts_exactly(bundled, scheduler):
    memory, lazy = bundled
    grid = {
        "context_char_cap_4b": np.linspace(1000, 12000, 12).astype(int),
        "escalate_on_multi_doc_count": [1, 2, 3, 5],
        "confidence_threshold": np.linspace(0, 1, 11),
    }
    for only_named in (False, True):
        pd.testing.assert_frame_equal(
            ea.sweep(memory.decisions, memory.policies, grid, only_named=only_named),
            ea.sweep(lazy.decisions, lazy.policies, grid, only_named=only_named),
        )


def _decision(index: int) -> dict:
    return {
        "decision_id": f"d-{index}",
        "policy_id": "baseline",
        "inputs": {
            "subject_domain": "legal",
            "content_chars": 100 * index,
            "deterministic_keyword_hits": [],
            "self_declared_high_impact": False,
            "self_declared_risk_flags": [],
            "confidence": 0.9,
            "evidence_doc_count": 1,
        },
    }


@pytest.fixture(scope="module")
def spread(tmp_path_factory):
    """A mixed log over many small partitions: receipts, bad lines, one very long line."""
    folder = tmp_path_factory.mktemp("spread")
    lines = []
    for index in range(300):
        receipt = make_receipt(
            query=f"q{index % 37}", withheld={"audienceId": "peer", "count": index % 3}
        )
        if index % 50 == 7:
            lines.append("{not json")
        elif index % 9 == 0:
            lines.append(json.dumps({"host": f"h{index % 4}", **receipt}))
        else:
            lines.append(json.dumps(receipt))
    lines[120:140] = ["garbage line that is no json at all"] * 200  # partitions all rejected
    lines.insert(400, json.dumps(make_receipt(query="x" * 9000)))  # longer than a partition
    (folder / "mixed.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    (folder / "more.jsonl").write_text(
        "".join(json.dumps(make_receipt(query=f"m{i}")) + "\n" for i in range(40)), "utf-8"
    )
    return folder


def test_many_partitions_equal_in_memory(spread, scheduler):
    memory = _quiet_load(spread)
    lazy = _quiet_load(spread, engine="dask", blocksize=4096)
    assert lazy.tables["receipts"].npartitions > 40
    computed = assert_same_audit(memory, lazy)
    sources = computed.sources
    assert (sources["loaded"] + sources["rejected"] == sources["values_read"]).all()
    lazy = lazy_held(lazy)
    lengths = lazy.receipts.map_partitions(len).compute().tolist()
    assert 0 in lengths  # a range inside the long line starts no line: an empty partition
    rejected = lazy.rejected.compute()
    assert rejected["source_line"].between(121, 320).sum() == 200
    pd.testing.assert_frame_equal(ea.check_receipts(memory), ea.check_receipts(lazy))
    pd.testing.assert_frame_equal(
        ea.withheld_oracle(memory.receipts), ea.withheld_oracle(lazy.receipts)
    )


def test_a_load_of_many_partitions_has_one_root(spread):
    # Each range's line count waiting for nothing would be a root of its own, and every later
    # range reaches every earlier count through the chain of first lines: Dask's ordering
    # then keeps per task a set of roots that grows with the square of the partitions.
    from dask.core import get_dependencies

    lazy = _quiet_load(spread, engine="dask", blocksize=4096)
    for name in ("receipts", "exposed"):
        graph = dict(lazy.tables[name].__dask_graph__())
        roots = [key for key in graph if not get_dependencies(graph, key)]
        assert len(roots) == 1 and str(roots[0]).startswith("begin-"), roots[:5]
    assert lazy.tables["receipts"].npartitions > 40


def test_a_load_past_max_partitions_is_refused_before_its_graph(tmp_path, spread):
    # A tiny blocksize over a folder of many files (or over one large file) would plan a
    # partition per few bytes, and every partition costs the client and the scheduler memory.
    planned = _quiet_load(spread, engine="dask", blocksize=4096).tables["receipts"].npartitions
    at_limit = _quiet_load(
        spread, engine="dask", blocksize=4096, limits={"max_partitions": planned}
    )
    assert at_limit.tables["receipts"].npartitions == planned
    over = (
        r"{}: the load would plan more than {} partitions "
        r"\(limit max_partitions; one per block of {} "
    )
    with pytest.raises(ea.AuditError, match=over.format("", planned - 1, "4,096")):
        _quiet_load(spread, engine="dask", blocksize=4096, limits={"max_partitions": planned - 1})

    line = json.dumps(make_receipt()) + "\n"
    for index in range(30):
        (tmp_path / f"r{index:02}.jsonl").write_text(line)
    # Each file a partition of its own: the 21st is refused. At 1-byte blocks, the first.
    options = {"engine": "dask", "limits": {"max_partitions": 20}}
    with pytest.raises(ea.AuditError, match=over.format(r"r20\.jsonl", 20, f"{len(line):,}")):
        _quiet_load(tmp_path, blocksize=len(line), **options)
    # Below 1 MiB, a file over the blocksize is a partition of its own: the message says so.
    with pytest.raises(ea.AuditError, match=f"per other file over {len(line):,} bytes or URL"):
        _quiet_load(tmp_path, blocksize=len(line), **options)
    with pytest.raises(ea.AuditError, match=over.format(r"r00\.jsonl", 20, 1)):
        _quiet_load(tmp_path, blocksize=1, **options)

    # One file of 2 GB (sparse) at 1-byte blocks: refused from its size, no range made.
    large = tmp_path / "large" / "big.jsonl"
    large.parent.mkdir()
    with open(large, "wb") as handle:
        handle.truncate(2 << 30)
    with pytest.raises(ea.AuditError, match=over.format(r"big\.jsonl", "10,000", 1)):
        _quiet_load(large.parent, engine="dask", blocksize=1)


def test_the_checks_one_pass_has_one_output_per_result_not_per_partition(spread):
    # Dask's ordering keeps per task the set of outputs it leads to; a partition's line count
    # leads to every later partition's, so one output per partition grew with the square.
    from dask.core import get_dependencies, reverse_dict

    from explicit_audit._core import engine

    lazy = _quiet_load(spread, engine="dask", blocksize=4096)
    parts = lazy.tables["receipts"].npartitions
    deferred = [
        engine.deferred(len, sum, [lazy.tables[name]], what="test")
        for name in ("receipts", "exposed")
    ]
    deferred.append(engine.delayed_parts(lazy.rejected))
    outputs = engine.gathered(*deferred)
    graph = {}
    for output in outputs:
        graph.update(dict(output.__dask_graph__()))
    dependents = reverse_dict({key: get_dependencies(graph, key) for key in graph})
    leaves = [key for key in graph if not dependents[key]]
    assert sorted(map(str, leaves)) == sorted(str(output.key) for output in outputs)
    assert parts > 40 and len(leaves) == 3
    results = engine.compute_together(*deferred)
    assert results[:2] == [len(lazy.receipts.compute()), len(lazy.exposed.compute())]


def test_rejected_rows_cap_holds_across_partitions(spread):
    limits = {"max_rejected_rows": 5}
    memory = _quiet_load(spread, limits=limits)
    with dask.config.set(scheduler="synchronous"):
        lazy = _quiet_load(spread, engine="dask", blocksize=4096, limits=limits)
        assert_same_audit(memory, lazy)
    assert memory.rejected["reason"].str.contains("more value\\(s\\) rejected").any()


def test_independence_is_checked_across_partitions(tmp_path):
    template = json.loads(
        (ROOT / "data/requests/compile_requests.jsonl").read_text().split("\n")[0]
    )
    lines = [json.dumps(template)]
    lines += [json.dumps(make_receipt(query=f"pad {i}")) for i in range(60)]
    other = json.loads(json.dumps(template))
    other["model"] = "other-model"
    other["payload"]["question"] = "a different question"
    lines.append(json.dumps(other))
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    memory = _quiet_load(tmp_path)
    with dask.config.set(scheduler="synchronous"):
        lazy = _quiet_load(tmp_path, engine="dask", blocksize=4096)
        assert lazy.requests.npartitions > 2
        expected = ea.check_requests(memory.requests)
        got = ea.check_requests(lazy.requests)
    assert "independence" in set(expected["rule"])
    pd.testing.assert_frame_equal(expected, got)


def test_a_key_the_sample_did_not_show_is_an_error_naming_file_and_key(tmp_path):
    lines = [json.dumps(make_receipt()) for _ in range(200)]
    lines.append(json.dumps({"late_key": 1, **make_receipt()}))
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    lazy = ea.load(tmp_path, engine="dask", blocksize=4096, sample_bytes=4096)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ea.InputError) as error:
        lazy.receipts.compute()
    assert "late_key" in str(error.value) and "log.jsonl" in str(error.value)
    assert "sample_bytes" in str(error.value)
    # The file, the line of the first record holding the key, and the key.
    assert error.value.source_file.endswith("log.jsonl")
    assert (error.value.source_line, error.value.field) == (201, "late_key")
    whole = ea.load(tmp_path, engine="dask", blocksize=4096)  # the default sample sees it
    with dask.config.set(scheduler="synchronous"):
        assert_same_table(_quiet_load(tmp_path).receipts, whole.receipts)


@pytest.mark.parametrize("text", ["not a time", "2025-01-01T00:00:00Z"])
@pytest.mark.parametrize("numbers_first", [True, False])
def test_a_key_numeric_in_one_partition_and_text_in_another_loads_as_in_memory(
    tmp_path, scheduler, text, numbers_first
):
    # The heads of both files show both types: the in-memory engine makes ``ts`` (a time
    # key) and ``level`` (a logger key) object columns of the values as written; each
    # partition holds one type only, and is typed as that whole load, not on its own.
    numbers = [json.dumps({"ts": i, "level": i, **make_receipt(query=f"n{i}")}) for i in range(40)]
    texts = [
        json.dumps({"ts": text, "level": "info", **make_receipt(query=f"t{i}")}) for i in range(40)
    ]
    (tmp_path / "numbers.jsonl").write_text("\n".join(numbers) + "\n", "utf-8")
    (tmp_path / "texts.jsonl").write_text("\n".join(texts) + "\n", "utf-8")
    files = [tmp_path / "numbers.jsonl", tmp_path / "texts.jsonl"]
    if not numbers_first:
        files.reverse()
    memory = _quiet_load(files)
    assert memory.receipts["ts"].dtype == object and memory.receipts["level"].dtype == object
    lazy = ea.load(files, engine="dask", blocksize=2048, sample_bytes=1024)
    assert lazy.receipts.npartitions > 4
    computed = assert_same_audit(memory, lazy)
    assert computed.receipts["ts"].tolist().count(text) == 40


def test_a_key_named_extra_json_loads_on_dask_as_in_memory(tmp_path, scheduler):
    values = [3, "text", {"nested": [1]}, None, 2.5] * 20
    lines = [
        json.dumps({"host": "h", "extra_json": value, **make_receipt(query=f"q{i}")})
        for i, value in enumerate(values)
    ]
    (tmp_path / "named.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    with pytest.warns(ea.ExtraColumnsWarning, match="a key named 'extra_json'"):
        memory = _quiet_load(tmp_path)
    with pytest.warns(ea.ExtraColumnsWarning, match="a key named 'extra_json'"):
        lazy = ea.load(tmp_path, engine="dask", blocksize=4096)
    computed = assert_same_audit(memory, lazy)
    assert computed.receipts["extra_json"].iloc[0] == '{"extra_json":3}'


def test_strict_names_file_and_line_when_computed(spread):
    lazy = ea.load(spread, engine="dask", blocksize=2048, strict=True)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ea.InputError) as error:
        lazy.receipts.compute()
    assert error.value.source_file.endswith("mixed.jsonl")
    assert error.value.source_line == 8


def test_per_kind_loaders_take_the_engine(spread):
    with dask.config.set(scheduler="synchronous"):
        lazy = ea.load_receipts(spread, engine="dask", blocksize=4096, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ea.RejectedRowsWarning)
            memory = ea.load_receipts(spread, progress=False)
        assert_same_table(memory, lazy)
    with pytest.raises(ea.AuditError, match="unknown engine"):
        ea.load(spread, engine="spark")


def test_fixtures_load_clean_on_dask():
    with dask.config.set(scheduler="synchronous"):
        lazy = ea.load(ROOT / "tests/data/engram", engine="dask")
        assert len(lazy.rejected.compute()) == 0
        assert len(ea.check_receipts(lazy)) == 0
        assert len(ea.check_presentations(lazy.presentations)) == 0


@pytest.mark.parametrize("as_json", [False, True])
def test_cli_verify_on_dask_prints_the_same(capsys, as_json, cluster):
    flags = ["--json"] if as_json else []
    status = main(["verify", str(DATA), *flags])
    expected = capsys.readouterr().out
    for scheduler in ("synchronous", cluster.scheduler.address):
        got_status = main(
            ["verify", str(DATA), *flags, "--engine", "dask", "--scheduler", scheduler]
        )
        assert (got_status, capsys.readouterr().out) == (status, expected)
    assert status == 1


def test_cli_unreachable_scheduler_exits_2(capsys):
    status = main(
        ["verify", str(DATA), "--json", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"]
    )
    document = json.loads(capsys.readouterr().out)
    assert status == 2 and document["exit_status"] == 2
    assert "scheduler" in document["error"]["message"]


def test_cli_verify_on_dask_reads_each_partition_once(monkeypatch, capsys):
    import explicit_audit.partitioned.graph as planned

    reads = []
    real = planned.read_part

    def counted(part, *args, **kwargs):
        reads.append((part.name, part.start))
        return real(part, *args, **kwargs)

    monkeypatch.setattr(planned, "read_part", counted)
    flags = ["--engine", "dask", "--scheduler", "synchronous"]
    assert main(["verify", str(DATA), "--json", *flags]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["provenance"]["files"] and len(reads) == len(set(reads))
    parts = ea.load(DATA, engine="dask").tables["receipts"].npartitions
    assert len(reads) == parts


def test_summary_and_accounting_on_dask(capsys):
    assert main(["summary", str(DATA)]) == 0
    expected = capsys.readouterr().out
    assert main(["summary", str(DATA), "--engine", "dask", "--scheduler", "synchronous"]) == 0
    assert capsys.readouterr().out == expected
    memory = _quiet_load(DATA)
    with dask.config.set(scheduler="synchronous"):
        held = ea.load(DATA, engine="dask").accounting()
    pd.testing.assert_frame_equal(held.rejected, memory.rejected)
    pd.testing.assert_frame_equal(held.sources, memory.sources)
    assert held.summary().equals(memory.summary())


def test_a_byte_order_mark_is_dropped_at_the_file_start_only(tmp_path):
    bom = b"\xef\xbb\xbf"
    lines = [json.dumps(make_receipt(query=f"q{i}")).encode() for i in range(40)]
    lines[20] = bom + lines[20]  # mid-file: not a byte order mark, as when read whole
    (tmp_path / "log.jsonl").write_bytes(bom + b"\n".join(lines) + b"\n")
    memory = _quiet_load(tmp_path)
    assert len(memory.receipts) == 39 and memory.rejected["source_line"].tolist() == [21]
    with dask.config.set(scheduler="synchronous"):
        assert_same_audit(memory, _quiet_load(tmp_path, engine="dask", blocksize=512))


def test_a_table_computes_without_the_accounting_and_the_accounting_without_the_fits(
    monkeypatch, tmp_path
):
    import explicit_audit.partitioned.graph as planned

    calls = {"fold": 0, "fitted": 0}

    def counting(name, real):
        def counted(*args):
            calls[name] += 1
            return real(*args)

        return counted

    monkeypatch.setattr(planned, "_fold", counting("fold", planned._fold))
    monkeypatch.setattr(planned, "_fitted", counting("fitted", planned._fitted))
    lines = [json.dumps(make_receipt(query=f"q{i}")) for i in range(60)]
    (tmp_path / "log.jsonl").write_text("\n".join(lines) + "\n")
    lazy = _quiet_load(tmp_path, engine="dask", blocksize=1024)
    parts = lazy.tables["receipts"].npartitions
    assert parts > 5
    with dask.config.set(scheduler="synchronous"):
        assert len(lazy.tables["receipts"].compute()) == 60
        assert calls == {"fold": 0, "fitted": parts}
        assert lazy.rejected.compute().empty
        assert calls == {"fold": parts, "fitted": parts}


def test_a_key_first_seen_past_the_heads_gets_the_verdict_of_the_pandas_engine(tmp_path, capsys):
    lines = [json.dumps(make_receipt()) for _ in range(3000)]
    lines.append(json.dumps({"late_key": 1, **make_receipt()}))
    data = tmp_path / "log.jsonl"
    data.write_text("\n".join(lines) + "\n", "utf-8")
    size = data.stat().st_size
    argv = ["verify", str(data), "--json", "--engine", "dask", "--scheduler", "synchronous"]
    assert main(argv[:3]) == 0
    expected = json.loads(capsys.readouterr().out)
    # Heads of 4 KiB miss the key (at byte 1.5 MB, past the default 1 MiB too): the load
    # is planned again with heads that take in the partition holding it, and every check
    # runs as on the pandas engine.
    for sample in (["--sample-bytes", "4096"], [], ["--sample-bytes", str(size)]):
        assert main([*argv, *sample]) == 0
        document = json.loads(capsys.readouterr().out)
        for key in ("exit_status", "state", "clean", "summary", "keys", "findings"):
            assert document[key] == expected[key], (sample, key)
    lazy = ea.load(data, engine="dask", sample_bytes=4096)
    with dask.config.set(scheduler="synchronous"):
        held = lazy.accounting()
    assert held.summary().equals(_quiet_load(data).summary())
    assert held.tables["receipts"].columns[-1] == "late_key"
    # Straight from the tables, the late key is an error naming file, line and key.
    with dask.config.set(scheduler="synchronous"), pytest.raises(ea.InputError) as raised:
        lazy.receipts.compute()
    assert (raised.value.source_line, raised.value.field) == (3001, "late_key")
    assert "sample_bytes" in str(raised.value)
    assert main([*argv, "--sample-bytes", "0"]) == 2
    assert "give at least 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("truncated", "its size went from"),
        ("emptied", "its size went from"),
        ("appended", "its size went from"),
        ("replaced", "it was replaced by another file"),
        ("removed", "it is gone"),
    ],
)
def test_a_file_changed_after_the_load_is_planned_loads_nothing_and_says_so(tmp_path, change, said):
    receipts = [json.dumps(make_receipt(query=f"q{i}")) for i in range(40)]
    data = tmp_path / "log.jsonl"
    data.write_text("\n".join(receipts) + "\n", "utf-8")
    other = tmp_path / "other.jsonl"
    other.write_text(receipts[0] + "\n", "utf-8")
    lazy = ea.load(tmp_path, engine="dask", blocksize=1024)
    assert lazy.receipts.npartitions > 2
    if change == "truncated":
        data.write_text("\n".join(receipts[:10]) + "\n", "utf-8")
    elif change == "emptied":
        data.write_bytes(b"")
    elif change == "appended":
        with open(data, "a", encoding="utf-8") as stream:
            stream.write(receipts[0] + "\n")
    elif change == "replaced":
        replacement = tmp_path / "new.tmp"
        replacement.write_text("\n".join(receipts) + "\n", "utf-8")  # the same bytes
        replacement.replace(data)
    else:
        data.unlink()
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        shown = lazy.receipts.compute()
        rejected = lazy.rejected.compute()
    # No row of the changed file; the unchanged file's row is kept.
    assert set(shown["source_file"]) == {str(other)}
    assert len(rejected) == lazy.receipts.npartitions - 1  # one per partition of the file
    assert set(rejected["source_file"]) == {str(data)}
    assert rejected["reason"].str.contains("changed after the load was planned").all()
    assert rejected["reason"].str.contains(said).all()


def test_an_unchanged_file_reads_as_planned(tmp_path):
    receipts = [json.dumps(make_receipt(query=f"q{i}")) for i in range(40)]
    (tmp_path / "log.jsonl").write_text("\n".join(receipts) + "\n", "utf-8")
    lazy = ea.load(tmp_path, engine="dask", blocksize=1024)
    with dask.config.set(scheduler="synchronous"):
        assert len(lazy.receipts.compute()) == 40
        assert len(lazy.rejected.compute()) == 0
        # Computed twice, the same: looking at the file changes nothing.
        assert len(lazy.receipts.compute()) == 40


def test_small_files_are_packed_and_each_is_pinned_to_itself(tmp_path):
    receipts = [json.dumps(make_receipt(query=f"q{i}")) for i in range(30)]
    paths = []
    for index, line in enumerate(receipts):
        path = tmp_path / f"{index:02d}.jsonl"
        path.write_text(line + "\n", "utf-8")
        paths.append(path)
    lazy = ea.load(tmp_path, engine="dask", blocksize=4096)
    # Many files to a partition, not one partition per file.
    assert 1 < lazy.receipts.npartitions < 10
    memory = quiet_load(tmp_path)
    with dask.config.set(scheduler="synchronous"):
        computed = lazy.compute()
    pd.testing.assert_frame_equal(
        sorted_categories(memory.receipts), sorted_categories(computed.receipts)
    )
    pd.testing.assert_frame_equal(memory.sources, computed.sources)
    # One file of a pack changes: it alone is a file-level rejection naming it.
    changed = paths[12]
    with open(changed, "a", encoding="utf-8") as stream:
        stream.write(receipts[0] + "\n")
    with dask.config.set(scheduler="synchronous"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        after = lazy.compute()
    assert str(changed) not in set(after.receipts["source_file"])
    assert len(after.receipts) == 29
    (row,) = after.rejected.itertuples()
    assert (row.source_file, row.source_line, row.kind) == (str(changed), 0, "file")
    assert "changed after the load was planned" in row.reason
    assert "its size went from" in row.reason
    sources = after.sources.set_index("source_file")
    assert sources.loc[str(changed), ["values_read", "loaded"]].tolist() == [0, 0]
    assert (sources.loaded + sources.rejected == sources.values_read).all()
    # The rejection sits in its file's place: the file after it still loads first after it.
    assert list(after.receipts["source_file"]).index(str(paths[13])) == 12


def test_a_key_past_the_heads_names_the_packed_file_that_holds_it(tmp_path):
    for index in range(6):
        value = make_receipt(query=f"q{index}")
        (tmp_path / f"{index}.jsonl").write_text(json.dumps(value) + "\n", "utf-8")
    assert ea.load(tmp_path, engine="dask", blocksize=1 << 20).receipts.npartitions == 1
    late = make_receipt(query="late")
    late["late_key"] = "x"
    # Heads that miss the key: only the partition's read finds it, in the fifth file.
    (tmp_path / "4.jsonl").write_text(json.dumps(late) + "\n", "utf-8")
    lazy = ea.load(tmp_path, engine="dask", blocksize=1 << 20, sample_bytes=1)
    with dask.config.set(scheduler="synchronous"), pytest.raises(ea.InputError) as raised:
        lazy.receipts.compute()
    assert raised.value.source_file == str(tmp_path / "4.jsonl")
    assert raised.value.source_line == 1


def _keys_of_their_own(path: Path, n: int, start: int = 0) -> None:
    lines = []
    for index in range(start, start + n):
        record = {"host": f"h{index % 3}", **make_receipt(query=f"q {index}")}
        if index % 2 == 0:
            record[f"k{index}"] = index
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", "utf-8")


def test_keys_past_max_extra_columns_are_placed_as_in_memory(tmp_path):
    _keys_of_their_own(tmp_path / "a.jsonl", 120)
    _keys_of_their_own(tmp_path / "b.jsonl", 80, start=120)
    limits = {"max_extra_columns": 12}
    with pytest.warns(ea.ExtraColumnsWarning):
        memory = _quiet_load(tmp_path, limits=limits)
    assert memory.receipts["extra_json"].notna().sum() == 100 - 11
    with dask.config.set(scheduler="synchronous"), pytest.warns(ea.ExtraColumnsWarning):
        lazy = _quiet_load(
            tmp_path, engine="dask", blocksize=4096, sample_bytes=16384, limits=limits
        )
        assert lazy.receipts.npartitions > 4
        assert_same_audit(memory, lazy)


def test_a_key_that_might_be_a_column_is_an_error_naming_it(tmp_path):
    first = [{"host": "h", **make_receipt()} for _ in range(100)]
    first[79]["early"] = 1  # in memory, a column: it holds a value before k0 and k1 do
    (tmp_path / "a.jsonl").write_text("\n".join(map(json.dumps, first)) + "\n", "utf-8")
    second = [json.dumps({f"k{index}": index, **make_receipt()}) for index in range(10)]
    (tmp_path / "b.jsonl").write_text("\n".join(second) + "\n", "utf-8")
    limits = {"max_extra_columns": 3}
    with pytest.warns(ea.ExtraColumnsWarning):
        memory = _quiet_load(tmp_path, limits=limits)
    assert [c for c in memory.receipts.columns if c in ("host", "early", "k0", "k1")] == [
        "host",
        "early",
        "k0",
    ]
    with pytest.warns(ea.ExtraColumnsWarning):
        lazy = ea.load(tmp_path, engine="dask", blocksize=4096, sample_bytes=4096, limits=limits)
    assert "extra_json" in lazy.receipts.columns and "early" not in lazy.receipts.columns
    with dask.config.set(scheduler="synchronous"), pytest.raises(ea.InputError) as error:
        lazy.receipts.compute()
    assert "a.jsonl" in str(error.value) and ":80" in str(error.value)
    assert "'early'" in str(error.value)


def test_a_line_past_max_value_bytes_is_streamed_not_held_by_its_partition(tmp_path):
    """A partition whose range holds one very long line reads it as a whole file is read.

    Its bytes are skipped as they are read, so the partition's peak memory does not
    grow with the line (it held the whole range, and more, before); the rejection and
    the rows equal the in-memory load's.
    """
    import tracemalloc

    line = json.dumps(make_receipt())
    size = 160 << 20
    path = tmp_path / "long.jsonl"
    with open(path, "w") as out:
        out.write(f"{line}\n{line}\n" + '{"pad": "' + "x" * size + '"}\n' + f"{line}\n{line}\n")
    limits = {"max_value_bytes": 1 << 20}
    memory = _quiet_load(path, limits=limits)
    with dask.config.set(scheduler="synchronous"):
        lazy = _quiet_load(path, limits=limits, engine="dask", blocksize=4 << 20)
        assert lazy.tables["receipts"].npartitions > 1
        tracemalloc.start()
        try:
            rejected, receipts = dask.compute(lazy.rejected, lazy.tables["receipts"])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert rejected.source_line.tolist() == memory.rejected.source_line.tolist() == [3]
    assert rejected.reason.tolist() == memory.rejected.reason.tolist()
    assert "larger than max_value_bytes" in rejected.reason.iloc[0]
    assert receipts.source_line.tolist() == memory.receipts.source_line.tolist() == [1, 2, 4, 5]
    assert peak < size * 3 // 4, f"peak {peak >> 20} MiB for a line of {size >> 20} MiB"
