"""What a run leaves behind, besides its checkpoint: a row per logged span and per evaluation in each model's
metrics.jsonl, the milestones, the model folders (weights, curve, training.json and the card) and done.json.

Output reads the run (pretrain.Run: its arguments, data, held-out sets, models and place) and writes files only."""
from __future__ import annotations

import json
import math
import shlex
import time
from pathlib import Path

import torch

from ..formats.folder import save
from . import card as cardlib
from . import evaluate as ev
from . import precision
from .start import now_utc


def append_jsonl(file: Path, row: dict):
    with open(file, "a") as f:
        f.write(json.dumps(row) + "\n")


class Output:
    """The run's record: its curves, milestones, model folders and the facts their cards are written from."""

    def __init__(self, run):
        self.run, self.args, self.dist, self.place = run, run.args, run.dist, run.place

    def evaluate(self, m) -> dict:
        """Held-out loss, accuracy and context effect (the loss with each context's word order shuffled, minus
        the loss) of one model now, logged as an "eval" row of its curve."""
        run, d, p = self.run, self.dist, self.place
        s = ev.score(m.encoder, run.held_out[d.rank::d.world])
        shuffled = ev.score(m.encoder, run.shuffled[d.rank::d.world])
        loss, correct, count, loss_shuffled = d.sum([sum(s.seq_loss), s.accuracy * s.targets, s.targets,
                                                     sum(shuffled.seq_loss)])
        mean = loss / max(count, 1)
        result = {"loss": mean, "accuracy": correct / max(count, 1), "perplexity": math.exp(min(mean, 50.0)),
                  "targets": int(count), "context_effect": (loss_shuffled - loss) / max(count, 1)}
        m.last_eval = dict(result, step=p.step)
        if d.main:
            append_jsonl(m.metrics, {"type": "eval", "step": p.step, "tokens": p.tokens,
                                     "elapsed": round(p.clock(), 2), **result})
        run.log(f"{m.name} eval step {p.step:,} tokens {p.tokens:,}: loss {result['loss']:.4f} "
                f"acc {result['accuracy']:.4f} ppl {result['perplexity']:.1f} "
                f"context effect {result['context_effect']:+.3f} nats")
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
        self.write_model(m, folder, {**m.last_eval, "unigram_loss": self.run.unigram}, torch.float16)

    def model(self, m):
        """The finished model's folder, with the full held-out evaluation (per sequence, for bootstraps)."""
        run, p = self.run, self.place
        scores = ev.evaluate(m.encoder, run.held_out, run.sp, run.data.train.ids)
        self.write_model(m, m.out, scores, torch.float16 if self.args.save_dtype == "float16" else None)
        run.log(f"saved {m.out} ({p.tokens:,} tokens, {p.step:,} steps, held-out loss {scores['loss']:.4f}, "
                f"accuracy {scores['accuracy']:.4f}, context effect {scores['context_effect']:+.3f} nats)")

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
        was = m.encoder.training
        m.encoder.eval()
        save(m.encoder, folder, card="", dtype=dtype)
        m.encoder.train(was)
        (folder / "metrics.jsonl").write_text(m.metrics.read_text())
        self.write_card(folder, self.facts(m, scores, dtype))

    def write_card(self, folder: Path, facts: dict):
        cardlib.write(folder, facts)

    def facts(self, m, scores: dict, dtype: torch.dtype | None) -> dict:
        """training.json: everything the card says of the model and the run that trained it."""
        run, a, p, wall = self.run, self.args, self.place, self.place.clock()
        first = p.phases[0] if p.phases else {"lr": m.sched.base_lrs[0], "warmup": m.schedule.warmup}
        return {"config": m.config.to_dict(), "parameters": m.encoder.num_parameters(), "tokens": p.tokens,
                "steps": p.step, "budget_steps": p.total_steps, "budget_tokens": run.budget_tokens,
                "batch": a.batch, "seq_len": a.seq_len, "lr": first["lr"], "warmup": first["warmup"],
                "schedule": a.schedule, "weight_decay": a.weight_decay, "dropout": a.dropout, "seed": a.seed,
                "accum": a.accum, "world_size": self.dist.world, "threads": torch.get_num_threads(),
                "at_once": run.pool is not None,
                "final": scores, "wall_seconds": wall, "total_seconds": time.time() - run.t_start,
                "hardware": cardlib.hardware(self.dist.device), "date": now_utc(),
                "command": command_line(self.dist, a.argv, a.module), "stats": run.data.stats,
                "trained_with": [x.name for x in run.members], "epochs": run.order.epoch(p.step),
                "eval_seqs": sum(len(b[0]) for b in run.held_out), "train_sequences": len(run.train_data),
                "train_tokens": int(run.data.train.n_tokens), "tokens_per_s": p.tokens / max(wall, 1e-9),
                "save_dtype": "float16" if dtype == torch.float16 else "float32", "compiled": bool(a.compile),
                "precision": precision.name(run.dtype), "mask_rate": a.mask_rate, "mask_only": a.mask_only,
                "init_sha256": m.init_sha256, **p.history(),
                "move_penalty": a.move_penalty}  # the λ it ends with (penalties: each λ from its step)


def command_line(dist, argv: list[str], module: str = "macaron.train.pretrain") -> str:
    argv = shlex.join([a for a in argv if a not in ("--detach", "--overwrite")]).replace(str(Path.home()), "~")
    if dist.world > 1:
        return f"torchrun --nproc_per_node {dist.world} -m {module} {argv}"
    return f"python -m {module} {argv}"
