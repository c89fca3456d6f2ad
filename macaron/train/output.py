"""What a run leaves behind, besides its checkpoint: a row per logged span and per evaluation in each model's
metrics.jsonl, the milestones, the model folders (weights, curve, training.json and the card) and done.json.

Output reads the run (trainer.Run: its arguments, task, models and place) and writes files only; what an evaluation
measures, the final scores, the task's facts and its card are the task's (task.py)."""
from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import torch

from ..formats.folder import save
from . import card as cardlib
from . import precision
from .start import now_utc


def append_jsonl(file: Path, row: dict):
    with open(file, "a") as f:
        f.write(json.dumps(row) + "\n")


class Output:
    """The run's record: its curves, milestones, model folders and the facts their cards are written from."""

    def __init__(self, run):
        self.run, self.args, self.dist, self.place, self.task = run, run.args, run.dist, run.place, run.task

    def evaluate(self, m) -> dict:
        """The task's held-out scores of one model now, logged as an "eval" row of its curve."""
        p = self.place
        result = self.task.evaluate(m, p.step)
        m.last_eval = dict(result, step=p.step)
        self.task.evaluated(self, m, result)
        if self.dist.main:
            append_jsonl(m.metrics, {"type": "eval", "step": p.step, "tokens": p.tokens,
                                     "elapsed": round(p.clock(), 2), **result})
        self.run.log(f"{m.name} {self.task.held_out_name} step {p.step:,} tokens {p.tokens:,}: "
                     f"{self.task.said(m, result)}")
        return result

    def log_train(self, n_steps: int, n_tokens: int, seconds: float):
        """The mean training loss of each model over the last n_steps, and the tokens a second of the span."""
        p, tps = self.place, n_tokens / max(seconds, 1e-9)  # every model of the lockstep sees these tokens
        losses = []
        for m in self.run.members:
            losses.append(float(m.loss_sum) / n_steps)
            m.loss_sum.zero_()
            if self.dist.main:
                append_jsonl(m.metrics, {"type": "train", "step": p.step, "tokens": p.tokens, "loss": losses[-1],
                                         "lr": m.sched.get_last_lr()[0], "tokens_per_s": round(tps, 1),
                                         "elapsed": round(p.clock(), 2)})
        self.run.log(f"step {p.step:,}/{p.total_steps:,} tokens {p.tokens:,} loss "
                     + " ".join(f"{m.name} {loss:.3f}" for m, loss in zip(self.run.members, losses))
                     + f" | {tps:,.0f} tokens/s")

    def milestone(self, m):
        """A milestone: the weights now (float16) as a model folder with its card, figures and curve so far."""
        folder = self.args.run_dir / m.name / "milestones" / f"step-{self.place.step:06d}"
        self.write_model(m, folder, {**m.last_eval, **self.task.baseline}, torch.float16)

    def model(self, m):
        """The finished model's folder, with the task's final scores."""
        self.task.model(self, m)

    @property
    def save_dtype(self) -> torch.dtype | None:
        """The finished models' weights on disk (--save-dtype; None: as trained)."""
        return torch.float16 if self.args.save_dtype == "float16" else None

    def done(self):
        run, p = self.run, self.place
        done = {"step": p.step, "tokens": p.tokens, "wall_seconds": time.time() - run.t_start,
                "models": {m.name: m.last_eval for m in run.members}}
        (self.args.run_dir / "done.json").write_text(json.dumps(done, indent=1) + "\n")

    def write_model(self, m, folder: Path, scores: dict, dtype: torch.dtype | None):
        """Weights, metrics so far, training.json and the card with its curve; by the main process only (under
        torchrun every process holds the same weights, and one writes them)."""
        if not self.dist.main:
            return
        was = m.network.training
        m.network.eval()
        save(m.network, folder, card="", dtype=dtype)
        m.network.train(was)
        (folder / "metrics.jsonl").write_text(m.metrics.read_text())
        self.task.write_card(folder, self.facts(m, scores, dtype))

    def facts(self, m, scores: dict, dtype: torch.dtype | None) -> dict:
        """training.json: everything the card says of the model and the run that trained it, the trainer's here and
        the task's (Task.facts)."""
        run, a, p, t, wall = self.run, self.args, self.place, self.task, self.place.clock()
        first = p.phases[0] if p.phases else {"lr": m.sched.base_lrs[0], "warmup": m.schedule.warmup}
        return {"task": t.kind, "config": m.config.to_dict(), "parameters": m.network.num_parameters(),
                "tokens": p.tokens, "steps": p.step, "budget_steps": p.total_steps, "budget_tokens": run.budget_tokens,
                "lr": first["lr"], "warmup": first["warmup"], "schedule": a.schedule, "weight_decay": a.weight_decay,
                "dropout": a.dropout, "seed": a.seed, "world_size": self.dist.world,
                "threads": torch.get_num_threads(), "at_once": run.pool is not None,
                "final": scores, "wall_seconds": wall, "total_seconds": time.time() - run.t_start,
                "hardware": cardlib.hardware(self.dist.device), "date": now_utc(),
                "command": command_line(self.dist, a.argv, a.module), "stats": t.data.stats,
                "trained_with": [x.name for x in run.members], "epochs": t.order.epoch(p.step),
                "train_tokens": int(t.data.train.n_tokens), "tokens_per_s": p.tokens / max(wall, 1e-9),
                "save_dtype": "float16" if dtype == torch.float16 else "float32",
                "precision": precision.name(run.dtype), "init_sha256": m.init_sha256, **p.history(), **t.facts(m)}


def command_line(dist, argv: list[str], module: str = "macaron.train.pretrain") -> str:
    argv = shlex.join([a for a in argv if a not in ("--detach", "--overwrite")]).replace(str(Path.home()), "~")
    if dist.world > 1:
        return f"torchrun --nproc_per_node {dist.world} -m {module} {argv}"
    return f"python -m {module} {argv}"
