"""Figures of the particle-system measures (macaron.studies.dynamics): curves over depth with their spread
over a sentence set, cosine histograms over depth, attention per diffusion sub-step, leaders by
role, and the ODE experiments. Pure builders: SetMeasures and ExperimentResults in, Plotly figures
out; `to_png` draws any of them with matplotlib (a PNG without a browser).

Every curve is the median over sentences with a band over the middle half of them (quartiles);
for one sentence the band is a line.
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..studies.dynamics import ROLES, ExperimentResult, SetMeasures, Spread
from .lab import model_colors
from .style import MODEL_LOOK, base_layout, esc, figure

AXIS = {
    "clusters": "effective number of clusters",
    "rank_one": "distance from rank one",
    "energy": "interaction energy E(β = 1)",
    "mean_cosine": "mean cos(xᵢ, xⱼ)",
    "step": "relative step ‖Δx‖ / ‖x‖",
    "entropy": "attention entropy / log T",
    "attention_rank": "attention effective rank / T",
    "ds_gap": "distance from doubly stochastic",
    "first_token": "attention to the first token ÷ uniform",
}


# One plain sentence per chart, and the work whose prediction it tests (the app and the CLI report read these).
CHARTS = {
    "clusters": ("Do tokens gather into clusters?",
                 "The effective number of directions the tokens point in (participation ratio of their cosine "
                 "matrix): idealised self-attention dynamics (shared weights, long times) predicts it falls with "
                 "depth as tokens gather into a few clusters.",
                 "Geshkovski, Letrouit, Polyanskiy & Rigollet 2023, "
                 "The emergence of clusters in self-attention dynamics"),
    "cosines": ("Pairwise cosines over depth",
                "Per state, the share of token pairs at each cosine similarity, as in the ALBERT figure: mass "
                "moving up to cos = 1 is tokens gathering.",
                "Geshkovski et al. 2023, A mathematical perspective on Transformers"),
    "rank_one": ("Rank collapse",
                 "How far the token cloud is from all tokens being the same vector (0 = collapsed): pure attention "
                 "collapses to rank one with depth, residual paths and layer norms slow it.",
                 "Dong, Cordonnier & Loukas 2021; Wu et al. 2024"),
    "energy": ("Interaction energy",
               "The energy that the attention dynamics with Q = K = V = I increases along its flow; it stays "
               "on a plateau while clusters persist, then steps up when they merge (metastability).",
               "Geshkovski, Koubbi, Polyanskiy & Rigollet 2024, Dynamic metastability"),
    "step": ("Are the steps small?",
             "How far each sub-step moves the tokens relative to their size: a layer is an Euler step of an ODE "
             "only where this is small.",
             "Sander, Ablin & Peyré 2022, Do residual networks discretize neural ODEs?"),
    "entropy": ("Sharp or diffuse attention",
                "Row entropy of the attention as a share of its maximum log T: 1 = every token averages all, "
                "0 = every token follows one other.", "Geshkovski et al. 2023"),
    "ds_gap": ("Doubly stochastic attention?",
               "The share of attention that would have to move for every token to receive as much as it gives "
               "(0 = doubly stochastic, the fixed points of Sinkhorn's scaling).",
               "Sander, Ablin, Blondel & Peyré 2022, Sinkformers"),
    "attention_rank": ("Low-rank attention",
                       "The effective rank of the attention matrix as a share of the number of tokens: low = "
                       "few directions of mixing.", "Geshkovski et al. 2023"),
    "first_token": ("Attention to the first token",
                    "What the other tokens give the first one, over what uniform attention over the tokens each sees "
                    "would give it (1/T; in a decoder token i sees i + 1): 1 = no more than uniform, far above = an "
                    "attention sink, where attention goes when it has nowhere else to go. Under a causal mask leading "
                    "is no test of it: every token sees the first, so even uniform attention makes it lead.",
                    "Xiao, Tian, Chen, Han & Lewis 2024, attention sinks"),
    "leaders": ("Leaders",
                "How often each kind of token receives the most attention of a head, relative to chance: the "
                "theory predicts a few leaders that the others follow. Under a causal mask, the most for its place "
                "(÷ what uniform attention over what each row sees would give it).", "Geshkovski et al. 2023"),
    "experiments": ("Same weights: other orders, smaller steps, more layers",
                    "The same weights run in another order, with each sub-step's move split in smaller Euler moves "
                    "(post-LN: then one LayerNorm, as trained), or for more layers: an ODE solver's output moves "
                    "little when its small steps are reordered or refined.",
                    "Lu et al. 2019; Sander, Ablin & Peyré 2022"),
    "extended": ("Past the trained depth",
                 "The last layer repeated, as the ALBERT notebook iterates its shared layer: do the clusters keep "
                 "forming?", "Geshkovski et al. 2023"),
}


def colors_of(sets: Sequence[SetMeasures]) -> list[str]:
    """Each model in its scheme's colour (greys when two share a scheme)."""
    return model_colors([s.meta.get("scheme", "") for s in sets])


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def _curve(x, spread: Spread, name: str, color: str, slot: int, hover: Sequence[str], axes=("x", "y"),
           show_legend: bool = True) -> list[dict]:
    """A median line with markers and a band between the quartiles."""
    x = np.asarray(x, dtype=float).tolist()
    lo, mid, hi = (np.asarray(getattr(spread, k), dtype=float).tolist() for k in ("q25", "median", "q75"))
    band = dict(type="scatter", mode="lines", x=x + x[::-1], y=hi + lo[::-1], fill="toself",
                fillcolor=_rgba(color, 0.2), line=dict(width=0), hoverinfo="skip", showlegend=False, legendgroup=name,
                xaxis=axes[0], yaxis=axes[1])
    text = [f"{esc(name)} · {esc(h)}<br>median {m:.3g} (quartiles {a:.3g} – {b:.3g})"
            for h, m, a, b in zip(hover, mid, lo, hi)]
    line = dict(type="scatter", mode="lines+markers", x=x, y=mid, name=esc(name), legendgroup=name,
                line=dict(color=color, width=2.5, dash=MODEL_LOOK[slot % 2].dash), showlegend=show_legend,
                marker=dict(size=6, color=color, symbol=MODEL_LOOK[slot % 2].symbol), hovertext=text, hoverinfo="text",
                xaxis=axes[0], yaxis=axes[1])
    return [band, line]


