"""The reports in a real browser: headless Chromium renders every committed notebook's report.

The reports are built from a copy of the sample data with one more receipt
file, whose queries are markup (``<script>alert(1)</script>``): one receipt
breaks a rule (its query shows in the findings table), one line is broken
(its raw text shows in the provenance block), and one broken line is longer
than an excerpt (the page cuts it, with its whole text a click away). The page
must show them as text and never run them.

The layout is measured in the browser too. The pages carry no script, so a
copy of each (never the page itself) gets a small measuring script and a
looser Content-Security-Policy; Chromium lays it out at a wide and a narrow
window and the script writes what it measured into the DOM it dumps: whether
anything is wider than the page, and whether every table is either within
the page or inside a box that scrolls sideways. Screenshots go into the
test's temporary folder, never into the repository.

Chromium is Debian's ``chromium`` package (``make browser`` installs it). Without
it the test is skipped, unless ``CI`` is set: then it fails.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import make_receipt

from explicit_audit.report import write_reports

ROOT = Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ALERT = "<script>alert(1)</script>"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PROVENANCE_HEADERS = {"file", "bytes", "SHA-256", "values read", "loaded", "rejected"}
# Column headers each question's tables must show: columns of the library's own
# results (plan_verdicts, check_requests, withheld_summary, check_decisions, sweep).
EXPECTED_HEADERS = {
    "plan_hashes": {"status", "diagnosis", "rule", "severity", "detail"},
    "withheld_counts": {"receipts_withheld", "records_withheld", "rule", "detail"},
    "routing_sweep": {"rule", "detail", "escalation_rate"},
}
VOID_TAGS = {"img", "br", "hr", "meta", "link", "input", "col", "source", "wbr", "area"}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    reason = "chromium is not installed (make browser installs Debian's chromium package)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the browser test may not be skipped")
    pytest.skip(reason)


class _Page(HTMLParser):
    """What a rendered DOM holds: tables with their headers and cells, images, scripts, text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[list[str]] = []
        self.cells: list[str] = []
        # main's children and grandchildren, as (depth, "tag.class"), in order
        self.order: list[tuple[int, str]] = []
        self._cell: list[str] | None = None
        self._depth_in_main: int | None = None
        self.provenance_tables: list[list[str]] = []
        self._in_provenance = False
        self.images: list[str] = []
        self.scripts: list[dict] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self._in_th = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("td", "th"):
            self._cell = []
        if tag == "main":
            self._depth_in_main = 0
        elif self._depth_in_main is not None:
            if self._depth_in_main <= 1:  # children of main, and of its header
                self.order.append((self._depth_in_main, f"{tag}.{attributes.get('class') or ''}"))
            if tag not in VOID_TAGS:
                self._depth_in_main += 1
        if tag == "section" and "ea-provenance" in (attributes.get("class") or ""):
            self._in_provenance = True
        elif tag == "table":
            (self.provenance_tables if self._in_provenance else self.tables).append([])
        elif tag == "th":
            self._in_th = True
            if self._current():
                self._current()[-1].append("")
        elif tag == "img":
            self.images.append(attributes.get("src") or "")
        elif tag == "script":
            self.scripts.append(attributes)
        for name in ("src", "href"):
            if attributes.get(name):
                self.links.append(attributes[name])

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell).strip())
            self._cell = None
        if self._depth_in_main is not None and tag != "main":
            self._depth_in_main -= 1
        elif tag == "main":
            self._depth_in_main = None
        if tag == "th":
            self._in_th = False
        elif tag == "section":
            self._in_provenance = False

    def _current(self) -> list[list[str]]:
        return self.provenance_tables if self._in_provenance else self.tables

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        tables = self._current()
        if self._in_th and tables and tables[-1]:
            tables[-1][-1] += data.strip()


