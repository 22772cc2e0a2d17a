"""The panels in a real JupyterLab and Notebook 7, driven by headless Chromium as a reader
drives them.

A JupyterLab server runs on a free local port, with a token, over a copy of
the notebooks and the sample data. Chromium (Debian's ``chromium``, driven by
Playwright's Python package; Playwright's own browser download is never used)
opens each notebook, first as saved and then after running every cell, and
moves one control of every panel by keyboard and one by mouse. Each panel's
output must then show what the kit computes for the new values, computed here
in the test process with the public API. No widget error and no browser
console error may appear. The same server serves Notebook 7 (``/notebooks/<path>``):
:mod:`test_notebook7` starts one of its own with these fixtures and runs there the checks
written here for both front ends (:func:`check_twin`, :func:`check_keys`).

Without Debian's chromium the test is skipped, unless ``CI`` is set: then it
fails (``make browser`` installs it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import urllib.request
import warnings
from pathlib import Path

import pytest
from lab_driver import (
    CHROMIUM,
    CHROMIUM_FLAGS,
    KERNEL_IDLE,
    LATENCY_MS,
    NOTEBOOK7_FOLDER,
    ROOT,
    Notebook,
    percentiles,
    press,
    start_lab,
    watch,
)

import explicit_audit as ea
from explicit_audit.views import escalation_curve_view, sweep_view, time_range


def _chromium() -> str:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    reason = "chromium is not installed (make browser installs Debian's chromium package)"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set, so the JupyterLab test may not be skipped")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        return ea.load(ROOT / "data", progress=False)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server over a copy of the notebooks and data: its base URL and token."""
    executable = _chromium()
    with start_lab(tmp_path_factory.mktemp("lab"), executable) as server:
        yield server


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=lab["chromium"], args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def open_notebook(browser, lab):
    opened = []

    def open_(name: str, **options) -> Notebook:  # front_end="notebook": Notebook 7
        notebook = Notebook(browser, lab, name, **options)
        opened.append(notebook)
        return notebook

    yield open_
    for notebook in opened:
        notebook.close()


def _drag(page, handle, dx: float) -> None:
    handle.scroll_into_view_if_needed()  # the mouse reaches only what is in the window
    box = handle.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx / 2, y, steps=5)
    page.mouse.move(x + dx, y, steps=5)
    page.mouse.up()


# The layout at 1366x768 with Lab's file browser open

#: A laptop's window: the chart and the controls must fit it beside Lab's file browser.
LAPTOP = (1366, 768)
# Whether anything in the panel is cut: the panel wider than its output area, or a view
# wider than its box without a sideways scroll.
CUT = """panel => {
  const cut = [];
  if (panel.scrollWidth > panel.clientWidth + 1) cut.push(`panel ${panel.scrollWidth}`);
  for (const view of panel.querySelectorAll('.ea-view')) {
    const overflow = getComputedStyle(view).overflowX;
    if (view.scrollWidth > view.clientWidth + 1 && !['auto', 'scroll'].includes(overflow)) {
      cut.push(`${view.className} ${view.scrollWidth} > ${view.clientWidth}`);
    }
  }
  return cut;
}"""
IN_VIEW = "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }"
# Every table of the panel wider than its box (its scrolling box, or the view's output):
# its first header, its width and the box's. A sideways scroll hides columns too.
TABLES_WIDER = """panel => [...panel.querySelectorAll('table')].flatMap(table => {
  const box = table.closest('.ea-table') || table.closest('.ea-view');
  const wide = Math.ceil(table.getBoundingClientRect().width);
  const head = [...table.querySelectorAll('thead th')].map(t => t.innerText).join('|');
  return wide > box.clientWidth ? [`${head}: ${wide} > ${box.clientWidth}`] : [];
})"""


