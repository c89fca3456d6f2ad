"""From the toy lab to trained networks: how far do a real model's layers meet the conditions of the
splitting story?

Strang's O(h³) local error in the step h needs (1) a small step, (2) both half-steps to run the same operator G,
and (3) each sub-flow solved exactly; Lie–Trotter's error comes from (4) the commutator of F and G.
On the states a sentence actually visits, measured per layer:

- `step_ratio`: ‖x_{l+1} − x_l‖ / ‖x_l‖. A Taylor expansion in the step is meaningful only where
  this is well below 1; in trained pre-LN models layer 1 moves the embedding by many times its own
  norm.
- `commutators`: κ = ‖Φ_B(s)Φ_A(s)x − Φ_A(s)Φ_B(s)x‖·‖x‖ / (s²‖h_A A(x)‖‖h_B B(x)‖), where Φ_K(s) runs
  sub-step K with s times its fraction h_K. Both compositions move x by s(h_A A + h_B B) to first
  order; their difference is s² h_A h_B (B'A − A'B) + O(s³). Dividing by s² makes κ a property of the
  two maps, not of the step (it converges as s → 0: the curve over s shows whether the real step,
  s = 1, is in that regime), and by the sizes of the two moves over ‖x‖ (the inverse scale of the
  Jacobians behind a LayerNorm) makes it dimensionless: 0 when the maps commute, of order 1 for
  unrelated maps. Attention∘FFN is shown beside a control of two maps that both act on each particle
  alone (Macaron: its two half-FFNs; Transformer: its FFN and the next layer's): if the control is as
  large, the number does not single out the interaction between particles. A sub-flow here is the
  move x + s·h_K·K(x), as the network computes it: pre-LN that is the whole sub-step; post-LN the
  LayerNorm after it is left out, since LN(x) ≠ x and with it the sub-step would not tend to the
  identity as s → 0 (no limit would exist). What that norm does is `norm_move`.
- `norm_move` (post-LN only): ‖LN_k(x) − x‖ / ‖x‖ at the state entering each sub-step, the norm's
  own move, which does not shrink with the step: what is left of a sub-step x ← LN(x + h·K(x)) as
  h → 0. Such a sub-step is a consistent step of an ODE only where this vanishes (LN_k the identity
  on the states visited); with LN's learned gain and bias different in every sub-step it need not.
  The move ‖h·K(x)‖ / ‖x‖ is returned beside it, for scale.
- `half_ffn_tie`: Macaron's two half-FFNs evaluated at the same state: ‖G₂(x) − G₁(x)‖/‖G₁(x)‖ and
  their cosine. 0 and 1 would be one operator (the tied Strang step).
- `spread_change`: how each sub-step changes the spread of the particles (RMS distance to their
  mean), raw and as the operators read them (each token standardised): does diffusion contract?
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from ..schemes import CONVECTION, DIFFUSION, FULL

SCALES = (1.0, 0.5, 0.25, 0.125, 0.0625)


def _parts(layer, kind: str) -> list[tuple[int, str | None]]:
    """(sub-step, part) of each operator of `kind` in a layer: its own sub-steps, or that part of an unsplit
    sub-step (F + G at once: GPT-NeoX's parallel block), which holds both operators."""
    return [(k, None if s.kind == kind else kind) for k, s in enumerate(layer.scheme) if s.kind in (kind, FULL)]


def _pairs(model, i: int) -> dict[str, tuple]:
    """((layer, sub-step, part) of A, (layer, sub-step, part) of B) for the attention∘FFN pair and the pointwise
    control."""
    att, ffn = _parts(model.layers[i], DIFFUSION), _parts(model.layers[i], CONVECTION)
    if not att or not ffn:
        raise ValueError(f"scheme {model.config.scheme!r} has no attention and FFN to swap")
    pairs = {"attention∘FFN": ((i, *att[0]), (i, *ffn[0]))}
    if len(ffn) > 1:
        pairs["FFN∘FFN (control)"] = ((i, *ffn[0]), (i, *ffn[1]))
    elif len(model.layers) > 1:
        other = i + 1 if i + 1 < len(model.layers) else i - 1
        pairs["FFN∘FFN (control)"] = ((i, *ffn[0]), (other, *_parts(model.layers[other], CONVECTION)[0]))
    return pairs


def as_float64(model):
    """A float64 copy (or the model, if it is one): the s² differences at s = 1/16 here, and the errors against
    an exact flow of macaron.studies.orders, must not drown in float32 rounding."""
    if next(model.parameters()).dtype == torch.float64:
        return model
    return copy.deepcopy(model).double().eval()


@torch.no_grad()
def commutators(model, trajectory, scales=SCALES) -> dict[str, np.ndarray]:
    """{pair: [n_layers, len(scales)]} of κ (mean over tokens) on the state entering each layer."""
    m = as_float64(model)
    states = _states(m, trajectory)  # float64, as the copy
    starts = trajectory.layer_boundaries()[:-1]
    positions = m.block_positions(states.shape[1])
    out: dict[str, list] = {}
    for i, start in enumerate(starts):
        x = states[start][None]
        for name, (a, b) in _pairs(m, i).items():

            def run(op, y, s):  # (layer, sub-step, part)'s move at s times the sub-step's fraction
                i_, k, part = op
                layer = m.layers[i_]
                return layer.move(k, y, s * layer.scheme[k].fraction, position=positions[i_], part=part)[0]

            move_a = (run(a, x, 1.0) - x).norm(dim=-1)
            move_b = (run(b, x, 1.0) - x).norm(dim=-1)
            scale = (move_a * move_b / x.norm(dim=-1)).clamp_min(1e-30)
            row = []
            for s in scales:
                ab = run(b, run(a, x, s), s)
                ba = run(a, run(b, x, s), s)
                row.append(((ab - ba).norm(dim=-1) / (s * s * scale)).mean().item())
            out.setdefault(name, []).append(row)
    return {k: np.array(v) for k, v in out.items()}


def commutator_limit(curves: np.ndarray, scales=SCALES) -> np.ndarray:
    """κ as s → 0, by Richardson extrapolation of the two smallest scales (κ(s) = κ₀ + O(s))."""
    s = np.asarray(scales)
    i, j = np.argsort(s)[:2]
    return (s[j] * curves[..., i] - s[i] * curves[..., j]) / (s[j] - s[i])


def unsettled(curves: np.ndarray, tolerance: float = 0.1) -> np.ndarray:
    """[n_layers] bool: κ(s) still changes by more than `tolerance` (relative) between the two smallest
    scales, so the small-step limit is not reached there and the extrapolated κ is not to be trusted."""
    a, b = curves[..., -1], curves[..., -2]
    return np.abs(a - b) > tolerance * np.maximum(np.abs(a), 1e-30)


def step_ratio(trajectory) -> np.ndarray:
    """[n_layers]: mean over tokens of ‖x_{l+1} − x_l‖ / ‖x_l‖ across each whole layer."""
    b = trajectory.layer_boundaries()
    x = np.asarray(trajectory.states, dtype=np.float64)[b]
    return (np.linalg.norm(np.diff(x, axis=0), axis=-1) / np.linalg.norm(x[:-1], axis=-1).clip(1e-30)).mean(-1)


def _states(model, trajectory) -> torch.Tensor:
    """A trajectory's states as a tensor of the model's dtype, on its device."""
    return torch.as_tensor(trajectory.states, dtype=next(model.parameters()).dtype, device=model.device)


@torch.no_grad()
def norm_move(model, trajectory) -> tuple[np.ndarray, np.ndarray]:
    """Post-LN: ([n_layers] norm's own move ‖LN_k(x) − x‖/‖x‖, [n_layers] the move ‖h_k·K(x)‖/‖x‖),
    each the mean over the layer's sub-steps and the tokens, at the state x entering sub-step k."""
    if model.config.norm != "post":
        raise ValueError("a pre-LN model has no LayerNorm on its residual stream")
    states = _states(model, trajectory)
    entering = iter(states)  # the state entering each sub-step, in order
    per_layer = []
    for layer, pos in zip(model.layers, model.block_positions(states.shape[1])):
        rows = []
        for k, sub in enumerate(layer.scheme):
            x = next(entering)[None]
            size = x.norm(dim=-1).clamp_min(1e-30)
            rows.append([((layer.norms[k](x) - x).norm(dim=-1) / size).mean().item(),
                         ((layer.move(k, x, sub.fraction, position=pos)[0] - x).norm(dim=-1) / size).mean().item()])
        per_layer.append(np.mean(rows, axis=0))
    return tuple(np.array(per_layer).T)


@dataclass
class Tie:
    relative_difference: np.ndarray  # [n_layers]: mean ‖G₂(x) − G₁(x)‖ / ‖G₁(x)‖
    cosine: np.ndarray               # [n_layers]: mean cos(G₁(x), G₂(x))


@torch.no_grad()
def half_ffn_tie(model, trajectory) -> Tie:
    """Macaron's two half-FFNs at the same state (the one entering the layer), as the network
    evaluates them (pre-LN: each through its own LayerNorm)."""
    states = _states(model, trajectory)
    rel, cos = [], []
    for layer, start in zip(model.layers, trajectory.layer_boundaries()[:-1]):
        ffn = [k for k, s in enumerate(layer.scheme) if s.kind == CONVECTION]
        if len(ffn) != 2:
            raise ValueError(f"scheme {model.config.scheme!r} does not have two half-FFNs per layer")
        x = states[start][None]
        g1, g2 = (layer.velocity(k, x)[0][0] for k in ffn)
        rel.append(((g2 - g1).norm(dim=-1) / g1.norm(dim=-1).clamp_min(1e-30)).mean().item())
        cos.append(torch.nn.functional.cosine_similarity(g1, g2, dim=-1).mean().item())
    return Tie(np.array(rel), np.array(cos))


def spread(x: np.ndarray) -> np.ndarray:
    """RMS distance of the particles to their mean: [...] for states [..., T, d]."""
    x = np.asarray(x, dtype=np.float64)
    return np.sqrt(((x - x.mean(-2, keepdims=True)) ** 2).sum(-1).mean(-1))


def standardised(states: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Each token standardised (LayerNorm without its weights): what the next operator reads."""
    x = np.asarray(states, dtype=np.float64)
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)


def spread_change(trajectory, normalised: bool = False) -> dict[str, np.ndarray]:
    """{kind: relative change of the spread in each sub-step of that kind}: negative = contraction."""
    x = standardised(trajectory.states) if normalised else trajectory.states
    s = spread(x)
    change = np.diff(s) / np.clip(s[:-1], 1e-30, None)
    out: dict[str, list] = {}
    for step, c in zip(trajectory.steps, change):
        out.setdefault(step.kind, []).append(c)
    return {k: np.array(v) for k, v in out.items()}


# ---- over a sentence set -------------------------------------------------------------------------
def summary(model, trajectories) -> dict:
    """Medians over sentences, per layer: step ratio, κ limits (each pair), the half-FFN tie, post-LN
    the norms' own move and the moves (`norm_move`, `move`); and per kind of sub-step and view, the
    share of sub-steps that contract the particles."""
    steps, kappas, ties, spreads, norms = [], {}, [], {}, []
    model = as_float64(model)  # once for every sentence
    for traj in trajectories:
        steps.append(step_ratio(traj))
        if model.config.norm == "post":
            norms.append(norm_move(model, traj))
        for pair, curves in commutators(model, traj).items():
            kappas.setdefault(pair, []).append(commutator_limit(curves))
        if sum(s.kind == CONVECTION for s in model.config.substeps) == 2:
            ties.append(half_ffn_tie(model, traj))
        for view in ("raw", "normalised"):
            for kind, change in spread_change(traj, view == "normalised").items():
                spreads.setdefault((view, kind), []).extend(change.tolist())
    out = {"sentences": len(steps), "step_ratio": np.median(steps, axis=0),
           "kappa": {pair: np.median(v, axis=0) for pair, v in kappas.items()},
           "contract": {f"{view} {kind}": float(np.mean(np.array(c) < 0)) for (view, kind), c in spreads.items()}}
    if norms:
        out["norm_move"], out["move"] = np.median(np.array(norms), axis=0)
    if ties:
        out["tie_cosine"] = np.median([t.cosine for t in ties], axis=0)
        out["tie_difference"] = np.median([t.relative_difference for t in ties], axis=0)
    return out


def main(argv=None) -> int:
    """python -m macaron.studies.bridge MODEL [MODEL ...] [--sentences all|everyday|technical|FILE] [--limit N]"""
    import argparse

    from ..sentences import read
    from ..sources.loading import load

    p = argparse.ArgumentParser(prog="python -m macaron.studies.bridge", description=main.__doc__)
    p.add_argument("models", nargs="+")
    p.add_argument("--sentences", default="all")
    p.add_argument("--limit", type=int, default=None, help="the first N sentences only")
    args = p.parse_args(argv)
    texts = read(args.sentences)[: args.limit]
    for name in args.models:
        model = load(name, device="cpu")
        s = summary(model, [model.trace(t) for t in texts])
        fmt = lambda a: " ".join(f"{x:.3g}" for x in a)  # noqa: E731
        print(f"{model.config.name} ({model.config.scheme}), median over {s['sentences']} sentences, per layer:")
        print(f"  step / state      {fmt(s['step_ratio'])}")
        if "norm_move" in s:
            print(f"  norm's own move   {fmt(s['norm_move'])}   (‖LN(x) − x‖/‖x‖, mean over the layer's sub-steps)")
            print(f"  move h·op / state {fmt(s['move'])}")
        for pair, k in s["kappa"].items():
            print(f"  κ {pair:<20} {fmt(k)}")
        if "tie_cosine" in s:
            print(f"  cos(G₁x, G₂x)     {fmt(s['tie_cosine'])}")
            print(f"  ‖G₂x−G₁x‖/‖G₁x‖   {fmt(s['tie_difference'])}")
        print("  share of sub-steps that contract: "
              + ", ".join(f"{k} {v:.0%}" for k, v in sorted(s["contract"].items())))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
