"""Incremental audits of append-only logs: ``ea.load(source, state=DIR)``.

See ``docs/state.md``. :mod:`.store` keeps what a run audited, :mod:`.compare`
checks the files against it, :mod:`.join` joins the rows kept with those read,
and :mod:`.load` runs the whole.
"""

__all__: list[str] = []