def _run_beside_the_file_browser(open_notebook, name: str) -> Notebook:
    """Open ``name`` in a laptop's window, check its static twin (:func:`check_twin`),
    then open Lab's file browser beside it and run it.

    Parameters
    ----------
    open_notebook : callable
        The :func:`open_notebook` fixture.
    name : str
        A notebook of ``notebooks/``.

    Returns
    -------
    Notebook
        The notebook, every cell run, the file browser beside it.
    """
    notebook = open_notebook(name, viewport=LAPTOP)
    check_twin(notebook, name)  # the first time the notebook is opened: before it runs
    notebook.command("filebrowser:activate")
    notebook.page.wait_for_function("() => !window.jupyterapp.shell.leftCollapsed")
    notebook.run_all()
    return notebook


def check_fits_a_laptop(notebook: Notebook, screenshot: Path) -> None:
    """Assert that the panel's chart and controls fit a laptop's window beside the file browser.

    The output area is narrowed by the side panel, the chart and the last slider
    handle are in sight together, nothing in the panel is cut and every table fits
    its box (no column behind a sideways scroll).

    Parameters
    ----------
    notebook : Notebook
        Run by :func:`_run_beside_the_file_browser`, its controls not moved yet.
    screenshot : Path
        Where the window's screenshot goes: the test's folder, never the repository.
    """
    page, panel = notebook.page, notebook.panel
    chart = notebook.output(1).locator("figure.ea-chart svg")
    chart.wait_for()
    width = panel.evaluate("p => p.clientWidth")
    assert width < 1000, f"the output area is {width} px: is the side panel open?"
    notebook.output(1).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    page.screenshot(path=screenshot)
    # The chart and the last slider handle in sight together, so a moved handle's
    # marker is seen moving.
    height = LAPTOP[1]
    top, bottom = chart.evaluate(IN_VIEW)
    handle_top, handle_bottom = panel.locator(".noUi-handle").last.evaluate(IN_VIEW)
    assert 0 <= top and bottom <= height, (top, bottom)
    assert 0 <= handle_top and handle_bottom <= height, (handle_top, handle_bottom)
    assert panel.evaluate(CUT) == []
    assert panel.evaluate(TABLES_WIDER) == []


