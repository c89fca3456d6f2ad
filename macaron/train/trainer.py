"""The one trainer of every task (task.py): several models trained in lockstep on one stream of batches, with their
optimizers, schedules, checkpoints, resume, precision, budgets, milestones, model folders and cards, torchrun and
--detach. The masked LM's command (`python -m macaron.train.pretrain`) and the translators'
(`python -m macaron.train.translate`) are this trainer with their task.

Models named together in `--models` train in lockstep: every model takes its optimizer step on the same batch before
the next batch is drawn, so they see the same batches, in the same order, and the same number of tokens. On a CPU
with AMX they take those steps at the same time, a thread each, where that changes no model's step (`at_once`);
elsewhere in turn.

Budgets: `--tokens` (what the task's batches count), `--steps`, or `--fit-minutes M`: a throughput probe (a few real
steps of every model, then weights and optimizers restored) measures the seconds per lockstep step, an evaluation and
a checkpoint, and sets the number of steps so that the whole run ends within M minutes of its start (a probe that
spends the M minutes itself, on a loaded machine, stops there with a message). The budget is stored in the
checkpoint, so a resumed run ends where the first would have.

A run writes to its run folder: `<name>/metrics.jsonl` per model, one resumable `checkpoint/` (safetensors + JSON,
nothing pickled), `budget.json`, and `done.json` at the end; each model's folder goes to `<out>/<name>` with a model
card, `training.json` and the training curve, and with `--keep-every` so does every milestone, to
`<run-dir>/<name>/milestones/step-<N>`. Where the run folder is gone (a new machine), `--warm-start DIR` continues
from weights published to DIR/<name> (`python -m macaron.train.publish`) at their recorded step. A run that fell
short goes on in a second phase: `--resume --new-phase --tokens N --lr PEAK` warms up again (`--rewarm` steps) to
PEAK and decays to the new budget, which the checkpoint keeps from then on. Precision: bf16 autocast where the CPU or
GPU does bf16 natively, float32 elsewhere (`precision.py`). `--stop-after STEP` ends a run at STEP with its
checkpoint, for `--resume` to continue (a long run over several sessions). Under DDP the processes' copies of each
model are compared (SHA-256) before every checkpoint: only rank 0 saves, so a drift would go unseen. `--detach`
starts the same command under `setsid nohup`, logging to `<run-dir>/train.log`, and waits until that trainer has
passed its checks (data, checkpoint, budget, phase: it writes `<run-dir>/train.ready`), has exited (its refusal is
printed and the exit code is not 0) or DETACH_WAIT seconds have gone by; later errors show in
`python -m macaron.train.watch <run-dir>`, which follows it.

Beside this file: the tasks' interface in `task.py`, the criteria, optimizer and schedule in `objective.py`, the
command line in `options.py`, the processes in `distributed.py`, checkpoints and warm starts in `resume.py`, where a
run stands and where it begins (Place, the checkpoint it opens, Start) in `start.py`, the --fit-minutes probe in
`budget.py`, what it writes (curves, milestones, model folders and their facts) in `output.py`. Here: one model of the
run (Member), the threads that step models at once, then the run (Run) step by step: prepare, open, build, start,
fit_budget, loop, finish.
"""
from __future__ import annotations

import contextlib
import json
import os
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
from ..network.operators import ATTENTION, use_attention
from ..sources.milestones import param_checksum
from . import budget, precision, resume
from . import card as cardlib
from .data import DataError
from .distributed import Dist
from .objective import Schedule, optimizer_for
from .output import Output
from .resume import TrainError
from .start import Place, Start, open_checkpoint
from .task import Task
from .watch import trainer_pid


