"""Interactive panels: a pure view per panel, and thin controls around it.

Each panel is two things:

- *views*, ``x_view(data, **control_values)``: pure functions of the data and
  the control values that return something a plain cell renders (a
  DataFrame, a :class:`~explicit_audit.views.PlanEdit`, a :class:`Chart`). A
  notebook renders each once with its defaults, so a static report and nbval
  see real content;
- a *panel*, ``x_panel(data)``: an ipywidgets :class:`Panel` whose controls
  are named after the views' parameters, and whose callback calls each view
  with the values of the controls it names and shows what it returns.

Displayed, a panel carries its static twin (:mod:`.twin`: the controls'
values, the table and the chart as HTML), which an untrusted notebook and
any viewer show until the cell runs; its controls keep their keys from the
notebook's shortcuts and name their parts for a screen reader
(:mod:`.keyboard`).

=================================  =======================  ===================================
views                              panel                    answers
=================================  =======================  ===================================
:func:`plan_edit_view`             :func:`plan_panel`       the canonical JSON and hash of an
                                                            edited plan, and what the seed
                                                            would reject or coerce
:func:`withheld_view`,             :func:`withheld_panel`   withheld counts for one audience,
:func:`withheld_chart`                                      space and day window
:func:`sweep_view`,                :func:`sweep_panel`      escalations and flips at chosen
:func:`flips_view`,                                         thresholds, or each variant at its
:func:`escalation_chart`                                    own; the rate across one threshold
=================================  =======================  ===================================
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from .._core.engine import computed
from .._core.extras import needs

with needs("report", "explicit_audit.widgets"):
    import anywidget  # noqa: F401  (the panels' keyboard widget, .keyboard)
    import ipywidgets as widgets

from ..views import (
    ALL,
    NO_AUDIENCE,
    PlanEdit,
    PlanPreview,
    escalation_curve_view,
    flips_view,
    plan_edit_view,
    plan_view,
    sweep_view,
    withheld_view,
)
from ..views.escalation_curve import curve_sweep
from ..views.routing import as_written, threshold_spans
from ..views.withheld import time_range, window_options, window_readout
from .charts import Chart, escalation_chart, withheld_chart
from .panel import LastCall, Panel
from .tables import compact_flips, compact_sweep, compact_withheld

__all__ = [
    "ALL",
    "NO_AUDIENCE",
    "Chart",
    "Panel",
    "PlanEdit",
    "PlanPreview",
    "escalation_chart",
    "escalation_curve_view",
    "flips_view",
    "plan_edit_view",
    "plan_panel",
    "plan_view",
    "sweep_panel",
    "sweep_view",
    "time_range",
    "withheld_chart",
    "withheld_panel",
    "withheld_view",
]

AXIS_NAMES = {
    "context_char_cap_4b": "context cap (characters)",
    "escalate_on_multi_doc_count": "multi-document count",
    "confidence_threshold": "confidence threshold",
}


def _style(description: str, width: str = "520px") -> dict[str, Any]:
    return {
        "description": description,
        "style": {"description_width": "initial"},
        "layout": widgets.Layout(width=width, max_width="100%"),
    }


def _count_text(value: Any) -> str:
    """A written count as the editor shows it: what the seed's ``int()`` makes of it."""
    if type(value) is int:
        return str(value)
    try:
        return str(int(value))
    except (TypeError, ValueError, OverflowError):
        return str(value)


