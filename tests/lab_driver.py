"""A JupyterLab server and headless Chromium driving the kit's notebooks, as a reader does.

Shared by the browser test (``tests/test_jupyterlab.py``) and the panels'
benchmark (``benchmarks/bench_panels.py``): :func:`start_lab` runs a
JupyterLab server (Notebook 7 on the same server) on a free local port, with
a token, over a copy of the notebooks and the sample data; :class:`Notebook`
opens one notebook in a Chromium page, runs it and reads its panel; and
:func:`press` presses a key in a control and measures the milliseconds from
the keydown to the last change of the panel's outputs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

_NUMBER = re.compile(r"-?[\d,]+(\.\d+)?%?")

ROOT = Path(__file__).parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 60_000
ERROR_MIME = "application/vnd.jupyter.error"
NOTEBOOK7_FOLDER = "notebooks7"

# The rows of an HTML table as {column: text}, keyed by the row's index label;
# the header row is the first row of the table head (pandas writes the index
# name in a second one).
READ_TABLE = """table => {
  const head = [...table.querySelector('thead tr').querySelectorAll('th')].map(t => t.innerText);
  const rows = {};
  for (const tr of table.querySelectorAll('tbody tr')) {
    const label = tr.querySelector('th').innerText;
    const cells = [...tr.querySelectorAll('td')].map(t => t.innerText);
    rows[label] = Object.fromEntries(head.slice(1).map((name, i) => [name, cells[i]]));
  }
  return rows;
}"""
KERNEL_IDLE = """() => {
  const kernel = window.jupyterapp.shell.currentWidget?.sessionContext?.session?.kernel;
  return kernel && kernel.status === 'idle' && kernel.connectionStatus === 'connected';
}"""
ALL_CELLS_RUN = """() => {
  const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
  return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.innerText.trim()));
}"""


def free_port() -> int:
    """A local TCP port free now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def log_text(home: Path) -> str:
    """What the server started by :func:`start_lab` over ``home`` has logged."""
    return (home / "server.log").read_text(errors="replace")


@contextlib.contextmanager
def start_lab(home: Path, chromium: str = CHROMIUM) -> Iterator[dict]:
    """A JupyterLab server over a copy of the notebooks and data in ``home``, stopped after.

    Parameters
    ----------
    home : Path
        An empty folder: the server's root, its settings and its log.
    chromium : str
        The browser's executable, passed on in the result.

    Yields
    ------
    dict
        ``base`` (the server's URL), ``token``, ``chromium`` and ``home``.

    Raises
    ------
    RuntimeError
        When the server does not answer within a minute.
    """
    shutil.copytree(ROOT / "notebooks", home / "notebooks")
    shutil.copytree(ROOT / "data", home / "data")
    # Notebook 7's own copies, beside them (the data is ../data), each marked in its
    # metadata: trust goes by content, so one trusted in JupyterLab stays untrusted here.
    (home / NOTEBOOK7_FOLDER).mkdir()
    for source in (ROOT / "notebooks").glob("*.ipynb"):
        copy = json.loads(source.read_text(encoding="utf-8"))
        copy["metadata"]["explicit_audit_test"] = "Notebook 7 copy"
        (home / NOTEBOOK7_FOLDER / source.name).write_text(json.dumps(copy), encoding="utf-8")
    config = home / ".jupyter"
    (config / "labconfig").mkdir(parents=True)
    # The kit's pre-save hook (a saved panel keeps its twin), set by the file an installed
    # wheel puts in <prefix>/etc/jupyter; an editable install does not place it.
    shutil.copytree(ROOT / "jupyter-config", config, dirs_exist_ok=True)
    # No news feed: the page must not reach for the network.
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
    )
    # Every cell in the page, not only those in view (the panel is the last cell), and
    # the notebook's own kernel started without asking.
    settings = home / ".settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    tracker = {"windowingMode": "none", "autoStartDefaultKernel": True}
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps(tracker))
    port, token = free_port(), secrets.token_hex(16)
    env = dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        # Its own trust database: a notebook trusted here stays untrusted elsewhere.
        JUPYTER_DATA_DIR=str(home / ".data"),
        JUPYTER_RUNTIME_DIR=str(home / ".runtime"),
        IPYTHONDIR=str(home / ".ipython"),
        VIRTUAL_ENV=str(Path(sys.prefix)),
    )
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={home}",
            f"--LabApp.workspaces_dir={home / '.workspaces'}",
            f"--LabApp.user_settings_dir={home / '.settings'}",
            "--LabApp.expose_app_in_browser=True",
            "--LabApp.extension_manager=readonly",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            # Notebook 7 (package notebook) serves /tree and /notebooks/<path> on the same
            # server, with the same settings (the notebook tracker's) and its app exposed too.
            "--JupyterNotebookApp.expose_app_in_browser=True",
            f"--JupyterNotebookApp.workspaces_dir={home / '.workspaces'}",
            f"--JupyterNotebookApp.user_settings_dir={home / '.settings'}",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                    break
            except OSError as exc:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError("jupyter lab did not start:\n" + log_text(home)) from exc
                time.sleep(0.25)
        # The server's extensions: JupyterLab's and Notebook 7's, both loaded.
        loaded = re.findall(r"(\S+) \| extension was successfully loaded", log_text(home))
        assert {"jupyterlab", "notebook", "explicit_audit.saved_panels"} <= set(loaded), loaded
        yield {"base": base, "token": token, "chromium": chromium, "home": home}
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


