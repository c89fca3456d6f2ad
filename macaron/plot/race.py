"""Figures of the race (macaron.studies.zoo): held-out loss against tokens as a band over seeds per scheme, the paired
differences with their intervals, and one gap along training. Runs and differences in, Plotly figures out; each
scheme in its lab colour."""
from __future__ import annotations

import numpy as np

from ..schemes import get_scheme
from ..studies import zoo
from ..studies.zoo import RaceRun
from .style import GUIDE_COLOR, base_layout, figure, padded_range, scheme_style, subplots_layout


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def curves(race: list[RaceRun], height: int = 440) -> object:
    """Held-out loss against tokens seen: per scheme the mean over its seeds (a line) inside the band from the
    lowest to the highest seed at each evaluation (shaded); a scheme of one seed is its one line."""
    data, top = [], []
    several = len(zoo.budgets(race)) > 1
    for scheme, budget in dict.fromkeys((r.scheme, r.budget) for r in race):
        mine = [r for r in race if (r.scheme, r.budget) == (scheme, budget)]
        n = min(len(r.curve["loss"]) for r in mine)
        tokens = np.mean([r.curve["tokens"][:n] for r in mine], axis=0) / 1e6
        loss = np.array([r.curve["loss"][:n] for r in mine])
        style = scheme_style(scheme)  # short names, as in the differences; one column right of the plot
        name = (f"{get_scheme(scheme).short}{f', {zoo.millions(budget)}' if several else ''}, "
                f"{len(mine)} seed{'s' if len(mine) > 1 else ''}")
        if len(mine) > 1:
            data.append(dict(type="scatter", x=np.r_[tokens, tokens[::-1]], y=np.r_[loss.max(0), loss.min(0)[::-1]],
                             fill="toself", fillcolor=_rgba(style.color, 0.18), line=dict(width=0), hoverinfo="skip",
                             showlegend=False, legendgroup=name))
        data.append(dict(type="scatter", mode="lines", x=tokens, y=loss.mean(0), name=name, legendgroup=name,
                         line=dict(color=style.color, dash=style.dash, width=2.5 if budget == race[0].budget else 4),
                         hovertemplate=f"{name}<br>%{{x:.1f}} M tokens<br>loss %{{y:.3f}} nats<extra></extra>"))
        top.append(float(loss.mean(0)[min(n - 1, max(1, n // 8))]))
    low = min(float(np.min(r.curve["loss"])) for r in race)
    layout = base_layout(height, margin=dict(l=70, r=20, t=40, b=60),
                         xaxis=dict(title=dict(text="tokens seen (millions)"), zeroline=False),
                         yaxis=dict(title=dict(text="held-out loss (nats per masked token)"),
                                    range=[low - 0.05, max(top)]),
                         legend=dict(orientation="v", yanchor="top", y=1, xanchor="left", x=1.02))
    return figure(data, layout)


def differences(diffs: list[dict], height: int = 320) -> object:
    """One row a comparison a − b: each seed's difference (open dots, with its bootstrap interval over validation
    sequences) and, from two seeds on, the mean over seeds (a filled diamond, with its 95 % t-interval over seeds); 0 is
    'no difference'."""
    data = []
    labels = [zoo.label(d, len({d["budget"] for d in diffs}) > 1) for d in diffs]
    for d, label in zip(diffs, labels):
        color = scheme_style(d["a"]).color
        seeds = d["per_seed"]
        lo = [p["difference"] - p["bootstrap95"][0] if p["bootstrap95"] else 0 for p in seeds]
        hi = [p["bootstrap95"][1] - p["difference"] if p["bootstrap95"] else 0 for p in seeds]
        data.append(dict(type="scatter", mode="markers", x=[p["difference"] for p in seeds], y=[label] * len(seeds),
                         marker=dict(symbol="circle-open", size=10, color=color, line=dict(width=2)),
                         error_x=dict(type="data", symmetric=False, array=hi, arrayminus=lo, color=color, thickness=1),
                         text=[f"seed {p['seed']}" for p in seeds], showlegend=False,
                         hovertemplate="%{y}, %{text}: %{x:+.3f} nats<extra></extra>"))
        t95 = d["t95"]
        if t95 is None:  # one seed: its dot is all there is, no mean over seeds to draw
            continue
        data.append(dict(type="scatter", mode="markers", x=[d["mean"]], y=[label], showlegend=False,
                         marker=dict(symbol="diamond", size=14, color=color, line=dict(color="#222", width=1)),
                         error_x=dict(type="data", symmetric=False, array=[t95[1] - d["mean"]],
                                      arrayminus=[d["mean"] - t95[0]], color="#222", thickness=2.5, width=8),
                         hovertemplate=f"%{{y}}: mean %{{x:+.3f}} nats over {d['seeds']} seed(s)<extra></extra>"))
    ends = [0.0] + [x for d in diffs for x in (d["t95"] or [])] + \
        [x for d in diffs for p in d["per_seed"] for x in (p["bootstrap95"] or [p["difference"]])]
    layout = base_layout(height, margin=dict(l=250, r=30, t=20, b=60), showlegend=False,
                         xaxis=dict(title=dict(text="difference in held-out loss, nats (> 0: the second is better)"),
                                    range=padded_range(ends), zeroline=True, zerolinecolor=GUIDE_COLOR,
                                    zerolinewidth=2),
                         yaxis=dict(autorange="reversed", categoryorder="array", categoryarray=labels))
    return figure(data, layout)


def gaps(paths: list[dict], height: int = 400) -> object:
    """The gap a − b along training (zoo.paths), one line per budget and seed: left against tokens seen, each run's
    plateau exit marked on the line in its scheme's colour and marker; right aligned at those exits (steps after
    each run's own). A longer budget's lines are drawn heavier; 0 is 'no gap'."""

    if not paths:
        return figure([], base_layout(height))
    a, b = paths[0]["a"], paths[0]["b"]
    longest = max(p["budget"] for p in paths)
    color = scheme_style(a).color
    data, shown = [], set()
    for p in paths:
        group = zoo.millions(p["budget"])
        seeds = sorted(q["seed"] for q in paths if q["budget"] == p["budget"])
        name = f"{group} tokens, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"
        several = len({q["budget"] for q in paths}) > 1  # then the shorter budgets' lines recede
        faint = several and p["budget"] != longest
        line = dict(color=_rgba(color, 0.55) if faint else color, width=1.5 if faint else (3 if several else 2),
                    dash="dot" if faint else "solid")
        hover = f"{group}, seed {p['seed']}"
        data.append(dict(type="scatter", mode="lines", x=np.array(p["tokens"]) / 1e6, y=p["difference"],
                         name=name, legendgroup=group, showlegend=group not in shown, line=line,
                         hovertemplate=f"{hover}<br>%{{x:.1f}} M tokens<br>gap %{{y:+.3f}} nats<extra></extra>"))
        data.append(dict(type="scatter", mode="lines", x=p["after"], y=p["aligned"], legendgroup=group,
                         showlegend=False, line=line, xaxis="x2", yaxis="y2",
                         hovertemplate=f"{hover}<br>%{{x:,}} steps after each exit<br>gap %{{y:+.3f}} nats"
                                       "<extra></extra>"))
        shown.add(group)
    for i, scheme in enumerate((a, b)):  # each run's exit on its path: where its context effect first reaches 1 nat
        style = scheme_style(scheme)
        at = [(t / 1e6, dict(zip(p["step"], p["difference"]))[e]) for p in paths
              for e, t in [(p["exit"][i], p["exit_tokens"][i])] if e is not None and e in p["step"]]
        data.append(dict(type="scatter", mode="markers", x=[x for x, _ in at], y=[y for _, y in at],
                         name=f"{get_scheme(scheme).short} leaves the plateau",
                         marker=dict(symbol=style.symbol.replace("-open", ""), size=11, color=style.color,
                                     line=dict(color="#222", width=1)),
                         hovertemplate=f"{get_scheme(scheme).short}: context effect ≥ {zoo.EXIT_NATS:g} nat "
                                       "at %{x:.1f} M tokens<extra></extra>"))
    ys = [y for p in paths for y in p["difference"] + p["aligned"]] + [0.0]
    layout = subplots_layout(1, 2, shared_yaxes=True, horizontal_spacing=0.06, subplot_titles=[
        "against tokens seen", "aligned at each run's plateau exit"])
    layout.update(base_layout(height, margin=dict(l=70, r=20, t=110, b=60),
                              title=dict(text=f"{zoo.label(paths[0])}: the gap in held-out loss along training",
                                         x=0, xanchor="left", y=0.98, yanchor="top", font=dict(size=15)),
                              legend=dict(orientation="h", yanchor="bottom", y=1.1, xanchor="left", x=0)))
    zero = dict(zeroline=True, zerolinecolor=GUIDE_COLOR, zerolinewidth=2)
    layout["xaxis"].update(title=dict(text="tokens seen (millions)"), zeroline=False)
    layout["xaxis2"].update(title=dict(text="steps after the run's own exit"), zeroline=False, separatethousands=True)
    layout["yaxis"].update(title=dict(text="gap (nats; > 0: the second is better)"), range=padded_range(ys), **zero)
    layout["yaxis2"].update(**zero)
    return figure(data, layout)
