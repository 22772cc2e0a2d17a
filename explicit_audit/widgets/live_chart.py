"""A chart drawn in the browser from its data, updated in place when the data changes.

A panel's chart changes with every control move. Drawing a new matplotlib
figure and sending its PNG each time costs the kernel far more than the view
itself; :class:`LiveChart` instead sends the chart's data (a *spec*, see
:mod:`.charts`) and the browser draws it as SVG. When the spec changes the
same SVG elements get their new coordinates (each line's path, each marker,
each bar, keyed by its name); only the axes are drawn again when their ticks
change. The caption sits under the drawing in a ``<figcaption>`` and the
drawing is named for a screen reader by its ``alt`` text (``role="img"``).

Two kinds of spec are drawn:

``{"kind": "lines", ...}``
    ``title``, ``xlabel``, ``ylabel``, ``ylim`` (two numbers), ``y_percent``
    (ticks with "%"), ``legend`` (its title), ``series`` (each ``name``,
    ``color``, ``x`` and ``y``; a None ``y`` breaks the line), ``markers``
    (each ``name``, ``color``, ``x``, ``y`` and ``text``) and ``vlines``
    (x values drawn as dashed vertical lines).
``{"kind": "bars", ...}``
    ``title``, ``xlabel``, ``ylabel``, ``color`` and ``bars`` (each ``label``,
    ``value`` and ``text``), first bar on top.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

__all__ = ["LiveChart"]

_ESM = r"""
const NS = "http://www.w3.org/2000/svg";
const W = 560, H = 256;
const LAYERS = [
  "ea-axes", "ea-vlines", "ea-lines", "ea-bars", "ea-markers", "ea-texts", "ea-legend",
];

function make(parent, tag, attrs = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  parent.appendChild(node);
  return node;
}

function set(node, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    const text = String(value);
    if (node.getAttribute(name) !== text) node.setAttribute(name, text);
  }
}

function text(node, value) {
  if (node.textContent !== value) node.textContent = value;
}

// The elements of `layer` keyed by `keys`, in that order: kept when their key stays,
// made when new, removed when gone.
function keyed(layer, tag, keys) {
  const old = new Map([...layer.children].map((child) => [child.dataset.key, child]));
  const out = keys.map((key) => {
    let node = old.get(key);
    if (node) old.delete(key);
    else {
      node = make(layer, tag);
      node.dataset.key = key;
    }
    return node;
  });
  for (const node of old.values()) node.remove();
  return out;
}

function ticks(lo, hi, count) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  let step = 10 ** Math.floor(Math.log10(span / count));
  const error = span / count / step;
  if (error >= 7.5) step *= 10;
  else if (error >= 3.5) step *= 5;
  else if (error >= 1.5) step *= 2;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Number(v.toFixed(10)));
  }
  return out;
}

function number(v) {
  return Number.isInteger(v) ? v.toLocaleString("en-US") : String(Number(v.toPrecision(6)));
}

// The frame, ticks, grid, title and axis labels: drawn again only when they change.
function axes(layer, spec, box, xticks, X, yticks, Y, grid) {
  const key = JSON.stringify([spec.title, spec.xlabel, spec.ylabel, box, xticks, yticks,
    xticks.map(X), yticks.map(Y)]);
  if (layer.dataset.key === key) return;
  layer.dataset.key = key;
  layer.replaceChildren();
  const [left, top, right, bottom] = box;
  const small = { "font-size": 10, fill: "#222" };
  for (const v of xticks) {
    const x = X(v);
    if (grid) make(layer, "line", { x1: x, x2: x, y1: top, y2: bottom, stroke: "#ddd" });
    make(layer, "line", { x1: x, x2: x, y1: bottom, y2: bottom + 4, stroke: "#222" });
    make(layer, "text", { x, y: bottom + 15, "text-anchor": "middle", ...small })
      .textContent = number(v) + (spec.x_percent ? "%" : "");
  }
  for (const v of yticks) {
    const y = Y(v);
    if (grid) make(layer, "line", { x1: left, x2: right, y1: y, y2: y, stroke: "#ddd" });
    make(layer, "line", { x1: left - 4, x2: left, y1: y, y2: y, stroke: "#222" });
    make(layer, "text", { x: left - 6, y: y + 3.5, "text-anchor": "end", ...small })
      .textContent = number(v) + (spec.y_percent ? "%" : "");
  }
  make(layer, "rect", {
    x: left, y: top, width: right - left, height: bottom - top, fill: "none", stroke: "#222",
  });
  if (spec.title) {
    make(layer, "text", { x: (left + right) / 2, y: 14, "text-anchor": "middle",
      "font-size": 12, fill: "#222" }).textContent = spec.title;
  }
  make(layer, "text", { x: (left + right) / 2, y: H - 6, "text-anchor": "middle",
    "font-size": 11, fill: "#222" }).textContent = spec.xlabel;
  const ylabel = make(layer, "text", { x: 0, y: 0, "text-anchor": "middle", "font-size": 11,
    fill: "#222", transform: `translate(12 ${(top + bottom) / 2}) rotate(-90)` });
  ylabel.textContent = spec.ylabel;
}