#: The front ends the kit's notebooks are opened in: JupyterLab and Notebook 7.
FRONT_ENDS = ["lab", "notebook"]
# Notebook 7's own errors, not the kit's (notebook 7.6.5), each thrown from its core
# bundle, on a notebook with one "1 + 1" cell, never run, as on the kit's:
# - once a page, /tree included: the keyboard-shortcuts plugin reads
#   registry.plugins[<shortcuts plugin>].schema when another plugin's settings load,
#   before its own are (jupyter/notebook#7862);
# - once a page after a JupyterLab page was open on the same server: its file browser's
#   restore runs filebrowser:open-path, a command the notebook page has not registered
#   (why a JupyterLab page before it matters is not known yet).
# Only those exact errors, thrown from that bundle, are let through.
NOTEBOOK7_OWN_ERRORS = {
    "Cannot read properties of undefined (reading 'schema')",
    "Command 'filebrowser:open-path' not registered.",
}
NOTEBOOK7_CORE = re.compile(
    r"^\w*Error: .*\n\s+at (\S+ \()?\S*/static/notebook/notebook_core\.\w+\.js"
)


def _notebook7_own_error(error) -> bool:
    return error.message in NOTEBOOK7_OWN_ERRORS and bool(NOTEBOOK7_CORE.match(error.stack or ""))


class Notebook:
    """One notebook open in JupyterLab or Notebook 7, with the console messages of its page."""

    def __init__(
        self,
        browser,
        lab,
        name: str,
        viewport: tuple[int, int] = (1500, 1100),
        front_end: str = "lab",
    ) -> None:
        width, height = viewport
        self.front_end = front_end
        self.page = browser.new_page(viewport={"width": width, "height": height})
        self.page.set_default_timeout(TIMEOUT_MS)
        self.problems: list[str] = []
        self.page.on(
            "console",
            lambda message: (
                self.problems.append(f"console {message.type}: {message.text}")
                if message.type == "error"
                else None
            ),
        )
        self.page.on("pageerror", self._page_error)
        if front_end == "lab":
            url = f"{lab['base']}/lab/tree/notebooks/{name}?token={lab['token']}&reset"
        else:  # Notebook 7: one notebook to a page
            url = f"{lab['base']}/notebooks/{NOTEBOOK7_FOLDER}/{name}?token={lab['token']}"
        self.page.goto(url)
        app = self.page.evaluate(
            "() => JSON.parse(document.getElementById('jupyter-config-data').textContent).appName"
        )
        assert app == {"lab": "JupyterLab", "notebook": "Jupyter Notebook"}[front_end], app
        self.page.wait_for_function(
            "() => window.jupyterapp && document.querySelector('.jp-Notebook .jp-CodeCell')"
        )
        self.page.wait_for_function(
            "() => document.querySelector('.jp-Notebook .jp-CodeCell .jp-OutputArea-output')"
        )

    def _page_error(self, error) -> None:
        if self.front_end == "notebook" and _notebook7_own_error(error):
            return
        self.problems.append(f"page error: {error}")

    def command(self, name: str) -> None:
        self.page.evaluate(f"() => {{ window.jupyterapp.commands.execute('{name}'); }}")

    def trust(self) -> None:
        self.command("notebook:trust")
        self.page.locator(".jp-Dialog .jp-mod-accept, .jp-Dialog .jp-mod-warn").first.click()

    def run_all(self) -> None:
        self.page.wait_for_function(KERNEL_IDLE)
        self.command("notebook:clear-all-cell-outputs")
        self.page.wait_for_function("() => !document.querySelector('.jp-CodeCell .widget-vbox')")
        if self.front_end == "lab":
            self.command("notebook:run-all-cells")
        else:  # as a reader does: Run, then Run All Cells, in Notebook 7's menu bar
            self.page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
            self.page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        self.page.wait_for_function(ALL_CELLS_RUN)

    @property
    def panel(self):
        """The panel: the output of the last code cell."""
        return self.page.locator(".jp-CodeCell").last.locator(".jp-OutputArea-output").first

    def output(self, index: int):
        """The ``index``-th view output of the panel."""
        return self.panel.locator(f".widget-output.ea-view-{index}")

    def table(self, index: int = 0) -> dict:
        """The output's first table, numbers without their thousands separators."""
        shown = self.output(index).locator("table").first.evaluate(READ_TABLE)
        return {
            row: {
                column: text.replace(",", "") if _NUMBER.fullmatch(text) else text
                for column, text in cells.items()
            }
            for row, cells in shown.items()
        }

    def wait_for_text(self, locator, pattern: str) -> str:
        """Wait until ``locator``'s text matches ``pattern``; return the text."""
        deadline = time.monotonic() + 20
        while True:
            text = locator.inner_text()
            if re.search(pattern, text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"{pattern!r} never appeared; last text:\n{text}")
            time.sleep(0.1)

    def assert_clean(self) -> None:
        page = self.page
        assert page.get_by_text("Error displaying widget").count() == 0
        assert page.get_by_text("cannot show this view").count() == 0
        errors = page.locator(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]'
        )
        assert errors.count() == 0, errors.all_inner_texts()
        assert not self.problems, "\n".join(self.problems)

    def close(self) -> None:
        self.page.close()


