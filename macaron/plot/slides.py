"""The particles animation for slides, offline: one frame as PNG or SVG, the whole animation as an
animated GIF or an MP4. matplotlib draws it (Pillow writes the GIF; the MP4 needs the ffmpeg that
the imageio-ffmpeg wheel ships), in the explorer's colours and with its labels: no browser, no
network.

    png = slides.frame(traj, proj, 3)            # bytes of a 1280×720 PNG (at dpi 100; 2× at 200)
    gif = slides.movie(traj, proj, fmt="gif")
"""
from __future__ import annotations

import io

import numpy as np

from ..schemes import KINDS
from ..studies.analysis import Projection
from ..trajectory import Trajectory
from .matrix import mixing_state
from .particles import clock, kinds_of, listened_most, plane, pull_lines
from .style import (
    KIND_COLOR,
    KIND_NAME,
    MASK_COLOR,
    PARTICLE_COLOR,
    SPECIAL_COLOR,
    TRAIL_COLOR,
    axis_title,
    ink,
    short_token,
)

INCHES = (12.8, 7.2)                    # a 16:9 slide: 1280 × 720 pixels at dpi 100
PLANE = (0.065, 0.11, 0.56, 0.72)       # left, bottom, width, height of the particles, in figure fractions
MATRIX = (0.735, 0.11, 0.24, 0.72)
FONT_PT = 12
FORMATS = {"png": "image/png", "svg": "image/svg+xml", "gif": "image/gif", "mp4": "video/mp4"}


def _rgba(color: str) -> tuple:
    """A Plotly colour string (#hex or rgba(...)) for matplotlib."""
    if color.startswith("rgba"):
        r, g, b, a = (float(v) for v in color[5:-1].split(","))
        return r / 255, g / 255, b / 255, a
    return color


def _cmap(scale: list):
    from matplotlib.colors import LinearSegmentedColormap
    return LinearSegmentedColormap.from_list("mixing", [(p, c) for p, c in scale])


class _Slides:
    """The figure and the laid-out plane of one trajectory, drawn frame after frame."""

    def __init__(self, traj: Trajectory, proj: Projection, trail: int, head: int | None, labels: str, dpi: int):
        import matplotlib
        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure

        self.traj, self.head, self.dpi = traj, head, dpi
        self.fig = Figure(figsize=INCHES, dpi=dpi)
        self.mixing = any(m is not None for m in traj.mixing)
        box = PLANE if self.mixing else (PLANE[0], PLANE[1], 0.9, PLANE[3])
        # labels are placed in points (1/72 inch), so they keep their place at any dpi
        size_pt = (INCHES[0] * box[2] * 72, INCHES[1] * box[3] * 72)
        self.plane = plane(traj, _two(proj), trail=trail, labels=labels, size_px=((size_pt[0],), size_pt[1]),
                           font_px=FONT_PT, head=head)
        self.ax = self.fig.add_axes(box)
        self.mat = self.fig.add_axes(MATRIX) if self.mixing else None
        self.explained = proj.explained

    def draw(self, f: int) -> None:
        p, ax, traj = self.plane, self.ax, self.traj
        ax.clear()
        for t in list(self.fig.texts):
            t.remove()
        x = p.coords[f]
        lo = max(0, f - p.trail)
        for i in range(x.shape[0]):  # trails
            path = p.coords[lo:f + 1, i]
            ax.plot(path[:, 0], path[:, 1], color=_rgba(TRAIL_COLOR), lw=1.2, marker=".", ms=3, zorder=1)
        kind = kinds_of(traj)[f]
        if f and kind is not None:  # the move just made, in its kind's colour
            a = p.coords[f - 1]
            ax.quiver(a[:, 0], a[:, 1], x[:, 0] - a[:, 0], x[:, 1] - a[:, 1], angles="xy", scale_units="xy",
                      scale=1, color=KIND_COLOR[kind], width=0.004, headwidth=4, headlength=5, zorder=2)
        ex, ey = pull_lines(p, f, listened_most(p, f))[:2]
        ax.plot(ex, ey, ls=":", lw=1.3, color=_rgba("rgba(0,114,178,0.6)"), zorder=2)
        for tok, (px, py) in zip(p.tokens, x):
            look = dict(marker="*", s=150, c=MASK_COLOR) if tok == "[MASK]" else (
                dict(marker="s", s=50, facecolors="none", edgecolors=SPECIAL_COLOR) if tok in ("[CLS]", "[SEP]")
                else dict(marker="o", s=55, c=PARTICLE_COLOR, edgecolors="white", linewidths=0.8))
            ax.scatter([px], [py], zorder=3, **look)
        for (px, py), lab in zip(x, p.labels[f] if p.labels else []):
            if lab is None:
                continue
            arrow = dict(arrowstyle="-", color=_rgba("rgba(90,90,90,0.6)"), lw=0.8, shrinkA=0, shrinkB=4)
            ax.annotate(lab.text, (px, py), xytext=(lab.dx, lab.dy), textcoords="offset points", ha="center",
                        va="center", fontsize=FONT_PT, zorder=4, arrowprops=arrow if lab.leader else None)
        ax.set_xlim(p.ranges[0])
        ax.set_ylim(p.ranges[1])
        ax.set_xlabel(axis_title(0, self.explained), fontsize=FONT_PT, color="#555")
        ax.set_ylabel(axis_title(1, self.explained), fontsize=FONT_PT, color="#555")
        ax.grid(color="#eee")
        for s in ax.spines.values():
            s.set_visible(False)
        handles = [ax.plot([], [], color=KIND_COLOR[k], lw=3, label=KIND_NAME[k])[0]
                   for k in KINDS if k in {s.kind for s in traj.steps}]
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, 1.09), ncol=len(handles), frameon=False,
                  fontsize=FONT_PT - 1)
        self._title(f)
        if self.mat is not None:
            self._matrix(f)

    def _title(self, f: int) -> None:
        """The sub-step in words, its kind in its colour (two texts side by side)."""
        step = self.traj.steps[f - 1] if f else None
        count = f"sub-step {f} of {self.traj.n_steps}"
        if step is None:
            parts = [("embedding", "#222"), (f"  ·  t = 0, before layer 1  ·  {count}", "#444")]
        else:
            layer, what = step.label.split(" · ", 1)
            parts = [(f"{layer} · ", "#222"), (what, ink(KIND_COLOR[step.kind])),
                     (f"  ·  {clock(self.traj, step.time, system=False)}  ·  {count}", "#444")]
        x = PLANE[0]
        renderer = self.fig.canvas.get_renderer()
        for text, color in parts:
            t = self.fig.text(x, 0.935, text, fontsize=FONT_PT + 5, color=color, fontweight="bold" if color != "#444"
                              else "normal", va="baseline")
            x += t.get_window_extent(renderer).width / self.fig.bbox.width

    def _matrix(self, f: int) -> None:
        z, scale, caption, rows, cols = mixing_state(self.traj, f, self.head)
        m = self.mat
        m.clear()
        m.imshow(z, cmap=_cmap(scale), vmin=0, vmax=100, aspect="auto", interpolation="nearest")
        names = [short_token(t) for t in self.traj.tokens]
        for which, set_ticks, turn in ((rows, m.set_yticks, 0), (cols, m.set_xticks, 90)):
            step = max(1, int(np.ceil(len(which) / 24)))  # at most ~24 names fit
            set_ticks(range(0, len(which), step), [names[i] for i in which[::step]], fontsize=8, rotation=turn)
        m.set_title(f"who pulls whom (row listens to column)\n{caption}", fontsize=FONT_PT - 1)
        m.tick_params(length=0)

    def image(self, fmt: str) -> bytes:
        import matplotlib

        buf = io.BytesIO()
        with matplotlib.rc_context({"svg.fonttype": "none"}):  # SVG text stays text: editable on a slide
            self.fig.savefig(buf, format=fmt, dpi=self.dpi, facecolor="white")
        return buf.getvalue()

    def rgb(self) -> np.ndarray:
        self.fig.canvas.draw()
        return np.asarray(self.fig.canvas.buffer_rgba())[..., :3].copy()


