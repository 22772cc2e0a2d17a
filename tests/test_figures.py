"""Figures as a report shows them: a description of each, as alternative text."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from explicit_audit import plots
from explicit_audit.report.figures import describe_figure


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_a_figure_is_described_by_its_title_and_each_pane():
    fig, (left, right) = plt.subplots(1, 2)
    fig.suptitle("Withheld records")
    left.set(title="per audience", xlabel="records withheld", ylabel="audience")
    right.set(xlabel="share")
    hidden = fig.add_axes((0, 0, 0.1, 0.1))
    hidden.set(title="a legend box", xlabel="nothing")
    hidden.set_axis_off()
    assert describe_figure(fig) == (
        "Withheld records. per audience: records withheld (x) against audience (y). share (x)."
    )


def test_a_figure_with_nothing_labelled_is_still_described():
    fig, _ = plt.subplots()
    assert describe_figure(fig) == "A figure"


def test_the_kits_plots_are_described_by_what_they_draw():
    counts = pd.DataFrame(
        {"records_withheld": [3, 1], "withheld_share": [0.5, 0.25]},
        index=pd.Index(["peer", "admin"], name="withheld_audience"),
    )
    ax = plots.plot_withheld_by(counts, column="records_withheld")
    described = describe_figure(ax.figure)
    assert ax.get_xlabel() in described and "withheld_audience" in described
    assert described.endswith(".") and "(x) against" in described
