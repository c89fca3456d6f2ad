"""The splitting order measured on a trained network's own fields.

A layer whose sub-steps K_k run for fractions a_k of its step h is consistent with the flow of one
vector field, V = Σ_k a_k·K_k (Lie–Trotter: F + G; Macaron: F + ½G₁ + ½G₂). Lie–Trotter and Strang
orders built from the same operators (macaron.studies.dynamics.as_scheme) are consistent with the same V, so
both can be held against V's exact flow, solved by torchdiffeq, from the states a sentence visits:

    local error e(s) = ‖scheme(s·h)x − Φ_V(s·h)x‖ / ‖x‖      at s = 1, ½, ¼, ⅛

and the slope of log e against log s is the local order. Over the model's whole time T = L·h, run as
L·n steps of h/n, the global error's slope against 1/n is one less (`global_orders`). The theorem (Lu et al., after
Strang) says: with each sub-flow solved exactly, 2 for Lie–Trotter and 3 for Strang when both halves are the same G;
with one Euler move per sub-step, as the network computes, 2 for both. On a post-LN model the state
lives where the norm puts it, and every field is the one the norm's Jacobian projects (J_N(x)·K(x): on a
model with `norm_affine=False` the tangent space of the sphere of radius √d); the Euler sub-step is the
network's own x ← N(x + s·h·K(x)). Whatever the slopes come out as is the result.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import torch
from torchdiffeq import odeint

from ..formats.folder import CheckpointError, read_json
from ..lab import ConvergenceStudy
from ..schemes import get_scheme
from ..sources.milestones import param_checksum
from .bridge import as_float64
from .dynamics import as_scheme

SCALES = (1.0, 0.5, 0.25, 0.125)
SCHEMES = ("lie-trotter", "strang")
SUBFLOWS = ("exact", "euler")
TOLERANCE = dict(rtol=1e-10, atol=1e-12, method="dopri5")
ERROR = "‖error‖ / ‖x‖"  # what is measured: mean over tokens of each error relative to the state
FILE = "orders.json"  # a model folder's measured orders (`--save`), what the Splitting lab and the lesson show


def _field(layer, k: int, fraction: float):
    """dx/dt of sub-step k run for `fraction` of the layer's step, as the state space sees it."""
    def f(t, x):
        v = layer.step * fraction * layer.velocity(k, x)[0]
        return torch.func.jvp(layer.norms[k], (x,), (v,))[1] if layer.post_norm else v
    return f


def _sum(fields):
    return lambda t, x: sum(f(t, x) for f in fields)


def _flow(field, x, time: float):
    return odeint(field, x, torch.tensor([0.0, time], dtype=x.dtype, device=x.device), **TOLERANCE)[-1]


def _scheme_step(layer, plan, x, s: float, subflow: str):
    """One step s·h of the layer's operators in `plan` ((k, fraction, moves), ...)."""
    for k, fraction, _ in plan:
        if subflow == "euler":
            x = layer.substep(k, x, fraction=s * fraction)[0]
        else:
            x = _flow(_field(layer, k, 1.0), x, s * fraction)
    return x


@dataclass
class Orders:
    """Local errors of each (scheme, sub-flows) against V's exact flow, and their fitted slopes."""

    scales: np.ndarray             # s, fractions of the model's step h
    errors: dict[str, np.ndarray]  # "strang · exact" -> [n_states, n_scales] ‖error‖/‖x‖, mean over tokens
    sentence: np.ndarray           # [n_states]: the sentence each state comes from
    model: str = ""

    def slope(self, key: str, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
        """(slope, 2.5 %, 97.5 %): log of the mean error against log s, bootstrapped over the sentences (the
        states of one sentence are not independent draws)."""
        e, logs = self.errors[key], np.log(self.scales)
        rows_of = [np.flatnonzero(self.sentence == k) for k in np.unique(self.sentence)]
        fit = lambda rows: np.polyfit(logs, np.log(e[rows].mean(0)), 1)[0]  # noqa: E731
        rng = np.random.default_rng(seed)
        boot = [fit(np.concatenate([rows_of[i] for i in rng.integers(0, len(rows_of), len(rows_of))]))
                for _ in range(n_boot)]
        return float(fit(np.arange(len(e)))), float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))


def _entering(model, text):
    """The states entering each layer (float64, on the model's device), each on the norm's image."""
    traj = model.trace(text)
    states = torch.as_tensor(traj.states, dtype=torch.float64, device=model.device)
    out = []
    for layer, b in zip(model.layers, traj.layer_boundaries()[:-1]):
        x = states[b][None]
        # post-LN: onto the norm's image (the embedding's norm can leave it short of the sphere: its eps
        # weighs on the embedding's small variance)
        out.append(layer.norms[0](x) if layer.post_norm else x)
    return out


