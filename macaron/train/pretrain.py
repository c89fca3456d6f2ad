"""Masked-language-model pre-training of one model, or of several in lockstep.

    python -m macaron.train.pretrain --size mini --scheme macaron --tokens 3e6          (one model)
    python -m macaron.train.pretrain --models transformer-mini,macaron-mini --data ~/.cache/macaron/packed \\
        --batch 16 --mask-rate 0.3 --tokens 40e6 --keep-every 250 --run-dir ~/.cache/macaron/runs/mini --detach
    torchrun --nproc_per_node 2 -m macaron.train.pretrain ...      (DDP: nccl on CUDA, gloo on CPU)

The data order (a seeded permutation of packed sequences) and the masks (seeded by step) do not
depend on the model. Models named together in `--models` train in lockstep: every model takes its
optimizer step on the same batch with the same masks before the next batch is drawn, so they see
the same batches, in the same order, and the same number of tokens. On a CPU with AMX they take those steps at
the same time, a thread each, where that changes no model's step (`Run.at_once`); elsewhere in turn.

Budgets: `--tokens`, `--steps`, or `--fit-minutes M`: a throughput probe (a few real steps of every
model, then weights and optimizers restored) measures the seconds per lockstep step, an evaluation
and a checkpoint, and sets the number of steps so that the whole run ends within M minutes of its
start. The budget is stored in the checkpoint, so a resumed run ends where the first would have.

A run writes to its run folder: `<name>/metrics.jsonl` per model, one resumable `checkpoint/`
(safetensors + JSON, nothing pickled), `budget.json`, and `done.json` at the end; each model's
folder goes to `<out>/<name>` with a model card, `training.json` and the training curve, and with
`--keep-every` so does every milestone, to `<run-dir>/<name>/milestones/step-<N>`. Where the run folder
is gone (a new machine), `--warm-start DIR` continues from weights published to DIR/<name>
(`python -m macaron.train.publish`) at their recorded step. A run that fell short goes on in a second
phase: `--resume --new-phase --tokens N --lr PEAK` warms up again (`--rewarm` steps) to PEAK and decays to
the new budget, which the checkpoint keeps from then on. Precision: bf16 autocast where the CPU or
GPU does bf16 natively, float32 elsewhere (`precision.py`). `--stop-after STEP` ends a run at STEP with its
checkpoint, for `--resume` to continue (a long run over several sessions). Under DDP the processes' copies
of each model are compared (SHA-256) before every checkpoint: only rank 0 saves, so a drift would go unseen.
`--detach` starts the same command under `setsid nohup`, logging to `<run-dir>/train.log`, and
returns; `python -m macaron.train.watch <run-dir>` follows it.

Beside this file: the objective (MaskedLM, optimizer_for, Schedule) in `objective.py`, the command line in
`options.py`, the processes in `distributed.py`, checkpoints and warm starts in `resume.py`. Here: one model
of the run (Member), then the run (Run) step by step: prepare, open, build, start, fit_budget, loop, finish.
"""
from __future__ import annotations

import collections
import contextlib
import datetime as dt
import hashlib
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch
from torch import nn

from ..config import ModelConfig
from ..milestones import param_checksum
from ..model import build
from ..operators import ATTENTION, use_attention
from . import card as cardlib
from . import evaluate as ev
from . import precision, resume
from .data import DataError, Order, Packed, generator_for, held_out_batches, mask_tokens, padded, specials
from .distributed import Dist
from .objective import MaskedLM, Schedule, optimizer_for
from .options import model_configs, parse_args
from .pack import open_data
from .resume import TrainError


