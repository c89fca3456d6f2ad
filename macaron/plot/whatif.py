"""What if: a run altered by an intervention (macaron.interventions) played over its unaltered run, on one clock.

The altered run's particles move as plot.particles draws them (trails, each sub-step's move in its kind's colour,
who pulls whom, labels); under them, faint, each particle's unaltered path up to the same sub-step ends in a hollow
dot, its ghost, and a thin line joins ghost and particle: how far the intervention has moved it. Beside the
plane(s), each particle's distance from its own unaltered path over depth, with a cursor on the same clock, what was
done and the answer before → after. Both runs are drawn in one PCA of their states (analysis.project_together).

    plain, altered = model.trace(text), model.trace(text, interventions=[iv.Off("diffusion")])
    pp, pa = analysis.project_together(plain, altered)
    whatif([Run(plain, altered, pp, pa, effect=iv.effect(model, plain, altered))], said=altered.interventions[0])
"""
from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import interventions as iv
from ..studies.analysis import Projection, state_at, time_grid
from ..trajectory import Trajectory
from .particles import (
    clock,
    frame_title,
    keep_mask,
    kinds_of,
    legend_room,
    plane,
    plane_frame,
    plane_traces,
    plot_widths,
    segments,
    slider_label,
)
from .style import (
    KIND_COLOR,
    MODEL_LOOK,
    SLOT_COLORS,
    axis_title,
    base_layout,
    esc,
    figure,
    ink,
    padded_range,
    play_controls,
    true_aspect,
)

GHOST_PATH = "rgba(120,120,120,0.38)"  # the unaltered paths: faint, under the altered run
GHOST_DOT = "#8C8C8C"                  # the unaltered state now: a hollow dot
STRAYED = "rgba(40,40,40,0.55)"        # ghost → particle: how far the intervention moved it
ONE_PARTICLE = "rgba(70,70,70,0.42)"   # a particle's line in the distance chart (one run)
MEAN = "#111111"


@dataclass
class Run:
    """One sentence run as trained and with an intervention, both projected by one 2-D PCA, and what it changed."""

    plain: Trajectory
    altered: Trajectory              # the same model and clock (same sub-steps), interventions in its meta
    proj_plain: Projection
    proj_altered: Projection
    effect: iv.Effect | None = None  # iv.effect(model, plain, altered): the answer before → after
    name: str = ""                   # a panel's name, beside another


# ---- what the two runs share, and how far apart they are ---------------------------------------------------------
def shared(plain: Trajectory, altered: Trajectory) -> int:
    """How many particles, from the first, are the same in both runs: all of one sentence's; of a translation's two
    systems on one clock (translation.joint), the source's and the translation's up to the first word the two runs
    wrote differently (a decoder's particle reads only those before it: up to there, the same words in the same
    places)."""
    n = 0
    for a, b in zip(plain.token_ids, altered.token_ids):
        if a != b:
            break
        n += 1
    return n


def first(traj: Trajectory, n: int) -> Trajectory:
    """The trajectory of its first n particles only."""
    return dataclasses.replace(traj, tokens=traj.tokens[:n], token_ids=traj.token_ids[:n], states=traj.states[:, :n],
                               final=traj.final[:n], mixing=[None if m is None else m[..., :n, :n]
                                                            for m in traj.mixing])


def strayed(plain: Trajectory, altered: Trajectory) -> np.ndarray:
    """[S, n] for the n shared particles: each one's distance from its own unaltered path (interventions.drift) over
    the length of its unaltered state, so that models and depths of different scales read alike: 0 on its path, 1
    as far from it as its state is long."""
    n = shared(plain, altered)
    d = iv.drift(first(plain, n), first(altered, n))
    return d / np.maximum(np.linalg.norm(plain.states[:, :n].astype(np.float64), axis=-1), 1e-12)


