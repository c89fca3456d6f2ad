"""The one style of every figure: what each colour means, fonts, figure assembly, play controls and
label placement.

One meaning per colour, on every page, colour-blind safe (Okabe–Ito):
- the two kinds of sub-step: blue = diffusion (attention), vermillion = convection (FFN);
- the schemes, each with its own colour, marker and dash: green = Lie–Trotter (Transformer layer),
  reddish purple = Strang–Marchuk (Macaron layer), sky blue = unsplit, orange and yellow the two
  rarely shown variants; black = the exact flow;
- models A and B: a solid line with dots and a dashed line with diamonds, in their scheme's colour
  (lab.model_colors; greys when both run one scheme).
Particles themselves are dark grey: colour on a particles plot always means a kind of sub-step.
"""
from __future__ import annotations

import base64
import copy
import functools
import html
import json
from typing import NamedTuple, Sequence

import numpy as np
import plotly.graph_objects as go

from ..schemes import ALIASES, CONVECTION, CROSS, DIFFUSION, FULL, OPERATOR_NAME, SCHEMES, get_scheme
from ..studies.analysis import MASK_TOKEN, SPECIAL_TOKENS

FONT = dict(family="Inter, Source Sans Pro, Helvetica, Arial, sans-serif", size=14, color="#222")
PLAY_MS = 650  # one frame of an animation: time to read the title before the next sub-step


# ---- schemes ---------------------------------------------------------------------------------------
class SchemeStyle(NamedTuple):
    color: str
    symbol: str    # open symbols: the exact dot of the toy lab stays visible inside
    dash: str


SCHEME_STYLE = {
    "lie-trotter": SchemeStyle("#009E73", "diamond-open", "solid"),
    "strang": SchemeStyle("#CC79A7", "square-open", "solid"),
    # Okabe–Ito's eight colours are spent (two kinds, black, five schemes): Paul Tol's muted wine, dark where
    # Strang's reddish purple is light, for the control that is raced against Strang
    "lie-trotter-halves": SchemeStyle("#882255", "hexagon-open", "longdash"),
    "unsplit": SchemeStyle("#56B4E9", "x-thin-open", "dot"),
    "lie-trotter-gf": SchemeStyle("#E69F00", "triangle-up-open", "dash"),
    "strang-fgf": SchemeStyle("#F0E442", "pentagon-open", "dashdot"),
}
EXACT_COLOR = "#000000"               # the exact flow, in every figure
GUIDE_COLOR = "#767676"  # the lightest grey of 4.5 : 1 on white: its labels are text
SLOT_COLORS = ("#444444", "#AAAAAA")  # two models of one scheme: greys, so no scheme colour is borrowed


def scheme_style(name: str) -> SchemeStyle:
    """The look of a scheme (or of a model's alias for it); unknown schemes are grey."""
    return SCHEME_STYLE.get(ALIASES.get(name, name), SchemeStyle("#999999", "circle-open", "solid"))


def scheme_name(name: str) -> str:
    """A scheme in a legend, the same words on every page: 'Lie–Trotter (Transformer layer)'."""
    s = SCHEMES.get(ALIASES.get(name, name))
    return f"{s.short} ({s.layer})" if s else name


# ---- kinds of sub-step -----------------------------------------------------------------------------
DIFFUSION_COLOR = "#0072B2"   # Okabe–Ito blue: attention, each particle moves because of the others
CONVECTION_COLOR = "#D55E00"  # Okabe–Ito vermillion: FFN, each particle moves on its own
CROSS_COLOR = "#AA4499"       # Paul Tol's purple: cross-attention, the target moving in the source's field (5.3 : 1)
# a sub-step running both at once is the unsplit scheme's one step: its colour
KIND_COLOR = {DIFFUSION: DIFFUSION_COLOR, CONVECTION: CONVECTION_COLOR, FULL: SCHEME_STYLE["unsplit"].color,
              CROSS: CROSS_COLOR}
KIND_NAME = OPERATOR_NAME     # 'diffusion (attention)', 'convection (FFN)': legends and titles alike


def _rgb(color: str) -> np.ndarray:  # '#rrggbb' -> [r, g, b] in 0–255
    return np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], float)


