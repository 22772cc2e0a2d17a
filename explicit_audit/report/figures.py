"""Figures as a report shows them: each image carries a description of what it draws.

A reader who cannot see a plot (a screen reader, a text browser) gets its
alternative text: the figure's title, then each of its panes' title and axes
(``"Share of decisions escalated: confidence_threshold (x) against escalation
rate (y)"``). :func:`use_report_figures` makes every matplotlib figure a
notebook shows carry that text in its output's metadata (``alt``), which the
report's pages write as the image's ``alt`` attribute.
"""

from __future__ import annotations

from typing import Any

__all__ = ["describe_figure", "use_report_figures"]


def _axis(label: str, name: str) -> str:
    return f"{label} ({name})" if label else ""


def describe_figure(figure: Any) -> str:
    """What a figure draws, in words: its title, and each pane's title and axes.

    Parameters
    ----------
    figure : matplotlib.figure.Figure

    Returns
    -------
    str
        One sentence per pane after the figure's title; ``"A figure"`` when
        nothing in it is labelled.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> _ = ax.set(title="Escalations", xlabel="threshold", ylabel="escalation rate")
    >>> describe_figure(fig)
    'Escalations: threshold (x) against escalation rate (y).'
    >>> plt.close(fig)
    """
    parts = []
    suptitle = getattr(figure, "_suptitle", None)
    if suptitle is not None and suptitle.get_text().strip():
        parts.append(f"{suptitle.get_text().strip()}.")
    for ax in figure.get_axes():
        if not ax.get_visible() or not ax.axison:
            continue
        title = " ".join(ax.get_title(loc).strip() for loc in ("left", "center", "right"))
        axes = [
            text
            for text in (
                _axis(ax.get_xlabel().strip(), "x"),
                _axis(ax.get_ylabel().strip(), "y"),
            )
            if text
        ]
        what = " against ".join(axes)
        title = title.strip()
        if title and what:
            parts.append(f"{title}: {what}.")
        elif title or what:
            parts.append(f"{title or what}.")
    return " ".join(parts) if parts else "A figure"


def use_report_figures(shell=None) -> None:
    """Give every figure an IPython session shows its description as alternative text.

    The PNG of a figure is made as before (the inline backend's own
    formatter); its output's metadata gains ``alt``: :func:`describe_figure`.

    Parameters
    ----------
    shell : InteractiveShell, optional
        The running IPython shell; found when not given. Outside IPython, or
        before matplotlib's inline backend set its PNG formatter, this does
        nothing.

    Examples
    --------
    >>> use_report_figures()  # in a notebook's first cell, after importing pyplot  # doctest: +SKIP
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return
        shell = get_ipython()
    if shell is None:
        return
    import matplotlib
    from matplotlib.figure import Figure

    if "inline" in str(matplotlib.get_backend()):
        # matplotlib picks its backend when first needed, and the inline backend sets the
        # formatters when it is imported: import it now, so its formatter can be wrapped.
        import matplotlib_inline.backend_inline  # noqa: F401

    formatter = shell.display_formatter.formatters["image/png"]
    made = formatter.lookup_by_type(Figure) if Figure in formatter.type_printers else None
    if made is None or getattr(made, "describes", False):
        return

    def png_with_description(figure: Figure):
        data = made(figure)
        return (data, {"alt": describe_figure(figure)}) if data is not None else None

    png_with_description.describes = True
    formatter.for_type(Figure, png_with_description)