# Latency: the time of each keydown and of the last change inside the panel's outputs (a
# chart updated in place changes only attributes), and when the status line said "updating"
# (read from the mutation records, so that a status shown and cleared within one frame
# still counts as said).
WATCH = """panel => {
  window.eaKeyAt = 0;
  window.eaChangedAt = 0;
  window.eaUpdatingAt = 0;
  window.eaClearedAt = 0;
  document.addEventListener('keydown', e => { window.eaKeyAt = e.timeStamp; }, true);
  const changed = new MutationObserver(() => { window.eaChangedAt = performance.now(); });
  for (const output of panel.querySelectorAll('.widget-output')) {
    changed.observe(output, {subtree: true, childList: true, characterData: true,
                             attributes: true});
  }
  const status = panel.querySelector('.ea-status');
  new MutationObserver(records => {
    const now = performance.now();
    for (const record of records) {
      const texts = record.type === 'characterData'
        ? [record.target.data] : [...record.addedNodes].map(n => n.textContent);
      if (texts.some(t => t.startsWith('updating')) && !window.eaUpdatingAt) {
        window.eaUpdatingAt = now;
      }
    }
    if (!status.innerText.trim()) window.eaClearedAt = now;
  }).observe(status, {subtree: true, childList: true, characterData: true});
}"""
#: The goal for one update, from the keydown to the last change of an output (p95).
LATENCY_MS = 150
# The update is over: the status said "updating" and is empty again, the kernel is idle
# and no output has changed for a while; or the key changed nothing (the control at its
# end): no status for 1.5 s and the kernel idle.
QUIET = f"""quiet => {{
  const now = performance.now();
  const over = window.eaUpdatingAt > 0 && window.eaClearedAt > window.eaUpdatingAt
    && now - Math.max(window.eaChangedAt, window.eaClearedAt) > quiet;
  const none = !window.eaUpdatingAt && now - window.eaKeyAt > Math.max(quiet, 1500);
  return (over || none) && ({KERNEL_IDLE})();
}}"""


def watch(panel) -> None:
    """Start measuring the updates of ``panel`` (a locator of the panel's output)."""
    panel.evaluate(WATCH)


def press(notebook: Notebook, key: str, quiet_ms: int = 300) -> dict:
    """Press ``key`` in the focused control; wait until the panel has updated and is quiet.

    Parameters
    ----------
    notebook : Notebook
        Its panel watched (:func:`watch`).
    key : str
        A key for the focused control; when it changes the control's value, the
        panel updates.
    quiet_ms : int, default 300
        How long the outputs must stay unchanged, once the status line is emptied
        again (the kernel's last message of the update), to count the update as over.

    Returns
    -------
    dict
        ``took``: milliseconds from the keydown to the last change of an output
        (0 when no output changed); ``updating``: milliseconds from the keydown
        to the status line saying "updating"; ``cleared``: to the status line
        emptied again (the kernel's last message of the update).
    """
    page = notebook.page
    page.evaluate(
        "() => { window.eaChangedAt = 0; window.eaUpdatingAt = 0; window.eaClearedAt = 0; }"
    )
    page.keyboard.press(key)
    page.wait_for_function(QUIET, arg=quiet_ms, polling=50)
    return page.evaluate(
        """() => ({took: window.eaChangedAt ? window.eaChangedAt - window.eaKeyAt : 0,
                   updating: window.eaUpdatingAt - window.eaKeyAt,
                   cleared: window.eaClearedAt - window.eaKeyAt})"""
    )


def percentiles(times: list[float]) -> tuple[int, int]:
    """The median and the 95th percentile (nearest rank) of ``times``, in whole ms."""
    ordered = sorted(times)
    rank = max(0, -(-95 * len(ordered) // 100) - 1)
    return round(ordered[len(ordered) // 2]), round(ordered[rank])
