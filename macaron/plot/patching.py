"""The activation-patching map (macaron.interventions.patching_map) as a heatmap: one row per layer boundary, one
column per particle, each cell how much of the clean answer that one patch restores.

    pm = iv.patching_map(model, clean, corrupted, ("she", "he"))
    plot.patching.patching_map(pm, corrupted_tokens).show()
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from ..interventions import PatchingMap
from .style import base_layout, display_token, esc, figure, text_on

# The attribution strip's two colours (plot.guesses): blue toward the clean answer, orange away from it, white none
TOWARD, AWAY, NONE = "#2166AC", "#E66101", "#FFFFFF"
ANSWER_COLOR = "#111111"  # the outline of the answer's own column
ROW_PX, MIN_HEIGHT = 34, 340


def row_labels(pm: PatchingMap) -> list[str]:
    """Which state each row patches: the state entering layer 1 (the embedding), …, entering layer L, then the
    state after layer L (the one the head reads)."""
    n = len(pm.states) - 1  # layers
    return ["before layer 1 (embedding)"] + [f"before layer {k + 1}" for k in range(1, n)] + [f"after layer {n}"]


def column_labels(tokens: Sequence[str], corrupted: Sequence[str] | None = None) -> list[str]:
    """A particle's index and word; where the corrupted sentence has another word there, that word under it."""
    out = []
    for i, tok in enumerate(tokens):
        label = esc(display_token(tok, i))
        if corrupted is not None and corrupted[i] != tok:
            label += f"<br><i>{esc(display_token(corrupted[i]))}</i>"
        out.append(label)
    return out


def cell_colors(z: np.ndarray, reach: float) -> list[list[str]]:
    """The colour each cell is painted ('#rrggbb'): the colour scale, AWAY at −reach, white at 0, TOWARD at +reach,
    in straight lines between (as Plotly interpolates it)."""
    def rgb(color: str) -> np.ndarray:
        return np.array([int(color[i:i + 2], 16) for i in (1, 3, 5)], float)

    t = np.clip(np.asarray(z, float) / reach, -1, 1)[..., None]
    end = np.where(t >= 0, rgb(TOWARD), rgb(AWAY))
    mixed = np.rint(rgb(NONE) + np.abs(t) * (end - rgb(NONE))).astype(int)
    return [["#" + "".join(f"{v:02X}" for v in cell) for cell in row] for row in mixed]


def numbers(z: np.ndarray, reach: float) -> dict:
    """Each cell's number, written in black or white, whichever reads better on its colour (at least 4.5 : 1)."""
    rows, cols = np.indices(z.shape)
    ink = [text_on(c) for row in cell_colors(z, reach) for c in row]
    return dict(type="scatter", mode="text", x=cols.ravel().tolist(), y=rows.ravel().tolist(),
                text=[f"{v + 0.0:.2f}" for v in np.round(z, 2).ravel()],  # + 0.0: no "-0.00"
                textfont=dict(size=12, color=ink), hoverinfo="skip", showlegend=False)


def strongest(pm: PatchingMap) -> list[tuple[int, float]]:
    """Per row, (the particle whose patch restores most, what it restores)."""
    return [(int(np.argmax(r)), float(np.max(r))) for r in pm.restored]


def patching_map(pm: PatchingMap, corrupted_tokens: Sequence[str] | None = None, good: str = "", bad: str = "",
                 height: int | None = None) -> go.Figure:
    """Rows: the state patched, from the embedding down to the last state; columns: the particle patched (the clean
    sentence's words, the corrupted one's under them where they differ). Blue: the patch brings the logit
    difference back toward the clean run's (1: all the way), orange: further away; the answer's column outlined."""
    z = np.asarray(pm.restored, dtype=np.float64)
    rows, cols = row_labels(pm), column_labels(pm.tokens, corrupted_tokens)
    reach = max(1.0, float(np.nanmax(np.abs(z)))) if z.size else 1.0
    patched = pm.corrupted + z * (pm.clean - pm.corrupted)
    metric = f"logit({esc(good)}) − logit({esc(bad)})" if good and bad else "the logit difference"
    hover = [[f"{cols[t].split('<br>')[0]} patched {rows[r]}<br>restores <b>{z[r, t]:.2f}</b> of the clean answer"
              f"<br>{metric}: {patched[r, t]:+.2f} (clean {pm.clean:+.2f}, corrupted {pm.corrupted:+.2f})"
              for t in range(z.shape[1])] for r in range(z.shape[0])]
    data = [dict(type="heatmap", z=z, x=list(range(z.shape[1])), y=list(range(z.shape[0])),
                 zmin=-reach, zmax=reach, colorscale=[[0, AWAY], [0.5, NONE], [1, TOWARD]], xgap=1, ygap=1,
                 hovertext=hover, hoverinfo="text", colorbar=dict(title=dict(text="restored", side="right"),
                                                                  thickness=14,
                                                                  tickvals=[-1, 0, 1] if reach < 1.5 else None))]
    if z.shape[1] <= 24:  # the numbers fit in their cells
        data.append(numbers(z, reach))
    at = pm.position
    shapes = [dict(type="rect", xref="x", yref="y", x0=at - 0.5, x1=at + 0.5, y0=-0.5, y1=z.shape[0] - 0.5,
                   line=dict(color=ANSWER_COLOR, width=2), fillcolor="rgba(0,0,0,0)")]
    layout = base_layout(height or max(MIN_HEIGHT, ROW_PX * len(rows) + 120), shapes=shapes,
                         xaxis=dict(tickmode="array", tickvals=list(range(len(cols))), ticktext=cols, side="bottom",
                                    tickangle=0 if len(cols) <= 14 else -60, showgrid=False,
                                    title=dict(text="the particle patched (the corrupted word in italics)")),
                         yaxis=dict(tickmode="array", tickvals=list(range(len(rows))), ticktext=rows,
                                    autorange="reversed", showgrid=False, title=dict(text="the state patched")),
                         margin=dict(l=200, r=20, t=10, b=80))
    return figure(data, layout)