def _h(s: SetMeasures) -> float:
    """The flow time one layer of this model stands for (ModelConfig.step; 1: time is counted in layers)."""
    return float(s.meta.get("step", 1.0))


def _depth_axis(times, sets: Sequence[SetMeasures]) -> dict:
    """Ticks on whole units of time, at most about a dozen (a shared model run to 16 T has 96 layers); in layers,
    or where a model's layers are steps h of one flow (the ODE pair), in that flow's time h·layer."""
    L = int(np.ceil(max(float(np.max(t)) for t in times)))
    every = next(k for k in (1, 2, 3, 6, 12, 24, 48, 96, 192) if L / k <= 12 or k >= L)
    steps = sorted({_h(s) for s in sets})
    title = "layer time t" if steps == [1.0] else (
        f"time t = h × layer (h = {' / '.join(f'{h:g}' for h in steps)})")
    return dict(title=dict(text=title), tickmode="array", tickvals=list(range(0, L + 1, every)),
                gridcolor="#bbb", zeroline=False)


def _beyond(trained_depth: float | None, end: float) -> tuple[list, list]:
    """A grey band and a note over the depths a model was not trained for."""
    if trained_depth is None or end <= trained_depth:
        return [], []
    shape = dict(type="rect", xref="x", yref="paper", x0=trained_depth, x1=end, y0=0, y1=1,
                 fillcolor="rgba(0,0,0,0.06)", line=dict(width=0), layer="below")
    note = dict(text="beyond the trained depth", x=(trained_depth + end) / 2, y=0.02, xref="x", yref="paper",
                yanchor="bottom", showarrow=False, font=dict(size=12, color="#555"))
    return [shape], [note]