def _check(model):
    if model.config.position == "floater" or model.config.norm == "post" and model.config.norm_affine:
        raise ValueError("the projected flow is defined for pre-LN models and post-LN models without gain or bias "
                         "(norm_affine=False), and not with FLOATER positions")


def _plans(model) -> dict[str, tuple]:
    """Each scheme's program from the model's operators; its own order runs as the network does."""
    own = get_scheme(model.config.scheme).name
    return {name: model.program() if name == own else as_scheme(model, name) for name in SCHEMES}


def _error(y, exact, x) -> float:
    return ((y - exact).norm(dim=-1) / x.norm(dim=-1)).mean().item()


@torch.no_grad()
def local_orders(model, texts, scales=SCALES, layers: tuple[int, ...] | None = None) -> Orders:
    """Local errors of Lie–Trotter and Strang steps, exact and Euler sub-flows, built from each
    layer's own operators, from the state entering that layer, over the sentences."""
    _check(model)
    model = as_float64(model)
    plans = _plans(model)
    errors: dict[str, list] = {f"{n} · {f}": [] for n in SCHEMES for f in SUBFLOWS}
    sentence = []
    for i, text in enumerate(texts):
        entering = _entering(model, text)
        for l in layers if layers is not None else range(len(model.layers)):
            sentence.append(i)
            layer, x = model.layers[l], entering[l]
            own = _sum([_field(layer, k, frac) for k, frac, _ in layer.plan])
            rows = {key: [] for key in errors}
            for s in scales:
                exact = _flow(own, x, s)
                for name in SCHEMES:
                    for subflow in SUBFLOWS:
                        rows[f"{name} · {subflow}"].append(_error(_scheme_step(layer, plans[name][l][1], x, s, subflow),
                                                                   exact, x))
            for key, row in rows.items():
                errors[key].append(row)
    return Orders(np.array(scales), {k: np.array(v) for k, v in errors.items()}, np.array(sentence), model.config.name)


@torch.no_grad()
def global_orders(model, texts, ns=(1, 2, 4, 8)) -> Orders:
    """Errors at the model's final time T of its layers run as L·n steps of h/n (each layer's step n
    times at scale 1/n) in each scheme, against the exact flow of each layer's V for its time h, from
    the state entering layer 1; the scales are 1/n."""
    _check(model)
    model = as_float64(model)
    plans = _plans(model)
    errors: dict[str, list] = {f"{n} · {f}": [] for n in SCHEMES for f in SUBFLOWS}
    for text in texts:
        x0 = exact = _entering(model, text)[0]
        for layer in model.layers:
            exact = _flow(_sum([_field(layer, k, frac) for k, frac, _ in layer.plan]), exact, 1.0)
        for name in SCHEMES:
            for subflow in SUBFLOWS:
                row = []
                for n in ns:
                    y = x0
                    for l, layer in enumerate(model.layers):
                        for _ in range(n):
                            y = _scheme_step(layer, plans[name][l][1], y, 1.0 / n, subflow)
                    row.append(_error(y, exact, x0))
                errors[f"{name} · {subflow}"].append(row)
    return Orders(1.0 / np.array(ns, dtype=float), {k: np.array(v) for k, v in errors.items()},
                  np.arange(len(texts)), model.config.name)


def expected(model) -> dict:
    """The theorem's (local, global) orders for each scheme and sub-flow kind, for this model: Strang's
    exact step is third order only with the same G in both halves (a Transformer's one FFN split in two,
    or a Macaron with tied halves); untied halves make it second, as Lie–Trotter is."""
    c = model.config
    tied = get_scheme(c.scheme).name != "strang" or c.tied_halves
    return {s: {f: [2, 1] if f == "euler" or s != "strang" or not tied else [3, 2] for f in SUBFLOWS}
            for s in SCHEMES}


def measure(model, texts, global_texts) -> dict:
    """Both studies as one JSON-ready record: mean errors against the real step size (s·h locally, T/(L·n) at
    T; stored under "gammas", the key every saved record has), each slope as [fit, 2.5 %, 97.5 %] bootstrapped over
    the sentences, and the theorem's orders."""
    c = model.config
    local, whole = local_orders(model, texts), global_orders(model, global_texts)
    record = dict(model=c.name, measured=str(date.today()), weights=weights_sha256(model), sentences=len(texts),
                  global_sentences=len(global_texts), states=len(local.errors["strang · exact"]),
                  gammas=(local.scales * c.step).tolist(), horizon=c.time,
                  n_steps=(c.n_layers / whole.scales).round().astype(int).tolist(), expected=expected(model))
    for part, orders in (("local", local), ("global", whole)):
        record[f"{part}_error"] = {s: {f: orders.errors[f"{s} · {f}"].mean(0).tolist() for f in SUBFLOWS}
                                   for s in SCHEMES}
        record[f"{part}_slope"] = {s: {f: list(orders.slope(f"{s} · {f}")) for f in SUBFLOWS} for s in SCHEMES}
    return record


