"""Figures of the splitting lab: toy-ODE results (macaron.lab) and layer measures (macaron.studies.bridge) in,
Plotly figures out.

One colour, one marker and one dash per scheme, the same in every figure (style.SCHEME_STYLE);
the exact flow is always black.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..lab import EXPECTED_ORDER, ROUNDOFF, ConvergenceStudy, ParticlePaths, distance, is_roundoff, ratio_summary
from ..schemes import ALIASES, SCHEMES, Scheme
from .style import (
    EXACT_COLOR,
    FONT,
    GUIDE_COLOR,
    SLOT_COLORS,
    SchemeStyle,
    base_layout,
    esc,
    figure,
    ink,
    padded_range,
    play_controls,
    scheme_name,
    scheme_style,
)

LAB_FONT = dict(FONT, size=15)    # the lab is read from the back of a room: one size up
LAB_PLAY_MS = 600                 # a toy step is a whole layer: a slower beat than the sub-steps
ANIM_TOP, ANIM_BOTTOM = 104, 120  # pixels above the plane (readout, legend) and below (time slider)


def _scheme(name: str) -> Scheme:
    """The registered scheme, or a stand-in that names an unregistered one by its key."""
    return SCHEMES.get(name) or Scheme(name, (), name, name, "", "")


def _r(a) -> np.ndarray:
    """Coordinates as float32 arrays: Plotly checks arrays at once (not element by element) and sends
    them as compact binary; 7 digits are more than a screen shows."""
    return np.asarray(a, np.float32)


def _polylines(paths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y of many polylines in one trace: paths [m, L, 2] → [m·(L+1)], NaN between lines."""
    m, L = paths.shape[:2]
    out = np.full((m, L + 1, 2), np.nan, np.float32)
    out[:, :L] = paths
    return out[..., 0].ravel(), out[..., 1].ravel()