def over_depth(sets: Sequence[SetMeasures], measure: str, names: Sequence[str] | None = None, *,
               trained_depth: float | None = None, height: int = 340) -> go.Figure:
    """One measure of the token cloud (dynamics.STATE_MEASURES, or "step") over layer time, one curve
    per model. `trained_depth`: shade the layers a model was not trained for (extended programs)."""
    names = list(names or [s.model for s in sets])
    data, xs = [], []
    for i, (s, name, color) in enumerate(zip(sets, names, colors_of(sets))):
        x, spread, labels = ((s.times[1:], s.step, s.labels[1:]) if measure == "step"
                             else (s.times, s.state[measure], s.labels))
        data += _curve(_h(s) * x, spread, name, color, i, labels)
        xs.append(_h(s) * x)
    trained = None if trained_depth is None else min(_h(s) for s in sets) * trained_depth  # the first to run past
    shapes, notes = _beyond(trained, max(float(np.max(x)) for x in xs))
    yaxis = dict(title=dict(text=AXIS[measure]))
    if measure == "step":
        yaxis["type"] = "log"  # pre-LN: the first sub-step moves the small embedding by many times its size
    layout = base_layout(height, xaxis=_depth_axis(xs, sets), yaxis=yaxis, shapes=shapes, annotations=notes,
                         margin=dict(l=65, r=20, t=40, b=50))
    return figure(data, layout)


def attention(sets: Sequence[SetMeasures], measure: str, names: Sequence[str] | None = None,
              height: int = 340) -> go.Figure:
    """An attention measure (dynamics.HEAD_MEASURES) per diffusion sub-step: the mean over heads
    (median and quartiles over sentences), and each head's median as a small open marker."""
    names = list(names or [s.model for s in sets])
    data, xs = [], []
    for i, (s, name, color) in enumerate(zip(sets, names, colors_of(sets))):
        x = _h(s) * s.diffusion_times
        data += _curve(x, s.diffusion[measure], name, color, i, [f"diffusion at t = {t:g}, mean of heads" for t in x])
        per_head = np.asarray(s.heads[measure].median)  # [K, H]
        H = per_head.shape[1]
        data.append(dict(type="scatter", mode="markers", x=np.repeat(x, H).tolist(), y=per_head.ravel().tolist(),
                         name=f"{esc(name)}: one head", legendgroup=name, showlegend=False,
                         marker=dict(size=7, color=color, symbol=f"{MODEL_LOOK[i % 2].symbol}-open", opacity=0.7),
                         hovertext=[f"{esc(name)} · t = {t:g} · head {h + 1}: median {v:.3g}"
                                    for t in x for h, v in zip(range(H), per_head[list(x).index(t)])],
                         hoverinfo="text"))
        xs.append(x)
    layout = base_layout(height, xaxis=_depth_axis(xs, sets), yaxis=dict(title=dict(text=AXIS[measure])),
                         margin=dict(l=65, r=20, t=40, b=50))
    return figure(data, layout)


def cosine_histograms(sets: Sequence[SetMeasures], names: Sequence[str] | None = None,
                      height: int = 340) -> go.Figure:
    """Per state, the share of token pairs at each cosine similarity (the ALBERT figure of
    Geshkovski et al., all states at once): mass moving to cos = 1 is tokens gathering."""
    from plotly.subplots import make_subplots

    names = list(names or [s.model for s in sets])
    n = len(sets)
    layout = make_subplots(rows=1, cols=n, horizontal_spacing=0.08, shared_yaxes=True,
                           subplot_titles=[esc(m) for m in names]).layout.to_plotly_json()
    data = []
    for c, s in enumerate(sets):
        share = 100 * s.histogram * np.diff(s.edges)  # [S, bins]: per cent of pairs
        centres = (s.edges[:-1] + s.edges[1:]) / 2
        ax = "" if c == 0 else str(c + 1)
        data.append(dict(type="heatmap", x=(_h(s) * s.times).tolist(), y=centres.tolist(), z=share.T.tolist(),
                         colorscale="Viridis", zmin=0, zmax=float(min(share.max(), 40)), showscale=c == n - 1,
                         colorbar=dict(title=dict(text="% of pairs"), thickness=12), xaxis=f"x{ax}", yaxis=f"y{ax}",
                         hovertemplate="t = %{x}<br>cos ≈ %{y:.2f}: %{z:.1f}% of pairs<extra></extra>"))
        layout[f"xaxis{ax}"].update(_depth_axis([_h(s) * s.times], [s]))
    layout["yaxis"].update(title=dict(text="cos(xᵢ, xⱼ)"), range=[-1, 1])
    layout.update(base_layout(height, margin=dict(l=65, r=20, t=50, b=50)))
    return figure(data, layout)


