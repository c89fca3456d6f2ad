"""Where a run stands (Place) and where it begins (Start): its checkpoint (opened and checked before anything is
written, open_checkpoint), the weights an earlier run published (a warm start), or the random draw; and, with
--new-phase, a finished run that fell short going on to a new budget.

A Place is what a checkpoint keeps besides the weights and optimizers, and what the card reports of a run's path:
its step and tokens, its budget, and the history a later process must know (warm starts, phases, the precision
and the move penalty from each step on)."""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import card as cardlib
from . import precision, resume
from .resume import TrainError


def now_utc() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass
class Place:
    """Where the run stands and how it came there."""

    step: int = 0
    tokens: int = 0
    elapsed_before: float = 0.0  # training seconds of the processes this one continues
    total_steps: int | None = None  # the budget in steps (the probe sets it for --fit-minutes)
    phase_end: int | None = None  # --new-phase: the step the new phase decays to
    warm_starts: list = field(default_factory=list)
    phases: list = field(default_factory=list)  # empty until a run goes on past its first budget (--new-phase)
    precisions: list = field(default_factory=list)  # [step, "bf16" | "float32", attention kernel] from each step on
    penalties: list = field(default_factory=list)  # [step, λ]: a resumed run may raise the move penalty
    t0: float = field(default_factory=time.time)  # this process's training clock (the loop sets it again)

    def clock(self) -> float:
        """Training seconds of the whole run so far."""
        return self.elapsed_before + time.time() - self.t0

    def history(self) -> dict:
        """The path the checkpoint and training.json keep; the move penalties only where the task's loss has one."""
        return {"warm_starts": self.warm_starts, "phases": self.phases, "precisions": self.precisions,
                **({"penalties": self.penalties} if self.penalties else {})}


def open_checkpoint(run) -> tuple[Path | None, dict | None]:
    """The checkpoint a run continues, read before anything is written: with --resume its folder and state, checked
    against the run (`run` is trainer.Run after prepare), the place's budget set where the checkpoint's is the
    run's; without, a refusal to replace a checkpoint or a model folder unless --overwrite, and no state. Returns
    (the run folder's checkpoint or None, its state or None)."""
    a, p = run.args, run.place
    ckpt = resume.folder(a.run_dir)
    if a.resume:
        if ckpt is None:
            raise TrainError(f"{a.run_dir}: --resume, but the run folder holds no checkpoint "
                             f"({resume.CHECKPOINT}/state.json)")
        state = resume.read_state(ckpt)
        recorded = state.get("run", {}).get("total_steps")
        if a.fit_minutes or state.get("phases"):  # the probe's budget, or a later phase's, is the run's
            p.total_steps = recorded
        if a.new_phase:  # the budget asked for is the new phase's; the checkpoint's is the one it extends
            p.phase_end, p.total_steps = run.asked, recorded
        task = run.task
        resume.check_compatible(ckpt, state, task.configs, task.data.tok_hash,
                                {**task.terms, "total_steps": p.total_steps}, run.dist.world, task.formerly)
        return ckpt, state
    if not a.overwrite:
        if ckpt is not None:
            raise TrainError(f"{ckpt}: the run folder already holds a checkpoint; pass --resume to "
                             f"continue it or --overwrite to start over")
        for name in run.configs if not a.warm_start else ():  # a warm start replaces what it continues
            if (a.out / name / "config.json").exists():
                raise TrainError(f"{a.out / name / 'config.json'}: the model folder exists; pass --overwrite "
                                 f"to replace it")
    return ckpt, None