# Whether the panel's cell (the last code cell) is trusted.
PANEL_TRUSTED = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter(w => w.model.type === 'code').at(-1).model.trusted"""
TWIN = """twin => {
  const values = {};
  for (const item of twin.querySelectorAll('ul.ea-panel-values li')) {
    values[item.querySelector('strong').innerText.trim()] =
      item.querySelector('.ea-panel-value').innerText.trim();
  }
  const images = [...twin.querySelectorAll('img')];
  return {
    values,
    tables: twin.querySelectorAll('table').length,
    images: images.map(i => ({src: i.src.slice(0, 22), width: i.naturalWidth, alt: i.alt})),
    text: twin.innerText,
  };
}"""


#: Each notebook, the control values its twin writes out, and whether it has a chart.
TWINS = {
    "plan_hashes.ipynb": ({"top_k", "MT manifest hash"}, False),
    "withheld_counts.ipynb": ({"audience", "group by", "days (UTC, end exclusive)"}, True),
    "routing_sweep.ipynb": ({"policy variant", "thresholds", "confidence threshold"}, True),
}
#: The notebooks whose twin a test of its own checks. The others' twins are checked on the
#: page of the test that opens them first and then runs them, before it runs them.
TWIN_ONLY = ["plan_hashes.ipynb"]


@pytest.mark.parametrize("name", TWIN_ONLY)
def test_a_notebook_opened_before_it_runs_shows_its_panels_static_twin(open_notebook, name):
    check_twin(open_notebook(name, front_end="lab"), name)


def check_twin(notebook: Notebook, name: str) -> None:
    """Assert that a notebook just opened, before it runs, shows its panel's static twin.

    Untrusted, then trusted, the twin shows the control values of :data:`TWINS`, a
    table and (a notebook with a chart) the chart, and never a widget.

    Parameters
    ----------
    notebook : Notebook
        Just opened, none of its cells run.
    name : str
        The notebook's name, a key of :data:`TWINS`.
    """
    values, chart = TWINS[name]
    page = notebook.page
    # Untrusted: the twin (HTML, sanitized), not the text form and no widget.
    twin = notebook.panel.locator(".ea-panel-twin")
    twin.wait_for()
    shown = twin.evaluate(TWIN)
    assert values <= set(shown["values"]), shown["values"]
    assert all(shown["values"].values())
    assert shown["tables"] >= 1
    assert "run the notebook to use its controls" in shown["text"]
    if chart:
        (image,) = shown["images"]
        assert image["src"] == "data:image/png;base64," and image["width"] > 100
        assert image["alt"]  # the chart's caption
    assert page.get_by_text("interactive panel with controls").count() == 0
    assert notebook.panel.locator(".widget-vbox").count() == 0
    assert page.evaluate(PANEL_TRUSTED) is False
    # Trusted, still the twin: no saved widget state, so no disconnected control.
    notebook.trust()
    page.wait_for_timeout(500)
    twin.wait_for()
    assert notebook.panel.locator(".widget-vbox, .jupyter-widgets").count() == 0
    assert page.get_by_text("Error displaying widget").count() == 0
    notebook.assert_clean()


def test_a_saved_notebook_reopened_shows_the_twin_not_a_widget_error(open_notebook, lab):
    check_reopen(open_notebook, lab, "lab")


SAVED = "() => !window.jupyterapp.shell.currentWidget.context.model.dirty"


def _sessions(lab: dict, method: str = "GET", session: str = "") -> list:
    url = f"{lab['base']}/api/sessions/{session}?token={lab['token']}"
    with urllib.request.urlopen(urllib.request.Request(url, method=method)) as answer:
        body = answer.read()
    return json.loads(body) if body else []


def check_reopen(open_notebook, lab: dict, front_end: str) -> None:
    """Run a copy of the plan notebook, save it, stop its kernel, reopen it: the panel's
    twin shows, trusted, and no "Error displaying widget".

    Parameters
    ----------
    open_notebook : callable
        The :func:`open_notebook` fixture.
    lab : dict
        The :func:`lab` fixture; the copy is written in its folder for ``front_end``.
    front_end : str
        "lab" or "notebook".
    """
    folder = lab["home"] / {"lab": "notebooks", "notebook": NOTEBOOK7_FOLDER}[front_end]
    name = "reopened_plan_hashes.ipynb"
    shutil.copyfile(folder / "plan_hashes.ipynb", folder / name)
    notebook = open_notebook(name, front_end=front_end)
    notebook.run_all()
    notebook.panel.locator(".widget-vbox").first.wait_for()
    written = (folder / name).stat().st_mtime_ns
    notebook.command("docmanager:save")
    deadline = time.monotonic() + 30
    while (folder / name).stat().st_mtime_ns == written:
        assert time.monotonic() < deadline, "the notebook was not saved"
        notebook.page.wait_for_timeout(100)
    notebook.page.wait_for_function(SAVED)
    (output,) = json.loads((folder / name).read_text())["cells"][-1]["outputs"]
    assert "ea-panel-twin" in "".join(output["data"]["text/html"])
    assert "application/vnd.jupyter.widget-view+json" not in output["data"]
    for session in _sessions(lab):
        if session["path"].endswith(name):
            _sessions(lab, "DELETE", session["id"])
    notebook.close()

    reopened = open_notebook(name, front_end=front_end)
    reopened.panel.locator(".ea-panel-twin").wait_for()
    reopened.page.wait_for_function(KERNEL_IDLE)  # the widget manager restored by then
    assert reopened.page.evaluate(PANEL_TRUSTED) is True
    assert "top_k" in reopened.panel.inner_text()
    reopened.assert_clean()  # no "Error displaying widget", no error in the console


def test_withheld_window_moves_by_keyboard_and_mouse(open_notebook, audit, tmp_path):
    receipts = audit.receipts
    days = time_range(receipts)
    notebook = _run_beside_the_file_browser(open_notebook, "withheld_counts.ipynb")
    check_fits_a_laptop(notebook, tmp_path / "withheld_counts.png")
    page, panel = notebook.page, notebook.panel
    readout = panel.locator(".ea-readout")
    assert notebook.wait_for_text(readout, r"^open → open").startswith("open → open")
    assert int(notebook.table()["(all)"]["receipts"]) == len(receipts)

    lower = panel.locator(".noUi-handle-lower")
    upper = panel.locator(".noUi-handle-upper")
    # The handles announce their names and dates (a screen reader's slider role).
    page.wait_for_function(GUARDED)
    assert lower.get_attribute("aria-label") == "days (UTC, end exclusive): start"
    assert upper.get_attribute("aria-label") == "days (UTC, end exclusive): end"
    assert lower.get_attribute("aria-valuetext") == "open (start)"
    assert upper.get_attribute("aria-valuetext") == "open (end)"
    # Keyboard: the start handle one day in, the end handle two options back.
    lower.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        f"() => document.querySelector('.noUi-handle-lower')"
        f".getAttribute('aria-valuetext') === '{days[0]:%Y-%m-%d}'"
    )
    role = page.get_by_role("slider", name="days (UTC, end exclusive): end")
    assert role.get_attribute("aria-valuetext") == "open (end)"
    notebook.wait_for_text(readout, rf"^{days[0]:%Y-%m-%d} → open")
    upper.focus()
    page.keyboard.press("ArrowLeft")
    page.keyboard.press("ArrowLeft")
    notebook.wait_for_text(readout, rf"^{days[0]:%Y-%m-%d} → {days[-2]:%Y-%m-%d}")
    inside = ea.within_time_window(receipts, days[0], days[-2])
    expected = ea.withheld_summary(inside, by="scope", overall=True)
    withheld = int(expected.loc["(all)", "records_withheld"])
    notebook.wait_for_text(notebook.output(0), f"{withheld:,}")
    table = notebook.table()
    assert int(table["(all)"]["receipts"]) == len(inside) < len(receipts)
    titles = notebook.output(0).locator("th[title]").evaluate_all("a => a.map(t => t.title)")
    assert "records_withheld: records withheld (count)" in titles
    assert int(table["(all)"]["withheld"]) == int(expected.loc["(all)", "records_withheld"])
    caption = notebook.output(1).locator("figcaption").inner_text()
    assert f"(all): {int(expected.loc['(all)', 'records_withheld']):,}." in caption

    # Mouse: drag the end handle past the right end; it reaches the open end, not index 0.
    _drag(page, upper, 2000)
    notebook.wait_for_text(readout, rf"^{days[0]:%Y-%m-%d} → open")
    from_first = ea.within_time_window(receipts, days[0], None)
    notebook.wait_for_text(notebook.output(0), rf"\b{len(from_first):,}\b")
    assert int(notebook.table()["(all)"]["receipts"]) == len(from_first)

    # The end handle dragged fully left, onto the open start: an empty window, no receipt,
    # and the readout says so (it used to read "open → open" and show every receipt).
    _drag(page, upper, -4000)
    notebook.wait_for_text(readout, r"an empty window, no receipt in it")
    deadline = time.monotonic() + 30
    while int(notebook.table()["(all)"]["receipts"]) != 0 and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert int(notebook.table()["(all)"]["receipts"]) == 0
    notebook.assert_clean()


def test_plan_editor_shows_the_hash_and_what_the_seed_would_refuse(open_notebook, audit):
    first_plan = json.loads(audit.plans["plan"].iloc[0])
    notebook = open_notebook("plan_hashes.ipynb")
    notebook.run_all()
    page, panel = notebook.page, notebook.panel
    view = notebook.output(0)
    assert ea.plan_hash(first_plan) in view.inner_text()

    top_k = panel.locator(".widget-text").filter(has_text="top_k").locator("input")
    top_k.click()  # mouse
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")  # keyboard: the field emptied
    text = notebook.wait_for_text(view, r"error\s+top_k")
    assert "int('')" in text and ea.plan_hash(first_plan) not in text
    top_k.press_sequentially("-3")
    text = notebook.wait_for_text(view, r"warning\s+top_k")
    negative = ea.plan_hash({**first_plan, "top_k": -3})
    assert "negative" in text
    assert re.search(rf"retrieval_plan_hash\s+{negative}", text)

    manifest = panel.locator(".widget-text").filter(has_text="MT manifest hash").locator("input")
    manifest.click()
    page.keyboard.press("Control+A")
    page.keyboard.type(" ")
    text = notebook.wait_for_text(view, r"whitespace only: 1 space")
    spaced = {key: value for key, value in first_plan.items() if key != "mt"}
    spaced.update(top_k=-3, mt={"engine": "", "manifest_hash": " ", "source_lang": ""})
    assert re.search(rf"retrieval_plan_hash\s+{ea.plan_hash(spaced)}", text)
    assert re.search(rf"pre-MT hash\s+{negative}", text)  # the MT block alone moved it
    check_escape(notebook)
    notebook.assert_clean()


def test_routing_explorer_moves_a_threshold_and_goes_back_to_each_variants_own(
    open_notebook, audit, tmp_path
):
    notebook = _run_beside_the_file_browser(open_notebook, "routing_sweep.ipynb")
    check_fits_a_laptop(notebook, tmp_path / "routing_sweep.png")
    page, panel = notebook.page, notebook.panel
    own = sweep_view(audit)
    # The compact table: short headers ("conf." for confidence_threshold, "escalated" for
    # escalations), each with its column's name as its title.
    table = notebook.table()
    assert {k: float(v["conf."]) for k, v in table.items()} == dict(own["confidence_threshold"])
    titles = notebook.output(0).locator("th[title]").evaluate_all("a => a.map(t => t.title)")
    assert "confidence_threshold: confidence threshold (4B model confidence, 0 to 1)" in titles
    flips = notebook.output(2).locator("th[title]").evaluate_all("a => a.map(t => t.title)")
    assert "escalate_to_26b: escalated to 26B, replayed at these thresholds" in flips

    # The sliders announce their names; the two mode buttons their pressed state, which
    # follows a click on the other one.
    page.wait_for_function(GUARDED)
    for name in ("context cap (characters)", "multi-document count", "confidence threshold"):
        assert page.get_by_role("slider", name=name).count() == 1
    own_button = panel.get_by_role("button", name="each variant at its own thresholds")
    sliders_button = panel.get_by_role("button", name="the sliders' thresholds for every variant")
    assert own_button.get_attribute("aria-pressed") == "true"
    assert sliders_button.get_attribute("aria-pressed") == "false"
    sliders_button.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.ea-panel-controls button')]"
        ".find(b => b.innerText.startsWith('the sliders')).getAttribute('aria-pressed') === 'true'"
    )
    assert own_button.get_attribute("aria-pressed") == "false"

    # Keyboard: the confidence slider ten steps right, from baseline's 0.6 to 0.7.
    confidence = panel.locator(".widget-slider").filter(has_text="confidence threshold")
    confidence.locator(".noUi-handle").focus()
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    caption = notebook.output(1).locator("figcaption")
    notebook.wait_for_text(caption, r"\(the sliders\)\. Markers: baseline at 0\.7:")
    slider_values = {
        "context_char_cap_4b": audit.policies["baseline"].escalation.context_char_cap_4b,
        "escalate_on_multi_doc_count": audit.policies[
            "baseline"
        ].escalation.escalate_on_multi_doc_count,
        "confidence_threshold": 0.7,
    }
    expected = escalation_curve_view(audit, **slider_values)
    for policy_id, row in expected.markers.iterrows():
        assert f"{policy_id} at 0.7: {row['escalation_rate']:.1%}" in caption.inner_text()
    moved = sweep_view(audit, **slider_values)
    notebook.wait_for_text(notebook.output(0), r"0\.7\b")
    table = notebook.table()
    for policy_id in moved.index:
        assert int(table[policy_id]["escalated"]) == moved.loc[policy_id, "escalations"]
        assert float(table[policy_id]["conf."]) == 0.7

    # Mouse: back to each variant at its own thresholds.
    own_button.click()
    notebook.wait_for_text(caption, r"each variant at its own thresholds")
    notebook.wait_for_text(notebook.output(0), r"0\.45")
    table = notebook.table()
    for policy_id in own.index:
        assert int(table[policy_id]["escalated"]) == own.loc[policy_id, "escalations"]

    # Mouse: the context cap dragged to 0; the chart follows the moved threshold.
    cap = panel.locator(".widget-slider").filter(has_text="context cap")
    _drag(page, cap.locator(".noUi-handle"), -2000)
    notebook.wait_for_text(caption, r"across context_char_cap_4b \(the sliders\)")
    at_zero = sweep_view(audit, **{**slider_values, "context_char_cap_4b": 0})
    notebook.wait_for_text(notebook.output(0), rf"\b{at_zero.loc['baseline', 'escalations']:,}\b")
    table = notebook.table()
    for policy_id in at_zero.index:
        assert int(table[policy_id]["escalated"]) == at_zero.loc[policy_id, "escalations"]
    notebook.assert_clean()


# Keys in the kit's controls: every control takes its keys, the notebook none of them.

CELL_TYPES = "() => window.jupyterapp.shell.currentWidget.content.widgets.map(w => w.model.type)"
GUARDED = """() => {
  const controls = document.querySelectorAll(
    '.ea-panel-controls select, .ea-panel-controls .noUi-handle, .ea-panel-controls button');
  return controls.length > 0 &&
    [...controls].every(e => e.getAttribute('data-lm-suppress-shortcuts') === 'true');
}"""
# noUiSlider writes aria-valuenow with one decimal (0.61 reads 0.6): the value as text instead.
HANDLE_VALUE = "h => h.getAttribute('aria-valuetext')"
SETTLED = f"""() => performance.now() - window.eaChangedAt > 300 && ({KERNEL_IDLE})()"""


def _letters(panel) -> str:
    """The first letter or digit of every option label of the panel's dropdowns, and the
    notebook's command-mode keys (a, b: insert a cell; m, y: change its type; d d, x: delete)."""
    labels = panel.locator("select option").all_inner_texts()
    firsts = {next((c for c in label.lower() if c.isalnum()), "") for label in labels}
    return "".join(sorted((firsts | set("abmydxcvz")) - {""}))