def as_study(record: dict) -> ConvergenceStudy:
    """A record as the toy lab's study, so one chart (macaron.plot.convergence) draws both."""
    fits = {part: {s: {f: v[0] for f, v in d.items()} for s, d in record[f"{part}_slope"].items()}
            for part in ("local", "global")}
    arrays = {part: {s: {f: np.asarray(v) for f, v in d.items()} for s, d in record[f"{part}_error"].items()}
              for part in ("local", "global")}
    return ConvergenceStudy(record["model"], np.asarray(record["gammas"]), float(record["horizon"]),
                            np.asarray(record["n_steps"]), arrays["local"], arrays["global"], fits["local"],
                            fits["global"])


def read(folder, model=None) -> dict | None:
    """A model folder's measured orders; None where none were measured; CheckpointError if unreadable, or, given
    the folder's model, measured on other weights."""
    file = Path(folder) / FILE
    if not file.exists():
        return None
    record = read_json(file)
    again = f"measure them again with python -m macaron.studies.orders {folder} --save"
    if not _well_formed(record):
        raise CheckpointError(f"{file}: not a record of measured orders; {again}")
    if model is not None and record["weights"] != weights_sha256(model):
        raise CheckpointError(f"{file}: measured on other weights than the folder's; {again}")
    return record


def _well_formed(r) -> bool:
    """Every key the lab, the lesson and the card read, each of its shape."""
    try:
        n, m = len(r["gammas"]), len(r["n_steps"])
        float(r["horizon"]), str(r["model"]), str(r["measured"]), str(r["weights"])
        int(r["states"]), int(r["sentences"]), int(r["global_sentences"])
        return n > 1 and m > 1 and all(
            len(r[f"{part}_error"][s][f]) == size and len(r[f"{part}_slope"][s][f]) == 3
            and all(np.isfinite(float(v)) for v in (*r[f"{part}_error"][s][f], *r[f"{part}_slope"][s][f]))
            and len(r["expected"][s][f]) == 2
            for part, size in (("local", n), ("global", m)) for s in SCHEMES for f in SUBFLOWS)
    except (KeyError, TypeError, ValueError):
        return False


def weights_sha256(model) -> str:
    """What the record was measured on: the model's weights, as a hash (a folder's new weights make it stale)."""
    return param_checksum(model)[:16]


def main(argv=None) -> int:
    """python -m macaron.studies.orders MODEL [MODEL ...] [--sentences all|everyday|technical|FILE] [--limit N]"""
    import argparse

    from .. import sentences
    from ..sources.loading import load
    from ..sources.shipped import resolve

    p = argparse.ArgumentParser(prog="python -m macaron.studies.orders", description=main.__doc__)
    p.add_argument("models", nargs="+")
    p.add_argument("--sentences", default="all")
    p.add_argument("--limit", type=int, default=16, help="the first N sentences (default 16)")
    p.add_argument("--global-limit", type=int, default=4, help="sentences for the global errors (default 4)")
    p.add_argument("--save", action="store_true", help=f"write {FILE} into each model's folder (the app shows it)")
    args = p.parse_args(argv)
    texts = sentences.read(args.sentences)[: args.limit]
    for name in args.models:
        try:
            model = load(name, device="cpu")
            c = model.config
            print(f"{c.name}: {c.scheme}, {c.norm}-LN, h = {c.step:g}, T = {c.time:g}, shared {c.shared}, "
                  f"tied halves {c.tied_halves}")
            record = measure(model, texts, texts[: args.global_limit])
        except (CheckpointError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        for part in ("local", "global"):
            count = f"{record['states']} states" if part == "local" else f"{record['global_sentences']} sentences"
            print(f"  {part} ({count}):")
            for s in SCHEMES:
                for f in SUBFLOWS:
                    slope, lo, hi = record[f"{part}_slope"][s][f]
                    print(f"    {s + ' · ' + f:22} slope {slope:5.2f} [{lo:5.2f}, {hi:5.2f}]   error at the "
                          f"model's step: {record[f'{part}_error'][s][f][0]:.3g}")
        if args.save:
            (resolve(name) / FILE).write_text(json.dumps(record, indent=1) + "\n")
            print(f"  saved {resolve(name) / FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