def plan_panel(plan: Mapping[str, Any] | str | None = None) -> Panel:
    """A plan editor: edit a retrieval plan, watch its canonical JSON, hash and checks.

    Every field is a text box, so what is typed reaches the view as typed: the
    view reads the counts with ``int()`` as the seed does, refuses an emptied
    count, and names whitespace in a field (see
    :func:`~explicit_audit.views.plan_edit_view`).

    Parameters
    ----------
    plan : mapping or str, optional
        The plan to start from (either shape, as a mapping or its JSON text,
        e.g. a value of the ``plan`` column of ``ea.load(...).plans``); the
        dataclass defaults when None.

    Returns
    -------
    Panel
        Controls ``retrieval_keywords``, ``top_k``, ``over_fetch``,
        ``max_context_chars``, ``shard_ids`` (comma-separated), ``mt_engine``,
        ``mt_manifest_hash`` and ``source_lang``, above
        :func:`~explicit_audit.views.plan_edit_view`.

    Examples
    --------
    >>> from explicit_audit.widgets import plan_panel
    >>> panel = plan_panel()
    >>> panel.controls["top_k"].value = "5"
    >>> panel.result.canonical_json
    '{"max_context_chars":0,"over_fetch":0,"retrieval_keywords":"","shard_ids":[],"top_k":5}'
    >>> panel.controls["top_k"].value = ""
    >>> print(panel.result.messages[0].level, panel.result.plan_hash == "")
    error True
    """
    fields = plan_view(plan).fields
    names = {
        "retrieval_keywords": "keywords",
        "top_k": "top_k",
        "over_fetch": "over_fetch",
        "max_context_chars": "max_context_chars",
        "shard_ids": "shard ids (comma-separated)",
        "mt_engine": "MT engine",
        "mt_manifest_hash": "MT manifest hash",
        "source_lang": "source language",
    }
    controls = {}
    for name, description in names.items():
        value = fields.get(name, "")
        if name in ("top_k", "over_fetch", "max_context_chars"):
            text = _count_text(value)
        elif name == "shard_ids":
            text = ", ".join(map(str, value))
        else:
            text = "" if value is None else str(value)
        controls[name] = widgets.Text(value=text, **_style(description))
    return Panel([plan_edit_view], plan, controls, title="plan editor")


def withheld_panel(data: Any) -> Panel:
    """A withheld-count explorer: pick an audience, a space, a grouping and a day window.

    Parameters
    ----------
    data : Audit or DataFrame
        An ``Audit`` or its ``receipts`` table.

    Returns
    -------
    Panel
        Controls ``audience``, ``space``, ``by`` and, when the receipts carry
        a ``timestamp`` column, ``window`` (whole UTC days, both handles at
        the open ends to start, the window written out next to it), above
        :func:`withheld_view` and :func:`withheld_chart`.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.widgets import withheld_panel
    >>> panel = withheld_panel(ea.load("data/"))  # doctest: +SKIP
    >>> panel.controls["audience"].value = "peer"  # doctest: +SKIP
    """
    receipts = getattr(data, "receipts", data)
    audiences, unguarded, spaces = _choices(receipts)
    audience_options = [ALL, *audiences]
    if unguarded:
        audience_options.append(NO_AUDIENCE)
    spaces = [ALL, *spaces]
    controls: dict[str, widgets.ValueWidget] = {
        "audience": widgets.Dropdown(options=audience_options, value=ALL, **_style("audience")),
        "space": widgets.Dropdown(options=spaces, value=ALL, **_style("space")),
        "by": widgets.Dropdown(
            options=[
                ("scope", "scope"),
                ("audience", "withheld_audience"),
                ("space", "active_space"),
                ("outcome", "outcome"),
            ],
            value="scope",
            **_style("group by"),
        ),
    }
    readouts = {}
    days = time_range(receipts)
    if days is not None:
        options = window_options(days)
        controls["window"] = widgets.SelectionRangeSlider(
            options=options,
            index=(0, len(options) - 1),
            readout=False,
            continuous_update=False,
            **_style("days (UTC, end exclusive)"),
        )
        readouts["window"] = window_readout
    table = LastCall(withheld_view)  # the table, computed once for the table and the chart
    return Panel(
        [table, functools.partial(withheld_chart, view=table)],
        receipts,
        controls,
        title="withheld-count explorer",
        readouts=readouts,
        above=1,
        shown={0: compact_withheld},
    )


def _choices(receipts: Any) -> tuple[list[str], bool, list[str]]:
    """The audiences (sorted), whether any receipt has none, and the spaces (sorted)."""
    audiences = receipts["withheld_audience"]
    named, unguarded, spaces = computed(
        audiences.dropna().unique(),
        audiences.isna().any(),
        receipts["active_space"].dropna().unique(),
    )
    return sorted(named), bool(unguarded), sorted(spaces)


