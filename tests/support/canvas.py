"""What a figure must look like, measured on its drawn artists (display pixels): every text on
the canvas (as saved), no two texts overlapping, value labels inside their axes (or wholly beside them), bars ending
short of the axes frame, markers off every text. `problems(fig)` lists what is wrong;
`capture()` collects each figure as a kind's plot function saves it."""

from __future__ import annotations

import contextlib
import itertools

TOUCH = 1.5  # pixels: closer than this is touching


def _overlap(a, b, slack: float = 1.0) -> bool:
    dx = min(a.x1, b.x1) - max(a.x0, b.x0)
    dy = min(a.y1, b.y1) - max(a.y0, b.y0)
    return dx > slack and dy > slack


def _inside(box, frame, slack: float = 0.5) -> bool:
    return (
        box.x0 >= frame.x0 - slack
        and box.y0 >= frame.y0 - slack
        and box.x1 <= frame.x1 + slack
        and box.y1 <= frame.y1 + slack
    )


def _legend_artists(fig) -> set[int]:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return {id(a) for legend in legends for a in legend.findobj()}


def _undrawn_tick_labels(fig) -> set[int]:
    """Tick labels matplotlib keeps but does not draw: their tick lies outside the axis' view."""
    out: set[int] = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            eps = (hi - lo) * 1e-9
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                loc = tick.get_loc()
                if loc is None or not lo - eps <= loc <= hi + eps:
                    out.update({id(tick.label1), id(tick.label2)})
    return out


def problems(fig, tight: bool = False) -> list[str]:
    """Everything wrong with `fig` as saved (`tight`: saved with bbox_inches="tight")."""
    import matplotlib.text
    from matplotlib.collections import PathCollection
    from matplotlib.container import BarContainer
    from matplotlib.lines import Line2D
    from matplotlib.transforms import Bbox

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    if tight:  # what savefig keeps: the tight box padded by 0.1 inch
        box = fig.get_tightbbox(renderer).padded(0.1)
        canvas = Bbox.from_extents(box.x0 * fig.dpi, box.y0 * fig.dpi, box.x1 * fig.dpi, box.y1 * fig.dpi)
    in_legend = _legend_artists(fig)
    undrawn = _undrawn_tick_labels(fig)
    texts = [
        (t, t.get_window_extent(renderer))
        for t in fig.findobj(matplotlib.text.Text)
        if t.get_visible()
        and t.get_text().strip()
        and (t.axes is None or t.axes.get_visible())
        and id(t) not in undrawn
    ]
    out = []
    for t, box in texts:
        if not _inside(box, canvas):
            out.append(f"text {t.get_text()!r} is clipped by the canvas edge")
    for (a, box_a), (b, box_b) in itertools.combinations(texts, 2):
        if _overlap(box_a, box_b):
            out.append(f"texts {a.get_text()!r} and {b.get_text()!r} overlap")
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        frame = ax.get_window_extent(renderer)
        for t in ax.texts:  # value labels, annotations, side labels: inside the plotting area or beside it
            if t.get_visible() and t.get_text().strip() and id(t) not in in_legend:
                box = t.get_window_extent(renderer)
                beside = (
                    box.x0 >= frame.x1 + TOUCH
                    or box.x1 <= frame.x0 - TOUCH
                    or box.y0 >= frame.y1 + TOUCH
                    or box.y1 <= frame.y0 - TOUCH
                )
                if not _inside(box, frame, slack=-TOUCH) and not beside:
                    out.append(f"label {t.get_text()!r} crosses or touches the frame of {ax.get_title()!r}")
        for container in ax.containers:
            if not isinstance(container, BarContainer):
                continue
            horizontal = container.orientation == "horizontal"
            for bar in container.patches:
                if bar.get_width() == 0 or bar.get_height() == 0:
                    continue
                box = bar.get_window_extent(renderer)
                far = box.x1 if horizontal else box.y1
                edge = frame.x1 if horizontal else frame.y1
                if far > edge - TOUCH:
                    out.append(f"a bar touches the frame of {ax.get_title()!r}")
        markers = []
        for line in ax.get_lines():
            if isinstance(line, Line2D) and line.get_marker() not in (None, "None", "", " ") and line.get_markersize():
                half = line.get_markersize() * fig.dpi / 72 / 2
                xy = line.get_transform().transform(line.get_xydata())
                markers += [(x - half, y - half, x + half, y + half) for x, y in xy]
        for coll in ax.collections:
            if isinstance(coll, PathCollection) and id(coll) not in in_legend:
                sizes = coll.get_sizes()
                xy = coll.get_offset_transform().transform(coll.get_offsets())
                for i, (x, y) in enumerate(xy):
                    half = (sizes[i % len(sizes)] ** 0.5) * fig.dpi / 72 / 2 if len(sizes) else 3
                    markers.append((x - half, y - half, x + half, y + half))
        for x0, y0, x1, y1 in markers:
            marker = Bbox.from_extents(x0, y0, x1, y1)
            for t, box in texts:
                if id(t) not in in_legend and _overlap(marker, box, slack=0.0):
                    out.append(f"a marker covers the text {t.get_text()!r}")
    return sorted(set(out))


@contextlib.contextmanager
def capture():
    """Each figure saved inside the block, with whether it was saved tight: [(fig, tight, problems)]."""
    from matplotlib.figure import Figure

    seen: list = []
    real = Figure.savefig

    def savefig(self, *args, **kwargs):
        tight = kwargs.get("bbox_inches") == "tight"
        seen.append((self, tight, problems(self, tight)))
        return real(self, *args, **kwargs)

    Figure.savefig = savefig
    try:
        yield seen
    finally:
        Figure.savefig = real