def _segments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x and y of the segments a[i] → b[i], NaN between them."""
    return _polylines(np.stack([a, b], axis=1))


def lies_on(drawn: dict[str, np.ndarray], tolerance: float, errors: dict[str, np.ndarray]) -> list[tuple]:
    """(b, a, equal) for each line b drawn on an earlier line a (within `tolerance` at every point, in the units
    `drawn`), so that the one drawn last hides the other; `equal`: their `errors` are the same to round-off (with exact
    sub-flows the control's ½G, ½G is one G, and its errors are Lie–Trotter's)."""
    names, out = list(drawn), []
    for i, b in enumerate(names):
        a = next((a for a in names[:i] if np.max(np.abs(drawn[a] - drawn[b])) <= tolerance), None)
        if a is not None:
            out.append((b, a, is_roundoff(np.asarray(errors[a]) - np.asarray(errors[b]))))
    return out


def lies_on_note(pairs: list[tuple], xref: str, yref: str,
                 looks: dict[str, tuple[str, SchemeStyle]] | None = None) -> list[dict]:
    """A note in the top left of a panel naming each line that lies on another (none: no note); `looks` names
    the keys that are not registered schemes, as in `convergence`."""
    looks = looks or {}

    def named(s: str) -> str:
        name, look = looks.get(s, (_scheme(s).short, scheme_style(s)))
        return f"<span style='color:{ink(look.color)}'><b>{esc(name)}</b></span>"

    if not pairs:
        return []
    said = [f"{named(b)} lies {'on' if equal else 'almost on'} {named(a)}" for b, a, equal in pairs]
    return [dict(text="<br>".join(said), x=0.02, y=0.98, xref=f"{xref} domain", yref=f"{yref} domain",
                 xanchor="left", yanchor="top", showarrow=False, align="left", bgcolor="rgba(255,255,255,0.85)",
                 font=dict(size=14))]


# ---- 1 · particles under the exact flow and under each scheme ---------------------------------------
def _readout(t: float, k: int, n_steps: int, h: float, errors: dict[str, float]) -> str:
    parts = [f"<span style='color:{ink(scheme_style(s).color)}'><b>{esc(_scheme(s).short)}</b> {e:.3g}</span>"
             for s, e in errors.items()]
    head = f"<b>t = {t:.3g}</b> · step {k} of {n_steps} (h = {h:.3g})"
    if not parts:
        return head
    lines = [" · ".join(parts[i:i + 3]) for i in range(0, len(parts), 3)]  # at most 3 per line
    return head + "<br><span style='font-size:14px'>RMS distance to exact: " + \
        "<br>".join(lines) + "</span>"


def toy_particles(paths: ParticlePaths, dense_times: np.ndarray | None = None,
                  dense_exact: np.ndarray | None = None, *, magnify: float = 1.0, height: int = 620,
                  start: int | None = None) -> go.Figure:
    """Animated plane: the exact flow (black dots, grey paths) and every scheme in `paths` at times
    k·h, with a line from each scheme's particle to where the particle really is; beside it the
    RMS error of each scheme over time, with the current frame marked.

    `magnify` > 1 draws each scheme's particle at exact + magnify·(scheme − exact): the direction of
    the error is kept, its length scaled (the right panel always shows true errors).
    """
    times = np.asarray(paths.times, float)
    exact = np.asarray(paths.exact, float)
    K = len(times)
    n_steps = K - 1
    h = float(times[1] - times[0]) if K > 1 else 0.0
    names = [s for s in SCHEMES if s in paths.schemes] + [s for s in paths.schemes if s not in SCHEMES]
    drawn = {s: exact + magnify * (np.asarray(paths.schemes[s], float) - exact) for s in names}
    errs = {s: distance(paths.schemes[s], exact) for s in names}
    per_particle = {s: np.sqrt(np.sum((np.asarray(paths.schemes[s]) - exact) ** 2, axis=-1)) for s in names}
    start = n_steps if start is None else int(np.clip(start, 0, n_steps))

    pts = [exact.reshape(-1, 2)] + [d.reshape(-1, 2) for d in drawn.values()]
    if dense_exact is not None:
        pts.append(np.asarray(dense_exact).reshape(-1, 2))
    allp = np.concatenate(pts)
    xr, yr = padded_range(allp[:, 0], 0.06), padded_range(allp[:, 1], 0.06)
    # the plane to scale, unless the cloud is so elongated that it would shrink to a strip
    aspect = (yr[1] - yr[0]) / (xr[1] - xr[0])
    to_scale = 0.5 <= aspect <= 2.0
    ymax = max((float(e.max()) for e in errs.values()), default=0.0)
    ymax = ymax * 1.15 if ymax > 0 else 1.0

    # static traces: exact paths (grey), error-over-time lines
    if dense_exact is not None:
        dense = np.asarray(dense_exact, float)
    else:
        dense = exact
    path_xy = _polylines(dense.transpose(1, 0, 2))
    static_paths = dict(type="scatter", mode="lines", x=path_xy[0], y=path_xy[1], name="exact paths",
                        line=dict(color="rgba(0,0,0,0.18)", width=1.2), hoverinfo="skip", legendgroup="exact",
                        showlegend=False, xaxis="x", yaxis="y")
    err_lines = _error_lines(times, errs)

    def dynamic(f: int) -> list[dict]:
        out = []
        for s in names:
            sx, sy = _segments(drawn[s][f], exact[f])
            out.append(dict(type="scatter", mode="lines", x=sx, y=sy, name=f"{_scheme(s).short} error",
                            line=dict(color=scheme_style(s).color, width=2), hoverinfo="skip", legendgroup=s,
                            showlegend=False, xaxis="x", yaxis="y"))
        for s in names:
            out.append(dict(type="scatter", mode="markers", x=_r(drawn[s][f][:, 0]), y=_r(drawn[s][f][:, 1]),
                            name=esc(scheme_name(s)), legendgroup=s,
                            marker=dict(symbol=scheme_style(s).symbol, size=13, color=scheme_style(s).color,
                                        line=dict(width=2.2, color=scheme_style(s).color)),
                            customdata=_r(per_particle[s][f]), xaxis="x", yaxis="y",
                            hovertemplate=(f"particle %{{pointNumber}}<br>{esc(_scheme(s).short)}<br>"
                                           "distance to exact %{customdata:.3g}<extra></extra>")))
        out.append(dict(type="scatter", mode="markers", x=_r(exact[f][:, 0]), y=_r(exact[f][:, 1]),
                        name="exact flow", legendgroup="exact",
                        marker=dict(size=7, color=EXACT_COLOR, line=dict(width=1, color="white")),
                        hovertemplate="particle %{pointNumber}<br>exact flow<extra></extra>",
                        xaxis="x", yaxis="y"))
        # the current error of every scheme: one trace (fewer traces per frame = a faster page)
        out.append(dict(type="scatter", mode="markers", x=[float(times[f])] * len(names),
                        y=[float(errs[s][f]) for s in names], name="now", showlegend=False,
                        marker=dict(size=14, color=[scheme_style(s).color for s in names],
                                    symbol=[scheme_style(s).symbol.replace("-open", "") for s in names],
                                    line=dict(width=1.5, color="white")),
                        hoverinfo="skip", xaxis="x2", yaxis="y2"))
        out.append(dict(type="scatter", mode="lines", x=[float(times[f])] * 2, y=[0, ymax], name="now",
                        line=dict(color="#555", width=1, dash="dot"), hoverinfo="skip", showlegend=False,
                        xaxis="x2", yaxis="y2"))
        return out

    n_static_before = 1
    data = [static_paths] + dynamic(start) + err_lines
    n_dyn = len(data) - 1 - len(err_lines)
    dyn_idx = list(range(n_static_before, n_static_before + n_dyn))
    # the frames update the dynamic traces only; the static ones stay
    frames = [dict(name=str(f), data=dynamic(f), traces=dyn_idx,
                   layout=dict(title=dict(text=_readout(times[f], f, n_steps, h,
                                                        {s: float(errs[s][f]) for s in names}))))
              for f in range(K)]
    top = ANIM_TOP + (46 if len(names) > 3 else 0)  # more than 3 schemes: legend and readout take two rows
    plot_h = max(260, height - top - ANIM_BOTTOM)  # pixels of the plotting area
    annotations = _toy_notes(errs, ymax, magnify, to_scale)
    plane_y = dict(range=yr, autorange=False, zeroline=False)
    if to_scale:
        plane_y.update(scaleanchor="x", scaleratio=1, constrain="domain")
    layout = base_layout(
        top + plot_h + ANIM_BOTTOM, font=LAB_FONT,
        title=dict(text=_readout(times[start], start, n_steps, h, {s: float(errs[s][start]) for s in names}),
                   x=0.0, xanchor="left", xref="paper", y=1.0 - 14 / (top + plot_h + ANIM_BOTTOM),
                   yanchor="top", font=dict(size=17)),
        margin=dict(l=50, r=20, t=top, b=ANIM_BOTTOM),
        uirevision="lab-particles",
        annotations=annotations,
        xaxis=dict(domain=[0.0, 0.6], range=xr, autorange=False, zeroline=False, constrain="domain"),
        yaxis=plane_y,
        xaxis2=dict(domain=[0.7, 1.0], range=padded_range([0.0, float(times[-1])], 0.04), autorange=False,
                    title=dict(text="time t", standoff=4), anchor="y2"),
        yaxis2=dict(range=[0, ymax], autorange=False, title=dict(text="RMS distance to exact"), anchor="x2",
                    rangemode="tozero", exponentformat="power"),
        legend=dict(orientation="h", yanchor="bottom", y=1.0 + 10 / plot_h, x=0.0, xanchor="left",
                    font=dict(size=14), itemsizing="constant"),
    )
    layout.update(play_controls([str(f) for f in range(K)], _thinned([f"{t:.3g}" for t in times]), start, plot_h,
                                ms=LAB_PLAY_MS))
    return figure(data, layout, frames)


def _error_lines(times: np.ndarray, errs: dict[str, np.ndarray]) -> list[dict]:
    """The right panel's lines: each scheme's RMS distance to the exact flow over time."""
    return [dict(type="scatter", mode="lines+markers", x=_r(times), y=_r(e), name=_scheme(s).short,
                 line=dict(color=scheme_style(s).color, width=3, dash=scheme_style(s).dash),
                 marker=dict(size=5, color=scheme_style(s).color), legendgroup=s, showlegend=False,
                 hovertemplate=f"{esc(_scheme(s).short)}<br>t = %{{x:.3g}}<br>RMS error %{{y:.3g}}<extra></extra>",
                 xaxis="x2", yaxis="y2") for s, e in errs.items()]


def _toy_notes(errs: dict[str, np.ndarray], ymax: float, magnify: float, to_scale: bool) -> list[dict]:
    """The toy figure's notes: which error line lies on another (within 1 % of the axis), and in the plane's
    corner what is drawn other than to scale."""
    annotations = lies_on_note(lies_on(errs, 0.01 * ymax, errs), "x2", "y2")
    notes = ([f"scheme errors drawn ×{magnify:g}"] if magnify != 1 else []) + \
        ([] if to_scale else ["x and y not to the same scale"])
    if notes:
        annotations.append(dict(text="<b>" + "<br>".join(notes) + "</b>", x=0.0, y=1.0, xref="x domain",
                                yref="y domain", xanchor="left", yanchor="top", showarrow=False, align="left",
                                bgcolor="rgba(255,255,255,0.85)", font=dict(size=14, color="#444")))
    return annotations


def _thinned(labels: list[str], most: int = 12) -> list[str]:
    """A long time grid: label every few frames so the slider's ticks stay readable."""
    every = max(1, int(np.ceil(len(labels) / most)))
    return [lab if (i % every == 0 or i == len(labels) - 1) else "" for i, lab in enumerate(labels)]


