"""Interactive panels: a pure view per panel, and thin controls around it.

Each panel is two things:

- a *view*, ``x_view(data, **control_values)``: a pure function of the data
  and the control values that returns something a plain cell renders (a
  DataFrame, or a :class:`PlanPreview`). A notebook renders it once with its
  defaults, so a static report and nbval see real content;
- a *panel*, ``x_panel(data)``: an ipywidgets :class:`Panel` whose controls
  are named after the view's parameters, and whose only callback calls the
  view with the controls' values and shows what it returns.

=======================  =======================  ==========================================
view                     panel                    answers
=======================  =======================  ==========================================
:func:`plan_view`        :func:`plan_panel`       the canonical JSON and hash of an edited plan
:func:`withheld_view`    :func:`withheld_panel`   withheld counts for one audience, space, window
:func:`sweep_view`       :func:`sweep_panel`      escalations and flips at chosen thresholds
:func:`flips_view`       (in :func:`sweep_panel`) the decisions that flip at those thresholds
=======================  =======================  ==========================================
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd

from .views import (
    ALL,
    NO_AUDIENCE,
    PlanPreview,
    flips_view,
    plan_view,
    sweep_view,
    time_range,
    withheld_view,
)

__all__ = [
    "ALL",
    "NO_AUDIENCE",
    "Panel",
    "PlanPreview",
    "flips_view",
    "plan_panel",
    "plan_view",
    "sweep_panel",
    "sweep_view",
    "withheld_panel",
    "withheld_view",
]


class Panel(widgets.VBox):
    """Controls above the output of one or more views, refreshed on every change.

    Parameters
    ----------
    views : sequence of callables
        Each is called as ``view(data, **values)``, ``values`` holding every
        control's value under its name.
    data : object
        The first argument of every view.
    controls : mapping of str to ipywidgets.ValueWidget
        The controls, named after the views' parameters.

    Attributes
    ----------
    controls : dict
        The controls by name; set ``panel.controls["top_k"].value = 5`` to drive it.
    results : list
        What each view returned for the current values.
    outputs : list of ipywidgets.Output
        Where each result is displayed.
    """

    def __init__(
        self,
        views: Sequence[Callable[..., Any]],
        data: Any,
        controls: Mapping[str, widgets.ValueWidget],
    ) -> None:
        self.views = list(views)
        self.data = data
        self.controls = dict(controls)
        self.outputs = [widgets.Output() for _ in self.views]
        self.results: list[Any] = []
        boxes = list(self.controls.values())
        super().__init__(children=[widgets.VBox(boxes), *self.outputs])
        for control in boxes:
            control.observe(self._refresh, names="value")
        self._refresh()

    @property
    def values(self) -> dict[str, Any]:
        """The controls' current values, by name."""
        return {name: control.value for name, control in self.controls.items()}

    @property
    def result(self) -> Any:
        """What the first view returned for the current values."""
        return self.results[0]

    def _refresh(self, change: Any = None) -> None:
        values = self.values
        self.results = [view(self.data, **values) for view in self.views]
        for output, result in zip(self.outputs, self.results, strict=True):
            output.outputs = ()
            output.append_display_data(result)


def _style(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "style": {"description_width": "initial"},
        "layout": widgets.Layout(width="520px"),
    }


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def plan_panel(plan: Mapping[str, Any] | None = None) -> Panel:
    """A plan editor: edit a retrieval plan and watch its canonical JSON and hash.

    Parameters
    ----------
    plan : mapping, optional
        The plan to start from (either shape, e.g. a value of the ``plan``
        column of ``ea.load(...).plans``); the dataclass defaults when None.

    Returns
    -------
    Panel
        Controls ``retrieval_keywords``, ``top_k``, ``over_fetch``,
        ``max_context_chars``, ``shard_ids`` (comma-separated), ``mt_engine``,
        ``mt_manifest_hash`` and ``source_lang``, above :func:`plan_view`.

    Examples
    --------
    >>> from explicit_audit.widgets import plan_panel
    >>> panel = plan_panel()
    >>> panel.controls["top_k"].value = 5
    >>> panel.result.canonical_json
    '{"max_context_chars":0,"over_fetch":0,"retrieval_keywords":"","shard_ids":[],"top_k":5}'
    """
    start = plan_view(plan)
    fields = start.fields
    controls = {
        "retrieval_keywords": widgets.Text(
            value=fields["retrieval_keywords"], **_style("keywords")
        ),
        "top_k": widgets.IntText(value=_as_int(fields["top_k"]), **_style("top_k")),
        "over_fetch": widgets.IntText(value=_as_int(fields["over_fetch"]), **_style("over_fetch")),
        "max_context_chars": widgets.IntText(
            value=_as_int(fields["max_context_chars"]), **_style("max_context_chars")
        ),
        "shard_ids": widgets.Text(
            value=", ".join(fields["shard_ids"]), **_style("shard ids (comma-separated)")
        ),
        "mt_engine": widgets.Text(value=fields["mt_engine"], **_style("MT engine")),
        "mt_manifest_hash": widgets.Text(
            value=fields["mt_manifest_hash"], **_style("MT manifest hash")
        ),
        "source_lang": widgets.Text(value=fields["source_lang"], **_style("source language")),
    }
    return Panel([plan_view], None, controls)


