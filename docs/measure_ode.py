"""Is a trained model a small-step ODE solver? The figures docs/training-notes.md gives for the ODE pair's
milestones: over the shipped sentences (15 % of words masked, as macaron.dynamics.run_experiments), how much
the final states change when every sub-step runs as n Euler moves (n = 2, 4, 8; a first-order method gives
change(n) ≈ c·(1 − 1/n)) and how often the masked top-1 guess stays; and the root-mean-square move
‖h·op‖/‖x‖ of every sub-step over the first 64 sentences.

    python docs/measure_ode.py MODEL_OR_FOLDER [...] [--threads 1]
"""
from __future__ import annotations

import argparse

import numpy as np
import torch

import macaron
from macaron import sentences
from macaron.dynamics import Experiment, refined, run_experiments


def measure(model) -> str:
    texts = sentences.read()
    own = model.program()
    runs = [Experiment("as trained", "own", own)] + [Experiment(f"{n} moves", "refine", refined(own, n))
                                                      for n in (2, 4, 8)]
    results = run_experiments(model, texts, runs)
    lines = [f"{model.config.name}: masked-word accuracy {results[0].accuracy_masked:.1%}"]
    lines += [f"  {r.name}: output change {float(r.change.mean):.1%} (mean over {r.n_sentences} sentences), "
              f"masked guess unchanged {r.agreement_masked:.1%}" for r in results[1:]]
    sizes = []
    with torch.no_grad():
        for text in texts[:64]:
            moves: list = []
            model(torch.tensor([model.tokenize(text)[0]], device=model.device), sizes=moves)
            sizes.append([float(m) for m in moves])
    rms = np.sqrt(np.mean(sizes, axis=0))
    lines.append("  rms move ‖h·op‖/‖x‖ per sub-step: " + " ".join(f"{x:.3f}" for x in rms))
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    for name in args.models:
        print(measure(macaron.load(name, device="cpu")), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