# What the measuring copy of a page reports, as JSON in <pre id="ea-measure">.
MEASURE = """
<script>
(function () {
  const root = document.documentElement;
  const width = root.clientWidth;
  const result = {width: width, scrollWidth: root.scrollWidth,
                  bodyScrollWidth: document.body.scrollWidth, tables: 0, overflowing: [],
                  unboxed: []};
  for (const table of document.querySelectorAll("main table")) {
    const box = table.getBoundingClientRect();
    if (box.width === 0) continue;  // inside a closed <details>: not laid out
    result.tables += 1;
    let scroller = null;
    for (let node = table.parentElement; node && node !== document.body;
         node = node.parentElement) {
      const overflow = getComputedStyle(node).overflowX;
      if (overflow === "auto" || overflow === "scroll") { scroller = node; break; }
    }
    if (scroller === null) result.unboxed.push(table.outerHTML.slice(0, 120));
    const right = scroller === null ? box.right : scroller.getBoundingClientRect().right;
    if (right > width + 1) result.overflowing.push(table.outerHTML.slice(0, 120));
  }
  const out = document.createElement("pre");
  out.id = "ea-measure";
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
})();
</script>
"""
WINDOWS = {"wide": "1280,2000", "narrow": "700,2000"}


def _measuring_copy(report: Path, folder: Path) -> Path:
    page = report.read_text(encoding="utf-8")
    page = re.sub(r'<meta[^>]*http-equiv="Content-Security-Policy"[^>]*>', "", page)
    copy = folder / f"measure-{report.name}"
    copy.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    return copy