def leaders(sets: Sequence[SetMeasures], names: Sequence[str] | None = None, height: int = 320) -> go.Figure:
    """How often each role leads (receives the most attention of a head in a diffusion sub-step),
    relative to chance: 1 = as often as a token drawn at random from its sentence."""
    names = list(names or [s.model for s in sets])
    data = []
    for i, (s, name, color) in enumerate(zip(sets, names, colors_of(sets))):
        rows = s.leaders.by_role
        data.append(dict(type="bar", x=[r.key for r in rows], y=[r.lift for r in rows], name=esc(name),
                         marker=dict(color=color, pattern=dict(shape="" if i % 2 == 0 else "/")),
                         hovertext=[f"{esc(name)} · {esc(r.key)}: leads {r.leads:.0f} times, chance {r.expected:.0f} "
                                    f"({r.occurrences} tokens)" for r in rows], hoverinfo="text"))
    chance = dict(type="line", xref="paper", x0=0, x1=1, y0=1, y1=1, line=dict(color="#555", dash="dot", width=1.5))
    present = {r.key for s in sets for r in s.leaders.by_role}
    layout = base_layout(height, barmode="group",
                         xaxis=dict(categoryorder="array", categoryarray=[r for r in ROLES if r in present]),
                         yaxis=dict(title=dict(text="leads ÷ chance")), shapes=[chance],
                         margin=dict(l=65, r=20, t=40, b=50))
    return figure(data, layout)


def experiments(results: Sequence[Sequence[ExperimentResult]], names: Sequence[str], schemes: Sequence[str],
                height: int | None = None) -> go.Figure:
    """The ODE experiments, one row each: how far the final output moves (median and quartiles over
    sentences, relative to its norm), and how often the masked-word prediction stays the same.
    `schemes`: each model's scheme, for its colour."""
    from plotly.subplots import make_subplots

    colors = model_colors(schemes)
    rows: list[str] = []  # every model's experiments, each inserted after its predecessor in its own list
    for rs in results:
        prev = -1
        for r in rs:
            if r.kind != "own":
                if r.name not in rows:
                    rows.insert(prev + 1, r.name)
                prev = rows.index(r.name)
    titles = ["output change ‖Y′ − Y‖ / ‖Y‖", "masked-word prediction unchanged"]
    layout = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.03, column_widths=[0.6, 0.4],
                           subplot_titles=titles).layout.to_plotly_json()
    data = []
    for i, (rs, name, color) in enumerate(zip(results, names, colors)):
        rs = [r for r in rs if r.kind != "own"]
        med = [float(r.change.median) for r in rs]
        pattern = dict(shape="" if i % 2 == 0 else "/")
        data.append(dict(type="bar", orientation="h", y=[r.name for r in rs], x=med, name=esc(name), legendgroup=name,
                         marker=dict(color=color, pattern=pattern), xaxis="x", yaxis="y",
                         error_x=dict(type="data", symmetric=False, color="#333", thickness=1.2,
                                      array=[float(r.change.q75) - m for r, m in zip(rs, med)],
                                      arrayminus=[m - float(r.change.q25) for r, m in zip(rs, med)]),
                         hovertext=[f"{esc(name)} · {esc(r.name)}: median {m:.3f}, mean {float(r.change.mean):.3f}"
                                    for r, m in zip(rs, med)], hoverinfo="text"))
        data.append(dict(type="bar", orientation="h", y=[r.name for r in rs], x=[r.agreement_masked for r in rs],
                         name=esc(name), legendgroup=name, showlegend=False, xaxis="x2", yaxis="y2",
                         marker=dict(color=color, pattern=pattern),
                         hovertext=[f"{esc(name)} · {esc(r.name)}: {r.agreement_masked:.1%} of masked words, "
                                    f"{r.agreement:.1%} of all tokens; KL {r.kl:.3g} nats"
                                    for r in rs], hoverinfo="text"))
    layout["yaxis"].update(categoryorder="array", categoryarray=rows, autorange="reversed")
    layout["yaxis2"].update(categoryorder="array", categoryarray=rows, autorange="reversed")
    layout["xaxis"].update(rangemode="tozero", tickformat=".0%")
    layout["xaxis2"].update(range=[0, 1], tickformat=".0%")
    layout.update(base_layout(height or 160 + 30 * len(rows), barmode="group", bargap=0.25,
                              margin=dict(l=20, r=20, t=85, b=40)))
    layout["legend"] = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yref="container", yanchor="top")
    layout["yaxis"]["automargin"] = True
    return figure(data, layout)