def answer(effect: iv.Effect | None, k: int = 3, longest: int | None = None) -> tuple[str, str] | None:
    """The answer (before, after), in words (plain text): the top k words and their probabilities where the model
    answers, or each translation and its probability (`longest`: each translation shortened to that many
    characters, with "…", and no probability); None where the run has no answer to read."""
    if effect is None or not effect.before:
        return None
    if effect.position is None:  # a translator's: one translation each
        return tuple(f"“{textwrap.shorten(text, longest, placeholder='…')}”" if longest else
                     f"“{text}” (probability {p:.2g})" for ((text, p),) in (effect.before, effect.after))
    return tuple(", ".join(f"{w} {p:.0%}" for w, p in words[:k]) for words in (effect.before, effect.after))


# ---- the figure ----------------------------------------------------------------------------------------------------
@dataclass
class Ghost:
    """Where one run's shared particles are in its two projections, and how far each strayed."""

    rows_plain: np.ndarray   # their rows in proj_plain.coords
    rows_altered: np.ndarray  # in proj_altered.coords
    tokens: list[str]
    strayed: np.ndarray      # [S, m]


def ghost(run: Run) -> Ghost:
    kp, ka = keep_mask(run.plain, run.proj_plain.keep), keep_mask(run.altered, run.proj_altered.keep)
    both = [i for i in range(shared(run.plain, run.altered)) if kp[i] and ka[i]]
    return Ghost((np.cumsum(kp) - 1)[both], (np.cumsum(ka) - 1)[both], [run.plain.tokens[i] for i in both],
                 strayed(run.plain, run.altered)[:, both])


def ghost_traces(axes: tuple[str, str]) -> list[dict]:
    """The unaltered paths, the lines from ghost to particle and the ghosts, drawn under the altered run."""
    ax = dict(xaxis=axes[0], yaxis=axes[1], hoverinfo="skip", showlegend=False)
    return [dict(type="scatter", mode="lines", name="unaltered path", line=dict(color=GHOST_PATH, width=2), **ax),
            dict(type="scatter", mode="lines", name="strayed", line=dict(color=STRAYED, width=1), **ax),
            dict(type="scatter", mode="markers", name="unaltered", **dict(ax, hoverinfo="text"),
                 marker=dict(size=9, symbol="circle-open", color=GHOST_DOT, line=dict(width=1.5)))]


def ghost_frame(run: Run, g: Ghost, f: int) -> list[dict]:
    """ghost_traces' data at state f: each shared particle's unaltered path from the embedding, then to its ghost."""
    was = np.asarray(run.proj_plain.coords)[:f + 1, g.rows_plain]    # [f + 1, m, 2]
    now = np.asarray(run.proj_altered.coords)[f, g.rows_altered]
    paths = np.concatenate([was, np.full((1,) + was.shape[1:], np.nan)]).transpose(1, 0, 2).reshape(-1, 2)
    line = segments(now, was[-1], 2)
    return [dict(type="scatter", x=paths[:, 0].astype(np.float32), y=paths[:, 1].astype(np.float32)),
            dict(type="scatter", x=line[0], y=line[1]),
            dict(type="scatter", x=was[-1, :, 0].astype(np.float32), y=was[-1, :, 1].astype(np.float32),
                 hovertext=[f"{esc(t)} as trained: {s:.2f} of its length away"
                            for t, s in zip(g.tokens, g.strayed[f])])]


def state_said(traj: Trajectory, f: int) -> str:
    """A state's sub-step in words, in its kind's colour (a panel's heading)."""
    return f"<span style='color:{ink(KIND_COLOR.get(kinds_of(traj)[f], '#222222'))}'>{esc(traj.labels[f])}</span>"


