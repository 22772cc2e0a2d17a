"""Reports a reviewer can cite and take away: the header's period, version and command line,
the title, the findings and rejected rows beside the pages, the tiles' links into sections.

One report of the bundled data is written by the real command, once for the module.
"""

from __future__ import annotations

import csv
import html.parser
import io
import json
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import nbformat
import pandas as pd
import pyarrow.parquet as pq
import pytest
from conftest import make_receipt
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import explicit_audit as ea
from explicit_audit.report.downloads import FORMULA_START, download_files
from explicit_audit.report.writer import write_reports

ROOT = Path(__file__).parent.parent
ALERT = "<script>alert(1)</script>"

#: Where each check's findings are shown (known answer, from the notebooks' headings):
#: the page, and the heading of its section, or the id of the block that holds it.
SECTIONS = {
    "plan_hashes": ("plan_hashes.html", "Retrieval plans"),
    "request_hashes": (
        "plan_hashes.html",
        "Hash mismatches, and the dialect that explains each, if any",
    ),
    "request_hiding_rule": ("plan_hashes.html", "The hiding rule (§7.1)"),
    "request_independence": ("plan_hashes.html", "Independence"),
    "request_consistency": ("plan_hashes.html", "Compile requests"),
    "receipt_rules": ("withheld_counts.html", "Receipt checks"),
    "presentation_rules": ("withheld_counts.html", "Rendered views"),
    "decision_policy": ("routing_sweep.html", "Replay verification"),
    "record_keys": ("index.html", "#verdict"),
    "record_duplicates": ("index.html", "#verdict"),
    "record_times": ("index.html", "#verdict"),
    "rejected_rows": ("plan_hashes.html", "#provenance"),
}

#: The tables each page's period is over (its record kinds' tables).
PAGE_TABLES = {
    "plan_hashes.html": ("plans", "requests"),
    "withheld_counts.html": ("receipts", "exposed", "presentations"),
    "routing_sweep.html": ("decisions",),
}


#: The record kinds each page is about, as its header names them.
PAGE_KINDS = {
    "plan_hashes.html": ("plans", "requests"),
    "withheld_counts.html": ("receipts",),
    "routing_sweep.html": ("decisions",),
}


def _command(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).with_name("explicit-audit")), *argv],
        cwd=cwd,
        capture_output=True,
        timeout=600,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture(scope="module")
def kit_report(tmp_path_factory):
    """``explicit-audit report data --out OUT`` and ``verify data --json``, run from the
    repository: the folder written, the command's words and verify's document."""
    out = tmp_path_factory.mktemp("takeaway") / "r"
    argv = ("report", "data", "--out", str(out), "--exit-zero")
    done = _command(*argv, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    verified = _command("verify", "data", "--json", "--no-progress", cwd=ROOT)
    assert verified.returncode == 1, verified.stderr.decode(errors="replace")
    return out, shlex.join(["explicit-audit", *argv]), json.loads(verified.stdout)


class _Page(html.parser.HTMLParser):
    """Where each id is, the ids of the elements around it, and the headings in order."""

    VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "wbr"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str | None] = []
        self.classes: list[str] = []
        self.ids: dict[str, tuple[int, tuple[str, ...]]] = {}
        self.headings: list[tuple[int, int, str]] = []  # (order, level, text)
        self.links: list[str] = []
        self.about: dict[str, str] = {}
        self._order = 0
        self._heading: list | None = None
        self._about: str | None = None
        self._dt: str | None = None
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self._order += 1
        if "id" in attrs:
            self.ids[attrs["id"]] = (self._order, tuple(i for i in self.stack if i))
        if tag in {"h2", "h3"}:
            self._heading = [self._order, int(tag[1]), ""]
        if tag == "a" and "href" in attrs:
            self.links.append(attrs["href"])
        if tag in {"dt", "dd"} and "ea-about" in " ".join(self.classes):
            self._about, self._text = tag, []
        if tag not in self.VOID:
            self.stack.append(attrs.get("id"))
            self.classes.append(attrs.get("class") or "")

    def handle_endtag(self, tag):
        if tag in {"h2", "h3"} and self._heading is not None:
            self.headings.append((self._heading[0], self._heading[1], self._heading[2].strip()))
            self._heading = None
        if tag in {"dt", "dd"} and self._about == tag:
            text = " ".join("".join(self._text).split())
            if tag == "dt":
                self._dt = text
            else:
                self.about[self._dt] = text
            self._about = self._text = None
        if tag not in self.VOID and self.stack:
            self.stack.pop()
            self.classes.pop()

    def handle_data(self, data):
        if self._heading is not None:
            self._heading[2] += data
        if self._text is not None:
            self._text.append(data)