def _settle(notebook) -> None:
    """Wait until the kernel is idle and the panel's outputs have not changed for 300 ms."""
    notebook.page.wait_for_function(SETTLED, polling=100)


def _press(notebook, key: str) -> float:
    """Press ``key``; wait until the panel has updated; the milliseconds from the keydown
    to the last change of an output (0 when nothing changed)."""
    update = press(notebook, key)
    took = update["took"]
    if took > LATENCY_MS:  # slower than the goal: the status line said so, before the outputs
        assert 0 <= update["updating"] < took, f"{key}: {took:.0f} ms, no status first"
    assert notebook.panel.locator(".ea-status").inner_text() == ""
    return took


# Focus on the notebook (a cell or the notebook itself), outside the panel's controls.
LEFT_THE_CONTROLS = """() => {
  const focused = document.activeElement;
  return !focused.closest('.ea-panel-controls') && !!focused.closest('.jp-Notebook');
}"""


def check_escape(notebook) -> None:
    """Focus every control of the panel in turn (text boxes too) and press Escape: the
    focus leaves it for the notebook."""
    controls = notebook.panel.locator(".ea-panel-controls").locator(
        "select, button, input, .noUi-handle"
    )
    assert controls.count() > 0
    for control in controls.all():
        control.focus()
        notebook.page.keyboard.press("Escape")
        assert notebook.page.evaluate(LEFT_THE_CONTROLS), control.evaluate(
            "e => e.outerHTML.slice(0, 120)"
        )