def told(runs: Sequence[Run], said: str, chars: int) -> list[str]:
    """What was done and the answer before → after (the likeliest word, or a translation shortened; each run's,
    named), in lines of at most `chars` characters, two at most (HTML), for under the title."""
    parts = [f"What if: {said}"]
    for r in runs:
        said_answer = answer(r.effect, k=1, longest=max(12, chars // 5))
        if said_answer:
            what = "" if r.effect.position is None else "next word: " if r.plain.causal else \
                f"{r.plain.tokens[r.effect.position]}: "
            name = f"{r.name}, " if r.name and len(runs) > 1 else ""
            parts.append(f"{name}{what}{said_answer[0]} → {said_answer[1]}")
    lines = textwrap.wrap(" · ".join(parts), chars)
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), chars, placeholder="…")]
    shown = [esc(w) for w in lines]
    shown[0] = shown[0].replace("What if:", "<b>What if:</b>", 1)
    return shown


def distance_traces(runs: Sequence[Run], ghosts: Sequence[Ghost], colors: Sequence[str], axes: tuple[str, str],
                    encoder_layers: float | None) -> list[dict]:
    """The chart's lines, fixed: each shared particle's distance over depth, thin, and their mean, thick."""
    out = []
    for c, (r, g) in enumerate(zip(runs, ghosts)):
        t = r.altered.times.astype(np.float32)
        name = f"{esc(r.name)}: " if r.name and len(runs) > 1 else ""
        for tok, y in zip(g.tokens, g.strayed.T):
            out.append(dict(type="scatter", mode="lines", x=t, y=y.astype(np.float32), xaxis=axes[0], yaxis=axes[1],
                            line=dict(color=colors[c] if len(runs) > 1 else ONE_PARTICLE, width=1),
                            opacity=0.45 if len(runs) > 1 else 1.0, showlegend=False, name=esc(tok),
                            hovertemplate=f"{name}{esc(tok)}: %{{y:.2f}} at t = %{{x:g}}<extra></extra>"))
        mean = g.strayed.mean(1) if g.tokens else np.zeros(len(t))
        out.append(dict(type="scatter", mode="lines", x=t, y=mean.astype(np.float32),
                        xaxis=axes[0], yaxis=axes[1], showlegend=False, name="mean",
                        line=dict(color=colors[c] if len(runs) > 1 else MEAN, width=3, dash=MODEL_LOOK[c % 2].dash),
                        hovertemplate=f"{name}mean: %{{y:.2f}} at t = %{{x:g}}<extra></extra>"))
    return out


def cursor_frame(runs: Sequence[Run], ghosts: Sequence[Ghost], t: float, top: float) -> list[dict]:
    """The chart's moving parts at layer time t: a vertical line, and each particle's distance then."""
    out = [dict(type="scatter", x=np.array([t, t], np.float32), y=np.array([0.0, top], np.float32))]
    for r, g in zip(runs, ghosts):
        f = state_at(r.altered.times, t)
        out.append(dict(type="scatter", x=np.full(len(g.tokens), r.altered.times[f], np.float32),
                        y=g.strayed[f].astype(np.float32)))
    return out


def cursor_traces(runs: Sequence[Run], colors: Sequence[str], axes: tuple[str, str]) -> list[dict]:
    ax = dict(xaxis=axes[0], yaxis=axes[1], showlegend=False, hoverinfo="skip")
    return ([dict(type="scatter", mode="lines", name="now", line=dict(color="#555555", width=1, dash="dot"), **ax)]
            + [dict(type="scatter", mode="markers", name="now", marker=dict(size=6, color=colors[c] if len(runs) > 1
                                                                            else MEAN), **ax)
               for c in range(len(runs))])


