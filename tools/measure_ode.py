"""Is a trained model a small-step ODE solver? The figures docs/training-notes.md gives for the ODE pair's
milestones: over the shipped sentences (15 % of words masked, as macaron.studies.dynamics.run_experiments; five mask
draws pooled), how much
the final states change when every sub-step runs as n Euler moves (n = 2, 4, 8; a first-order method gives
change(n) ≈ c·(1 − 1/n)) and how often the masked top-1 guess stays; and the root-mean-square move
‖h·op‖/‖x‖ of every sub-step over the first 64 sentences. With --long, the clustering prediction at long
times: the shared layer run on to 2T, 4T, 8T, 16T (macaron.studies.dynamics.extended, as the Dynamics page runs it),
the Dynamics measures at each (effective clusters, mean pairwise cosine, rank-one residual, interaction
energy: mean and quartiles over the sentences) and which role leads the attention.

    python tools/measure_ode.py MODEL_OR_FOLDER [...] [--threads 1] [--long]
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

import macaron
from macaron import sentences
from macaron.studies.dynamics import PAST_TIME, Experiment, extended, measure_set, refined, run_experiments

SEEDS = range(5)  # mask draws: one draw masks ~730 words, so its share kept moves by ±1 point from draw to draw


def measure(model) -> str:
    texts = sentences.read()
    own = model.program()
    runs = [Experiment("as trained", "own", own)] + [Experiment(f"{n} moves", "refine", refined(own, n))
                                                      for n in (2, 4, 8)]
    draws = [run_experiments(model, texts, runs, seed=seed) for seed in SEEDS]
    masked = sum(d[0].n_masked for d in draws)
    accuracy = sum(d[0].accuracy_masked * d[0].n_masked for d in draws) / masked
    lines = [f"{model.config.name}: masked-word accuracy {accuracy:.1%} ({masked} masked words, {len(draws)} draws)"]
    for k, r in enumerate(draws[0][1:], start=1):
        kept = [d[k].agreement_masked for d in draws]
        pooled = sum(d[k].agreement_masked * d[k].n_masked for d in draws) / sum(d[k].n_masked for d in draws)
        lines.append(f"  {r.name}: output change {np.mean([float(d[k].change.mean) for d in draws]):.1%} (mean over "
                     f"{r.n_sentences} sentences), masked guess unchanged {pooled:.1%} "
                     f"(draws {min(kept):.1%}–{max(kept):.1%})")
    sizes = []
    with torch.no_grad():
        for text in texts[:64]:
            moves: list = []
            model(torch.tensor([model.tokenize(text)[0]], device=model.device), sizes=moves)
            sizes.append([float(m) for m in moves])
    rms = np.sqrt(np.mean(sizes, axis=0))
    lines.append("  rms move ‖h·op‖/‖x‖ per sub-step: " + " ".join(f"{x:.3f}" for x in rms))
    return "\n".join(lines)


def long_times(model) -> str:
    L, h = len(model.layers), model.config.step
    run = measure_set(model, sentences.read(), program=extended(model, (PAST_TIME - 1) * L))
    lines = [f"{model.config.name}: the shared layer run to {PAST_TIME} T ({PAST_TIME * L} steps of h = {h:g}), "
             f"{run.n} sentences; mean [q25, q75]"]
    for k in (0, 1, 2, 4, 8, 16):
        i = int(np.flatnonzero(np.isclose(run.times, k * L))[0])
        cells = [f"{name} {float(sp.mean[i]):.3g} [{float(sp.q25[i]):.3g}, {float(sp.q75[i]):.3g}]"
                 for name, sp in run.state.items() if name in ("clusters", "mean_cosine", "rank_one", "energy")]
        lines.append(f"  t = {k * L * h:g} ({k} T): " + " · ".join(cells))
    for r in sorted(run.leaders.by_role, key=lambda r: -r.lift)[:2]:
        lines.append(f"  leader role {r.key}: receives the most attention in {r.leads / run.leaders.slots:.0%} of "
                     f"(sentence, sub-step, head) slots over the whole run, {r.lift:.1f}× its share of tokens")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--long", action="store_true", help="the long-time measures (to 16 T) instead")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    for name in args.models:
        model = macaron.load(name, device="cpu")
        print(long_times(model) if args.long else measure(model), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