function lines(layers, spec) {
  // The legend right of the plot, so that it never hides a line or a marker's label.
  const longest = Math.max(6, ...spec.series.map((s) => s.name.length));
  const box = [62, spec.title ? 24 : 10, W - Math.min(220, 36 + longest * 6), H - 40];
  const [left, top, right, bottom] = box;
  const xs = spec.series.flatMap((s) => s.x).concat(spec.vlines);
  let x0 = Math.min(...xs), x1 = Math.max(...xs);
  if (!(x1 > x0)) { x0 -= 1; x1 += 1; }
  const pad = (x1 - x0) * 0.05;
  x0 -= pad; x1 += pad;
  const [y0, y1] = spec.ylim;
  const X = (v) => +(left + ((v - x0) / (x1 - x0)) * (right - left)).toFixed(1);
  const Y = (v) => +(bottom - ((v - y0) / (y1 - y0)) * (bottom - top)).toFixed(1);
  const inside = (lo, hi) => (v) => v >= lo && v <= hi;
  axes(layers["ea-axes"], spec, box, ticks(x0, x1, 6).filter(inside(x0, x1)), X,
    ticks(y0, y1, 5).filter(inside(y0, y1)), Y, true);
  keyed(layers["ea-vlines"], "line", spec.vlines.map(String)).forEach((line, i) => {
    const x = X(spec.vlines[i]);
    set(line, { x1: x, x2: x, y1: top, y2: bottom, stroke: "#595959",
      "stroke-dasharray": "4 3" });
  });
  keyed(layers["ea-lines"], "path", spec.series.map((s) => s.name)).forEach((path, i) => {
    const s = spec.series[i];
    let d = "", pen = "M";
    s.x.forEach((x, j) => {
      if (s.y[j] === null) { pen = "M"; return; }
      d += `${pen}${X(x)},${Y(s.y[j])}`;
      pen = "L";
    });
    set(path, { d, fill: "none", stroke: s.color, "stroke-width": 1.8 });
  });
  const marks = spec.markers;
  keyed(layers["ea-markers"], "circle", marks.map((m) => m.name)).forEach((dot, i) => {
    const m = marks[i];
    set(dot, { cx: X(m.x), cy: Y(m.y), r: 4.5, fill: m.color });
  });
  keyed(layers["ea-texts"], "text", marks.map((m) => m.name)).forEach((label, i) => {
    const m = marks[i];
    set(label, { x: X(m.x) + 6, y: Y(m.y) - 5, "font-size": 10, fill: "#222" });
    text(label, m.text);
  });
  const legend = layers["ea-legend"];
  const entries = [{ name: spec.legend || "", color: "" }, ...spec.series];
  keyed(legend, "g", entries.map((s) => "legend " + s.name)).forEach((entry, i) => {
    const s = entries[i];
    const y = top + 10 + i * 14;
    if (!entry.firstChild) {
      make(entry, "line", { "stroke-width": 2 });
      make(entry, "text", { "font-size": 10, fill: "#222" });
    }
    set(entry.firstChild, { x1: right + 8, x2: right + 24, y1: y - 3, y2: y - 3,
      stroke: s.color || "none" });
    set(entry.lastChild, { x: i ? right + 28 : right + 8, y });
    text(entry.lastChild, s.name);
  });
}