def report_html(figures: dict[str, go.Figure], title: str, intro: str = "") -> str:
    """One self-contained HTML page (plotly.js inlined once, opens offline): every figure under its
    CHARTS title and sentence."""
    import html

    parts = [f"<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>"]
    for i, (key, fig) in enumerate(figures.items()):
        head, text, paper = CHARTS.get(key.split(":")[0], (key, "", ""))
        parts.append(f"<h2>{html.escape(head)}</h2><p>{html.escape(text)} <i>{html.escape(paper)}</i></p>")
        parts.append(fig.to_html(full_html=False, include_plotlyjs=i == 0, config=dict(displaylogo=False)))
    style = "body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:auto;color:#222}p{max-width:60em}"
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>{''.join(parts)}</body></html>")


# ---- PNG without a browser: draw a figure's data with matplotlib -----------------------------------
def _mpl_color(c, default="#333333"):
    if not c:
        return default
    m = re.match(r"rgba?\(([^)]*)\)", str(c))
    if m:
        v = [float(p) for p in m.group(1).split(",")]
        return (v[0] / 255, v[1] / 255, v[2] / 255, v[3] if len(v) > 3 else 1.0)
    return c


def _plain(text) -> str:
    return re.sub(r"<[^>]+>", " ", str(text or "")).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def to_png(fig, path, width: int = 1100, dpi: int = 110) -> None:
    """Draw a figure of this module (scatter lines, markers and bands; bars; heatmaps; rectangles and
    lines in shapes; subplot titles) with matplotlib and save it as a PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    d = fig.to_dict() if hasattr(fig, "to_dict") else fig
    lay = d["layout"]
    height = lay.get("height", 400)
    mfig = plt.figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    ticks = [len(str(c)) for tr in d["data"] if tr["type"] == "bar" and tr.get("orientation") == "h" for c in tr["y"]]
    margin = dict(l=min(0.45, 0.02 + 0.0065 * max(ticks)) if ticks else 0.08, r=0.03, t=0.14, b=0.14)
    axes: dict = {}

    def ax_for(xa: str, ya: str):
        if (xa, ya) not in axes:
            xd = lay.get("xaxis" + xa[1:], {}).get("domain", [0, 1])
            yd = lay.get("yaxis" + ya[1:], {}).get("domain", [0, 1])
            w, h = 1 - margin["l"] - margin["r"], 1 - margin["t"] - margin["b"]
            axes[(xa, ya)] = mfig.add_axes([margin["l"] + xd[0] * w, margin["b"] + yd[0] * h,
                                            (xd[1] - xd[0]) * w * 0.96, (yd[1] - yd[0]) * h])
        return axes[(xa, ya)]

    bars: dict = {}  # the bar traces of each pair of axes: drawn side by side
    for tr in d["data"]:
        if tr["type"] == "bar":
            bars.setdefault((tr.get("xaxis", "x"), tr.get("yaxis", "y")), []).append(tr)
    categories: dict = {}
    for tr in d["data"]:
        key = (tr.get("xaxis", "x"), tr.get("yaxis", "y"))
        ax = ax_for(*key)
        label = _plain(tr.get("name")) if tr.get("showlegend", True) and tr.get("name") else None
        if tr["type"] == "scatter":
            x, y = np.asarray(tr["x"], float), np.asarray(tr["y"], float)
            if tr.get("fill") == "toself":
                ax.fill(x, y, color=_mpl_color(tr.get("fillcolor")), linewidth=0)
                continue
            line, marker = tr.get("line", {}), tr.get("marker", {})
            mode = tr.get("mode", "lines")
            ls = {"dash": "--", "dot": ":", "dashdot": "-."}.get(line.get("dash"), "-") if "lines" in mode else "none"
            mk = {"diamond": "D", "square": "s"}.get(str(marker.get("symbol", "")).replace("-open", ""), "o")
            open_marker = "-open" in str(marker.get("symbol", ""))
            col = _mpl_color(line.get("color") or marker.get("color"))
            ax.plot(x, y, linestyle=ls, color=col, linewidth=line.get("width", 2) * 0.8, label=label,
                    marker=mk if "markers" in mode else None, markersize=marker.get("size", 6) * 0.7,
                    markerfacecolor="none" if open_marker else col, alpha=marker.get("opacity", 1.0))
        elif tr["type"] == "bar":
            group = bars[key]
            i, n = group.index(tr), len(group)
            horizontal = tr.get("orientation") == "h"
            cats = tr["y"] if horizontal else tr["x"]
            vals = np.asarray(tr["x"] if horizontal else tr["y"], float)
            axis_name = ("yaxis" + key[1][1:]) if horizontal else ("xaxis" + key[0][1:])
            order = categories.setdefault(key, list(lay.get(axis_name, {}).get("categoryarray") or []))
            order += [c for c in cats if c not in order]
            pos = np.array([order.index(c) for c in cats]) + (i - (n - 1) / 2) * 0.8 / n
            err = tr.get("error_x" if horizontal else "error_y")
            e = None if not err else [err.get("arrayminus", err.get("array")), err.get("array")]
            col = _mpl_color(tr.get("marker", {}).get("color"))
            hatch = "//" if tr.get("marker", {}).get("pattern", {}).get("shape") else None
            if horizontal:
                ax.barh(pos, vals, height=0.8 / n, color=col, hatch=hatch, xerr=e, label=label, edgecolor="white")
                ax.set_yticks(range(len(order)), order if key[0] == "x" else [""] * len(order), fontsize=8)
                ax.set_ylim(len(order) - 0.5, -0.5)
            else:
                ax.bar(pos, vals, width=0.8 / n, color=col, hatch=hatch, yerr=e, label=label, edgecolor="white")
                ax.set_xticks(range(len(order)), order, fontsize=9)
        elif tr["type"] == "heatmap":
            x, y, z = (np.asarray(tr[k], float) for k in ("x", "y", "z"))
            ax.pcolormesh(_edges(x), _edges(y), z, cmap="viridis", vmin=tr.get("zmin"), vmax=tr.get("zmax"))
    for (xa, ya), ax in axes.items():
        xl, yl = lay.get("xaxis" + xa[1:], {}), lay.get("yaxis" + ya[1:], {})
        ax.set_xlabel(_plain(xl.get("title", {}).get("text")), fontsize=9)
        if ya == "y" or not yl.get("matches"):
            ax.set_ylabel(_plain(yl.get("title", {}).get("text")), fontsize=9)
        if yl.get("type") == "log":
            ax.set_yscale("log")
        if xl.get("range"):
            ax.set_xlim(*xl["range"])
        if yl.get("range") and yl.get("type") != "log":
            ax.set_ylim(*yl["range"])
        if xl.get("tickvals"):
            ax.set_xticks(xl["tickvals"])
        if str(xl.get("tickformat", "")).endswith("%"):
            ax.xaxis.set_major_formatter(PercentFormatter(1.0))
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=8)
        for s in lay.get("shapes", []):
            if s.get("type") == "rect" and s.get("xref") == "x" and xa == "x":
                ax.axvspan(s["x0"], s["x1"], color=_mpl_color(s.get("fillcolor")), zorder=0)
            if s.get("type") == "line" and s.get("xref") == "paper" and xa == "x":
                ax.axhline(s["y0"], color="#555", linestyle=":", linewidth=1)
    for a in lay.get("annotations", []):  # subplot titles above their panel; notes at their x
        if a.get("xref") == "paper":
            mfig.text(margin["l"] + a.get("x", 0.5) * (1 - margin["l"] - margin["r"]), 1 - margin["t"] + 0.01,
                      _plain(a.get("text")), ha="center", va="bottom", fontsize=9)
        else:
            ax_for("x", "y").annotate(_plain(a.get("text")), (a["x"], a.get("y", 0.97)), ha="center", va="bottom",
                                      xycoords=("data", "axes fraction"), fontsize=8, color="#555")
    handles = {}
    for ax in axes.values():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    if handles:
        mfig.legend(handles.values(), handles.keys(), loc="upper right", ncol=min(4, len(handles)), fontsize=8,
                    frameon=False)
    mfig.savefig(path, dpi=dpi)
    plt.close(mfig)


def _edges(c: np.ndarray) -> np.ndarray:
    """Cell edges around centres c (a heatmap's x or y)."""
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = (c[:-1] + c[1:]) / 2
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])