def _measured(dom: str) -> dict:
    """What the measuring script wrote into ``dom``, the page it ran in."""
    found = re.search(r'<pre id="ea-measure">(.*?)</pre>', dom, re.DOTALL)
    assert found, "the measuring script did not run"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def _png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_SIGNATURE), "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def report_folder(tmp_path_factory):
    """The committed notebooks' reports on the marked-up data: (root, data, pages written)."""
    _chromium()
    assert NOTEBOOKS, "no committed notebook in notebooks/"
    root = tmp_path_factory.mktemp("browser")
    data = root / "data"
    shutil.copytree(ROOT / "data", data)
    marked = make_receipt(scope="space", query=ALERT, relevanceThreshold=None)
    marked["exposedResults"][0].pop("score")
    broken = '{"schemaVersion": 0, "query": "' + ALERT + '", "scope": '
    # Broken past its excerpt's length: the page cuts it, with the whole line a click away.
    long_broken = '{"schemaVersion": 0, "query": "' + "x" * 600 + ALERT + '", "scope": '
    lines = [json.dumps(make_receipt(query=ALERT)), json.dumps(marked), broken, long_broken]
    (data / "receipts" / "marked_up.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root, data, write_reports(data, root / "reports", NOTEBOOKS)


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, headless, driven through Playwright: one launch for the module."""
    from playwright.sync_api import sync_playwright

    chromium = _chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


def _window(size: str) -> dict:
    width, height = size.split(",")
    return {"width": int(width), "height": int(height)}


@pytest.fixture(scope="module")
def rendered(report_folder, browser):
    """Every notebook's report on the marked-up data, and Chromium's DOM and screenshot of it."""
    root, _, reports = report_folder
    pages = {}
    for report in reports:
        # A fresh profile for each report, the window at the wide size.
        context = browser.new_context(viewport=_window(WINDOWS["wide"]))
        page = context.new_page()
        page.goto(report.resolve().as_uri())
        dom = page.content()  # the DOM once the page has loaded
        screenshot = root / f"{report.stem}.png"
        page.screenshot(path=screenshot)
        print(f"screenshot of {report.name}: {screenshot}")
        copy = _measuring_copy(report, root)
        layout = {}
        for name, size in WINDOWS.items():
            page.set_viewport_size(_window(size))
            page.goto(copy.resolve().as_uri())
            layout[name] = _measured(page.content())
        context.close()
        parsed = _Page()
        parsed.feed(dom)
        pages[report.stem] = {
            "source": report.read_text(encoding="utf-8"),
            "dom": dom,
            "page": parsed,
            "screenshot": screenshot,
            "layout": layout,
        }
    return pages


def test_every_notebook_has_a_report(rendered):
    assert sorted(rendered) == [path.stem for path in NOTEBOOKS]


def test_pages_show_their_tables(rendered):
    for name, page in rendered.items():
        provenance = page["page"].provenance_tables
        assert any(PROVENANCE_HEADERS <= set(headers) for headers in provenance), name
        assert any("SHA-256" in headers for headers in provenance), name
        # the notebook's own tables, with their column headers
        tables = page["page"].tables
        assert len(tables) >= 2, name
        assert all(any(header for header in headers) for headers in tables), name
        shown = {header for headers in tables for header in headers}
        assert EXPECTED_HEADERS.get(name, set()) <= shown, name


def test_pages_show_their_plots(rendered):
    for name, page in rendered.items():
        images = [src for src in page["page"].images if src.startswith("data:image/png;base64,")]
        assert images, f"{name}: no embedded PNG"
        for src in images:
            width, height = _png_size(base64.b64decode(src.split(",", 1)[1]))
            assert width > 100 and height > 50, name


def test_pages_fetch_nothing(rendered, report_folder):
    folder = report_folder[0] / "reports"
    for name, page in rendered.items():
        assert not page["page"].scripts, name
        links = [link for link in page["page"].links if not link.startswith(("data:", "#"))]
        # A link to another page of the report (the index) is to a file beside it.
        beside = [link for link in links if re.fullmatch(r"[\w.-]+\.html(#[\w-]+)?", link)]
        assert not set(links) - set(beside), f"{name}: {links}"
        for link in beside:
            assert (folder / link.split("#")[0]).is_file(), f"{name}: {link}"


def test_markup_in_the_data_is_shown_as_text(rendered):
    for name, page in rendered.items():
        assert ALERT not in page["source"], name
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page["source"], name
        assert ALERT in "".join(page["page"].text), name
        assert not any(page["page"].scripts), name
    # the receipt that breaks a rule shows in the receipt findings' table
    shown_in_tables = [name for name, page in rendered.items() if page["dom"].count("alert(1)") > 1]
    assert shown_in_tables, "no report shows the receipt query in a table of its own"


def test_every_plot_is_described_in_words(rendered):
    default = "No description has been provided for this image"
    for name, page in rendered.items():
        alts = re.findall(r'<img\b[^>]*\balt="([^"]*)"', page["source"])
        images = re.findall(r"<img\b", page["source"])
        assert images and len(alts) == len(images), name
        for alt in alts:
            assert alt.strip() and alt != default, f"{name}: {alt!r}"
            # Its title and axes (a figure), or what it counts (a panel's chart).
            assert len(alt.split()) >= 5 and alt.endswith("."), f"{name}: {alt!r}"


def test_screenshots_were_taken(rendered):
    for name, page in rendered.items():
        width, height = _png_size(page["screenshot"].read_bytes())
        assert (width, height) == (1280, 2000), name


def test_no_table_is_wider_than_the_page(rendered):
    for name, page in rendered.items():
        for window, layout in page["layout"].items():
            where = f"{name} ({window} window)"
            assert layout["tables"] >= 2, where
            assert layout["scrollWidth"] <= layout["width"], f"{where}: {layout}"
            assert layout["bodyScrollWidth"] <= layout["width"], f"{where}: {layout}"
            assert not layout["overflowing"], f"{where}: {layout['overflowing']}"
            assert not layout["unboxed"], f"{where}: tables outside a scroll box"


def test_no_missing_value_shows_as_nan(rendered):
    dashes = 0
    for name, page in rendered.items():
        cells = page["page"].cells
        assert len(cells) > 100, name
        shown = [cell for cell in cells if cell in {"NaN", "<NA>", "NaT", "nan", "None"}]
        assert not shown, f"{name}: {shown[:5]}"
        dashes += cells.count("—")
    assert dashes, "no missing value at all: the check above saw nothing to check"


def test_the_verdict_comes_right_after_the_title_and_what_the_page_is_cited_by(rendered):
    for name, page in rendered.items():
        order = page["page"].order
        assert order[:5] == [
            (0, "header.ea-header"),
            (1, "h1.ea-title"),
            (1, "dl.ea-about"),  # the data, its period, the kit's version, the command
            (1, "section.ea-verdict ea-found"),
            (1, "nav.ea-contents"),
        ], f"{name}: {order[:6]}"
        children = [element for depth, element in order if depth == 0]
        assert children[0] == "header.ea-header", name
        assert children[-1] == "details.ea-appendix", f"{name}: {children[-3:]}"
        text = " ".join("".join(page["page"].text).split())
        assert "explicit-audit verify" in text and "exits 1" in text, name


@pytest.mark.parametrize(
    ("ci", "outcome"), [("", pytest.skip.Exception), ("true", pytest.fail.Exception)]
)
def test_missing_chromium_skips_only_outside_ci(monkeypatch, ci, outcome):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="chromium is not installed"):
        _chromium()


# --- reports/index.html ---------------------------------------------------------------


class _Tiles(HTMLParser):
    """The index's tiles: each check's name, status text and link; the pages' links."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tiles: list[dict] = []
        self.pages: list[str] = []
        self._field: str | None = None
        self._in_pages = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        css = attrs.get("class") or ""
        if tag == "ul":
            self._in_pages = "ea-pages" in css
        if tag == "li" and css.startswith("ea-") and not self._in_pages:
            self.tiles.append({"class": css, "check": "", "status": "", "href": None})
        elif tag == "span" and css in {"ea-check", "ea-status"} and self.tiles:
            self._field = css.removeprefix("ea-")
        elif tag == "a" and self._in_pages:
            self.pages.append(attrs["href"])
        elif tag == "a" and self.tiles and self.tiles[-1]["href"] is None:
            self.tiles[-1]["href"] = attrs["href"]

    def handle_endtag(self, tag):
        if tag == "span":
            self._field = None

    def handle_data(self, data):
        if self._field:
            self.tiles[-1][self._field] += data


def test_the_index_has_one_tile_per_check_with_the_counts_verify_gives(report_folder):
    import explicit_audit as ea

    root, data, reports = report_folder
    index = root / "reports" / "index.html"
    page = index.read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    parsed = _Tiles()
    parsed.feed(page)
    # The counts a CI job gating on the command line reads, from the installed command.
    command = Path(sys.executable).with_name("explicit-audit")
    verified = subprocess.run(
        [str(command), "verify", str(data), "--json", "--no-progress"],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert verified.returncode == 1, verified.stderr.decode(errors="replace")
    summary = json.loads(verified.stdout)["summary"]
    with pytest.warns(ea.RejectedRowsWarning):
        in_memory = ea.verify_all(ea.load(data, progress=False)).summary()
    assert summary == json.loads(in_memory.to_json(orient="records"))
    assert [tile["check"] for tile in parsed.tiles] == [row["check"] for row in summary]
    for tile, row in zip(parsed.tiles, summary, strict=True):
        assert tile["class"] == f"ea-{row['status'].replace(' ', '-')}", tile
        if row["status"] == "findings":
            assert tile["status"].startswith(f"{row['findings']:,} finding"), tile
        assert f"{row['checked']:,} record" in tile["status"] or row["status"] == "not run"
        # Each tile links to a page of this folder (or the index itself), at an anchor
        # that page holds.
        target, anchor = tile["href"].split("#")
        target = root / "reports" / (target or "index.html")
        assert f'id="{anchor}"' in target.read_text(encoding="utf-8")
    assert parsed.pages == [report.name for report in reports]


# What a page or the index looks like at a laptop's and a phone's size, measured in the
# page itself through the browser's protocol (the pages carry no script of their own):
# every element of main that reaches past the window outside a box that scrolls
# sideways, every table whose content is wider than its box, text cut with an ellipsis,
# and each plot's scale against its own pixels.
MEASURE_LAYOUT = """() => {
  const width = document.documentElement.clientWidth;
  const result = {width: width, scrollWidth: document.documentElement.scrollWidth,
                  overflowing: [], ellipsis: [], tiles: 0, images: [], tables: 0, wide: []};
  for (const table of document.querySelectorAll("main table")) {
    const box = table.getBoundingClientRect();
    if (box.width === 0) continue;
    result.tables += 1;
    // The table's content against its own box (its parent): never past it, scrolled or not.
    const room = table.parentElement.clientWidth;
    const needed = Math.max(box.width, table.scrollWidth);
    if (needed > room + 1) {
      result.wide.push(`${Math.round(needed)} > ${room}: ${table.outerHTML.slice(0, 80)}`);
    }
  }
  for (const node of document.querySelectorAll("main *")) {
    const box = node.getBoundingClientRect();
    if (box.width === 0) continue;  // inside a closed <details>: not laid out
    if (node.matches("ul.ea-tiles > li")) result.tiles += 1;
    let scroller = null;
    for (let up = node.parentElement; up && up !== document.body; up = up.parentElement) {
      const overflow = getComputedStyle(up).overflowX;
      if (overflow === "auto" || overflow === "scroll") { scroller = up; break; }
    }
    const right = scroller === null ? box.right : scroller.getBoundingClientRect().right;
    if (right > width + 1) result.overflowing.push(node.outerHTML.slice(0, 100));
    if (getComputedStyle(node).textOverflow === "ellipsis"
        && node.scrollWidth > node.clientWidth) result.ellipsis.push(node.textContent);
    if (node.tagName === "IMG") {
      result.images.push({scale: box.width / node.naturalWidth, alt: node.alt.slice(0, 60)});
    }
  }
  return result;
}"""
VIEWPORTS = {"laptop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def layouts(report_folder, browser):
    """The index's and every page's layout at a laptop's and a phone's size, by page and size."""
    root, _, reports = report_folder
    pages = [root / "reports" / "index.html", *reports]
    measured = {}
    for name, viewport in VIEWPORTS.items():
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        for path in pages:
            page.goto(path.resolve().as_uri())
            measured[path.name, name] = page.evaluate(MEASURE_LAYOUT)
        context.close()
    return measured


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_every_page_fits_a_laptop_and_a_phone(layouts, viewport):
    pages = {page for page, size in layouts if size == viewport}
    assert "index.html" in pages and len(pages) >= 4, pages
    for page in sorted(pages):
        measured = layouts[page, viewport]
        where = f"{page} at {viewport} size"
        assert measured["width"] <= VIEWPORTS[viewport]["width"], where
        assert measured["scrollWidth"] <= measured["width"], f"{where}: {measured['scrollWidth']}"
        assert not measured["overflowing"], f"{where}: {measured['overflowing'][:5]}"
        assert not measured["ellipsis"], f"{where}: {measured['ellipsis'][:5]}"
        assert not measured["wide"], f"{where}: {measured['wide'][:5]}"
        assert measured["tables"], f"{where}: no table was measured"
    assert layouts["index.html", viewport]["tiles"] >= 9


def test_plots_keep_legible_text_on_a_phone(layouts):
    """A plot is never shrunk to the phone's width: it keeps its size and scrolls in its box."""
    shown = 0
    for (page, viewport), measured in layouts.items():
        for image in measured["images"]:
            shown += 1
            smallest = 0.99 if viewport == "phone" else 0.6
            assert image["scale"] >= smallest, f"{page} at {viewport} size: {image}"
    assert shown >= 10, "no plot was measured: the check above saw nothing to check"


# Each cut excerpt of a page's rejected rows: its text, and whether it opens on a whole text.
CUT_EXCERPTS = """() => [...document.querySelectorAll('#check-rejected_rows td code')]
  .filter(code => code.textContent.endsWith('\u2026'))
  .map(code => ({excerpt: code.textContent,
                 whole: code.closest('details.ea-whole > summary') !== null}))"""


def test_a_cut_excerpt_opens_on_its_whole_line_by_mouse_and_by_keyboard(report_folder, browser):
    _, data, reports = report_folder
    written = "\n".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(data.rglob("*"))
        if path.is_file() and path.suffix in (".jsonl", ".json")
    )
    context = browser.new_context(viewport=VIEWPORTS["laptop"])
    page = context.new_page()
    opened = 0
    for report in reports:
        page.goto(report.resolve().as_uri())
        page.locator("#provenance > summary").click()
        page.locator("#check-rejected_rows > summary").click()
        cut = page.evaluate(CUT_EXCERPTS)
        # The bundled data's four long rejected values, and the marked-up file's long line.
        assert len(cut) >= 5, f"{report.name}: {cut}"
        assert all(found["whole"] for found in cut), f"{report.name}: cut with no whole text"
        wholes = page.locator("#check-rejected_rows details.ea-whole")
        for index in range(wholes.count()):
            whole = wholes.nth(index)
            summary, text = whole.locator("summary"), whole.locator("pre.ea-whole-text")
            assert not text.is_visible()
            if index % 2:
                summary.focus()
                page.keyboard.press("Enter")
            else:
                summary.click()
            text.wait_for(state="visible")
            shown, excerpt = text.inner_text(), summary.inner_text()
            # The whole text the loader read (a line, or a value over several lines), whose
            # start is the excerpt's.
            assert shown.strip() in written, (report.name, excerpt)
            # (compared word by word: the excerpt's line breaks show as spaces)
            assert " ".join(shown.split()).startswith(" ".join(excerpt[:-1].split()))
            assert len(shown.strip()) > len(excerpt)
            note = whole.locator(".ea-note").inner_text()
            assert note.startswith(("The whole line, ", "The whole value, ")), note
            box = text.bounding_box()
            assert box["x"] + box["width"] <= VIEWPORTS["laptop"]["width"]
            opened += 1
        # The marked-up line's script is shown as text and never runs.
        assert page.locator("pre.ea-whole-text", has_text=ALERT).count() == 1
    context.close()
    assert opened >= 5 * len(reports)