#: The notebooks whose panels have dropdowns and sliders.
WITH_CONTROLS = ["withheld_counts.ipynb", "routing_sweep.ipynb"]


@pytest.mark.parametrize("name", WITH_CONTROLS)
def test_keys_in_every_control_move_it_and_never_edit_the_notebook(
    open_notebook, name, record_property
):
    check_keys(open_notebook, name, "lab", record_property)


def check_keys(
    open_notebook,
    name: str,
    front_end: str,
    record_property,
    twin: bool = False,
    viewport: tuple[int, int] | None = None,
) -> None:
    """Run ``name``; press letters and arrow keys in every control of its panel: each
    control takes them, the notebook none (its cells and their types stay as they were).
    With ``twin``, the notebook is opened here first: its static twin is checked
    (:func:`check_twin`) before it runs. With ``viewport``, the notebook is opened in a
    window of that size, and nothing in the panel may be cut nor any table wider than
    its box, once it has run and again after every control has been moved."""
    options = {} if viewport is None else {"viewport": viewport}
    notebook = open_notebook(name, front_end=front_end, **options)
    if twin:
        check_twin(notebook, name)
    notebook.run_all()
    page, panel = notebook.page, notebook.panel
    if viewport is not None:
        panel.locator("table").first.wait_for()
        assert panel.evaluate(CUT) == [] and panel.evaluate(TABLES_WIDER) == []
    page.wait_for_function(GUARDED)
    watch(panel)
    cells = page.evaluate(CELL_TYPES)
    letters = _letters(panel)
    latencies: dict[str, list[float]] = {}

    for select in panel.locator(".ea-panel-controls select").all():
        label = select.evaluate("s => s.closest('.widget-dropdown').innerText.split('\\n')[0]")
        select.focus()
        page.keyboard.type(letters)  # each letter's keydown, keypress and keyup, in one call
        assert page.evaluate(CELL_TYPES) == cells, f"a letter in {label!r} edited the notebook"
        _settle(notebook)
        count = select.evaluate("s => s.options.length")
        for key in ("ArrowDown", "ArrowUp"):
            before = select.evaluate("s => s.selectedIndex")
            if key == "ArrowDown" and before == count - 1:
                key = "ArrowUp"
            elif key == "ArrowUp" and before == 0:
                key = "ArrowDown"
            latencies.setdefault(label, []).append(_press(notebook, key))
            after = select.evaluate("s => s.selectedIndex")
            assert after == before + (1 if key == "ArrowDown" else -1), (label, key)
            assert page.evaluate(CELL_TYPES) == cells

    for handle in panel.locator(".ea-panel-controls .noUi-handle").all():
        label = handle.get_attribute("aria-label")
        assert label, "a slider handle without an accessible name"
        handle.focus()
        page.keyboard.type(letters)  # each letter's keydown, keypress and keyup, in one call
        assert page.evaluate(CELL_TYPES) == cells, f"a letter on {label!r} edited the notebook"
        for forward, back in (("ArrowRight", "ArrowLeft"), ("ArrowUp", "ArrowDown")):
            before = handle.evaluate(HANDLE_VALUE)
            latencies.setdefault(label, []).append(_press(notebook, forward))
            if handle.evaluate(HANDLE_VALUE) == before:  # at its end: the other way
                forward, back = back, forward
                latencies[label].append(_press(notebook, forward))
            moved = handle.evaluate(HANDLE_VALUE)
            assert moved != before, (label, forward)
            latencies[label].append(_press(notebook, back))
            assert handle.evaluate(HANDLE_VALUE) == before, (label, back)
            assert page.evaluate(CELL_TYPES) == cells

    toggles = panel.locator(".ea-panel-controls button, .ea-panel-controls input[type=checkbox]")
    for toggle in toggles.all():
        assert toggle.get_attribute("data-lm-suppress-shortcuts") == "true"
        toggle.focus()
        page.keyboard.type(letters)  # each letter's keydown, keypress and keyup, in one call
        assert page.evaluate(CELL_TYPES) == cells
    check_escape(notebook)
    if viewport is not None:
        _settle(notebook)
        assert panel.evaluate(CUT) == [] and panel.evaluate(TABLES_WIDER) == []
    figures = {label: percentiles(times) for label, times in latencies.items()}
    record_property("latency_ms", json.dumps(figures))
    print(f"\n{name}: ms from keydown to the last output change (p50, p95): {figures}")
    notebook.assert_clean()
