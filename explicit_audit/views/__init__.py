"""The views behind the interactive panels: pure functions that render in a plain cell.

Each view is ``x_view(data, **control_values)``: it calls the kit's public
computing functions and returns what a plain cell displays, a DataFrame or a
small result object with an HTML and a text form. :mod:`explicit_audit.widgets`
wraps each in controls named after its parameters; a notebook renders each
view once with its defaults, so a static report and nbval see the same content
a reader starts from. Views import neither matplotlib nor ipywidgets.

=================================  ====================================================
view                               answers
=================================  ====================================================
:func:`plan_view`                  the canonical JSON and hash of an edited plan
:func:`plan_edit_view`             the same, with what the seed would reject or coerce
:func:`withheld_view`              withheld counts for one audience, space, window
:func:`sweep_view`                 escalations and flips at chosen thresholds
:func:`flips_view`                 the decisions that flip at those thresholds
:func:`escalation_curve_view`      the escalation rate across one threshold, and where
                                   the chosen thresholds sit on it
=================================  ====================================================
"""

from __future__ import annotations

from ..plans.preview import PlanPreview, plan_view
from ._shared import ALL, NO_AUDIENCE
from .escalation_curve import EscalationCurve, escalation_curve_view
from .plan_edit import PlanEdit, PlanMessage, plan_edit_view
from .routing import flips_view, sweep_view, threshold_spans
from .withheld import (
    OPEN_END,
    OPEN_START,
    OpenEnd,
    time_range,
    window_is_empty,
    window_options,
    window_readout,
    withheld_view,
)

__all__ = [
    "ALL",
    "NO_AUDIENCE",
    "OPEN_END",
    "OPEN_START",
    "EscalationCurve",
    "OpenEnd",
    "PlanEdit",
    "PlanMessage",
    "PlanPreview",
    "escalation_curve_view",
    "flips_view",
    "plan_edit_view",
    "plan_view",
    "sweep_view",
    "threshold_spans",
    "time_range",
    "window_is_empty",
    "window_options",
    "window_readout",
    "withheld_view",
]