def withheld_panel(data: Any) -> Panel:
    """A withheld-count explorer: pick an audience, a space, a grouping and a time window.

    Parameters
    ----------
    data : Audit or DataFrame
        An ``Audit`` or its ``receipts`` table.

    Returns
    -------
    Panel
        Controls ``audience``, ``space``, ``by`` and, when the receipts carry
        a ``timestamp`` column, ``window`` (whole days), above
        :func:`withheld_view`.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.widgets import withheld_panel
    >>> panel = withheld_panel(ea.load("data/"))  # doctest: +SKIP
    >>> panel.controls["audience"].value = "peer"  # doctest: +SKIP
    """
    receipts = getattr(data, "receipts", data)
    audiences = receipts["withheld_audience"]
    audience_options = [ALL, *sorted(audiences.dropna().unique())]
    if audiences.isna().any():
        audience_options.append(NO_AUDIENCE)
    spaces = [ALL, *sorted(receipts["active_space"].dropna().unique())]
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
    days = time_range(receipts)
    if days is not None:
        # The open ends (None) keep receipts that carry no timestamp as well.
        options = [
            ("open", None),
            *((day.strftime("%Y-%m-%d"), day) for day in days),
            ("open", None),
        ]
        controls["window"] = widgets.SelectionRangeSlider(
            options=options, index=(0, len(options) - 1), **_style("days (UTC, end exclusive)")
        )
    return Panel([withheld_view], receipts, controls)


def sweep_panel(data: Any, *, limit: int = 10) -> Panel:
    """A routing sweep explorer: three threshold sliders and a policy-variant picker.

    Parameters
    ----------
    data : Audit
        Anything with ``decisions`` and ``policies`` (an ``Audit``).
    limit : int, default 10
        Decisions listed by :func:`flips_view`.

    Returns
    -------
    Panel
        Controls ``variant``, ``context_char_cap_4b``,
        ``escalate_on_multi_doc_count``, ``confidence_threshold`` and
        ``only_named``, above :func:`sweep_view` and :func:`flips_view`. The
        sliders start at the first policy's own thresholds.

    Examples
    --------
    >>> import explicit_audit as ea
    >>> from explicit_audit.widgets import sweep_panel
    >>> panel = sweep_panel(ea.load("data/"))  # doctest: +SKIP
    >>> panel.controls["confidence_threshold"].value = 0.7  # doctest: +SKIP
    """
    policies = list(data.policies.values())
    if not policies:
        raise ValueError("sweep_panel needs at least one policy (data.policies is empty)")
    first = policies[0].escalation
    decisions = data.decisions
    chars_top = max(
        int(decisions["content_chars"].max()) if len(decisions) else 0,
        *(2 * p.escalation.context_char_cap_4b for p in policies),
    )
    docs_top = max(
        int(decisions["evidence_doc_count"].max()) + 1 if len(decisions) else 1,
        *(p.escalation.escalate_on_multi_doc_count + 1 for p in policies),
    )
    controls: dict[str, widgets.ValueWidget] = {
        "variant": widgets.Dropdown(
            options=[ALL, *(p.policy_id for p in policies)], value=ALL, **_style("policy variant")
        ),
        "context_char_cap_4b": widgets.IntSlider(
            value=first.context_char_cap_4b,
            min=0,
            max=chars_top,
            step=250,
            continuous_update=False,
            **_style("context cap (characters)"),
        ),
        "escalate_on_multi_doc_count": widgets.IntSlider(
            value=first.escalate_on_multi_doc_count,
            min=1,
            max=docs_top,
            continuous_update=False,
            **_style("multi-document count"),
        ),
        "confidence_threshold": widgets.FloatSlider(
            value=first.confidence_threshold,
            min=0.0,
            max=1.0,
            step=0.01,
            continuous_update=False,
            **_style("confidence threshold"),
        ),
        "only_named": widgets.Checkbox(
            value=False, **_style("only the decisions that name each policy")
        ),
    }

    def flips(data: Any, **values: Any) -> pd.DataFrame:
        return flips_view(data, limit=limit, **values)

    return Panel([sweep_view, flips], data, controls)