def _luminance(rgb) -> float:
    """WCAG 2.1's relative luminance of '#rrggbb' or of its [r, g, b] in 0–255."""
    c = (_rgb(rgb) if isinstance(rgb, str) else np.asarray(rgb, float)) / 255
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ [0.2126, 0.7152, 0.0722])


def contrast(a, b="#FFFFFF") -> float:
    """WCAG 2.1's contrast ratio of two colours (by default, of one on white)."""
    light, dark = sorted([_luminance(a), _luminance(b)], reverse=True)
    return (light + 0.05) / (dark + 0.05)


def text_on(color: str) -> str:
    """White or black, whichever reads better on `color` (a bar's per cent written inside it)."""
    return "#FFFFFF" if contrast(color) >= contrast(color, "#000000") else "#000000"


@functools.cache
def ink(color: str, least: float = 4.5) -> str:
    """`color` for text on white: as it is where it has `least` : 1 (WCAG AA for text), else darkened, its hue
    kept, until it has (vermillion #D55E00 is 3.9 : 1, sky blue 2.3 : 1). Lines and markers keep the colour."""
    rgb = _rgb(color)
    while contrast(rgb.astype(int)) < least:
        rgb *= 0.97
    return "#" + "".join(f"{int(v):02X}" for v in rgb)


# ---- models A and B --------------------------------------------------------------------------------
class ModelLook(NamedTuple):
    dash: str
    symbol: str


MODEL_LOOK = (ModelLook("solid", "circle"), ModelLook("dash", "diamond"))


# ---- particles ---------------------------------------------------------------------------------------
PARTICLE_COLOR = "#3A3A3A"
SPECIAL_COLOR = "#8A8A8A"
MASK_COLOR = "#000000"
TRAIL_COLOR = "rgba(110,110,110,0.45)"


# Two particle systems (a translation): the target's particles, the ones that move while the decoder runs, dark
# diamonds; the source's lighter circles. Told apart by shape and lightness, not hue: every hue here means a kind.
SYSTEM_LOOK = {"source": ("#7A7A7A", "circle", "#4D4D4D"), "target": ("#111111", "diamond", "#111111")}  # marker,
#                                                                                        symbol, label colour


# How SentencePiece (▁) and byte-level BPE (Ġ) mark a word's first piece: on a particle's label the word reads better
# without it (a piece without it continues the word before; WordPiece marks those instead, ##).
WORD_START = ("▁", "Ġ")


def display_token(tok: str, i: int | None = None) -> str:
    """A token as a particle's label: its word-start mark left out, cut to 19 characters; with its index i where
    given (names that stay unique)."""
    tok = tok[1:] if tok[:1] in WORD_START and len(tok) > 1 else tok
    tok = tok[:18] + "…" if len(tok) > 19 else tok
    return tok if i is None else f"{i}·{tok}"


def named(tokens: Sequence[str], word: str | None) -> int | None:
    """The first particle whose label reads `word` (display_token: "the" finds "▁the" and "Ġthe"), or None: how the
    app's URL and the lesson name the particle in focus, whatever the tokenizer marks words with."""
    return next((i for i, t in enumerate(tokens) if word and display_token(t) == word), None)


def short_token(tok: str) -> str:
    """A token as a matrix names its row or column: its first 9 characters."""
    return display_token(tok)[:9]


def token_style(tokens: Sequence[str], three_d: bool = False) -> tuple[list[str], list[str]]:
    """(colour, marker symbol) per particle: words dark grey dots, [CLS]/[SEP] grey open squares,
    [MASK] a black star. Colour is kept for meaning; labels tell the particles apart."""
    colors, marks = [], []
    for tok in tokens:
        if tok == MASK_TOKEN:
            colors.append(MASK_COLOR)
            marks.append("diamond" if three_d else "star")
        elif tok in SPECIAL_TOKENS:
            colors.append(SPECIAL_COLOR)
            marks.append("square-open")
        else:
            colors.append(PARTICLE_COLOR)
            marks.append("circle")
    return colors, marks