def whatif(runs: Sequence[Run], *, said: str = "", start_time: float = 0.0, trail: int = 4, labels: str = "auto",
           head: int | None = None, height: int = 500, width: int | tuple[int, int] = (660, 1560),
           font_size: int = 14, colors: Sequence[str] | None = None) -> go.Figure:
    """Each run's altered particles over their unaltered ghosts (one plane a run, side by side), and the chart of how
    far each particle strayed from its own path, all frames of one figure on one layer clock (each plane at its
    latest state by then), so ▶ Play and the slider move them together. `said`: what was done, in words (default:
    the first run's interventions); `colors`: each run's in the chart (default greys); `head`: the attention head
    whose pulls are drawn (None: their mean); `height`, `width`, `font_size` as plot.particles."""
    n = len(runs)
    said = said or "; ".join(runs[0].altered.interventions)
    colors = list(colors) if colors else [SLOT_COLORS[c % len(SLOT_COLORS)] for c in range(n)]
    split, gap = (0.6, 0.0) if n == 1 else (0.66, 0.06)
    margin = dict(l=60, r=12, t=(86 + 3 * (font_size - 14)) if n == 1 else (104 + 8 * (font_size - 14)), b=104)
    lines = told(runs, said, int(plot_widths(width, margin, 1.0)[0] / (0.5 * (font_size - 1))))
    told_px = len(lines) * round(1.35 * (font_size - 1)) + 6  # under the title: what was done, the answer
    margin["t"] += max(legend_room(r.altered, font_size, width, margin) for r in runs) + told_px
    plot_h = height - margin["t"] - margin["b"]
    share = (split - gap * (n - 1)) / n
    sfx = ["" if c == 0 else str(c + 1) for c in range(n + 1)]
    planes, ghosts = [], [ghost(r) for r in runs]
    for c, r in enumerate(runs):
        both = np.concatenate([np.asarray(r.proj_plain.coords).reshape(-1, 2), np.asarray(r.proj_altered.coords)
                               .reshape(-1, 2)])
        planes.append(plane(r.altered, r.proj_altered, trail=trail, labels=labels, axes=(f"x{sfx[c]}", f"y{sfx[c]}"),
                            size_px=(plot_widths(width, margin, share), plot_h), font_px=font_size, head=head,
                            ranges=[padded_range(both[:, k]) for k in range(2)]))
    grid = time_grid(*(r.altered for r in runs))
    start = int(np.argmin(np.abs(grid - start_time)))
    chart = (f"x{sfx[n]}", f"y{sfx[n]}")
    two = runs[0].altered.meta.get("two_systems")
    encoder_layers = two and two["encoder_layers"]
    top = 1.08 * max([float(g.strayed.max()) for g in ghosts if g.tokens] + [1e-3])

    def moving(t) -> list[dict]:
        out = []
        for r, p, g in zip(runs, planes, ghosts):
            f = state_at(r.altered.times, t)
            out += ghost_frame(r, g, f) + plane_frame(p, f, esc(r.name) + ": " if n > 1 else "")
        return out + cursor_frame(runs, ghosts, t, top)

    data = []
    for c, (r, p) in enumerate(zip(runs, planes)):
        f = state_at(r.altered.times, grid[start])
        data += ghost_traces(p.axes) + plane_traces(p, f, legend=c == 0,
                                                    hover_prefix=esc(r.name) + ": " if n > 1 else "")
    data += cursor_traces(runs, colors, chart)
    for trace, update in zip(data, moving(grid[start])):  # the ghosts and the cursor at the first frame
        trace.update(update)
    moved = list(range(len(data)))
    data += distance_traces(runs, ghosts, colors, chart, encoder_layers)

    col_px = plot_widths(width, margin, 1.0 - split - 0.08)[0]
    heading = textwrap.wrap("Each particle's distance from its own path as trained (○ grey) ÷ its length "
                            "(thick: the mean)",
                            max(26, int(col_px / (0.52 * (font_size - 2)))))
    below = 1.0 - (1.3 * (font_size - 2) * len(heading) + font_size) / plot_h  # the chart under its heading
    note = dict(text="<br>".join(f"<b>{esc(h)}</b>" for h in heading), x=split + 0.08, y=1.0, xref="paper",
                yref="paper", xanchor="left", yanchor="top", align="left", showarrow=False,
                font=dict(size=font_size - 2))
    title_px = 12 + round(1.4 * (font_size + 3))  # the title's line, from the figure's top
    under = dict(text="<br>".join(lines), x=0.0, y=1.0 + (margin["t"] - title_px) / plot_h, xref="paper",
                 yref="paper", xanchor="left", yanchor="top", align="left", showarrow=False,
                 font=dict(size=font_size - 1))  # what was done, the answer, under the title

    def title(t) -> str:
        if n == 1:
            return frame_title(runs[0].altered, state_at(runs[0].altered.times, t))
        return f"<b>layer time {clock(runs[0].altered, t)}</b>  ·  each panel at its latest state by then"

    def annotations(t) -> list[dict]:
        out = [under, note]
        for c, r in enumerate(runs if n > 1 else ()):
            x0 = c * (share + gap)
            out.append(dict(text=f"<b>{esc(r.name)}</b><br>{state_said(r.altered, state_at(r.altered.times, t))}",
                            x=x0 + share / 2, y=1.0, xref="paper", yref="paper", xanchor="center", yanchor="bottom",
                            showarrow=False, font=dict(size=font_size)))
        return out

    frames = [dict(name=f"{t:g}", traces=moved, data=moving(t),
                   layout=dict(title=dict(text=title(t)), annotations=annotations(t))) for t in grid]
    layout = base_layout(height, title=dict(text=title(grid[start]), x=0.0, xanchor="left", xref="paper",
                                            y=1.0 - (12 if n == 1 else 10) / height, yref="container", yanchor="top",
                                            font=dict(size=font_size + (3 if n == 1 else 2))),
                         font=dict(base_layout(0)["font"], size=font_size), margin=margin, uirevision="whatif",
                         annotations=annotations(grid[start]))
    layout["legend"] = (dict(orientation="h", x=0.0, xanchor="left", y=1.0 + 30 / plot_h, yanchor="bottom",
                             font=dict(size=font_size - 1), itemsizing="constant") if n == 1 else
                        dict(orientation="h", x=0.0, xanchor="left", y=1.0 - (2.7 * font_size + told_px) / height,
                             yref="container", yanchor="top", font=dict(size=font_size - 1)))
    for c, (r, p) in enumerate(zip(runs, planes)):
        x0 = c * (share + gap)
        layout[f"xaxis{sfx[c]}"] = dict(title=dict(text=axis_title(0, r.proj_altered.explained)), range=p.ranges[0],
                                        autorange=False, zeroline=False, domain=[x0, x0 + share],
                                        anchor=f"y{sfx[c]}")
        layout[f"yaxis{sfx[c]}"] = dict(title=dict(text=axis_title(1, r.proj_altered.explained)), range=p.ranges[1],
                                        autorange=False, zeroline=False, anchor=f"x{sfx[c]}",
                                        **true_aspect(f"x{sfx[c]}"))
    h = runs[0].altered.meta.get("step", 1.0)
    layout.update(chart_axes(chart, grid, h, encoder_layers, (split + 0.08, max(0.4, below)), top, font_size))
    ticks = [slider_label(t, h, encoder_layers) for t in grid]
    layout.update(play_controls([f"{t:g}" for t in grid], ticks, start, plot_h, font_size=font_size))
    return figure(data, layout, frames)


def chart_axes(chart: tuple[str, str], grid: np.ndarray, h: float, encoder_layers: float | None,
               corner: tuple[float, float], top: float, font_size: int) -> dict:
    """The distance chart's axes, in the figure's lower right from `corner` (its left, its top): layer time with a
    tick at every layer boundary (E1, D1, … for two systems), the distance from 0 to `top`."""
    boundaries = np.arange(0, int(np.ceil(grid[-1])) + 1)
    x, y = (f"{a}axis{chart[0][1:]}" for a in "xy")
    return {x: dict(domain=[corner[0], 1.0], anchor=chart[1], range=[0, float(grid[-1])], autorange=False,
                    zeroline=False, tickmode="array", tickvals=boundaries.tolist(),
                    ticktext=[slider_label(t, h, encoder_layers) for t in boundaries], title=dict(text="layer time"),
                    tickfont=dict(size=font_size - 3)),
            y: dict(domain=[0.0, corner[1]], anchor=chart[0], range=[0, top], autorange=False, zeroline=False,
                    tickfont=dict(size=font_size - 3))}