def _parsed(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _in_section(page: _Page, anchor: str, section: str) -> bool:
    """Whether the element ``anchor`` is in ``section``: inside the element of that id
    (``#id``), or after the heading of that text and before the next one of its level."""
    order, around = page.ids[anchor]
    if section.startswith("#"):
        return section[1:] in around
    (start, level) = next((o, lv) for o, lv, text in page.headings if text == section)
    end = next((o for o, lv, _ in page.headings if o > start and lv <= level), float("inf"))
    return start <= order < end


def test_every_tile_links_into_its_checks_own_section(kit_report):
    out, _, document = kit_report
    index = _parsed(out / "index.html")
    tiles = [link for link in index.links if "#" in link and not link.startswith("#verdict")]
    checks = [row["check"] for row in document["summary"]]
    assert sorted(SECTIONS) == sorted(checks)
    seen = set()
    for check in checks:
        page_name, section = SECTIONS[check]
        links = [link for link in tiles if link.endswith(f"#check-{check}")]
        assert len(links) == 1, (check, tiles)
        target, anchor = links[0].split("#")
        assert (target or "index.html") == page_name, (check, links[0])
        page = _parsed(out / page_name)
        assert anchor in page.ids, (check, links[0])
        assert _in_section(page, anchor, section), (check, section)
        seen.add(check)
    assert seen == set(checks)


def _csv_text(value) -> str:
    """A JSON value as the CSV file writes it: a missing value as an empty field, a text a
    spreadsheet would run as a formula after an apostrophe."""
    if value is None:
        return ""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_START) else str(value)


def test_a_cell_a_spreadsheet_would_run_is_written_as_text_in_the_csv_alone():
    # A logged value may be a formula: opened in a spreadsheet, findings.csv ran it.
    findings = pd.DataFrame(
        {
            "record": pd.Categorical(['=HYPERLINK("http://example.invalid","x")', "007"]),
            "detail": ["-2+3", "@SUM(A1)"],
            "source_line": pd.array([1, -2], dtype="Int64"),
        }
    )
    files = download_files({"findings": findings})
    rows = list(csv.reader(io.StringIO(files["findings.csv"].decode("utf-8"))))
    assert rows[1:] == [
        ['\'=HYPERLINK("http://example.invalid","x")', "'-2+3", "1"],
        ["007", "'@SUM(A1)", "-2"],
    ]
    back = pq.read_table(io.BytesIO(files["findings.parquet"])).to_pydict()
    assert back["record"][0].startswith("=HYPERLINK") and back["detail"] == ["-2+3", "@SUM(A1)"]


def test_the_findings_beside_the_pages_are_verify_jsons_row_by_row(kit_report):
    out, _, document = kit_report
    expected = document["findings"]
    assert len(expected) > 40  # the bundled data plants findings of every check
    columns = list(expected[0])
    with open(out / "findings.csv", encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream))
    assert rows[0] == columns
    assert len(rows) - 1 == len(expected)
    for written, finding in zip(rows[1:], expected, strict=True):
        assert written == [_csv_text(finding[name]) for name in columns]
    table = pq.read_table(out / "findings.parquet")
    assert table.column_names == columns
    assert table.to_pylist() == expected
    # The same rows, typed: the categories and nullable integers pandas reads back.
    frame = pd.read_parquet(out / "findings.parquet")
    assert isinstance(frame["check"].dtype, pd.CategoricalDtype)
    assert str(frame["source_line"].dtype) == "Int64"


def test_polars_and_duckdb_read_the_findings_as_verify_lists_them(kit_report):
    import duckdb
    import polars as pl

    out, _, document = kit_report
    path = out / "findings.parquet"
    assert pl.read_parquet(path).to_dicts() == document["findings"]
    counted = duckdb.sql(f"SELECT \"check\", count(*) FROM '{path}' GROUP BY 1").fetchall()
    expected = {row["check"]: row["findings"] + row["notices"] for row in document["summary"]}
    assert dict(counted) == {check: n for check, n in expected.items() if n}