# ---- 2 · error against step size, log-log -----------------------------------------------------------
def slope_text(slope: float, errors) -> str:
    return "exact" if is_roundoff(errors) else f"{slope:.2f}"


def convergence(study: ConvergenceStudy, solver: str, schemes: Sequence[str] | None = None,
                plot_height: int = 360, looks: dict[str, tuple[str, SchemeStyle]] | None = None,
                error: str = "RMS error") -> go.Figure:
    """Two log-log panels: local error of one step against h, global error at the horizon against
    h = horizon / n. Dashed grey guides ∝ h¹, h², h³; the fitted slopes are in the legend. `looks`
    names and draws study keys that are not registered schemes: {key: (legend name, style)}; `error`
    names what was measured (the y axis)."""
    looks = looks or {}
    names = [s for s in (schemes or [*SCHEMES, *looks]) if s in study.local_error and solver in study.local_error[s]]
    panels = [("x", "y", np.asarray(study.h, float), study.local_error, study.local_slope, (2, 3)),
              ("x2", "y2", np.asarray(study.global_h, float), study.global_error, study.global_slope, (1, 2))]
    data, annotations, ys = [], [], []
    floor = ROUNDOFF * 1e-4
    for s in names:
        st_, look = _scheme(s), scheme_style(s)
        title = f"{esc(st_.short)} ({esc(st_.layer)})"
        if s in looks:
            title, look = esc(looks[s][0]), looks[s][1]
        loc, glo = study.local_error[s][solver], study.global_error[s][solver]
        legend = (f"{title} · slope local {slope_text(study.local_slope[s][solver], loc)},"
                  f" global {slope_text(study.global_slope[s][solver], glo)}")
        for i, (xa, ya, x, err, _slope, _orders) in enumerate(panels):
            y = np.maximum(np.asarray(err[s][solver], float), floor)
            ys.append(y)
            n_txt = ([f"n = {int(m)} steps" for m in study.n_steps] if i == 1 else [""] * len(x))
            data.append(dict(type="scatter", mode="lines+markers", x=_r_sig(x), y=_r_sig(y), name=legend,
                             legendgroup=s, showlegend=i == 0, xaxis=xa, yaxis=ya, text=n_txt,
                             line=dict(color=look.color, width=3, dash=look.dash),
                             marker=dict(size=8, color=look.color, symbol=look.symbol.replace("-open", "")),
                             hovertemplate=(f"{title}<br>h = %{{x:.3g}} %{{text}}<br>"
                                            f"{error} %{{y:.3g}}<extra></extra>")))
    dashes = {1: "dot", 2: "dash", 3: "longdash"}
    for i, (xa, ya, x, err, _slope, orders) in enumerate(panels):
        real = [np.asarray(err[s][solver], float) for s in names if not is_roundoff(err[s][solver])]
        guides = {}
        for p in orders:
            # under every curve at every h (a third of the way down at the closest point): guides never cross data
            c = min(float(np.min(r / x ** p)) for r in real) / 3 if real else 1e-3 / x.max() ** p
            guides[p] = g = c * x ** p
            ys.append(g)
            data.append(dict(type="scatter", mode="lines", x=_r_sig(x), y=_r_sig(g), name=f"∝ h{_sup(p)}",
                             legendgroup=f"guide{p}", showlegend=False, xaxis=xa, yaxis=ya, hoverinfo="skip",
                             line=dict(color=GUIDE_COLOR, width=1.6, dash=dashes[p])))
        # label the guides at the end where they are furthest apart (they may share the other end)
        ends = {end: np.ptp([np.log10(g[k]) for g in guides.values()]) for end, k in
                (("left", int(np.argmin(x))), ("right", int(np.argmax(x))))}
        left = ends["left"] > ends["right"]
        k = int(np.argmin(x)) if left else int(np.argmax(x))
        for p, g in guides.items():
            annotations.append(dict(x=float(np.log10(x[k])), y=float(np.log10(g[k])), xref=xa, yref=ya,
                                    text=f"<b>∝ h{_sup(p)}</b>", showarrow=False, xanchor="right",
                                    xshift=-4 if left else 0, yanchor="middle" if left else "top",
                                    yshift=0 if left else -3, font=dict(size=15, color=GUIDE_COLOR)))
    allv = np.concatenate(ys) if ys else np.array([1e-3, 1.0])
    lo, hi = np.log10(max(allv.min(), floor)), np.log10(allv.max())
    yrange = [lo - 0.25, hi + 0.25]
    ydtick = max(1, int(np.ceil((yrange[1] - yrange[0]) / 9)))  # at most ~9 labelled decades

    span = yrange[1] - yrange[0]  # decades: a line within 1 % of the axis of another is drawn on it
    for xa, ya, _, err, *_ in panels:
        logs = {s: np.log10(np.maximum(np.asarray(err[s][solver], float), floor)) for s in names}
        annotations += lies_on_note(lies_on(logs, 0.01 * span, {s: err[s][solver] for s in names}), xa, ya, looks)

    def xaxis(x, title, domain, anchor):
        ticks = nice_ticks(x.min(), x.max())
        return dict(type="log", domain=domain, title=dict(text=title), anchor=anchor, tickvals=ticks,
                    ticktext=[f"{t:g}" for t in ticks], range=[np.log10(x.min()) - 0.28, np.log10(x.max()) + 0.08],
                    autorange=False)

    titles = [dict(text="<b>Local error</b>: one step of size h", x=0.23, xref="paper", y=1.0, yref="paper",
                   showarrow=False, xanchor="center", yanchor="bottom", font=dict(size=16)),
              dict(text=f"<b>Global error</b> at t = {study.horizon:g}: n steps of h = {study.horizon:g}/n",
                   x=0.77, xref="paper", y=1.0, yref="paper", showarrow=False, xanchor="center", yanchor="bottom",
                   font=dict(size=16))]
    bottom = 78 + 26 * max(1, len(names))  # axis titles, then one legend row per scheme
    layout = base_layout(
        40 + plot_height + bottom, font=LAB_FONT,
        margin=dict(l=70, r=20, t=40, b=bottom),
        xaxis=xaxis(panels[0][2], "step size h", [0.0, 0.46], "y"),
        yaxis=dict(type="log", title=dict(text=error), anchor="x", exponentformat="power", range=yrange,
                   autorange=False, dtick=ydtick),
        xaxis2=xaxis(panels[1][2], "step size h = T / n", [0.54, 1.0], "y2"),
        yaxis2=dict(type="log", anchor="x2", exponentformat="power", range=yrange, autorange=False,
                    matches="y", dtick=ydtick),
        annotations=titles + annotations,
        legend=dict(orientation="v", yanchor="top", y=-72 / plot_height, x=0.0, xanchor="left",
                    font=dict(size=14)),
    )
    return figure(data, layout)