class Start:
    """The run's beginning, set on its place and its models' schedules. `run` is the lockstep run (trainer.Run):
    its arguments, models, place and the budget its command line asks for (`run.asked`, in steps)."""

    def __init__(self, run):
        self.run, self.args, self.dist, self.members, self.place = run, run.args, run.dist, run.members, run.place

    def __call__(self):
        """Begin from the checkpoint the run opened, if any, else from --warm-start, else at random; then record
        what this process computes with (precision, attention kernel) and, where the task's loss has one, its move
        penalty from this step on."""
        a, p, run = self.args, self.place, self.run
        first = self.from_checkpoint(run.state, run.ckpt) if run.state else self.from_published() if a.warm_start \
            else self.from_random()
        computes_with = [precision.name(run.dtype), run.attention]
        if a.new_phase:
            self.begin_phase(first)
        if not p.precisions or p.precisions[-1][1:] != computes_with:
            p.precisions.append([p.step, *computes_with])
        penalty = run.task.penalty
        if penalty is None:  # no such term in the loss (a checkpoint of older code may have recorded λ = 0)
            p.penalties = []
        elif not p.penalties or p.penalties[-1][1] != penalty:
            if p.penalties:
                self.run.log(f"move penalty {p.penalties[-1][1]:g} → {penalty:g} from step {p.step:,}")
            p.penalties.append([p.step, penalty])

    def from_checkpoint(self, state: dict, ckpt: Path) -> dict:
        """The checkpoint's weights, optimizers and place; returns the run's first phase."""
        p, lead = self.place, self.members[0]
        resume.load(ckpt, self.dist, self.members, state)
        p.step, p.tokens, p.elapsed_before = state["step"], state["tokens"], state["elapsed"]
        p.warm_starts, p.phases = state.get("warm_starts", []), state.get("phases", [])
        p.precisions = cardlib.precisions(state) if state.get("precisions") else []
        p.penalties = cardlib.penalties({"penalties": state.get("penalties"),
                                         "move_penalty": state.get("args", {}).get("move_penalty", 0.0)})
        first = {"step": 0, "tokens": 0, "warmup": lead.schedule.warmup, "total_steps": p.total_steps,
                 "lr": lead.sched.base_lrs[0]}
        self.apply_phases()
        for m in self.members:
            m.schedule.rewarm = tuple(p.warm_starts[-1]["rewarm"]) if p.warm_starts else None
            if self.dist.main:
                truncate_metrics(m.metrics, p.step)
        self.run.log(f"resumed from {ckpt} at step {p.step:,} ({p.tokens:,} tokens)")
        return first

    def from_published(self) -> dict:
        """Published weights at their recorded step, with fresh optimizers; returns the run's first phase."""
        a, p = self.args, self.place
        task = self.run.task
        where = resume.warm_start(Path(a.warm_start), self.members, {k: task.terms[k] for k in task.published})
        p.step, p.tokens, p.elapsed_before = where["step"], where["tokens"], where["elapsed"]
        p.phases, first, p.precisions, p.penalties = (where["phases"], where["first_phase"], where["precisions"],
                                                      where["penalties"])
        if a.new_phase:
            p.phase_end = self.run.asked
        if p.phases or a.new_phase:  # the published run's budget: the one it runs to, or a new phase extends
            p.total_steps = (p.phases or [first])[-1]["total_steps"]
        self.apply_phases()
        rewarm = (p.step, 0 if a.new_phase else a.rewarm)  # a new phase warms up by itself
        p.warm_starts = where["warm_starts"] + [{"step": p.step, "tokens": p.tokens, "from": str(a.warm_start),
                                                 "rewarm": list(rewarm), "date": now_utc()}]
        for m in self.members:
            m.start_at(p.step, rewarm)
            if self.dist.main:  # the curve goes on from the published one
                shutil.copyfile(Path(a.warm_start) / m.name / "metrics.jsonl", m.metrics)
                truncate_metrics(m.metrics, p.step)
        self.run.log(f"warm start from {a.warm_start} at step {p.step:,} ({p.tokens:,} tokens): fresh optimizer, "
                     f"{a.rewarm} steps of re-warm-up, then the schedule to step {p.total_steps:,}")
        return first

    def from_random(self) -> None:
        """The random start: the curve starts afresh (--new-phase needs a run to continue, so no phase)."""
        if self.dist.main:
            for m in self.members:
                m.metrics.unlink(missing_ok=True)

    def apply_phases(self):
        """Every schedule follows the run's phases, their peak rates relative to its optimizer's base rate
        (a warm start's fresh optimizer takes --lr as its base)."""
        for m in self.members:
            m.schedule.phases = [dict(ph, peak=ph["lr"] / m.sched.base_lrs[0]) for ph in self.place.phases]

    def begin_phase(self, first: dict | None):
        """A finished run that fell short goes on: --rewarm steps of warm-up to --lr, then the decay to the
        new budget. `first`: the run's first phase, recorded with the second."""
        a, p, end = self.args, self.place, self.place.phase_end
        if p.total_steps is None or p.step < p.total_steps:
            raise TrainError(f"--new-phase: the run is at step {p.step:,} of its {p.total_steps or 0:,}; resume it "
                             f"without --new-phase until it ends")
        if not end or end <= p.step:
            raise TrainError(f"--new-phase: the new budget ({end or 0:,} steps) must lie beyond the run's step "
                             f"{p.step:,}; give a larger --tokens (and --steps, if given: the first reached ends it)")
        p.phases = (p.phases or [first]) + [{"step": p.step, "tokens": p.tokens, "warmup": a.rewarm,
                                             "total_steps": end, "lr": a.lr, "date": now_utc()}]
        p.total_steps = end
        self.apply_phases()
        for m in self.members:
            m.schedule.total = end
            m.start_at(p.step, m.schedule.rewarm)
        if self.dist.main:
            (a.run_dir / "done.json").unlink(missing_ok=True)
        self.run.log(f"phase {len(p.phases)} from step {p.step:,} ({p.tokens:,} tokens): {a.rewarm} steps of "
                     f"warm-up to lr {a.lr:g}, then decay to step {end:,} ({self.run.budget_tokens:,} tokens)")


def truncate_metrics(file: Path, step: int):
    """On resume: drop rows logged after the checkpoint (they are about to be recomputed)."""
    if not file.is_file():
        return
    kept = []
    for line in file.read_text().splitlines():
        try:
            if json.loads(line).get("step", 0) <= step:
                kept.append(line)
        except json.JSONDecodeError:
            continue
    tmp = file.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in kept))
    os.replace(tmp, file)