# ---- one model of the run -----------------------------------------------------------
class Member:
    """A model being trained: its network, the criterion that computes its loss, optimizer, schedule and files."""

    def __init__(self, name: str, config, task: Task, args, dist: Dist, total_steps: int | None,
                 dtype: torch.dtype = torch.float32, attention: str = "sdpa"):
        self.name, self.config, self.dist, self.dtype = name, config, dist, dtype
        torch.manual_seed(args.seed)  # the same initial weights for every rank (and every run of this seed)
        self.network = task.network(config).to(dist.device).train()
        self.init_sha256 = param_checksum(self.network)  # the random start is rebuilt from the seed, not stored
        use_attention(self.network, attention)
        if task.compiles:  # in place: forward is compiled, the head (another method) stays eager. On the CPU
            # only Dynamo's graph capture runs (backend "eager"): the dry run checks the capture in seconds,
            # where Inductor's C++ build would take minutes
            self.network.compile(backend="inductor" if dist.device.type == "cuda" else "eager")
        self.criterion = task.criterion(self.network).train()
        self.wrapped: nn.Module = self.criterion  # what a step calls: the criterion, in DDP under torchrun
        if dist.world > 1:
            ids = [dist.device] if dist.device.type == "cuda" else None
            self.wrapped = nn.parallel.DistributedDataParallel(self.criterion, device_ids=ids)
        self.schedule = Schedule(args.schedule, args.warmup, total_steps)
        self.new_optimizer(args)
        self.metrics = args.run_dir / name / "metrics.jsonl"
        self.out = args.out / name
        self.last_eval: dict | None = None
        self.loss_sum = torch.zeros((), device=dist.device)  # summed on the device: no sync per step

    def step(self, micro_batches, clip: float):
        """One optimizer step on the micro-batches of this rank, each the tuple of tensors the criterion reads
        ((inputs, attention_mask, labels) for the masked LM)."""
        n = len(micro_batches)
        for m, batch in enumerate(micro_batches):
            last = m == n - 1
            sync = contextlib.nullcontext() if (self.dist.world == 1 or last) else self.wrapped.no_sync()
            with sync:
                with precision.autocast(self.dist.device, self.dtype):
                    loss = self.wrapped(*batch)
                (loss / n).backward()
            self.loss_sum += loss.detach() / n
        if clip:
            nn.utils.clip_grad_norm_(self.criterion.parameters(), clip)
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
        return {k: v.detach().clone() for k, v in self.network.state_dict().items()}

    def new_optimizer(self, args):
        self.opt = optimizer_for(self.criterion, args, self.dist.device)
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, self.schedule)

    def restore(self, weights: dict, args, total_steps: int):
        """Back to `weights` with a fresh optimizer and the budget's schedule: the probe leaves no trace."""
        self.network.load_state_dict(weights)
        self.schedule.total = total_steps
        self.new_optimizer(args)
        self.loss_sum.zero_()


def dropout(network: nn.Module) -> bool:
    """Whether any dropout of the network draws random numbers."""
    return any(isinstance(mod, nn.Dropout) and mod.p > 0 for mod in network.modules())


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


def at_once(members: list[Member], task: Task, dist: Dist) -> ThreadPoolExecutor | None:
    """A worker thread per model, so that the models take their steps at the same time on one intra-op thread
    each, where this CPU kind trains faster so (precision.models_at_once). Only with a thread per model, in one
    process (DDP's collectives would interleave), eager (Dynamo's capture is not thread-safe), without dropout
    (its draws from the one global generator would interleave) and for models that use each weight once in a
    forward: autocast keeps one cache of bf16 weight copies for the whole process, and any thread leaving autocast
    empties it, so a weight used twice (shared layers, tied halves, FLOATER's position ODE, a token table shared by
    two halves) would be cast again whenever the other model's forward ended in between, and its gradient would
    change with the timing (float32 has no autocast, but keeps the one rule). Each model's step is then the same as
    on one thread alone. More models than threads share the workers evenly, in turn on each (four models on two
    threads: two each), where the count divides: three on two would leave one thread idle for a third of each
    step."""
    k = len(members)
    if (k < 2 or k % torch.get_num_threads() or dist.world > 1 or task.compiles
            or any(dropout(m.network) for m in members) or not precision.models_at_once(dist.device)
            or any(task.reuses_weights(m.network) for m in members)):
        return None
    return thread_per_model(torch.get_num_threads())