def label_priority(tokens: Sequence[str]) -> list[int]:
    """Order in which particles earn a label: [MASK] first, then words, then pieces, then specials."""
    def rank(i):
        t = tokens[i]
        if t == MASK_TOKEN:
            return (0, i)
        if t in SPECIAL_TOKENS:
            return (3, i)
        if t.startswith("##") or not any(c.isalnum() for c in t):
            return (2, i)
        return (1, i)
    return sorted(range(len(tokens)), key=rank)


# ---- figure assembly -----------------------------------------------------------------------------
_TEMPLATE: list[dict] = []


def template() -> dict:
    """plotly_white as a dict (figures here skip validation, which would expand a template name)."""
    if not _TEMPLATE:
        import plotly.io as pio
        _TEMPLATE.append(pio.templates["plotly_white"].to_plotly_json())
    return _TEMPLATE[0]


def esc(text) -> str:
    """Plotly renders a subset of HTML in text: escape tokens so '<b>' shows as typed."""
    return html.escape(str(text), quote=False)


class AnimatedFigure(go.Figure):
    """A go.Figure whose animation frames stay plain dicts.

    Plotly validates every property of every frame when a Figure is built (about half a second
    for 37 frames × 4 traces, on every new sentence); these frames are made by this package and
    validated in the tests instead. `to_dict()` (what Streamlit, `to_json` and `to_html` use)
    includes them; `raw_frames` holds them."""

    def __init__(self, spec: dict, frames: list[dict]):
        super().__init__(spec, _validate=False)
        self.__dict__["raw_frames"] = list(frames)

    def to_dict(self) -> dict:
        # what Plotly's to_dict makes (arrays as compact typed arrays), by one copying walk instead of
        # a deepcopy of everything and then a second walk: a tenth of a Particles page run
        return {"data": typed_arrays(self._data), "layout": typed_arrays(self._layout),
                "frames": typed_arrays(self.raw_frames)}

    def to_plotly_json(self) -> dict:
        return self.to_dict()


@functools.cache
def _short_types() -> dict:
    from _plotly_utils.utils import plotlyjsShortTypes

    return {np.dtype(name): short for name, short in plotlyjsShortTypes.items()}  # str(dtype) costs 10 µs


def typed_arrays(obj):
    """A copy of `obj` with every numpy array as Plotly's typed-array spec (base64), as Plotly's
    convert_to_base64 writes it, without its per-array dataframe checks (which took a fifth of a
    Compare page run for the frames of one figure)."""
    from _plotly_utils.utils import to_typed_array_spec

    if isinstance(obj, dict):
        return {k: v if k in ("geojson", "layer", "layers", "range") else typed_arrays(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [typed_arrays(v) for v in obj]
    if not isinstance(obj, np.ndarray):
        return obj
    short = _short_types().get(obj.dtype)
    if short is None or not obj.size:
        return to_typed_array_spec(obj)
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(obj)).decode("ascii")}
    return spec if obj.ndim == 1 else dict(spec, shape=str(obj.shape)[1:-1])


def figure(data, layout, frames=None) -> go.Figure:
    """Build from plain dicts without Plotly's per-property validation (the tests validate)."""
    spec = {"data": data, "layout": layout}
    if frames is not None:
        return AnimatedFigure(spec, frames)
    return go.Figure(spec, _validate=False)


def subplots_layout(rows: int, cols: int, **options) -> dict:
    """make_subplots(rows, cols, **options).layout as a new plain dict: Plotly builds and validates
    each shape once (10 ms, on every new sentence otherwise)."""
    return copy.deepcopy(_subplots_layout(rows, cols, json.dumps(options, sort_keys=True)))


@functools.lru_cache(maxsize=64)
def _subplots_layout(rows: int, cols: int, options: str) -> dict:
    from plotly.subplots import make_subplots

    return make_subplots(rows=rows, cols=cols, **json.loads(options)).layout.to_plotly_json()


def base_layout(height: int, **extra) -> dict:
    layout = dict(template=template(), font=FONT, height=height, margin=dict(l=60, r=20, t=60, b=50),
                  hoverlabel=dict(font_size=14), legend=dict(orientation="h", yanchor="bottom", y=1.0,
                                                              xanchor="right", x=1.0))
    layout.update(extra)
    return layout


