"""A small numpy rasteriser with pygame's drawing conventions, for the frames of
:mod:`cartfuse.render`: integer pixel coordinates with ``y`` growing downwards as
``pygame.gfxdraw`` draws them, vertices truncated to integers as gfxdraw does, and
:meth:`Canvas.frame` flipping the picture upside down as gymnasium's renderers do before
they read the pixels. Shapes are drawn without anti-aliasing."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Color = tuple[int, int, int]
Point = tuple[float, float]


class Canvas:
    """``width`` x ``height`` RGB pixels, white."""

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.pixels = np.full((height, width, 3), 255, dtype=np.uint8)

    def _box(
        self, x0: float, y0: float, x1: float, y1: float
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], tuple[slice, slice]] | None:
        """Pixel coordinates of the box ``[x0, x1] x [y0, y1]`` clipped to the canvas, as
        broadcastable grids, and the slices that select it; ``None`` when off the canvas."""
        left, right = max(int(np.floor(x0)), 0), min(int(np.ceil(x1)), self.width - 1)
        top, bottom = max(int(np.floor(y0)), 0), min(int(np.ceil(y1)), self.height - 1)
        if left > right or top > bottom:
            return None
        xs = np.arange(left, right + 1, dtype=np.float64)[None, :]
        ys = np.arange(top, bottom + 1, dtype=np.float64)[:, None]
        return xs, ys, (slice(top, bottom + 1), slice(left, right + 1))

    def polygon(self, points: Sequence[Point], color: Color) -> None:
        """Fills the convex polygon through ``points`` (pixels on its edges included)."""
        corners = [(float(int(x)), float(int(y))) for x, y in points]
        xs_all = [x for x, _ in corners]
        ys_all = [y for _, y in corners]
        box = self._box(min(xs_all), min(ys_all), max(xs_all), max(ys_all))
        if box is None:
            return
        xs, ys, where = box
        area = sum(
            x0 * y1 - x1 * y0
            for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True)
        )
        sign = 1.0 if area >= 0 else -1.0
        inside = np.ones((ys.shape[0], xs.shape[1]), dtype=bool)
        for (x0, y0), (x1, y1) in zip(corners, corners[1:] + corners[:1], strict=True):
            cross = (x1 - x0) * (ys - y0) - (y1 - y0) * (xs - x0)
            inside &= sign * cross >= -1e-9
        self.pixels[where][inside] = color

    def circle(self, x: int, y: int, radius: int, color: Color) -> None:
        """Fills the disc of ``radius`` pixels around ``(x, y)``, as ``gfxdraw.filled_circle``."""
        box = self._box(x - radius, y - radius, x + radius, y + radius)
        if box is None:
            return
        xs, ys, where = box
        inside = (xs - x) ** 2 + (ys - y) ** 2 <= radius * radius + radius
        self.pixels[where][inside] = color

    def line(self, start: Point, end: Point, color: Color) -> None:
        """A one-pixel line from ``start`` to ``end``, both ends included."""
        (x0, y0), (x1, y1) = start, end
        steps = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        t = np.linspace(0.0, 1.0, steps + 1)
        xs = np.rint(x0 + (x1 - x0) * t).astype(np.int64)
        ys = np.rint(y0 + (y1 - y0) * t).astype(np.int64)
        keep = (xs >= 0) & (xs < self.width) & (ys >= 0) & (ys < self.height)
        self.pixels[ys[keep], xs[keep]] = color

    def polyline(self, points: Sequence[Point], color: Color) -> None:
        """Lines through consecutive ``points``."""
        for start, end in itertools.pairwise(points):
            self.line(start, end, color)

    def mask(self, mask: npt.NDArray[np.bool_], left: int, top: int, color: Color) -> None:
        """Paints ``color`` where ``mask`` is set, its top-left pixel at ``(left, top)``."""
        height, width = mask.shape
        x0, y0 = max(left, 0), max(top, 0)
        x1, y1 = min(left + width, self.width), min(top + height, self.height)
        if x0 >= x1 or y0 >= y1:
            return
        part = mask[y0 - top : y1 - top, x0 - left : x1 - left]
        self.pixels[y0:y1, x0:x1][part] = color

    def frame(self) -> npt.NDArray[np.uint8]:
        """The picture upside down (gymnasium's renderers flip before reading), as a fresh
        ``(height, width, 3)`` uint8 array."""
        return np.ascontiguousarray(self.pixels[::-1])