@contextlib.contextmanager
def threads(n: int):
    """torch's intra-op thread count set to n for a while."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


# ---- the run, step by step ------------------------------------------------------------
class Run:
    """The lockstep run: the named steps of training several models of one task on one stream of batches. The task
    (task.py) owns the data, batches, held-out sets and evaluation; where the run begins is Start's (start.py), what
    it writes besides its checkpoint is Output's (output.py)."""

    def __init__(self, task: Task, args, dist: Dist):
        self.task, self.args, self.dist, self.t_start = task, args, dist, time.time()
        self.place = Place()  # where the run stands: a resume or a warm start sets it from what it continues
        self.asked: int | None = None  # the budget the command line asks for (--tokens, --steps), in steps
        # 2. open: the checkpoint to continue, if any
        self.ckpt: Path | None = None
        self.state: dict | None = None
        # 3. build: the models
        self.dtype = torch.float32
        self.attention = "sdpa"
        self.members: list[Member] = []
        self.pool: ThreadPoolExecutor | None = None  # the models stepping at once, a thread each (at_once)
        self.out: Output | None = None

    def log(self, msg: str):
        self.dist.log(msg)

    @property
    def configs(self) -> dict[str, ModelConfig]:
        return self.task.configs

    # 1. everything is checked before anything is written (besides the corpus cache)
    def prepare(self):
        self.task.prepare()
        self.asked = self.place.total_steps = self.budget_from_args()

    def budget_from_args(self) -> int | None:
        a, t, total = self.args, self.task, None
        if a.steps:
            total = a.steps
        if a.tokens:
            by_tokens = t.order.steps_for_tokens(a.tokens, t.train_data.lengths)
            total = min(total, by_tokens) if total else by_tokens
        return total

    # 2. resume, or refuse to overwrite (start.py)
    def open(self):
        self.ckpt, self.state = open_checkpoint(self)

    # 3. the models
    def build(self):
        a, dist, task = self.args, self.dist, self.task
        self.dtype = precision.choose(dist.device, a.precision)
        self.attention = precision.attention(dist.device, self.dtype, task.longest)
        self.members = [Member(name, cfg, task, a, dist, self.place.total_steps, self.dtype, self.attention)
                        for name, cfg in self.configs.items()]
        self.pool = at_once(self.members, task, dist)
        w = torch.get_num_threads()
        self.shares = [self.members[i::w] for i in range(w)]  # each worker's models, when at once
        turns = ""
        if len(self.members) > 1 and dist.device.type == "cpu":
            turns = f", the models at once {cardlib.at_once_words(len(self.members), w)}" if self.pool else \
                f", the models in turn on {torch.get_num_threads()} threads"
        self.log(f"precision: {precision.describe(dist.device, self.dtype, a.precision)}; on "
                 f"{cardlib.hardware(dist.device)}: fused AdamW, {ATTENTION[self.attention]}, "
                 f"{'compiled' if task.compiles else 'eager'}{turns}")
        torch.manual_seed(a.seed * 1000 + 1 + dist.rank)  # dropout differs between ranks
        if dist.main and a.overwrite and not a.resume:  # only what this script wrote (a log may live here)
            for name in (resume.CHECKPOINT, f"{resume.CHECKPOINT}.tmp", f"{resume.CHECKPOINT}.old", "done.json"):
                path = a.run_dir / name
                shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        if dist.main:
            for m in self.members:
                m.metrics.parent.mkdir(parents=True, exist_ok=True)
        dist.barrier()
        task.evaluation_sets()
        self.out = Output(self)

    # 4. where the run starts: a checkpoint, published weights, or the random start (start.py)
    def start(self):
        Start(self)()
        self.task.started(self.state, self.members)

    # 5. the batches: the same for every model
    def train_step(self, step: int) -> int:
        micro, n_tokens = self.task.batch(step)
        if self.pool is None:
            for m in self.members:
                m.step(micro, self.args.clip)
        else:
            list(self.pool.map(lambda share: [m.step(micro, self.args.clip) for m in share], self.shares))
        return n_tokens

    # 6. the budget: for --fit-minutes, a probe of real steps, then everything restored (budget.py)
    def fit_budget(self):
        if self.place.total_steps is None and self.args.fit_minutes:
            budget.fit(self)

    @property
    def budget_tokens(self) -> int | None:
        steps, t = self.place.total_steps, self.task
        return t.order.tokens_for_steps(steps, t.train_data.lengths) if steps else None

    def state_doc(self) -> dict:
        """What the checkpoint keeps besides weights and optimizers (resume.save)."""
        p, t = self.place, self.task
        return {"step": p.step, "tokens": p.tokens, "elapsed": p.clock(), "tokenizer_hash": t.data.tok_hash,
                **p.history(), "run": {**t.terms, "total_steps": p.total_steps}, "epoch": t.order.epoch(p.step),
                "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(self.args).items()},
                **t.state()}

    # 7. the loop
    def loop(self) -> bool:
        """Train to the budget; False when stopped before it (--stop-after), with a checkpoint to resume."""
        a, dist, p = self.args, self.dist, self.place
        self.log(f"{', '.join(f'{m.name} ({m.network.num_parameters():,} parameters)' for m in self.members)}; "
                 f"{dist.world} process(es) on {dist.device}, {torch.get_num_threads()} thread(s); "
                 f"{self.task.describe()}; budget {p.total_steps:,} steps; warm-up {self.members[0].schedule.warmup}")
        if a.stop_after is not None and a.stop_after <= p.step < p.total_steps:
            self.log(f"--stop-after {a.stop_after}: the run is at step {p.step:,} already; nothing to train")
            return False
        if p.step == 0:
            for m in self.members:
                self.out.evaluate(m)  # the curve starts at the untrained model
        p.t0 = time.time()  # training time: the probe and the first evaluation are not counted
        last_log, log_tokens, log_t = p.step, 0, time.time()
        last_ckpt_t = time.time()
        while p.step < p.total_steps:
            n_tokens = self.train_step(p.step)
            p.step += 1
            p.tokens += n_tokens
            log_tokens += n_tokens
            if p.step % a.log_every == 0 or p.step == p.total_steps:
                dist.synchronize()
                self.out.log_train(p.step - last_log, log_tokens, time.time() - log_t)
                last_log, log_tokens, log_t = p.step, 0, time.time()
            if p.step % a.eval_every == 0:
                t = time.time()
                kept = a.keep_every and p.step % a.keep_every == 0
                if kept:
                    self.check_replicas()  # a milestone is what publish ships: the ranks agree first
                for m in self.members:
                    self.out.evaluate(m)
                    if kept:
                        self.out.milestone(m)
                log_t += time.time() - t  # evaluation time is not training throughput
            stop = a.stop_after is not None and a.stop_after <= p.step < p.total_steps
            due = p.step % a.checkpoint_every == 0 or stop or \
                dist.agree(time.time() - last_ckpt_t >= 60 * a.checkpoint_minutes)
            if due:
                t = time.time()
                self.check_replicas()
                resume.save(a.run_dir, dist, self.members, self.state_doc())
                last_ckpt_t = time.time()
                log_t += last_ckpt_t - t
            if stop:
                self.log(f"stopped after step {p.step:,} of {p.total_steps:,} (--stop-after): the checkpoint "
                         f"is in {a.run_dir / resume.CHECKPOINT}; continue with --resume")
                return False
        return True

    def check_replicas(self) -> dict[str, str]:
        """Under DDP every process holds a copy of each model and only rank 0's is saved: before a checkpoint,
        the copies are compared (SHA-256 of the weights), and the run stops rather than save one rank's model
        as the run's when they have drifted apart. Returns {name: SHA-256} ({} on one process)."""
        if self.dist.world == 1:
            return {}
        return self.dist.check_replicas({m.name: m.network for m in self.members}, self.place.step)

    # 8. the model folders
    def finish(self):
        a, dist, p = self.args, self.dist, self.place
        digests = self.check_replicas()
        for m in self.members:
            if (m.last_eval or {}).get("step") != p.step:
                self.out.evaluate(m)
            if a.keep_every and p.step % a.keep_every:  # the final weights are a milestone too: the one
                self.out.milestone(m)                      # a finished run publishes
        if digests:
            self.log(f"the {dist.world} processes hold the same parameters at step {p.step:,} (compared before "
                     f"every checkpoint): " + ", ".join(f"{name} SHA-256 {d[:16]}" for name, d in digests.items()))
        resume.save(a.run_dir, dist, self.members, self.state_doc())
        if dist.main:
            for m in self.members:
                self.out.model(m)
            self.out.done()
        dist.barrier()

    def close(self):
        if self.pool is not None:
            self.pool.shutdown()