def _follow(panel: Panel, name: str, change: Any) -> None:
    """Routing explorer links: a moved slider applies to every variant and is charted."""
    if getattr(panel, "_syncing", False):
        return
    controls = panel.controls
    if name in AXIS_NAMES:
        controls["own_thresholds"].value = False
        controls["axis"].value = name
    elif name == "variant" and change["new"] != ALL and controls["own_thresholds"].value:
        # Each variant at its own thresholds: the sliders show the one picked.
        own = panel.data.policies[change["new"]].escalation
        panel._syncing = True
        try:
            for axis in AXIS_NAMES:
                controls[axis].value = getattr(own, axis)
        finally:
            panel._syncing = False


def sweep_panel(data: Any, *, limit: int = 10) -> Panel:
    """A routing explorer: thresholds for every variant, or each variant at its own.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies`` (an ``Audit``).
    limit : int, default 10
        Decisions listed by :func:`flips_view`.

    Returns
    -------
    Panel
        Controls ``variant``, ``own_thresholds`` ("each variant at its own
        thresholds", the start, or the sliders' thresholds for every variant),
        ``context_char_cap_4b``, ``escalate_on_multi_doc_count``,
        ``confidence_threshold``, ``axis`` (the threshold charted) and
        ``only_named``, above :func:`sweep_view` (shown compact:
        :func:`~explicit_audit.widgets.tables.compact_sweep`),
        :func:`escalation_chart` and :func:`flips_view` (shown compact too). The sliders
        start at the first policy's own
        thresholds; moving one applies the sliders to every variant and
        charts that threshold.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.widgets import sweep_panel
    >>> panel = sweep_panel(ea.load("data/"))  # doctest: +SKIP
    >>> panel.controls["confidence_threshold"].value = 0.7  # doctest: +SKIP
    >>> panel.controls["own_thresholds"].value = True  # doctest: +SKIP
    """
    policies = list(data.policies.values())
    if not policies:
        raise ValueError("sweep_panel needs at least one policy (data.policies is empty)")
    first = policies[0].escalation
    spans = threshold_spans(data)
    controls: dict[str, widgets.ValueWidget] = {
        "variant": widgets.Dropdown(
            options=[ALL, *(p.policy_id for p in policies)], value=ALL, **_style("policy variant")
        ),
        "own_thresholds": widgets.ToggleButtons(
            options=[
                ("each variant at its own thresholds", True),
                ("the sliders' thresholds for every variant", False),
            ],
            value=True,
            description="thresholds",
            style={"description_width": "initial", "button_width": "auto"},
        ),
    }
    for axis, description in AXIS_NAMES.items():
        low, high, step = spans[axis]
        kind = widgets.FloatSlider if axis == "confidence_threshold" else widgets.IntSlider
        controls[axis] = kind(
            value=getattr(first, axis),
            min=low,
            max=high,
            step=step,
            continuous_update=False,
            **_style(description),
        )
    controls["axis"] = widgets.Dropdown(
        options=[(description, axis) for axis, description in AXIS_NAMES.items()],
        value="confidence_threshold",
        **_style("chart across"),
    )
    controls["only_named"] = widgets.Checkbox(
        value=False, **_style("only the decisions that name each policy")
    )
    # One sweep across the charted threshold per move, for the chart and the table's rows
    # (the table reads its rows from it whatever the axis), and each variant as written only
    # when the variants or only_named change.
    swept, written = LastCall(curve_sweep), LastCall(as_written)

    def charted(data: Any, **values: Any) -> Any:
        return swept(data, axis=controls["axis"].value, **values)

    return Panel(
        [
            functools.partial(sweep_view, swept=charted, written=written),
            functools.partial(escalation_chart, swept=swept),
            functools.partial(flips_view, limit=limit),
        ],
        data,
        controls,
        title="routing explorer",
        link=_follow,
        above=1,
        shown={0: compact_sweep, 2: compact_flips},
    )