def nice_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 values from lo to hi (plain numbers read better than powers on a short log axis)."""
    out = []
    for e in range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1):
        for m in (1, 2, 5):
            v = float(f"{m * 10.0 ** e:.12g}")
            if lo * 0.999 <= v <= hi * 1.001:
                out.append(v)
    return out


def _r_sig(a) -> list:
    """Round to 6 significant digits (log axes: decimals would flatten small errors)."""
    a = np.asarray(a, float)
    return [float(f"{v:.6g}") for v in a]


def _sup(p: int) -> str:
    return {1: "¹", 2: "²", 3: "³"}.get(p, f"^{p}")


def _measured(slope: float, errors, expected: int | None, interval=None) -> str:
    if is_roundoff(errors):
        return "exact (round-off)"
    ci = f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval is not None else ""
    return slope_text(slope, errors) + ci + (f" (h{_sup(expected)})" if expected else "")


def slope_rows(study: ConvergenceStudy, schemes: Sequence[str] | None = None,
               solvers: Sequence[str] = ("exact", "euler"), record: dict | None = None) -> list[dict]:
    """One row per scheme × sub-flow solver: measured and expected orders (for a table). `record`
    (macaron.studies.orders' measured orders of a trained model) gives the intervals of the slopes and the model's own
    expected orders."""
    ci = lambda part, s, solver: record[f"{part}_slope"][s][solver][1:] if record else None  # noqa: E731
    rows = []
    for solver in solvers:
        for s in (schemes or SCHEMES):
            if s not in study.local_error or solver not in study.local_error[s]:
                continue
            exp_local, exp_global = record["expected"][s][solver] if record else EXPECTED_ORDER.get((s, solver),
                                                                                                    (None, None))
            loc, glo = study.local_error[s][solver], study.global_error[s][solver]
            rows.append({
                "scheme": _scheme(s).title,
                "network layer": _scheme(s).layer,
                "sub-flows": "exact" if solver == "exact" else "one Euler step each",
                "local slope": _measured(study.local_slope[s][solver], loc, exp_local, ci("local", s, solver)),
                "global slope": _measured(study.global_slope[s][solver], glo, exp_global, ci("global", s, solver)),
                "error at finest h": f"{float(np.asarray(glo)[-1]):.2g}",
            })
    return rows


def untied_rows(studies: dict[float, ConvergenceStudy]) -> list[dict]:
    """One row per ε of Strang–Marchuk with exact sub-flows and untied halves G ± εΔ (a study each,
    macaron.lab.untied): its measured local and global slopes, and its local error at the smallest h."""
    rows = []
    for eps, s in studies.items():
        loc, glo = s.local_error["strang"]["exact"], s.global_error["strang"]["exact"]
        rows.append({"ε": f"{eps:g}",
                     "local slope (exact sub-flows)": slope_text(s.local_slope["strang"]["exact"], loc),
                     "global slope": slope_text(s.global_slope["strang"]["exact"], glo),
                     f"local error at h = {s.h[0]:.2g}": f"{loc[0]:.2g}"})
    return rows


# ---- 2b · many random systems -------------------------------------------------------------------------
def ratio_histogram(ratios: np.ndarray, height: int = 340) -> go.Figure:
    """The ratio of global errors Strang / Lie–Trotter over random systems, on a log₂ axis: left of the
    line Strang is the more accurate, right of it Lie–Trotter."""
    r = np.log2(np.clip(np.asarray(ratios, float), 1e-6, None))
    lo, hi = min(r.min(), -0.05), max(r.max(), 0.05)
    pad = 0.04 * (hi - lo)
    edges = np.linspace(lo - pad, hi + pad, 33)
    edges -= edges[np.argmin(np.abs(edges))]  # a bin edge at ratio 1: no bar straddles the line
    counts, _ = np.histogram(r, edges)
    mids = (edges[:-1] + edges[1:]) / 2
    data = []
    for name, keep, look in (("Strang–Marchuk more accurate", mids < 0, scheme_style("strang")),
                             ("Lie–Trotter more accurate", mids >= 0, scheme_style("lie-trotter"))):
        data.append(dict(type="bar", x=_r(mids[keep]), y=counts[keep].tolist(), width=float(edges[1] - edges[0]),
                         name=name, marker=dict(color=look.color, line=dict(color="#333", width=0.5)),
                         hovertemplate="ratio %{customdata:.2f}: %{y} systems<extra></extra>",
                         customdata=_r(2 ** mids[keep])))
    ticks = [np.log2(t) for t in (0.125, 0.25, 0.5, 0.7, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 4, 8)
             if edges[0] <= np.log2(t) <= edges[-1]]
    worse, median = ratio_summary(ratios)
    layout = base_layout(height, font=LAB_FONT, bargap=0.05, margin=dict(l=70, r=20, t=60, b=60),
                         xaxis=dict(title=dict(text="global error of Strang–Marchuk ÷ Lie–Trotter's"),
                                    tickvals=ticks, ticktext=[f"{2.0 ** t:.3g}" for t in ticks]),
                         yaxis=dict(title=dict(text="random systems")),
                         shapes=[dict(type="line", x0=0, x1=0, y0=0, y1=1, yref="paper",
                                      line=dict(color="#333", width=1.5, dash="dash"))],
                         annotations=[dict(x=0, y=1, yref="paper", xanchor="left", yanchor="bottom", showarrow=False,
                                           text=f"  {worse:.0%} of {len(r)} systems: Strang worse · median ratio "
                                                f"{median:.2f}", font=dict(size=14))],
                         legend=dict(orientation="h", yanchor="bottom", y=1.08, x=0.0, font=dict(size=14)))
    return figure(data, layout)


# ---- 3 · trained networks, layer by layer ------------------------------------------------------------
def spread_rows(spreads: dict[str, dict]) -> list[dict]:
    """One row per model, view and kind of sub-step: how often those sub-steps contract the particles and the median
    change of their spread. `spreads`: model name -> {view: macaron.studies.bridge.spread_change of that view}."""
    return [{"model": name, "view": view, "sub-steps": kind, "count": len(c),
             "share that contract": f"{np.mean(c < 0):.0%}", "median change of the spread": f"{np.median(c):+.1%}"}
            for name, views in spreads.items() for view, changes in views.items() for kind, c in changes.items()]


def layer_bars(series: Sequence[tuple], ytitle: str, height: int = 380, log: bool = False,
               line: tuple[float, str] | None = None) -> go.Figure:
    """Grouped bars, one group per layer: series = [(label, values per layer, colour[, pattern])]; a
    pattern ("/") marks a control. `line` = (value, words) draws a reference line."""
    data = []
    for label, values, color, *pattern in series:
        v = np.asarray(values, float)
        data.append(dict(type="bar", x=[f"layer {i + 1}" for i in range(len(v))], y=_r_sig(v), name=esc(label),
                         marker=dict(color=color, line=dict(color="#333", width=0.6),
                                     pattern=dict(shape=pattern[0] if pattern else "", fgcolor="#fff")),
                         text=[_bar_text(x, log) for x in v], textposition="outside",
                         textfont=dict(size=13), cliponaxis=False,
                         hovertemplate=f"{esc(label)}<br>%{{x}}: %{{y:.3g}}<extra></extra>"))
    values = np.concatenate([np.asarray(s[1], float) for s in series]) if series else np.array([1.0])
    if log:
        lo = np.log10(max(values[values > 0].min() if (values > 0).any() else 1e-3, 1e-6))
        yaxis = dict(type="log", range=[np.floor(lo) - 0.2, np.log10(values.max()) + 0.5], dtick=1)
    else:
        lo, hi = min(float(values.min()), 0.0), max(float(values.max()), 1e-6) * 1.25
        lo -= 0.1 * (hi - lo) * (lo < 0)  # a negative bar's number under it, clear of the layers' names
        yaxis = dict(range=[lo, hi], zeroline=True, zerolinecolor="#888")  # a negative cosine draws below the line
    shapes = []
    if line is not None and series:  # a reference level under the bars and their numbers, named in the legend
        look = dict(color=GUIDE_COLOR, width=1.5, dash="dash")
        shapes.append(dict(type="line", xref="paper", x0=0, x1=1, yref="y", y0=line[0], y1=line[0], line=look,
                           layer="below"))
        data.append(dict(type="scatter", mode="lines", x=[None], y=[None], name=esc(line[1]), line=look,
                         hoverinfo="skip"))
    layout = base_layout(height, font=LAB_FONT, barmode="group", bargap=0.22, bargroupgap=0.04, shapes=shapes,
                         margin=dict(l=70, r=20, t=70, b=40),
                         yaxis=dict(title=dict(text=ytitle), **yaxis),
                         xaxis=dict(title=dict(text=""), tickfont=dict(size=14)),
                         legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0,
                                     font=dict(size=14)))
    return figure(data, layout)


def _bar_text(x: float, log: bool) -> str:
    if log:
        return f"{x:.0f}" if x >= 10 else f"{x:#.2g}"  # two figures: 1.0 beside 0.92, not 1
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 100 else f"{x:.0f}"  # 81.2, not 81.21


def kappa_curves(curves: np.ndarray, scales: Sequence[float], title: str, height: int = 340) -> go.Figure:
    """κ(s) for every layer against the step scale s: flat lines have reached the small-step limit."""
    data = []
    for i, row in enumerate(np.asarray(curves, float)):
        shade = 0.25 + 0.75 * i / max(1, len(curves) - 1)
        data.append(dict(type="scatter", mode="lines+markers", x=list(scales), y=_r_sig(row),
                         name=f"layer {i + 1}", line=dict(color=f"rgba(40,40,40,{shade:.2f})", width=2.5),
                         marker=dict(size=7), hovertemplate=f"layer {i + 1}<br>s = %{{x:g}}: κ = %{{y:.3g}}"
                                                            "<extra></extra>"))
    layout = base_layout(height, font=LAB_FONT, margin=dict(l=70, r=20, t=50, b=60),
                         title=dict(text=esc(title), x=0.0, xanchor="left", font=dict(size=15)),
                         xaxis=dict(type="log", title=dict(text="step scale s (1 = the layer's own step)"),
                                    tickvals=list(scales), ticktext=[f"{s:g}" for s in scales], autorange="reversed"),
                         yaxis=dict(type="log", title=dict(text="κ(s)"), dtick=1),
                         legend=dict(orientation="v", x=1.02, xanchor="left", y=1.0, font=dict(size=13)))
    return figure(data, layout)


def model_colors(schemes: Sequence[str]) -> list[str]:
    """The colour of each trained model's bars: its scheme's colour, or slot colours if they clash."""
    names = [ALIASES.get(s, s) for s in schemes]
    colors = [scheme_style(s).color if s in SCHEMES else None for s in names]
    if None in colors or len(set(colors)) < len(colors):
        return [SLOT_COLORS[i % 2] for i in range(len(schemes))]
    return colors