READY = "MACARON_READY_FILE"  # set by --detach: the file its trainer writes once its checks have passed
DETACH_WAIT = 300.0  # at most this many seconds --detach waits for it (the checks read the data and the checkpoint)


def ready(run: Run):
    """Tell a waiting --detach (READY) that the run passed its checks: where it starts and its budget."""
    where = os.environ.pop(READY, None)
    if where and run.dist.main:
        doc = {"pid": os.getpid(), "step": run.place.step, "total_steps": run.place.total_steps}
        tmp = Path(f"{where}.tmp")
        tmp.write_text(json.dumps(doc) + "\n")
        os.replace(tmp, where)  # whole or not at all: --detach reads it as soon as it is there


def train(args, task: type[Task]) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    dist = Dist(args.device)
    run = Run(task(args, dist), args, dist)
    try:
        run.prepare()
        run.open()
        run.build()
        run.start()
        ready(run)
        run.fit_budget()
        if run.loop():
            run.finish()
        return 0
    finally:
        run.close()
        dist.close()


def detach(args, wait: float | None = None) -> int:
    """Start this command again in its own session, immune to hang-ups, logging to <run-dir>/train.log; never a
    second trainer on a run folder whose trainer is still at work (a run resumed across sessions). Then wait until
    the trainer has passed its checks, or has exited (a refusal: printed, and its exit code returned), or `wait`
    seconds (DETACH_WAIT) have gone by."""
    if (pid := trainer_pid(args.run_dir)) is not None:
        print(f"error: a trainer (pid {pid}) is still at work on {args.run_dir}: follow it with "
              f"python -m macaron.train.watch {args.run_dir}, or stop it (kill {pid}) and run this again to resume "
              f"from its last checkpoint", file=sys.stderr)
        return 2
    args.run_dir.mkdir(parents=True, exist_ok=True)
    logfile, flag = args.run_dir / "train.log", args.run_dir / "train.ready"
    flag.unlink(missing_ok=True)
    argv = [a for a in args.argv if a != "--detach"]
    before = logfile.stat().st_size if logfile.is_file() else 0
    with open(logfile, "ab") as out:
        proc = subprocess.Popen(["setsid", "nohup", sys.executable, "-m", args.module, *argv],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONUNBUFFERED": "1", READY: str(flag)})
    (args.run_dir / "train.pid").write_text(f"{proc.pid}\n")
    wait = DETACH_WAIT if wait is None else wait
    deadline = time.time() + wait
    while not flag.is_file() and proc.poll() is None and time.time() < deadline:
        time.sleep(0.2)
    watch = f"python -m macaron.train.watch {args.run_dir}"
    if flag.is_file():
        doc = json.loads(flag.read_text())
        flag.unlink(missing_ok=True)
        where = f"from step {doc['step']:,} of {doc['total_steps']:,}" if doc.get("total_steps") else \
            f"from step {doc['step']:,}"
        print(f"training in the background: pid {proc.pid}, log {logfile}; its checks passed, it trains {where}\n"
              f"follow it with: {watch} (later errors show there)")
        return 0
    if proc.poll() is not None and proc.returncode:  # it stopped before its checks passed: a refusal, or a crash
        with open(logfile, "rb") as f:
            f.seek(before)
            said = f.read().decode(errors="replace").splitlines()
        errors = [line for line in said if line.startswith("error: ")]  # a refusal says what is wrong in one line
        print("\n".join(errors) if errors else "\n".join(said[-15:] + [
            f"error: the trainer (pid {proc.pid}) exited with code {proc.returncode} before training; log {logfile}"]),
            file=sys.stderr)
        return proc.returncode if proc.returncode > 0 else 2
    state = "it has ended" if proc.poll() is not None else f"its checks had not finished after {wait:.0f} s"
    print(f"training in the background: pid {proc.pid}, log {logfile}; {state}\n"
          f"follow it with: {watch} (it says whether it started; later errors show there)")
    return 0


def main(args, task: type[Task]) -> int:
    """A task's command once its line is parsed: in the background (--detach), or here; a refusal is one line
    and exit status 2."""
    if args.detach:
        return detach(args)
    try:
        return train(args, task)
    except (DataError, TrainError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
