"""A notebook served as a dashboard by Voila, with the kit's template, on a machine offline.

Voila's own lab template links Font Awesome from a CDN; the kit's template
(``jupyter-data/voila/templates/explicit_audit``, installed by the wheel in
``share/jupyter``) fetches nothing from another host. Voila runs the notebook
in a kernel of its own and serves the page on 127.0.0.1; headless Chromium
opens it with every request to another host refused, as offline, and each
one counted. The panel's controls show, the keyboard moves one and the
outputs follow it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from lab_driver import CHROMIUM, CHROMIUM_FLAGS, free_port

ROOT = Path(__file__).parent.parent
NOTEBOOK = "withheld_counts.ipynb"
LOCAL = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="module")
def voila(tmp_path_factory):
    """Voila serving a copy of ``NOTEBOOK`` beside a copy of the data, stopped after."""
    pytest.importorskip("voila")
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make browser)")
    home = tmp_path_factory.mktemp("voila")
    (home / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, home / "notebooks" / NOTEBOOK)
    shutil.copytree(ROOT / "data", home / "data")
    port = free_port()
    env = {
        **os.environ,
        # The kit's template, where an installed wheel puts it (<prefix>/share/jupyter).
        "JUPYTER_PATH": str(ROOT / "jupyter-data"),
        "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
        "JUPYTER_DATA_DIR": str(home / ".data"),
        "JUPYTER_RUNTIME_DIR": str(home / ".runtime"),
        "IPYTHONDIR": str(home / ".ipython"),
        "VIRTUAL_ENV": sys.prefix,
    }
    log = (home / "voila.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "voila",
            str(home / "notebooks" / NOTEBOOK),
            "--template=explicit_audit",
            "--no-browser",
            f"--port={port}",
            "--Voila.ip=127.0.0.1",
        ],
        cwd=home,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}voila/static/voila.js", timeout=2):
                    break
            except OSError as exc:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    text = (home / "voila.log").read_text(errors="replace")
                    raise RuntimeError(f"voila did not start:\n{text}") from exc
                time.sleep(0.25)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def test_a_dashboard_renders_offline_and_its_controls_move_by_keyboard(voila):
    from playwright.sync_api import sync_playwright

    elsewhere: list[str] = []

    def offline(route):
        host = urlsplit(route.request.url).hostname
        if host in LOCAL or route.request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort("internetdisconnected")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.route("**/*", offline)
            page.goto(voila, timeout=180_000, wait_until="load")
            controls = page.locator(".ea-panel-controls")
            controls.wait_for(state="visible", timeout=180_000)
            assert "Error displaying widget" not in page.inner_text("body")
            # The panel's first select, moved by the keyboard: its value and the outputs change.
            select = controls.locator("select").first
            before = select.evaluate("s => s.selectedIndex")
            outputs = page.locator(".ea-view").first.inner_text()
            select.focus()
            page.keyboard.press("ArrowDown" if before == 0 else "ArrowUp")
            assert select.evaluate("s => s.selectedIndex") != before
            page.wait_for_function(
                "before => document.querySelector('.ea-view').innerText !== before",
                arg=outputs,
                timeout=60_000,
            )
        finally:
            browser.close()
    # Nothing was fetched from another host: the page needs none.
    assert elsewhere == []