def can_write_mp4() -> bool:
    """Whether an MP4 can be written here (the imageio-ffmpeg wheel, which ships ffmpeg, is installed)."""
    import importlib.util
    return importlib.util.find_spec("imageio_ffmpeg") is not None


def _two(proj: Projection) -> Projection:
    return Projection(np.asarray(proj.coords)[..., :2], proj.explained[:2], proj.components[:2], proj.mean,
                      proj.keep)


def _canvas(slides: _Slides):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    FigureCanvasAgg(slides.fig)
    return slides


def frame(traj: Trajectory, proj: Projection, f: int = 0, *, fmt: str = "png", trail: int = 4,
          head: int | None = None, labels: str = "auto", dpi: int = 200) -> bytes:
    """State f of the particles animation as a 16:9 slide (PNG, 2560 × 1440 at the default dpi; or SVG)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"a frame is a png or an svg, not {fmt!r}")
    s = _canvas(_Slides(traj, proj, trail, head, labels, dpi))
    s.draw(int(np.clip(f, 0, len(traj.labels) - 1)))
    return s.image(fmt)


def movie(traj: Trajectory, proj: Projection, *, fmt: str = "gif", trail: int = 4, head: int | None = None,
          labels: str = "auto", seconds_per_frame: float = 0.8, dpi: int = 100) -> bytes:
    """The whole animation, one frame per sub-step, as an animated GIF (Pillow) or an MP4 (H.264 from
    the ffmpeg of the imageio-ffmpeg wheel; ImportError without it). The last frame is held longer."""
    s = _canvas(_Slides(traj, proj, trail, head, labels, dpi))
    images = []
    for f in range(len(traj.labels)):
        s.draw(f)
        images.append(s.rgb())
    if fmt == "gif":
        from PIL import Image

        frames = [Image.fromarray(a).quantize(colors=128, method=Image.Quantize.MEDIANCUT) for a in images]
        durations = [int(1000 * seconds_per_frame)] * (len(frames) - 1) + [int(3000 * seconds_per_frame)]
        buf = io.BytesIO()
        frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0)
        return buf.getvalue()
    if fmt == "mp4":
        import tempfile
        from pathlib import Path

        import imageio_ffmpeg

        h, w = images[0].shape[:2]
        fps = 1.0 / seconds_per_frame
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "particles.mp4"
            writer = imageio_ffmpeg.write_frames(str(path), (w, h), fps=fps, codec="libx264", pix_fmt_out="yuv420p",
                                                 macro_block_size=8, ffmpeg_log_level="error")
            writer.send(None)
            for a in images + [images[-1]] * 2:  # hold the end
                writer.send(np.ascontiguousarray(a))
            writer.close()
            return path.read_bytes()
    raise ValueError(f"a movie is a gif or an mp4, not {fmt!r}")