# ---- one model of the run -----------------------------------------------------------
class Member:
    """A model being trained: encoder, optimizer, schedule and its files."""

    def __init__(self, name: str, config: ModelConfig, tok, args, dist: Dist, total_steps: int | None,
                 dtype: torch.dtype = torch.float32, attention: str = "sdpa"):
        self.name, self.config, self.dist, self.dtype = name, config, dist, dtype
        torch.manual_seed(args.seed)  # the same initial weights for every rank (and every run of this seed)
        self.encoder = build(config, tok).to(dist.device).train()
        self.init_sha256 = param_checksum(self.encoder)  # the random start is rebuilt from the seed, not stored
        use_attention(self.encoder, attention)
        if args.compile:  # in place: forward is compiled, the head (another method) stays eager. On the CPU
            # only Dynamo's graph capture runs (backend "eager"): the dry run checks the capture in seconds,
            # where Inductor's C++ build would take minutes
            self.encoder.compile(backend="inductor" if dist.device.type == "cuda" else "eager")
        self.mlm = MaskedLM(self.encoder, args.move_penalty).train()
        self.net: nn.Module = self.mlm
        if dist.world > 1:
            ids = [dist.device] if dist.device.type == "cuda" else None
            self.net = nn.parallel.DistributedDataParallel(self.mlm, device_ids=ids)
        self.schedule = Schedule(args.schedule, args.warmup, total_steps)
        self.new_optimizer(args)
        self.metrics = args.run_dir / name / "metrics.jsonl"
        self.out = args.out / name
        self.last_eval: dict | None = None
        self.loss_sum = torch.zeros((), device=dist.device)  # summed on the device: no sync per step

    def step(self, micro_batches, clip: float):
        """One optimizer step on the micro-batches [(inputs, attention_mask, labels)] of this rank."""
        n = len(micro_batches)
        for m, (inputs, attention_mask, labels) in enumerate(micro_batches):
            last = m == n - 1
            sync = contextlib.nullcontext() if (self.dist.world == 1 or last) else self.net.no_sync()
            with sync:
                with precision.autocast(self.dist.device, self.dtype):
                    loss = self.net(inputs, attention_mask, labels)
                (loss / n).backward()
            self.loss_sum += loss.detach() / n
        if clip:
            nn.utils.clip_grad_norm_(self.mlm.parameters(), clip)
        self.opt.step()
        self.sched.step()
        self.opt.zero_grad(set_to_none=True)

    def start_at(self, step: int, rewarm: tuple[int, int] | None):
        """The schedule at `step` (its own clock), ramping up again where a fresh optimizer took over."""
        self.schedule.rewarm = rewarm
        self.sched.last_epoch = step
        for group, base in zip(self.opt.param_groups, self.sched.base_lrs):
            group["lr"] = base * self.schedule(step)

    def snapshot(self) -> dict:
        return {k: v.detach().clone() for k, v in self.encoder.state_dict().items()}

    def new_optimizer(self, args):
        self.opt = optimizer_for(self.mlm, args, self.dist.device)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, self.schedule)

    def restore(self, weights: dict, args, total_steps: int):
        """Back to `weights` with a fresh optimizer and the budget's schedule: the probe leaves no trace."""
        self.encoder.load_state_dict(weights)
        self.schedule.total = total_steps
        self.new_optimizer(args)
        self.loss_sum.zero_()


def reuses_weights(encoder: nn.Module) -> bool:
    """Whether one forward calls a module that holds weights more than once (shared layers, tied halves, FLOATER's
    position ODE): the encoder run on a few tokens, its calls counted."""
    calls: collections.Counter = collections.Counter()
    holders = [m for m in encoder.modules() if next(m.parameters(recurse=False), None) is not None]
    hooks = [m.register_forward_hook(lambda m, *_: calls.update([id(m)])) for m in holders]
    try:
        with torch.no_grad():
            encoder(torch.zeros(1, 4, dtype=torch.long, device=next(encoder.parameters()).device), None)
    finally:
        for hook in hooks:
            hook.remove()
    return max(calls.values(), default=0) > 1


def one_thread():
    """A pool worker's intra-op threads: one. A thread copies the process-wide count at its first op; asking for the
    count is that op, so the worker keeps one whatever the main thread sets later."""
    torch.set_num_threads(1)
    torch.get_num_threads()


def thread_per_model(k: int) -> ThreadPoolExecutor:
    """k worker threads of one intra-op thread each, all started before the first step."""
    pool = ThreadPoolExecutor(k, thread_name_prefix="model", initializer=one_thread)
    with threads(1):  # restored after: the workers' setting is process-wide too
        started = threading.Barrier(k, timeout=60)
        list(pool.map(lambda _: started.wait(), range(k)))  # every worker holds its one thread before a step
    return pool


