"""warren's IPython result formatters for the E2B code interpreter protocol.

install(ip) adds two MIME types to an IPython shell's display formatter:

- e2b/data: a pandas DataFrame as {column: [values...]}, like
  DataFrame.to_dict(orient="list") but with every value JSON-safe.
- e2b/chart: a matplotlib Figure as chart JSON: {"type", "title",
  "elements", ...} with type line, scatter, bar, pie, box_and_whisker,
  superchart (one chart per axes) or unknown. Its numbers have at most 8
  significant digits, so float noise (36.0000005) does not reach users.

It also makes a list or dict result application/json (numpy values
included), and a PIL image that is saved or shown is displayed too, as the
reference interpreter's start-up scripts do.

A formatter that raises makes IPython print a traceback into the user's
output, so every entry point here catches everything and returns None,
which IPython treats as "no representation for this MIME type".
"""

import datetime
import decimal
import math
import os
import re
import sys

# DataFrames with more cells than this get no e2b/data: the JSON would be
# larger than the HTML table pandas already truncates, and is sent on every
# display of the frame.
MAX_DATA_CELLS = 200_000


def install(ip):
    """Register the formatters on ip; outside IPython only set matplotlib up."""
    if ip is None:
        os.environ.setdefault("MPLBACKEND", "Agg")
        return
    # ipykernel already defaults MPLBACKEND to its inline backend, so that
    # plt.show() sends the figure as image/png display data; make it
    # explicit for other front ends too, without importing matplotlib now
    # (that would slow every kernel start).
    if "IPKernelApp" in getattr(ip, "config", {}):
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    else:
        os.environ.setdefault("MPLBACKEND", "Agg")
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class DataFormatter(BaseFormatter):
        format_type = Unicode("e2b/data")
        print_method = ObjectName("_repr_e2b_data_")
        _return_type = (dict,)

        def __call__(self, obj):
            if self.enabled and _is_a(obj, "pandas.core.frame", "DataFrame"):
                return dataframe_to_data(obj)
            return super().__call__(obj)

    class ChartFormatter(BaseFormatter):
        format_type = Unicode("e2b/chart")
        print_method = ObjectName("_repr_e2b_chart_")
        _return_type = (dict,)

        # Not for_type: when matplotlib's inline backend activates, it
        # removes Figure from every formatter (select_figure_formats),
        # ours included, so the type is matched here.
        def __call__(self, obj):
            if self.enabled and _is_a(obj, "matplotlib.figure", "Figure"):
                return figure_to_chart(obj)
            return super().__call__(obj)

    class JSONFormatter(type(ip.display_formatter.formatters["application/json"])):
        def __call__(self, obj):
            if self.enabled and isinstance(obj, (list, dict)):
                try:
                    return strict_json(obj), {"expanded": True}
                except (TypeError, ValueError, RecursionError):
                    pass
            return super().__call__(obj)

    df = ip.display_formatter
    df.formatters["e2b/data"] = DataFormatter(parent=df)
    df.formatters["e2b/chart"] = ChartFormatter(parent=df)
    df.formatters["application/json"] = JSONFormatter(parent=df)
    _display_pil_images()


def strict_json(v):
    """v with numpy values made plain, for application/json; TypeError for
    anything JSON has no form for (that result then has no JSON)."""
    if v is None or isinstance(v, (bool, str, int)):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (list, tuple)):
        return [strict_json(x) for x in v]
    if isinstance(v, dict):
        return {k if isinstance(k, str) else str(strict_json(k)): strict_json(x) for k, x in v.items()}
    if type(v).__module__ == "numpy":
        return strict_json(v.tolist())  # scalars and arrays alike
    raise TypeError(f"{type(v).__name__} has no JSON form")


_pil_displaying = False


def _display_pil_images():
    """Image.save and Image.show also display the image in the output, as
    the reference interpreter does for save (show has no viewer in a
    sandbox). Only the user's own calls display: libraries save through PIL
    too (matplotlib writes every figure's PNG with it), and Pillow's own PNG
    representation calls save, hence the guard. Installing twice is a no-op."""
    try:
        from IPython.display import display
        from PIL import Image, ImageShow
    except Exception:
        return
    save = Image.Image.save
    if getattr(save, "_warren", False):
        return

    def save_and_display(self, fp, format=None, **params):
        global _pil_displaying
        if not _pil_displaying and _called_by_user():
            _pil_displaying = True
            try:
                display(self)
            except Exception:
                pass
            finally:
                _pil_displaying = False
        return save(self, fp, format, **params)

    def show(image, title=None, **options):
        display(image)
        return True

    save_and_display._warren = True
    Image.Image.save = save_and_display
    ImageShow.show = show


