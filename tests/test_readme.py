"""README's and the documentation pages' examples run as written, from the repository root.

Every ```python block of README.md and of each page under docs/ runs, the blocks of one
file in order in one namespace, as a reader pastes them into one session. A command of a
```sh or ```console block whose comment states its exit status (``(exit status N)``) runs
in a shell, from a folder holding the bundled ``data/``, and must exit so.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import explicit_audit as ea

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda path: path.relative_to(ROOT).as_posix(),
)
_BLOCK = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
_STATED = re.compile(r"#.*\(exit status (\d+)\)\s*$")
_COMMAND = re.compile(r"^(?:\.venv/bin/)?explicit-audit\b")


def _blocks(path: Path, *languages: str) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [body for language, body in _BLOCK.findall(text) if language in languages]


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p, "python")], ids=_name)
def test_every_python_block_runs(page, monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        for block in _blocks(page, "python"):
            exec(compile(block, _name(page), "exec"), namespace)


def test_readme_s_example_loads_the_bundled_data(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        for block in _blocks(ROOT / "README.md", "python"):
            exec(compile(block, "README.md", "exec"), namespace)
    assert isinstance(namespace["audit"], ea.Audit)
    assert namespace["baseline"].policy_id == "baseline"


def _stated_commands() -> list[tuple[str, str, int]]:
    found = []
    for page in PAGES:
        for block in _blocks(page, "sh", "console"):
            for line in block.splitlines():
                command = line.removeprefix("$ ").strip()
                stated = _STATED.search(command)
                if stated and _COMMAND.match(command):
                    found.append((_name(page), command, int(stated.group(1))))
    return found


COMMANDS = _stated_commands()


def test_the_pages_state_exit_statuses_to_check():
    assert len(COMMANDS) >= 5, COMMANDS
    assert {status for _, _, status in COMMANDS} >= {0, 1}


@pytest.mark.parametrize(("page", "command", "status"), COMMANDS, ids=lambda v: str(v)[:60])
def test_a_command_exits_as_its_page_says(page, command, status, tmp_path):
    (tmp_path / "data").symlink_to(ROOT / "data")
    program = shlex.quote(str(Path(sys.executable).parent / "explicit-audit"))
    line = _COMMAND.sub(program, command)
    env = {**os.environ, "EXPLICIT_AUDIT_PROGRESS": "0"}
    run = subprocess.run(
        ["bash", "-c", line], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == status, f"{page}: {command}\n{run.stderr[-2000:]}"


def test_the_api_reference_documents_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\.\. (?:auto\w+|data):: (\w+)$", text, flags=re.MULTILINE))
    assert documented == set(ea.__all__)


def test_readme_s_links_name_pages_that_exist():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [target for target in targets if "://" not in target]
    assert len(local) >= 15, local
    assert [target for target in local if not (ROOT / target).is_file()] == []