def axis_title(i: int, explained) -> str:
    share = float(explained[i]) if i < len(explained) else 0.0
    return f"PC{i + 1} ({share:.0%} of variance)"


def padded_range(values, pad: float = 0.08) -> list[float]:
    """A fixed axis range around all values, with a margin (never a zero-width range)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return [-1.0, 1.0]
    lo, hi = float(v.min()), float(v.max())
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    return [lo - pad * span, hi + pad * span]


def equal_units(xrange, yrange, width_px: float, height_px: float) -> tuple[list[float], list[float]]:
    """The smallest ranges holding `xrange` and `yrange` (same centres) in which one unit of x and one of y are
    as many pixels long on a plot width_px × height_px: a plane of states drawn at true aspect, where a round
    cloud looks round and a move is as long on screen whichever way it points."""
    (x0, x1), (y0, y1) = xrange, yrange
    unit = min(width_px / max(x1 - x0, 1e-12), height_px / max(y1 - y0, 1e-12))  # pixels per unit
    cx, cy, hx, hy = (x0 + x1) / 2, (y0 + y1) / 2, width_px / unit / 2, height_px / unit / 2
    return [cx - hx, cx + hx], [cy - hy, cy + hy]


def true_aspect(x_axis: str) -> dict:
    """A y axis's settings that keep one unit as long as one unit of `x_axis` ('x', 'x2', …) however wide the
    plot is drawn: the browser widens the x range, around its centre, on a wider screen."""
    return dict(scaleanchor=x_axis, scaleratio=1, constrain="range")


def play_controls(frame_names: list[str], slider_labels: list[str], start: int, plot_height_px: float,
                  redraw: bool = True, ms: int = PLAY_MS, font_size: int = 14) -> dict:
    """Play/pause buttons and a frame slider under the plot, placed in pixels below the x-axis title.

    `redraw`: every frame redraws titles and annotations (what changes besides the traces: the
    sub-step's name, the step counter), during Play and when the slider is dragged. Without it
    Plotly moves the traces only and the drawn title stays that of the first frame."""
    below = -1.0 / max(plot_height_px, 1.0)  # paper coordinates of one pixel under the plot area
    frame_args = dict(frame=dict(duration=0, redraw=redraw), mode="immediate", transition=dict(duration=0))
    play = dict(label="▶ Play", method="animate",
                args=[None, dict(frame=dict(duration=ms, redraw=redraw), fromcurrent=True,
                                 transition=dict(duration=0), mode="immediate")])
    pause = dict(label="❚❚ Pause", method="animate", args=[[None], frame_args])
    return dict(
        updatemenus=[dict(type="buttons", direction="left", showactive=False, x=0.0, xanchor="left", y=62 * below,
                          yanchor="top", pad=dict(t=0, r=10), buttons=[play, pause], font=dict(size=font_size))],
        sliders=[dict(active=start, x=0.3, len=0.7, y=52 * below, yanchor="top", pad=dict(t=0, b=0),
                      currentvalue=dict(visible=False), ticklen=4, font=dict(size=font_size - 2),
                      steps=[dict(label=lab, method="animate", args=[[name], frame_args])
                             for name, lab in zip(frame_names, slider_labels)])],
    )


# ---- label placement -----------------------------------------------------------------------------
NEAR = ("top center", "bottom center", "middle right", "middle left", "top right", "top left", "bottom right",
        "bottom left")  # Plotly's text positions, in the order label_offsets tries them


class Label(NamedTuple):
    """A particle's label: its text and where its centre sits, in pixels from the dot (y up) on the
    narrowest plot. Beside the dot (`position`, one of NEAR) it keeps that offset on a wider plot;
    further out it is pinned to the data, with a thin `leader` line back to its dot."""

    text: str
    dx: float
    dy: float
    leader: bool

    @property
    def position(self) -> str:
        """Plotly's textposition for a label beside its dot ("middle center" for one on a leader)."""
        if self.leader:
            return "middle center"
        v = "top" if self.dy > 0.5 else "bottom" if self.dy < -0.5 else "middle"
        h = "right" if self.dx > 0.5 else "left" if self.dx < -0.5 else "center"
        return f"{v} {h}"


DOT_PX = 7.0                                      # a particle's radius on screen, with a margin
RINGS_PX = (0, 10, 20, 32, 46, 62, 80, 100, 125, 155, 190, 230, 280)  # how far from its dot a label may move
_ANGLES = np.deg2rad(np.arange(0, 360, 15))


def text_size(text: str, font_px: float) -> tuple[float, float]:
    """(width, height) in pixels of one line of text (average sans-serif glyph ≈ 0.56 em)."""
    return 0.56 * font_px * max(len(text), 1) + 4, 1.3 * font_px


@functools.lru_cache(maxsize=512)
def label_offsets(w: float, h: float) -> np.ndarray:
    """[K, 2] centre offsets of a w × h label around a dot, nearest first: the four sides and
    corners, then rings further out (those get a leader line)."""
    ex, ey = DOT_PX + w / 2, DOT_PX + h / 2
    near = np.array([(0, ey), (0, -ey), (ex, 0), (-ex, 0), (ex, ey), (-ex, ey), (ex, -ey), (-ex, -ey)])
    r = np.asarray(RINGS_PX[1:], dtype=np.float64)[:, None]
    rings = np.stack([((ex + r) * np.cos(_ANGLES)).ravel(), ((ey + r) * np.sin(_ANGLES)).ravel()], 1)
    out = np.vstack([near, rings])
    out.flags.writeable = False  # cached: shared by every label of this size
    return out


def _overlap_matrix(boxes: Sequence[np.ndarray], others: Sequence[np.ndarray], pad: float) -> np.ndarray:
    """[K, P]: whether each candidate box overlaps each of `others` at any width between the narrowest
    and the widest. Boxes are (x0, x1, y0, y1) arrays [K, 4] and [P, 4], one per width (one or two).

    Along x, with g = o.x1 − b.x0 + pad, they overlap while 0 < g < C (C = both widths + 2 pad);
    g moves linearly with the width and C stays, so they overlap somewhere between two widths iff
    g's range there meets (0, C). y does not move."""
    b0, o0 = boxes[0][:, None, :], others[0][None, :, :]
    g = [o[None, :, 1] - b[:, None, 0] + pad for b, o in zip(boxes, others)]
    c = (b0[..., 1] - b0[..., 0]) + (o0[..., 1] - o0[..., 0]) + 2 * pad
    hit = (b0[..., 2] < o0[..., 3] + pad) & (o0[..., 2] - pad < b0[..., 3])
    hit &= (np.maximum(*g) if len(g) > 1 else g[0]) > 0
    hit &= (np.minimum(*g) if len(g) > 1 else g[0]) < c
    return hit


def _overlaps(boxes: Sequence[np.ndarray], others: Sequence[np.ndarray], pad: float) -> np.ndarray:
    """[K]: how many of `others` each candidate box overlaps (see _overlap_matrix)."""
    if len(others[0]) == 0:
        return np.zeros(len(boxes[0]), int)
    return _overlap_matrix(boxes, others, pad).sum(1)


def place_labels(xy: np.ndarray, texts: Sequence[str], xrange, yrange, width_px: float | tuple[float, float] = 560,
                 height_px: float = 360, font_px: float = 14, order: Sequence[int] | None = None,
                 force: bool = True, prefer: Sequence[Label | None] | None = None) -> list[Label | None]:
    """Labels that overlap neither each other nor any particle, inside the plot.

    Each particle, in `order`, takes the first free place around its dot: beside it, else further
    out on a leader line, else shortened (to 5, then 2 letters and …) the same again. `prefer`
    (e.g. the previous frame's labels) is tried first, so labels stay put while particles move. A
    label with no free place is dropped, or with `force` put where it overlaps least.

    `width_px` may be a range (narrowest, widest): the plot stretches with the screen. A label beside
    its dot keeps its offset in pixels, one on a leader line keeps its place in the data; either way
    its box moves linearly with the width, so a place free at both widths is free at every width
    between (see _overlaps)."""
    xy = np.asarray(xy, dtype=np.float64)[:, :2]
    n = len(texts)
    out: list[Label | None] = [None] * n
    if n == 0:
        return out
    widths = np.atleast_1d(np.asarray(width_px, dtype=np.float64))
    px = [(xy[:, 0] - xrange[0]) * w / max(xrange[1] - xrange[0], 1e-12) for w in widths]
    py = (xy[:, 1] - yrange[0]) * height_px / max(yrange[1] - yrange[0], 1e-12)
    # what a label must not cover, per width: every dot, then every label placed so far
    dots = [np.stack([x - DOT_PX, x + DOT_PX, py - DOT_PX, py + DOT_PX], 1) for x in px]
    blocked = [np.vstack([d, np.zeros((n, 4))]) for d in dots]
    used = n
    kept = _still_free(prefer, texts, px, py, widths, height_px, dots, font_px) if prefer is not None else {}
    for i, box in kept.items():  # labels whose last place is still free stay there, all at once
        out[i] = prefer[i]
        for b, bx in zip(blocked, box):
            b[used] = bx
        used += 1
    for i in (order if order is not None else range(n)):
        if i in kept or not (np.isfinite(px[0][i]) and np.isfinite(py[i])):
            continue
        own = [b[i].copy() for b in blocked]
        for b in blocked:
            b[i] = -1e9  # its own dot is no obstacle
        best = None  # (clashes, text, offset, far, boxes at each width)
        for text in dict.fromkeys(t if len(t) < len(texts[i]) else texts[i]
                                  for t in (texts[i], texts[i][:5] + "…", texts[i][:2] + "…")):
            w, h = text_size(text, font_px)
            offs = label_offsets(w, h)
            chunks = [(offs[:8], False), (offs[8:8 + 3 * len(_ANGLES)], True), (offs[8 + 3 * len(_ANGLES):], True)]
            for chunk, far in chunks:
                boxes, clash = [], np.zeros(len(chunk), int)
                for x, W in zip(px, widths):
                    # beside: a fixed offset in pixels; far: a fixed place in the data
                    cx = (px[0][i] + chunk[:, 0]) * W / widths[0] if far else x[i] + chunk[:, 0]
                    cy = py[i] + chunk[:, 1]
                    b = np.stack([cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2], 1)
                    clash += 1000 * ((b[:, 0] < 0) | (b[:, 1] > W) | (b[:, 2] < 0) | (b[:, 3] > height_px))
                    boxes.append(b)
                clash += _overlaps(boxes, [b[:used] for b in blocked], 2.0)
                k = int(np.argmin(clash))  # the first free place in this chunk
                if best is None or clash[k] < best[0]:
                    best = (int(clash[k]), text, chunk[k], far, [b[k] for b in boxes])
                if clash[k] == 0:
                    break
            if best[0] == 0:
                break
        for b, o in zip(blocked, own):
            b[i] = o
        if best[0] and not force:
            continue
        _, text, (dx, dy), far, boxes = best
        out[i] = Label(text, round(float(dx), 1), round(float(dy), 1), bool(far))
        for b, box in zip(blocked, boxes):
            b[used] = box
        used += 1
    return out


def _label_boxes(labels: dict, px: list, py: np.ndarray, widths: np.ndarray, font_px: float) -> list[np.ndarray]:
    """Per width, the boxes [len(labels), 4] of labels {particle: Label} placed around their dots."""
    idx = np.fromiter(labels, int, len(labels))
    dx = np.array([lab.dx for lab in labels.values()])
    dy = np.array([lab.dy for lab in labels.values()])
    far = np.array([lab.leader for lab in labels.values()])
    w, h = np.array([text_size(lab.text, font_px) for lab in labels.values()]).reshape(-1, 2).T
    out = []
    for x, W in zip(px, widths):
        cx = np.where(far, (px[0][idx] + dx) * W / widths[0], x[idx] + dx)
        cy = py[idx] + dy
        out.append(np.stack([cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2], 1))
    return out


def _still_free(prefer, texts, px, py, widths, height_px, dots, font_px) -> dict:
    """{particle: its boxes per width} of the preferred labels that still fit where they were: inside
    the plot, over no other particle and clear of each other (checked together, in one go)."""
    old = {i: lab for i, lab in enumerate(prefer) if lab is not None and lab.text in (texts[i], texts[i][:5] + "…",
                                                                                      texts[i][:2] + "…")
           and np.isfinite(px[0][i]) and np.isfinite(py[i])}
    if not old:
        return {}
    boxes = _label_boxes(old, px, py, widths, font_px)
    idx = np.fromiter(old, int, len(old))
    clash = sum(1000 * ((b[:, 0] < 0) | (b[:, 1] > W) | (b[:, 2] < 0) | (b[:, 3] > height_px))
                for b, W in zip(boxes, widths))
    own = np.zeros((len(idx), len(dots[0])), bool)
    own[np.arange(len(idx)), idx] = True
    hits_dots = _overlap_matrix(boxes, dots, 2.0) & ~own
    hits_labels = _overlap_matrix(boxes, boxes, 2.0) & ~np.eye(len(idx), dtype=bool)
    free = (clash == 0) & ~hits_dots.any(1) & ~hits_labels.any(1)
    return {int(i): [b[k] for b in boxes] for k, i in enumerate(idx) if free[k]}


def label_traces(xy: np.ndarray, labels: Sequence[Label | None], xrange, yrange, width_px: float,
                 height_px: float, font_px: float) -> tuple[dict, dict]:
    """The data of two traces drawing placed labels (placed for a plot `width_px` wide at its
    narrowest): the texts, beside their dots or at their place in the data, and the leader lines."""
    sx = (xrange[1] - xrange[0]) / width_px   # data per pixel
    sy = (yrange[1] - yrange[0]) / height_px
    x, y, text, where, lx, ly = [], [], [], [], [], []
    for (px, py), lab in zip(np.asarray(xy, dtype=np.float64)[:, :2], labels):
        if lab is None:
            continue
        text.append(esc(lab.text))
        where.append(lab.position)
        if not lab.leader:
            x.append(px)
            y.append(py)
            continue
        x.append(px + lab.dx * sx)
        y.append(py + lab.dy * sy)
        w, h = text_size(lab.text, font_px)  # the line stops at the text's edge
        reach = 1.0 - min(w / 2 / max(abs(lab.dx), 1e-9), h / 2 / max(abs(lab.dy), 1e-9), 1.0)
        lx += [px, px + reach * lab.dx * sx, np.nan]
        ly += [py, py + reach * lab.dy * sy, np.nan]

    def f32(v):
        return np.asarray(v, np.float32)

    return (dict(x=f32(x), y=f32(y), text=text, textposition=where),
            dict(x=f32(lx if lx else [np.nan]), y=f32(ly if ly else [np.nan])))


def to_html(fig: go.Figure, title: str = "Macaron Explorer") -> str:
    """A self-contained HTML page (plotly.js inlined: opens offline)."""
    return fig.to_html(include_plotlyjs=True, full_html=True, auto_play=False,
                       config=dict(displaylogo=False, responsive=True)).replace(
        "<head>", f"<head><title>{html.escape(title)}</title>", 1)


def model_label(model) -> str:
    """What a model is, in one line: name, family, layer and scheme, size, norm, and what sets it apart
    (attention, positions, shared weights, the step h, tied halves, factorised embeddings)."""
    c = model.config
    scheme = get_scheme(c.scheme)
    variant = (f" · {c.attention} attention (Synthesizer)" if c.attention != "dot" else "") + \
              {"learned": "", "none": " · no positions"}.get(c.position, f" · {c.position} positions") + \
              (" · one layer's weights shared by every step" if c.shared else "") + \
              (f" · steps of h = {c.step:g} to T = {c.time:g}" if c.step != 1 else "") + \
              (" · halves tied (one FFN)" if c.tied_halves else "") + \
              (" · states on a sphere (norms without gain)" if not c.norm_affine and c.norm == "post" else
               " · norms without gain or bias" if not c.norm_affine else "") + \
              (f" · embeddings {c.embedding_size} → {c.d_model}" if c.embedding_size else "") + \
              (" · causal (a decoder: each token sees only those before it)" if c.causal else "")
    family = f" · {c.hf_family}" if c.hf_family else ""  # a Hugging Face family, or fairseq (an import)
    return f"{c.name}{family} · {scheme.layer} ({scheme.short}) · {c.n_layers}×{c.d_model} · {c.norm}-LN{variant}"