def _called_by_user():
    """Whether the code that called our caller is the user's, not a
    library's (installed packages, the standard library)."""
    try:
        name = sys._getframe(2).f_code.co_filename
    except Exception:
        return True
    return not (name.startswith(_LIB_DIRS) or "/dist-packages/" in name or "/site-packages/" in name)


_LIB_DIRS = tuple({os.path.dirname(os.__file__) + "/", "/usr/lib/python3/"})


def _is_a(obj, module, name):
    """isinstance(obj, module.name) without importing module."""
    try:
        return any(c.__module__ == module and c.__name__ == name for c in type(obj).__mro__)
    except Exception:
        return False


# --- e2b/data ---------------------------------------------------------------


def dataframe_to_data(frame):
    """The frame's columns as {str(name): [JSON-safe values]}, or None."""
    try:
        if frame.size > MAX_DATA_CELLS:
            return None
        return {str(k): [jsonable(v) for v in col] for k, col in frame.to_dict(orient="list").items()}
    except Exception:
        return None


def jsonable(v):
    """v as something json.dumps accepts and a JavaScript client can read."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        try:
            if v != v:  # pandas NaT
                return None
            return v.isoformat()
        except Exception:
            return str(v)
    if isinstance(v, decimal.Decimal):
        return jsonable(float(v))
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    item = getattr(v, "item", None)  # numpy scalars, pandas Timestamp...
    if callable(item) and getattr(v, "ndim", 1) == 0:
        try:
            return jsonable(item())
        except Exception:
            pass
    try:
        if v != v:  # NaN-like objects (pd.NA raises here and falls through)
            return None
    except Exception:
        pass
    return str(v)


# --- e2b/chart --------------------------------------------------------------


def figure_to_chart(fig):
    """The chart JSON of a matplotlib Figure, or None."""
    try:
        axes = [ax for ax in fig.get_axes() if ax.get_label() != "<colorbar>"]
        if not axes:
            return None
        suptitle = getattr(fig, "_suptitle", None)
        suptitle = suptitle.get_text() if suptitle is not None else ""
        if len(axes) == 1:
            chart = axes_to_chart(axes[0])
            if not chart.get("title") and suptitle:
                chart["title"] = suptitle
            return chart
        return {"type": "superchart", "title": suptitle or None,
                "elements": [axes_to_chart(ax) for ax in axes]}
    except Exception:
        return None


def axes_to_chart(ax):
    """One axes as a chart; an axes we cannot read becomes type unknown."""
    title = ax.get_title() or None
    try:
        for kind, extract in (("pie", _pie), ("box_and_whisker", _boxes), ("bar", _bars),
                              ("line", _lines), ("scatter", _scatters)):
            elements = extract(ax)
            if elements:
                return _chart(ax, kind, title, elements)
    except Exception:
        pass
    return {"type": "unknown", "title": title, "elements": []}


def _chart(ax, kind, title, elements):
    chart = {"type": kind, "title": title}
    if kind != "pie":
        xl, yl = ax.get_xlabel(), ax.get_ylabel()
        chart.update(x_label=xl or None, y_label=yl or None, x_unit=_unit(xl), y_unit=_unit(yl))
    if kind in ("line", "scatter"):
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            ticks, labels = _ticks(axis)
            chart[name + "_ticks"] = ticks
            chart[name + "_tick_labels"] = labels
            chart[name + "_scale"] = _scale(axis)
    chart["elements"] = elements
    return chart


_UNIT = re.compile(r"[(\[]([^()\[\]]+)[)\]]\s*$")


def _unit(label):
    """The unit in an axis label such as "Temperature (°C)" or "Time [s]"."""
    m = _UNIT.search(label or "")
    return m.group(1).strip() if m else None


def _scale(axis):
    if _categories(axis) is not None:
        return "categorical"
    if _is_dates(axis):
        return "datetime"
    return axis.get_scale()


def _is_dates(axis):
    import matplotlib.dates as mdates

    conv = axis.get_converter() if hasattr(axis, "get_converter") else axis.converter
    return isinstance(conv, (mdates.DateConverter, mdates.ConciseDateConverter, mdates._SwitchableDateConverter))


def _categories(axis):
    """{position: name} for a categorical axis, else None."""
    mapping = getattr(getattr(axis, "units", None), "_mapping", None)
    if not mapping:
        return None
    return {float(i): str(name) for name, i in mapping.items()}


def _value(axis, v):
    """A data coordinate of axis in the chart's terms: category name, ISO
    date or plain number."""
    v = float(v)
    if not math.isfinite(v):
        return None
    cats = _categories(axis)
    if cats is not None:
        return cats.get(v, _round(v))
    if _is_dates(axis):
        import matplotlib.dates as mdates

        return mdates.num2date(v).isoformat()
    return _round(v)


def _ticks(axis):
    """The major ticks inside the view and their labels as drawn."""
    lo, hi = sorted(axis.get_view_interval())
    eps = (hi - lo) * 1e-9
    locs = [t for t in axis.get_majorticklocs() if lo - eps <= t <= hi + eps]
    try:
        labels = [str(s) for s in axis.get_major_formatter().format_ticks(locs)]
    except Exception:
        labels = [str(t) for t in locs]
    # Tick positions are computed in floating point (0.6000000000000001);
    # 12 significant digits is what any label shows.
    values = [_value(axis, float(f"{t:.12g}")) for t in locs]
    return values, labels


def _label_at(axis, pos):
    """What the category axis says at pos: the category, else the tick label
    there, else the position itself."""
    cats = _categories(axis)
    if cats is not None and float(pos) in cats:
        return cats[float(pos)]
    locs, labels = _ticks(axis)
    raw = [t for t in axis.get_majorticklocs()]
    for loc, label in zip(raw, labels):
        if math.isclose(loc, pos, rel_tol=1e-9, abs_tol=1e-9) and label:
            return label
    return _value(axis, pos) if cats is None else str(pos)


def _round(v):
    """v as the reference interpreter's charts give numbers: 8 significant
    digits, then cut where three 0s or 9s in a row begin after the point
    (past a fraction's leading zeros), so float noise such as the
    36.0000005 of a pie wedge or the 0.30000000000000004 of 0.1 + 0.2 does
    not reach users."""
    v = float(v)
    if not math.isfinite(v):
        return None
    r = float(f"{v:.8g}")
    mantissa, e, exponent = repr(r).partition("e")
    whole, _, frac = mantissa.partition(".")
    start = 0
    if whole.lstrip("-") == "0":
        start = len(frac) - len(frac.lstrip("0"))
    cut = min((i for i in (frac.find("000", start), frac.find("999", start)) if i >= 0), default=-1)
    if cut < 0:
        return r
    return float(f"{round(float(mantissa), cut)!r}{e}{exponent}")


def _pie(ax):
    from matplotlib.patches import Wedge

    wedges = [p for p in ax.patches if isinstance(p, Wedge)]
    if not wedges or len(wedges) != len(ax.patches):
        return []
    return [{"label": w.get_label(), "angle": _round(abs(w.theta2 - w.theta1)), "radius": _round(w.r)} for w in wedges]


def _bars(ax):
    from matplotlib.container import BarContainer

    out = []
    for c in ax.containers:
        if not isinstance(c, BarContainer):
            continue
        horizontal = getattr(c, "orientation", None) == "horizontal"
        group = c.get_label()
        for rect in c.patches:
            if horizontal:
                pos, value, axis = rect.get_y() + rect.get_height() / 2, rect.get_width(), ax.yaxis
            else:
                pos, value, axis = rect.get_x() + rect.get_width() / 2, rect.get_height(), ax.xaxis
            out.append({"label": _label_at(axis, pos), "value": _round(value), "group": group})
    return out


def _lines(ax):
    out = []
    for line in ax.get_lines():
        xs, ys = line.get_xdata(orig=False), line.get_ydata(orig=False)
        if len(xs) == 0:
            continue
        points = [[_value(ax.xaxis, x), _value(ax.yaxis, y)] for x, y in zip(xs, ys)]
        out.append({"label": line.get_label(), "points": points})
    return out


def _scatters(ax):
    from matplotlib.collections import PathCollection

    out = []
    for c in ax.collections:
        if not isinstance(c, PathCollection) or len(c.get_offsets()) == 0:
            continue
        points = [[_value(ax.xaxis, x), _value(ax.yaxis, y)] for x, y in c.get_offsets()]
        out.append({"label": c.get_label(), "points": points})
    return out


# --- box plots --------------------------------------------------------------
# ax.boxplot draws each box as a closed rectangle (a 5-point Line2D, or a
# PathPatch with patch_artist=True, which seaborn uses), a median segment
# across it, two whisker segments along its centre line, two caps and a
# marker-only line of outliers. We find the rectangles and read the rest
# off the segments that line up with them.


def _boxes(ax):
    rects = [r for r in map(_rect_of_line, ax.get_lines()) if r]
    rects += [r for r in map(_rect_of_patch, ax.patches) if r]
    if not rects:
        return []
    segs = [_segment(line) for line in ax.get_lines()]
    segs = [s for s in segs if s]
    out = []
    for i, (x0, x1, y0, y1) in enumerate(rects):
        box = _read_box(segs, x0, x1, y0, y1, ax.get_lines())
        if box is None:
            continue
        vertical, stats = box
        centre = (x0 + x1) / 2 if vertical else (y0 + y1) / 2
        label = _label_at(ax.xaxis if vertical else ax.yaxis, centre)
        out.append(dict(label=str(label) if label is not None else str(i + 1), **stats))
    return out


def _close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _rect(xs, ys):
    """(x0, x1, y0, y1) if the points trace a closed axis-aligned rectangle."""
    if len(xs) != 5 or not (_close(xs[0], xs[4]) and _close(ys[0], ys[4])):
        return None
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    for x, y in zip(xs, ys):
        if not ((_close(x, x0) or _close(x, x1)) and (_close(y, y0) or _close(y, y1))):
            return None
    if _close(x0, x1) or _close(y0, y1):
        return None
    return x0, x1, y0, y1


def _rect_of_line(line):
    return _rect([float(v) for v in line.get_xdata(orig=False)], [float(v) for v in line.get_ydata(orig=False)])


def _rect_of_patch(patch):
    from matplotlib.patches import PathPatch

    if not isinstance(patch, PathPatch):
        return None
    verts = patch.get_path().vertices
    if len(verts) == 6:  # trailing CLOSEPOLY vertex
        verts = verts[:5]
    return _rect([float(v[0]) for v in verts], [float(v[1]) for v in verts])


def _segment(line):
    """((x0, y0), (x1, y1)) of a two-point line, else None."""
    xs, ys = line.get_xdata(orig=False), line.get_ydata(orig=False)
    if len(xs) != 2:
        return None
    return (float(xs[0]), float(ys[0])), (float(xs[1]), float(ys[1]))


def _read_box(segs, x0, x1, y0, y1, lines):
    """(vertical, stats) for the rectangle, from its median and whiskers."""
    for vertical in (True, False):
        # In box coordinates: a runs across the box, b along the values.
        a0, a1, b0, b1 = (x0, x1, y0, y1) if vertical else (y0, y1, x0, x1)
        centre = (a0 + a1) / 2

        def ab(p):
            return (p[0], p[1]) if vertical else (p[1], p[0])

        median = None
        ends = [b0, b1]
        for s in segs:
            (pa, pb), (qa, qb) = ab(s[0]), ab(s[1])
            if _close(pb, qb) and _close(min(pa, qa), a0) and _close(max(pa, qa), a1) and b0 - 1e-9 <= pb <= b1 + 1e-9:
                median = pb
            elif _close(pa, centre) and _close(qa, centre):
                ends += [pb, qb]
        if median is None:
            continue
        outliers = []
        for line in lines:
            if line.get_linestyle() not in ("None", "none", " ", ""):
                continue
            for p in zip(line.get_xdata(orig=False), line.get_ydata(orig=False)):
                pa, pb = ab((float(p[0]), float(p[1])))
                if _close(pa, centre):
                    outliers.append(pb)
        return vertical, {
            "min": _round(min(ends)), "first_quartile": _round(b0), "median": _round(median),
            "third_quartile": _round(b1), "max": _round(max(ends)), "outliers": [_round(o) for o in sorted(outliers)],
        }
    return None
