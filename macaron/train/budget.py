"""--fit-minutes: the run's budget in steps, from a probe of real steps (every model of the lockstep), an
evaluation and a checkpoint timed on this machine, so that the whole run ends within the minutes asked for. The
probe's steps are undone (weights restored, fresh optimizers): it leaves no trace in the models."""
from __future__ import annotations

import json
import shutil
import time

from . import resume
from .resume import TrainError
from .start import now_utc


def seconds(dist, fn) -> float:
    """Wall seconds of fn(), every device's queue drained before and after."""
    dist.synchronize()
    t = time.time()
    fn()
    dist.synchronize()
    return time.time() - t


def within(run, measured: str) -> None:
    """Stop the probe, with a message, once it has spent the whole budget (a loaded machine): each part of it can take
    minutes on a slow CPU, and a run that can no longer train should not go on measuring."""
    spent, budget = time.time() - run.t_start, 60 * run.args.fit_minutes
    if spent >= budget:
        raise TrainError(f"--fit-minutes {run.args.fit_minutes:g}: the probe spent the whole budget ({measured} took "
                         f"it to {spent:.0f} s of {budget:.0f}); give more minutes, or a budget in --steps or --tokens")


def fit(run):
    """Set run.place.total_steps for --fit-minutes, save a checkpoint with it (a resumed run keeps this budget)
    and write budget.json with the timings."""
    a, dist = run.args, run.dist
    warm, n = (3, a.probe_steps or 20) if dist.device.type == "cuda" else (1, a.probe_steps or 3)
    saved = [m.snapshot() for m in run.members]
    for s in range(warm):  # compilation happens here
        run.train_step(s)
    dist.synchronize()
    t = time.time()
    for s in range(warm, warm + n):
        run.train_step(s)
    dist.synchronize()
    per_step = (time.time() - t) / n
    within(run, f"{warm + n} steps")
    later = run.place.step + 1  # an evaluation as during training (the translators' dev BLEU skips step 0)
    per_eval = run.task.evaluation_seconds(run.members, min(
        seconds(dist, lambda: [run.task.evaluate(m, later) for m in run.members]) for _ in range(2)))
    within(run, "the steps and an evaluation")
    per_ckpt = seconds(dist, lambda: resume.save(a.run_dir / "probe", dist, run.members, run.state_doc()))
    if dist.main:
        shutil.rmtree(a.run_dir / "probe", ignore_errors=True)
    final = run.task.closing_seconds(run.members, per_eval, per_ckpt)
    within(run, "the steps, an evaluation, a checkpoint and the end's search")
    left = 60 * a.fit_minutes - (time.time() - run.t_start)
    ckpt_every = min(a.checkpoint_every, max(1, int(60 * a.checkpoint_minutes / per_step)))
    per = per_step + per_eval / a.eval_every + per_ckpt / ckpt_every  # seconds a step, everything included
    steps = int(dist.agree((left - final) / per))
    if steps < 1:
        raise TrainError(f"--fit-minutes {a.fit_minutes}: no time left for training after the probe "
                         f"({per_step:.3f} s a step, {left:.0f} s left)")
    run.place.total_steps = steps
    for m, w in zip(run.members, saved):
        m.restore(w, a, steps)
    resume.save(a.run_dir, dist, run.members, run.state_doc())  # a kill from here on resumes this budget
    tokens = run.budget_tokens
    budget = {"seconds_per_step": per_step, "seconds_per_eval": per_eval, "seconds_per_checkpoint": per_ckpt,
              "seconds_at_the_end": final, "steps": steps, "tokens": tokens, "fit_minutes": a.fit_minutes,
              "models": list(run.configs), "device": str(dist.device), "date": now_utc()}
    if dist.main:
        (a.run_dir / "budget.json").write_text(json.dumps(budget, indent=1) + "\n")
    run.log(f"probe: {per_step:.3f} s a lockstep step of {len(run.members)} model(s), evaluation "
             f"{per_eval:.2f} s, checkpoint {per_ckpt:.2f} s, the end {final:.0f} s -> {steps:,} steps, {tokens:,} "
             f"tokens each, to end within {a.fit_minutes:g} min")