def test_the_rejected_rows_beside_the_pages_are_the_loads(kit_report, bundled):
    out, _, _ = kit_report
    rejected = bundled.rejected
    rejected = rejected.assign(source_file=rejected["source_file"].map(_relative))
    expected = json.loads(rejected.to_json(orient="records"))
    assert len(expected) >= 1
    assert pq.read_table(out / "rejected.parquet").to_pylist() == expected
    with open(out / "rejected.csv", encoding="utf-8", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert rows == [{k: _csv_text(v) for k, v in row.items()} for row in expected]


def _relative(name: str) -> str:
    return os.path.relpath(name, ROOT)


def test_the_index_links_the_files_it_writes_beside_it(kit_report):
    out, _, _ = kit_report
    links = _parsed(out / "index.html").links
    for name in ("findings.csv", "findings.parquet", "rejected.csv", "rejected.parquet"):
        assert name in links and (out / name).is_file(), name
    listed = json.loads((out / ".explicit-audit-pages.json").read_text(encoding="utf-8"))
    assert "findings.parquet" in listed["pages"]  # so an exit 2 withdraws them too


@pytest.fixture(scope="module")
def bundled():
    """The bundled data, loaded once."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(ROOT / "data", progress=False)


@pytest.fixture(scope="module")
def bundled_times(bundled):
    """Every time column of the bundled records: ``{table: times}``."""
    return {
        name: pd.concat(
            [frame[c] for c in frame.columns if isinstance(frame[c].dtype, pd.DatetimeTZDtype)]
            or [pd.Series([], dtype="datetime64[ns, UTC]")]
        ).dropna()
        for name, frame in bundled.tables.items()
    }


def _period(times: dict, tables) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The earliest and latest time the bundled records hold, over ``tables`` (or all)."""
    joined = pd.concat([t for name, t in times.items() if tables is None or name in tables])
    return joined.min(), joined.max()


def _iso(stamp: pd.Timestamp) -> str:
    return stamp.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("name", ["index.html", *sorted(PAGE_TABLES)])
def test_each_page_says_its_period_version_and_command(kit_report, bundled_times, name):
    out, command, _ = kit_report
    about = _parsed(out / name).about
    first, last = _period(bundled_times, PAGE_TABLES.get(name))
    scope = f"{', '.join(PAGE_KINDS[name])}: " if name in PAGE_KINDS else ""
    assert about["Period"].startswith(f"{scope}{_iso(first)} .. {_iso(last)} ("), about
    assert about["Data"] == "data"
    assert about["Written by"] == f"explicit_audit {ea.__version__}: {command}"
    first, last = _period(bundled_times, None)
    title = f"Audit of data, {first:%Y-%m-%d} to {last:%Y-%m-%d}"
    if name == "index.html":
        assert f'<h1 class="ea-title">{title}</h1>' in (out / name).read_text("utf-8")
    else:
        assert about["Report"] == title


def test_the_period_is_over_the_records_whose_time_is_a_time(tmp_path):
    # On Dask tables the same, partition by partition: tests/test_dask_notebooks.py.
    from explicit_audit.report._time_range import time_range

    rows = [
        make_receipt(timestamp="2025-03-04T09:00:00+09:00"),  # 00:00 UTC
        make_receipt(timestamp="yesterday", query="q2"),  # not a time: not dated
        make_receipt(query="q3"),  # no time at all
        make_receipt(timestamp="2025-03-05T01:30:00Z", query="q4"),
    ]
    lines = "\n".join(json.dumps(row) for row in rows) + "\n"
    (tmp_path / "r.jsonl").write_text(lines, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.UnparsedTimeWarning)
        audit = ea.load(tmp_path, progress=False)
    period = time_range(audit)
    assert period.text == "2025-03-04T00:00:00Z .. 2025-03-05T01:30:00Z (2 of 4 records dated)"
    assert period.days == "2025-03-04 to 2025-03-05"
    assert time_range(audit, ["plans"]).text == "no records, so no timestamps"


def test_a_title_and_a_command_line_are_text_and_no_timestamps_is_said(tmp_path):
    folder = tmp_path / "<b>logs"
    folder.mkdir()
    lines = [json.dumps(make_receipt()), json.dumps(make_receipt(query="q2"))]
    (folder / "r.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    notebook = new_notebook(
        cells=[
            new_markdown_cell("# One page"),
            new_code_cell('DATA = "x"', metadata={"tags": ["parameters"]}),
        ]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    # A page of plans, and the data holds none: the page says so, and no kernel starts.
    notebook.metadata["explicit_audit"] = {"tables": [["plans"]]}
    nbformat.write(notebook, notebooks / "one.ipynb")
    title = f"March & {ALERT}"
    command = f"explicit-audit report '{folder}' --out out --title '{title}'"
    out = tmp_path / "out"
    write_reports(folder, out, notebooks, title=title, command=command)
    periods = {
        "index.html": "no timestamps (none of the 2 records has one)",
        "one.html": "plans: no records, so no timestamps",
    }
    for name, period in periods.items():
        text = (out / name).read_text(encoding="utf-8")
        assert "<script" not in text and "<b>" not in text
        about = _parsed(out / name).about
        assert about["Period"] == period
        assert about["Written by"] == f"explicit_audit {ea.__version__}: {command}"
        assert about["Data"].endswith("<b>logs")
    assert _parsed(out / "one.html").about["Report"] == title
    index = (out / "index.html").read_text(encoding="utf-8")
    heading = re.search(r'<h1 class="ea-title">(.*?)</h1>', index).group(1)
    assert html.unescape(heading) == title
    # Without a title: the data path, and that its records carry no time.
    write_reports(folder, out, notebooks)
    index = (out / "index.html").read_text(encoding="utf-8")
    heading = re.search(r'<h1 class="ea-title">(.*?)</h1>', index).group(1)
    assert html.unescape(heading) == f"Audit of {folder} (no timestamps)"
    written = _parsed(out / "one.html").about["Written by"]
    assert written == f"explicit_audit {ea.__version__}: write_reports called from Python"
