"""README's Python example runs as written, from the repository root."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import explicit_audit as ea

ROOT = Path(__file__).resolve().parent.parent


def test_readme_python_example_runs(monkeypatch):
    text = (ROOT / "README.md").read_text("utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert blocks, "README shows no Python example"
    monkeypatch.chdir(ROOT)
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ea.RejectedRowsWarning)
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)
    assert isinstance(namespace["audit"], ea.Audit)
    assert namespace["baseline"].policy_id == "baseline"