@contextlib.contextmanager
def threads(n: int):
    """torch's intra-op thread count set to n for a while."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def log(dist: Dist, msg: str):
    if dist.main:
        print(f"[{dt.datetime.now():%H:%M:%S}] {msg}", flush=True)


def append_jsonl(file: Path, row: dict):
    with open(file, "a") as f:
        f.write(json.dumps(row) + "\n")


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


def command_line(dist: Dist, argv: list[str]) -> str:
    argv = shlex.join([a for a in argv if a not in ("--detach", "--overwrite")]).replace(str(Path.home()), "~")
    if dist.world > 1:
        return f"torchrun --nproc_per_node {dist.world} -m macaron.train.pretrain {argv}"
    return f"python -m macaron.train.pretrain {argv}"


# ---- the run, step by step ------------------------------------------------------------
class Run:
    """The lockstep run: the named steps of training several models on one stream of batches."""

    def __init__(self, args, dist: Dist):
        self.args, self.dist, self.t_start = args, dist, time.time()
        # where the run stands: a resume or a warm start sets these from what it continues
        self.step, self.tokens, self.elapsed_before = 0, 0, 0.0
        self.warm_starts: list[dict] = []
        self.phases: list[dict] = []  # empty until a run goes on past its first budget (--new-phase)
        self.precisions: list[list] = []  # [step, "bf16" | "float32", attention kernel]: another CPU may change them
        self.penalties: list[list] = []  # [step, λ]: a resumed run may raise the move penalty (--move-penalty)
        self.total_steps: int | None = None  # the budget in steps (the probe sets it for --fit-minutes)
        self.phase_end: int | None = None  # --new-phase: the step the new phase decays to
        self.t0 = time.time()  # the training clock's start (the loop sets it again after the first evaluation)
        # 1. prepare: the data, the models' configs and the run's terms
        self.data = self.sp = self.train_data = self.held_out_data = self.order = None
        self.configs: dict[str, ModelConfig] = {}
        self.terms: dict = {}  # what a resume or a warm start must share with this run (stored as "run")
        # 2. open: the checkpoint to continue, if any
        self.ckpt: Path | None = None
        self.state: dict | None = None
        # 3. build: the models and the held-out sets
        self.dtype = torch.float32
        self.members: list[Member] = []
        self.pool: ThreadPoolExecutor | None = None  # the models stepping at once, a thread each (at_once)
        self.held_out = self.shuffled = None
        self.unigram: float | None = None

    def clock(self) -> float:
        return self.elapsed_before + time.time() - self.t0

    # 1. everything is checked before anything is written (besides the corpus cache)
    def prepare(self):
        a, dist = self.args, self.dist
        if a.batch % (dist.world * a.accum):
            raise TrainError(f"--batch {a.batch} does not split over {dist.world} processes × {a.accum} "
                             f"accumulation steps")
        self.data = open_data(a.data or a.corpus, a.tokenizer, a.run_dir / "cache", log=lambda m: log(dist, m))
        self.sp = specials(self.data.tok, a.tokenizer)
        self.configs = model_configs(a, self.sp.vocab_size)
        for name, cfg in self.configs.items():
            if cfg.pad_id != self.sp.pad:
                raise TrainError(f"{a.tokenizer}: [PAD] has id {self.sp.pad}, the model expects {cfg.pad_id}")
            if a.seq_len > cfg.max_len:
                raise TrainError(f"--seq-len {a.seq_len} exceeds {name}'s max_len {cfg.max_len}")
        self.train_data = Packed(self.data.train, self.sp, a.seq_len, a.cross_documents)
        self.held_out_data = Packed(self.data.valid, self.sp, a.seq_len, a.cross_documents)
        self.order = Order(len(self.train_data), a.batch, a.seed)
        self.terms = {k: getattr(a, k) for k in ("seed", "batch", "seq_len", "cross_documents", "accum", "mask_rate",
                                                 "mask_only")}
        stats = json.dumps(self.data.stats, sort_keys=True).encode()
        self.terms["corpus_stats"] = hashlib.sha256(stats).hexdigest()[:16]
        self.total_steps = self.budget_from_args()

    def budget_from_args(self) -> int | None:
        a, total = self.args, None
        if a.steps:
            total = a.steps
        if a.tokens:
            by_tokens = self.order.steps_for_tokens(a.tokens, self.train_data.lengths)
            total = min(total, by_tokens) if total else by_tokens
        return total

    # 2. resume, or refuse to overwrite
    def open(self):
        a, dist = self.args, self.dist
        ckpt = resume.folder(a.run_dir)
        if a.resume:
            if ckpt is None:
                raise TrainError(f"{a.run_dir}: --resume, but the run folder holds no checkpoint "
                                 f"({resume.CHECKPOINT}/state.json)")
            self.state = resume.read_state(ckpt)
            recorded = self.state.get("run", {}).get("total_steps")
            if a.fit_minutes or self.state.get("phases"):  # the probe's budget, or a later phase's, is the run's
                self.total_steps = recorded
            if a.new_phase:  # the budget asked for is the new phase's; the checkpoint's is the one it extends
                self.phase_end, self.total_steps = self.budget_from_args(), recorded
            resume.check_compatible(ckpt, self.state, self.configs, self.data.tok_hash,
                                    {**self.terms, "total_steps": self.total_steps}, dist.world)
        elif not a.overwrite:
            if ckpt is not None:
                raise TrainError(f"{ckpt}: the run folder already holds a checkpoint; pass --resume to "
                                 f"continue it or --overwrite to start over")
            for name in self.configs if not a.warm_start else ():  # a warm start replaces what it continues
                if (a.out / name / "config.json").exists():
                    raise TrainError(f"{a.out / name / 'config.json'}: the model folder exists; pass --overwrite "
                                     f"to replace it")
        self.ckpt = ckpt

    # 3. the models
    def build(self):
        a, dist = self.args, self.dist
        self.dtype = precision.choose(dist.device, a.precision)
        self.attention = precision.attention(dist.device, self.dtype, a.seq_len)
        self.members = [Member(name, cfg, self.data.tok, a, dist, self.total_steps, self.dtype, self.attention)
                        for name, cfg in self.configs.items()]
        self.pool = self.at_once()
        w = torch.get_num_threads()
        self.shares = [self.members[i::w] for i in range(w)]  # each worker's models, when at once
        turns = ""
        if len(self.members) > 1 and dist.device.type == "cpu":
            turns = f", the models at once {cardlib.at_once_words(len(self.members), w)}" if self.pool else \
                f", the models in turn on {torch.get_num_threads()} threads"
        log(dist, f"precision: {precision.describe(dist.device, self.dtype, a.precision)}; on "
                  f"{cardlib.hardware(dist.device)}: fused AdamW, {ATTENTION[self.attention]}, "
                  f"{'compiled' if a.compile else 'eager'}{turns}")
        torch.manual_seed(a.seed * 1000 + 1 + dist.rank)  # dropout differs between ranks
        if dist.main and a.overwrite and not a.resume:  # only what this script wrote (a log may live here)
            for name in (resume.CHECKPOINT, f"{resume.CHECKPOINT}.tmp", f"{resume.CHECKPOINT}.old", "done.json"):
                path = a.run_dir / name
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        if dist.main:
            for m in self.members:
                m.metrics.parent.mkdir(parents=True, exist_ok=True)
        dist.barrier()
        self.held_out = held_out_batches(self.held_out_data, a.eval_seqs, a.eval_batch, a.eval_seed,
                                        pad_to=a.seq_len if a.compile else None)
        self.shuffled = ev.shuffle_context(self.held_out, self.sp)  # the context effect at every evaluation
        self.unigram = ev.unigram_loss(self.data.train.ids, self.sp.vocab_size, self.held_out)

    # 4. where the run starts: a checkpoint, published weights, or the random start
    def start(self):
        a = self.args
        first = self.from_checkpoint() if self.state else self.from_published() if a.warm_start else self.from_random()
        if a.new_phase:
            self.begin_phase(first)
        now = [precision.name(self.dtype), self.attention]  # what this process computes with
        if not self.precisions or self.precisions[-1][1:] != now:
            self.precisions.append([self.step, *now])
        if not self.penalties or self.penalties[-1][1] != a.move_penalty:
            if self.penalties:
                log(self.dist, f"move penalty {self.penalties[-1][1]:g} → {a.move_penalty:g} from step {self.step:,}")
            self.penalties.append([self.step, a.move_penalty])

    def from_checkpoint(self) -> dict:
        """The checkpoint's weights, optimizers and place; returns the run's first phase."""
        dist = self.dist
        resume.load(self.ckpt, dist, self.members, self.state)
        self.step, self.tokens, self.elapsed_before = self.state["step"], self.state["tokens"], self.state["elapsed"]
        self.warm_starts, self.phases = self.state.get("warm_starts", []), self.state.get("phases", [])
        self.precisions = cardlib.precisions(self.state) if self.state.get("precisions") else []
        self.penalties = cardlib.penalties({"penalties": self.state.get("penalties"),
                                            "move_penalty": self.state.get("args", {}).get("move_penalty", 0.0)})
        first = {"step": 0, "tokens": 0, "warmup": self.members[0].schedule.warmup,
                 "total_steps": self.total_steps, "lr": self.members[0].sched.base_lrs[0]}
        self.apply_phases()
        for m in self.members:
            m.schedule.rewarm = tuple(self.warm_starts[-1]["rewarm"]) if self.warm_starts else None
            if dist.main:
                truncate_metrics(m.metrics, self.step)
        log(dist, f"resumed from {self.ckpt} at step {self.step:,} ({self.tokens:,} tokens)")
        return first

    def from_published(self) -> dict:
        """Published weights at their recorded step, with fresh optimizers; returns the run's first phase."""
        a, dist = self.args, self.dist
        where = resume.warm_start(Path(a.warm_start), self.members, self.terms)
        self.step, self.tokens, self.elapsed_before = where["step"], where["tokens"], where["elapsed"]
        self.phases, first, self.precisions = where["phases"], where["first_phase"], where["precisions"]
        self.penalties = where["penalties"]
        if a.new_phase:
            self.phase_end = self.budget_from_args()
        if self.phases or a.new_phase:  # the published run's budget: the one it runs to, or a new phase extends
            self.total_steps = (self.phases or [first])[-1]["total_steps"]
        self.apply_phases()
        rewarm = (self.step, 0 if a.new_phase else a.rewarm)  # a new phase warms up by itself
        self.warm_starts = where["warm_starts"] + [{
            "step": self.step, "tokens": self.tokens, "from": str(a.warm_start), "rewarm": list(rewarm),
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}]
        for m in self.members:
            m.start_at(self.step, rewarm)
            if dist.main:  # the curve goes on from the published one
                shutil.copyfile(Path(a.warm_start) / m.name / "metrics.jsonl", m.metrics)
                truncate_metrics(m.metrics, self.step)
        log(dist, f"warm start from {a.warm_start} at step {self.step:,} ({self.tokens:,} tokens): fresh "
                  f"optimizer, {a.rewarm} steps of re-warm-up, then the schedule to step {self.total_steps:,}")
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
            m.schedule.phases = [dict(ph, peak=ph["lr"] / m.sched.base_lrs[0]) for ph in self.phases]

    def begin_phase(self, first: dict):
        """A finished run that fell short goes on: --rewarm steps of warm-up to --lr, then the decay to the
        new budget. `first`: the run's first phase, recorded with the second."""
        a, end = self.args, self.phase_end
        if self.step < self.total_steps:
            raise TrainError(f"--new-phase: the run is at step {self.step:,} of its {self.total_steps:,}; resume it "
                             f"without --new-phase until it ends")
        if not end or end <= self.step:
            raise TrainError(f"--new-phase: the new budget ({end or 0:,} steps) must lie beyond the run's step "
                             f"{self.step:,}; give a larger --tokens (and --steps, if given: the first reached "
                             f"ends it)")
        self.phases = (self.phases or [first]) + [{
            "step": self.step, "tokens": self.tokens, "warmup": a.rewarm, "total_steps": end, "lr": a.lr,
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}]
        self.total_steps = end
        self.apply_phases()
        for m in self.members:
            m.schedule.total = end
            m.start_at(self.step, m.schedule.rewarm)
        if self.dist.main:
            (a.run_dir / "done.json").unlink(missing_ok=True)
        log(self.dist, f"phase {len(self.phases)} from step {self.step:,} ({self.tokens:,} tokens): {a.rewarm} steps "
                       f"of warm-up to lr {a.lr:g}, then decay to step {end:,} ({self.budget_tokens:,} tokens)")

    # 5. the batches: the same for every model
    def batch(self, step: int):
        """This rank's micro-batches of global batch `step`, on the device."""
        a, dist = self.args, self.dist
        indices = self.order.indices(step)
        per_rank = a.batch // dist.world
        micro = per_rank // a.accum
        mine = indices[dist.rank * per_rank:(dist.rank + 1) * per_rank]
        out = []
        for m in range(a.accum):
            ids, attention_mask = self.train_data.batch(mine[m * micro:(m + 1) * micro])
            inputs, labels = mask_tokens(ids, self.sp, generator_for(a.seed, step, dist.rank * per_rank + m * micro),
                                         a.mask_rate, *((1.0, 0.0) if a.mask_only else (0.8, 0.1)))
            inputs, attention_mask, labels = padded(inputs, attention_mask, labels, self.sp,
                                                    a.seq_len if a.compile else None)
            # no mask lets SDPA take its fastest kernel; a compiled model always gets one (one graph)
            to = dict(device=dist.device, non_blocking=True)
            attention_mask = None if bool(attention_mask.all()) and not a.compile else attention_mask.to(**to)
            out.append((inputs.to(**to), attention_mask, labels.to(**to)))
        return out, int(self.train_data.lengths[indices].sum())

    def at_once(self) -> ThreadPoolExecutor | None:
        """A worker thread per model, so that the models take their steps at the same time on one intra-op thread
        each, where this CPU kind trains faster so (precision.models_at_once). Only with a thread per model, in one
        process (DDP's collectives would interleave), eager (Dynamo's capture is not thread-safe), without dropout
        (its draws from the one global generator would interleave) and for models that use each weight once in a
        forward: autocast keeps one cache of bf16 weight copies for the whole process, and any thread leaving autocast
        empties it, so a weight used twice (shared layers, tied halves, FLOATER's position ODE) would be cast again
        whenever the other model's forward ended in between, and its gradient would change with the timing (float32
        has no autocast, but keeps the one rule). Each model's step is then the same as on one thread alone. More models
        than threads share the workers evenly, in turn on each (four models on two threads: two each), where the count
        divides: three on two would leave one thread idle for a third of each step."""
        k, dist = len(self.members), self.dist
        if (k < 2 or k % torch.get_num_threads() or dist.world > 1 or self.args.compile
                or any(m.config.dropout for m in self.members) or not precision.models_at_once(dist.device)
                or any(reuses_weights(m.encoder) for m in self.members)):
            return None
        return thread_per_model(torch.get_num_threads())

    def train_step(self, step: int) -> int:
        micro, n_tokens = self.batch(step)
        if self.pool is None:
            for m in self.members:
                m.step(micro, self.args.clip)
        else:
            list(self.pool.map(lambda share: [m.step(micro, self.args.clip) for m in share], self.shares))
        return n_tokens

    # 6. the budget: a probe of real steps, then everything restored
    def fit_budget(self):
        a, dist = self.args, self.dist
        if self.total_steps is not None or not a.fit_minutes:
            return
        warm, timed = (3, a.probe_steps or 20) if dist.device.type == "cuda" else (1, a.probe_steps or 3)
        saved = [m.snapshot() for m in self.members]
        for s in range(warm):  # compilation happens here
            self.train_step(s)
        dist.synchronize()
        t = time.time()
        for s in range(warm, warm + timed):
            self.train_step(s)
        dist.synchronize()
        per_step = (time.time() - t) / timed
        per_eval = 2 * min(self.timed(lambda: [ev.score(m.encoder, self.held_out[dist.rank::dist.world])
                                               for m in self.members]) for _ in range(2))  # plain and shuffled
        per_ckpt = self.timed(lambda: resume.save(a.run_dir / "probe", dist, self.members, self.state_doc()))
        if dist.main:
            shutil.rmtree(a.run_dir / "probe", ignore_errors=True)
        left = 60 * a.fit_minutes - (time.time() - self.t_start)
        final = 3 * per_eval + 2 * per_ckpt + 15.0  # last evaluations (plain, shuffled, replaced) and the model folders
        ckpt_every = min(a.checkpoint_every, max(1, int(60 * a.checkpoint_minutes / per_step)))
        per = per_step + per_eval / a.eval_every + per_ckpt / ckpt_every  # seconds a step, everything included
        steps = int(dist.agree((left - final) / per))
        if steps < 1:
            raise TrainError(f"--fit-minutes {a.fit_minutes}: no time left for training after the probe "
                             f"({per_step:.3f} s a step, {left:.0f} s left)")
        self.total_steps = steps
        for m, w in zip(self.members, saved):
            m.restore(w, a, steps)
        resume.save(a.run_dir, dist, self.members, self.state_doc())  # a kill from here on resumes this budget
        tokens = self.order.tokens_for_steps(steps, self.train_data.lengths)
        budget = {"seconds_per_step": per_step, "seconds_per_eval": per_eval, "seconds_per_checkpoint": per_ckpt,
                  "steps": steps, "tokens": tokens, "fit_minutes": a.fit_minutes, "models": list(self.configs),
                  "device": str(dist.device), "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
        if dist.main:
            (a.run_dir / "budget.json").write_text(json.dumps(budget, indent=1) + "\n")
        log(dist, f"probe: {per_step:.3f} s a lockstep step of {len(self.members)} model(s), evaluation "
                  f"{per_eval:.2f} s, checkpoint {per_ckpt:.2f} s -> {steps:,} steps, {tokens:,} tokens each, "
                  f"to end within {a.fit_minutes:g} min")

    def timed(self, fn) -> float:
        self.dist.synchronize()
        t = time.time()
        fn()
        self.dist.synchronize()
        return time.time() - t

    @property
    def budget_tokens(self) -> int | None:
        return self.order.tokens_for_steps(self.total_steps, self.train_data.lengths) if self.total_steps else None

    def state_doc(self) -> dict:
        return {"step": self.step, "tokens": self.tokens, "elapsed": self.clock(), "tokenizer_hash": self.data.tok_hash,
                "warm_starts": self.warm_starts, "phases": self.phases, "precisions": self.precisions,
                "penalties": self.penalties, "run": {**self.terms, "total_steps": self.total_steps},
                "epoch": self.order.epoch(self.step),
                "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(self.args).items()}}

    def evaluate(self, m: Member) -> dict:
        held_out = self.held_out[self.dist.rank::self.dist.world]
        s = ev.score(m.encoder, held_out)
        shuffled = ev.score(m.encoder, self.shuffled[self.dist.rank::self.dist.world])
        loss, correct, count, loss_shuffled = self.dist.sum([sum(s.seq_loss), s.accuracy * s.targets, s.targets,
                                                             sum(shuffled.seq_loss)])
        mean = loss / max(count, 1)
        result = {"loss": mean, "accuracy": correct / max(count, 1), "perplexity": math.exp(min(mean, 50.0)),
                  "targets": int(count), "context_effect": (loss_shuffled - loss) / max(count, 1)}
        m.last_eval = dict(result, step=self.step)
        if self.dist.main:
            append_jsonl(m.metrics, {"type": "eval", "step": self.step, "tokens": self.tokens,
                                     "elapsed": round(self.clock(), 2), **result})
        log(self.dist, f"{m.name} eval step {self.step:,} tokens {self.tokens:,}: loss {result['loss']:.4f} "
                       f"acc {result['accuracy']:.4f} ppl {result['perplexity']:.1f} "
                       f"context effect {result['context_effect']:+.3f} nats")
        return result

    def log_train(self, n_steps: int, n_tokens: int, seconds: float):
        tps = n_tokens / max(seconds, 1e-9)  # every model of the lockstep sees these tokens in this time
        losses = []
        for m in self.members:
            losses.append(float(m.loss_sum) / n_steps)
            m.loss_sum.zero_()
            row = {"type": "train", "step": self.step, "tokens": self.tokens, "loss": losses[-1],
                   "lr": m.sched.get_last_lr()[0], "tokens_per_s": round(tps, 1), "elapsed": round(self.clock(), 2)}
            if self.dist.main:
                append_jsonl(m.metrics, row)
        log(self.dist, f"step {self.step:,}/{self.total_steps:,} tokens {self.tokens:,} loss "
                       + " ".join(f"{m.name} {loss:.3f}" for m, loss in zip(self.members, losses))
                       + f" | {tps:,.0f} tokens/s")

    # 7. the loop
    def loop(self) -> bool:
        """Train to the budget; False when stopped before it (--stop-after), with a checkpoint to resume."""
        a, dist = self.args, self.dist
        log(dist, f"{', '.join(f'{m.name} ({m.encoder.num_parameters():,} parameters)' for m in self.members)}; "
                  f"{dist.world} process(es) on {dist.device}, {torch.get_num_threads()} thread(s); "
                  f"{len(self.train_data):,} training sequences (mean {self.train_data.lengths.mean():.1f} tokens); "
                  f"budget {self.total_steps:,} steps; warm-up {self.members[0].schedule.warmup}")
        if a.stop_after is not None and a.stop_after <= self.step < self.total_steps:
            log(dist, f"--stop-after {a.stop_after}: the run is at step {self.step:,} already; nothing to train")
            return False
        if self.step == 0:
            for m in self.members:
                self.evaluate(m)  # the curve starts at the untrained model
        self.t0 = time.time()  # training time: the probe and the first evaluation are not counted
        last_log, log_tokens, log_t = self.step, 0, time.time()
        last_ckpt_t = time.time()
        while self.step < self.total_steps:
            n_tokens = self.train_step(self.step)
            self.step += 1
            self.tokens += n_tokens
            log_tokens += n_tokens
            if self.step % a.log_every == 0 or self.step == self.total_steps:
                dist.synchronize()
                self.log_train(self.step - last_log, log_tokens, time.time() - log_t)
                last_log, log_tokens, log_t = self.step, 0, time.time()
            if self.step % a.eval_every == 0:
                t = time.time()
                kept = a.keep_every and self.step % a.keep_every == 0
                if kept:
                    self.check_replicas()  # a milestone is what publish ships: the ranks agree first
                for m in self.members:
                    self.evaluate(m)
                    if kept:
                        self.save_milestone(m)
                log_t += time.time() - t  # evaluation time is not training throughput
            stop = a.stop_after is not None and a.stop_after <= self.step < self.total_steps
            due = self.step % a.checkpoint_every == 0 or stop or \
                dist.agree(time.time() - last_ckpt_t >= 60 * a.checkpoint_minutes)
            if due:
                t = time.time()
                self.check_replicas()
                resume.save(a.run_dir, dist, self.members, self.state_doc())
                last_ckpt_t = time.time()
                log_t += last_ckpt_t - t
            if stop:
                log(dist, f"stopped after step {self.step:,} of {self.total_steps:,} (--stop-after): the checkpoint "
                          f"is in {a.run_dir / resume.CHECKPOINT}; continue with --resume")
                return False
        return True

    def check_replicas(self) -> dict[str, str]:
        """Under DDP every process holds a copy of each model and only rank 0's is saved: before a checkpoint,
        the copies are compared (SHA-256 of the weights), and the run stops rather than save one rank's model
        as the run's when they have drifted apart. Returns {name: SHA-256} ({} on one process)."""
        if self.dist.world == 1:
            return {}
        return self.dist.check_replicas({m.name: m.encoder for m in self.members}, self.step)

    # 8. the model folders
    def finish(self):
        a, dist = self.args, self.dist
        digests = self.check_replicas()
        for m in self.members:
            if (m.last_eval or {}).get("step") != self.step:
                self.evaluate(m)
            if a.keep_every and self.step % a.keep_every:  # the final weights are a milestone too: the one
                self.save_milestone(m)                      # a finished run publishes
        if digests:
            log(dist, f"the {dist.world} processes hold the same parameters at step {self.step:,} (compared before "
                      f"every checkpoint): " + ", ".join(f"{name} SHA-256 {d[:16]}" for name, d in digests.items()))
        resume.save(a.run_dir, dist, self.members, self.state_doc())
        if dist.main:
            for m in self.members:
                self.save_model(m)
            done = {"step": self.step, "tokens": self.tokens, "wall_seconds": time.time() - self.t_start,
                    "models": {m.name: m.last_eval for m in self.members}}
            (a.run_dir / "done.json").write_text(json.dumps(done, indent=1) + "\n")
        dist.barrier()

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()

    def save_milestone(self, m: Member):
        """A milestone: the weights now (float16) as a model folder with its card, figures and curve so far."""
        folder = self.args.run_dir / m.name / "milestones" / f"step-{self.step:06d}"
        self.write_model(m, folder, {**m.last_eval, "unigram_loss": self.unigram}, torch.float16)

    def save_model(self, m: Member):
        scores = ev.evaluate(m.encoder, self.held_out, self.sp, self.data.train.ids)
        self.write_model(m, m.out, scores, torch.float16 if self.args.save_dtype == "float16" else None)
        log(self.dist, f"saved {m.out} ({self.tokens:,} tokens, {self.step:,} steps, held-out loss "
                       f"{scores['loss']:.4f}, accuracy {scores['accuracy']:.4f}, context effect "
                       f"{scores['context_effect']:+.3f} nats)")

    def write_model(self, m: Member, folder: Path, scores: dict, dtype: torch.dtype | None):
        """Weights, metrics so far, training.json and the card with its curve."""
        was = m.encoder.training
        m.encoder.eval()
        m.encoder.save(folder, card="", dtype=dtype)
        m.encoder.train(was)
        (folder / "metrics.jsonl").write_text(m.metrics.read_text())
        cardlib.write(folder, self.facts(m, scores, dtype))

    def facts(self, m: Member, scores: dict, dtype: torch.dtype | None) -> dict:
        a, wall = self.args, self.clock()
        first = self.phases[0] if self.phases else {"lr": m.sched.base_lrs[0], "warmup": m.schedule.warmup}
        return {"config": m.config.to_dict(), "parameters": m.encoder.num_parameters(), "tokens": self.tokens,
                "steps": self.step, "budget_steps": self.total_steps, "budget_tokens": self.budget_tokens,
                "batch": a.batch, "seq_len": a.seq_len, "lr": first["lr"], "warmup": first["warmup"],
                "schedule": a.schedule, "weight_decay": a.weight_decay, "dropout": a.dropout, "seed": a.seed,
                "accum": a.accum, "world_size": self.dist.world, "threads": torch.get_num_threads(),
                "at_once": self.pool is not None,
                "final": scores, "wall_seconds": wall, "total_seconds": time.time() - self.t_start,
                "hardware": cardlib.hardware(self.dist.device),
                "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "command": command_line(self.dist, a.argv), "stats": self.data.stats,
                "trained_with": [x.name for x in self.members], "epochs": self.order.epoch(self.step),
                "eval_seqs": sum(len(b[0]) for b in self.held_out), "train_sequences": len(self.train_data),
                "train_tokens": int(self.data.train.n_tokens), "tokens_per_s": self.tokens / max(wall, 1e-9),
                "save_dtype": "float16" if dtype == torch.float16 else "float32", "compiled": bool(a.compile),
                "precision": precision.name(self.dtype), "mask_rate": a.mask_rate, "mask_only": a.mask_only,
                "init_sha256": m.init_sha256, "warm_starts": self.warm_starts, "phases": self.phases,
                "precisions": self.precisions, "penalties": self.penalties,
                "move_penalty": a.move_penalty}  # the λ it ends with (penalties: each λ from its step)


def train(args) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    dist = Dist(args.device)
    run = Run(args, dist)
    try:
        run.prepare()
        run.open()
        run.build()
        run.start()
        run.fit_budget()
        if run.loop():
            run.finish()
        return 0
    finally:
        run.close()
        dist.close()


def detach(args) -> int:
    """Start this command again in its own session, immune to hang-ups, logging to <run-dir>/train.log."""
    args.run_dir.mkdir(parents=True, exist_ok=True)
    logfile = args.run_dir / "train.log"
    argv = [a for a in args.argv if a != "--detach"]
    with open(logfile, "ab") as out:
        proc = subprocess.Popen(["setsid", "nohup", sys.executable, "-m", "macaron.train.pretrain", *argv],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    (args.run_dir / "train.pid").write_text(f"{proc.pid}\n")
    print(f"training in the background: pid {proc.pid}, log {logfile}\n"
          f"follow it with: python -m macaron.train.watch {args.run_dir}")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.detach:
        return detach(args)
    try:
        return train(args)
    except (DataError, TrainError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