function bars(layers, spec) {
  const longest = Math.max(0, ...spec.bars.map((b) => b.label.length));
  const box = [Math.min(230, 36 + longest * 6), spec.title ? 24 : 10, W - 12, H - 40];
  const [left, top, right, bottom] = box;
  const most = Math.max(0, ...spec.bars.map((b) => b.value));
  const x1 = most > 0 ? most * 1.15 : 1;
  const X = (v) => +(left + (v / x1) * (right - left)).toFixed(1);
  const band = (bottom - top) / Math.max(1, spec.bars.length);
  const xticks = ticks(0, x1, 6).filter((v) => v <= x1);
  axes(layers["ea-axes"], spec, box, xticks, X, [], () => 0, false);
  const keys = spec.bars.map((b) => b.label);
  keyed(layers["ea-bars"], "rect", keys).forEach((rect, i) => {
    const b = spec.bars[i];
    set(rect, { x: left, y: +(top + band * (i + 0.1)).toFixed(1), width: X(b.value) - left,
      height: +(band * 0.8).toFixed(1), fill: spec.color });
  });
  keyed(layers["ea-texts"], "text", keys.map((k) => "value " + k)).forEach((label, i) => {
    const b = spec.bars[i];
    set(label, { x: X(b.value) + 3, y: +(top + band * (i + 0.5) + 3.5).toFixed(1),
      "font-size": 10, fill: "#222" });
    text(label, b.text);
  });
  keyed(layers["ea-legend"], "text", keys.map((k) => "label " + k)).forEach((label, i) => {
    set(label, { x: left - 5, y: +(top + band * (i + 0.5) + 3.5).toFixed(1),
      "text-anchor": "end", "font-size": 10, fill: "#222" });
    text(label, spec.bars[i].label);
  });
}

export default {
  render({ model, el }) {
    const figure = document.createElement("figure");
    figure.className = "ea-chart";
    figure.style.margin = "0";
    const svg = make(figure, "svg", {
      viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
      "font-family": "sans-serif", style: "max-width: 100%; height: auto; display: block",
    });
    const layers = Object.fromEntries(
      LAYERS.map((name) => [name, make(svg, "g", { class: name })]),
    );
    const caption = document.createElement("figcaption");
    figure.appendChild(caption);
    el.appendChild(figure);
    let pending = false;
    const draw = () => {
      pending = false;
      const spec = model.get("spec");
      set(svg, { "aria-label": model.get("alt") });
      if (spec && spec.kind === "bars") bars(layers, spec);
      else if (spec && spec.kind === "lines") lines(layers, spec);
      text(caption, model.get("caption"));
    };
    // One redraw for a change of several traits at once.
    const later = () => {
      if (!pending) { pending = true; queueMicrotask(draw); }
    };
    draw();
    for (const name of ["spec", "caption", "alt"]) model.on(`change:${name}`, later);
    return () => {
      for (const name of ["spec", "caption", "alt"]) model.off(`change:${name}`, later);
    };
  },
};
"""


class LiveChart(anywidget.AnyWidget):
    """A chart the browser draws from its spec, and redraws in place when the spec changes.

    Parameters
    ----------
    **kwargs
        Initial trait values (``spec``, ``caption``, ``alt``).

    Attributes
    ----------
    spec : dict
        What to draw (see the module's description); plain JSON values.
    caption : str
        The text under the chart.
    alt : str
        The chart's name for a screen reader: what is drawn, on which axes.
    """

    _esm = _ESM
    spec = traitlets.Dict().tag(sync=True)
    caption = traitlets.Unicode("").tag(sync=True)
    alt = traitlets.Unicode("").tag(sync=True)

    def show(self, chart: Any) -> None:
        """Draw ``chart`` (a :class:`~explicit_audit.widgets.Chart`) in place, in one message."""
        with self.hold_sync():
            self.spec = chart.spec
            self.caption = chart.caption
            self.alt = chart.alt
