"""Masked-language-model pre-training of a splitting-scheme encoder.

    python -m macaron.train.pretrain --size mini --scheme macaron --tokens 20_000_000
    torchrun --nproc_per_node 2 -m macaron.train.pretrain ...      (DDP: nccl on CUDA, gloo on CPU)

The data order (a seeded permutation of packed sequences) and the masks (seeded by step) do not
depend on the model, so two models trained with the same seed, batch and budget see exactly the
same tokens: an equal-budget comparison. A run writes to its run folder (default runs/<name>):
metrics.jsonl, a resumable checkpoint (safetensors + JSON, nothing pickled) and, at the end, the
model folder (default pretrained/<name>) with a model card and the training curve.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import math
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from ..config import ModelConfig
from ..model import build
from . import card as cardlib
from .data import (IGNORE, DataError, Order, Packed, generator_for, load_tokenizer, mask_tokens, pretokenize,
                   specials, tokenizer_hash, validation_batches)

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = "checkpoint"
STATE_VERSION = 1
# Fields of the run that a resumed run must share with the checkpoint (else: a different experiment).
COMPAT_ARGS = ("seed", "batch", "seq_len", "cross_documents", "accum", "corpus_stats")


class TrainError(RuntimeError):
    """A run that cannot start or resume; the message names the file and the problem."""


# ---- arguments ----------------------------------------------------------------------
def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m macaron.train.pretrain", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("model")
    g.add_argument("--size", default="mini", choices=["mini", "small", "base"])
    g.add_argument("--scheme", default="transformer")
    g.add_argument("--attention", default="dot")
    g.add_argument("--position", default="learned")
    g.add_argument("--norm", default="pre", choices=["pre", "post"])
    g.add_argument("--dropout", type=float, default=0.1)
    g.add_argument("--max-len", type=int, default=None, help="position table size (default: --seq-len)")
    g.add_argument("--d-model", type=int, help="override the size's width")
    g.add_argument("--layers", type=int, help="override the size's depth")
    g.add_argument("--heads", type=int, help="override the size's number of heads")
    g.add_argument("--ffn", type=int, help="override the size's FFN budget per layer")
    g.add_argument("--name", default=None, help="model name (default <scheme>-<size>)")
    g = p.add_argument_group("data")
    g.add_argument("--corpus", default=str(ROOT / "data" / "corpus"))
    g.add_argument("--tokenizer", default=str(ROOT / "data" / "tokenizer.json"))
    g.add_argument("--seq-len", type=int, default=128)
    g.add_argument("--no-cross-documents", dest="cross_documents", action="store_false",
                   help="start a new sequence at every document instead of packing documents with [SEP]")
    g = p.add_argument_group("optimisation")
    g.add_argument("--batch", type=int, default=32, help="sequences per optimizer step (all ranks together)")
    g.add_argument("--accum", type=int, default=1, help="gradient accumulation micro-steps per optimizer step")
    g.add_argument("--lr", type=float, default=5e-4)
    g.add_argument("--warmup", type=int, default=None, help="warm-up steps (default 6%% of the steps, or 100)")
    g.add_argument("--schedule", default="linear", choices=["linear", "cosine"])
    g.add_argument("--weight-decay", type=float, default=0.01)
    g.add_argument("--betas", type=float, nargs=2, default=(0.9, 0.98))
    g.add_argument("--eps", type=float, default=1e-6)
    g.add_argument("--clip", type=float, default=1.0, help="gradient norm clip (0: off)")
    g.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("budget (the first reached ends the run)")
    g.add_argument("--tokens", type=float, help="real (non-padding) tokens to train on")
    g.add_argument("--steps", type=int, help="optimizer steps")
    g.add_argument("--minutes", type=float, help="wall-clock minutes of training")
    g = p.add_argument_group("evaluation, logging, checkpoints")
    g.add_argument("--eval-every", type=int, default=100, help="steps between held-out evaluations")
    g.add_argument("--eval-seqs", type=int, default=512, help="size of the fixed validation set (sequences)")
    g.add_argument("--eval-batch", type=int, default=64)
    g.add_argument("--eval-seed", type=int, default=1234, help="masking seed of the validation set")
    g.add_argument("--log-every", type=int, default=10)
    g.add_argument("--checkpoint-every", type=int, default=500, help="steps between resumable checkpoints")
    g.add_argument("--checkpoint-minutes", type=float, default=10.0, help="also checkpoint this often")
    g = p.add_argument_group("run")
    g.add_argument("--out", default=None, help="model folder written at the end (default pretrained/<name>)")
    g.add_argument("--run-dir", default=None, help="metrics and checkpoints (default runs/<name>)")
    g.add_argument("--resume", action="store_true", help="continue from the run folder's checkpoint")
    g.add_argument("--overwrite", action="store_true", help="start over even if the run/model folder exists")
    g.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    g.add_argument("--compile", action="store_true", help="torch.compile the model")
    g.add_argument("--device", default=None, help="cpu | cuda (default: cuda when present)")
    g.add_argument("--halt-after", type=int, default=None, help=argparse.SUPPRESS)  # tests: stop as if killed
    g.add_argument("--checksums", default=None, help=argparse.SUPPRESS)  # tests: per-rank parameter hashes
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if not (args.tokens or args.steps or args.minutes):
        p.error("give a budget: --tokens, --steps or --minutes")
    args.name = args.name or f"{args.scheme}-{args.size}"
    args.max_len = args.max_len or args.seq_len
    args.out = Path(args.out) if args.out else ROOT / "pretrained" / args.name
    args.run_dir = Path(args.run_dir) if args.run_dir else ROOT / "runs" / args.name
    args.tokens = int(args.tokens) if args.tokens else None
    return args


def model_config(args, vocab_size: int) -> ModelConfig:
    overrides = dict(scheme=args.scheme, attention=args.attention, position=args.position, norm=args.norm,
                     dropout=args.dropout, vocab_size=vocab_size, max_len=args.max_len, name=args.name)
    cfg = ModelConfig.named(args.size, **overrides)
    for field, value in (("d_model", args.d_model), ("n_layers", args.layers), ("n_heads", args.heads),
                         ("ffn_total", args.ffn)):
        if value is not None:
            setattr(cfg, field, value)
    return ModelConfig.from_dict(cfg.to_dict())  # re-validate after the overrides


# ---- distributed --------------------------------------------------------------------
class Dist:
    def __init__(self, device: str | None):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        cuda = torch.cuda.is_available() and device != "cpu"
        if device == "cuda" and not torch.cuda.is_available():
            raise TrainError("--device cuda: no CUDA device is available")
        self.device = torch.device(f"cuda:{local}" if cuda else "cpu")
        if cuda:
            torch.cuda.set_device(self.device)
        if self.world > 1 and not torch.distributed.is_initialized():
            torch.distributed.init_process_group("nccl" if cuda else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def barrier(self):
        if self.world > 1:
            torch.distributed.barrier()

    def agree(self, flag: bool) -> bool:
        """Rank 0's decision, for every rank (wall-clock budgets differ slightly between ranks)."""
        if self.world == 1:
            return flag
        t = torch.tensor([int(flag)], device=self.device)
        torch.distributed.broadcast(t, 0)
        return bool(t.item())

    def sum(self, values: list[float]) -> list[float]:
        if self.world == 1:
            return values
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        torch.distributed.all_reduce(t)
        return t.tolist()

    def close(self):
        if self.world > 1 and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()


# ---- the objective ------------------------------------------------------------------
class MaskedLM(nn.Module):
    """Encoder + tied MLM head; the head runs on the masked positions only (the loss ignores the rest)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, ids, keep, labels):
        hidden = self.encoder(ids, keep)
        chosen = labels != IGNORE
        logits = self.encoder.head(hidden[chosen])
        return F.cross_entropy(logits.float(), labels[chosen], ignore_index=IGNORE)

    @torch.no_grad()
    def score(self, ids, keep, labels):
        """(summed loss, correct predictions, targets) over the masked positions."""
        hidden = self.encoder(ids, keep)
        chosen = labels != IGNORE
        logits = self.encoder.head(hidden[chosen]).float()
        target = labels[chosen]
        loss = F.cross_entropy(logits, target, reduction="sum")
        return float(loss), int((logits.argmax(-1) == target).sum()), int(target.numel())


def autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()  # float32 on the CPU


def optimizer_for(model: nn.Module, args, device) -> torch.optim.AdamW:
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim < 2 or "norm" in name or "embedding" in name else decay).append(p)
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    extra = {"fused": True} if device.type == "cuda" else {}
    return torch.optim.AdamW(groups, lr=args.lr, betas=tuple(args.betas), eps=args.eps, **extra)


class Schedule:
    """Linear warm-up, then linear or cosine decay to zero. Progress is by steps when the number of
    steps is known (a --steps or --tokens budget), else by the fraction of the --minutes spent."""

    def __init__(self, args, total_steps: int | None, clock):
        self.kind, self.total, self.clock = args.schedule, total_steps, clock
        self.minutes = args.minutes
        default = max(1, round(0.06 * total_steps)) if total_steps else 100
        self.warmup = args.warmup if args.warmup is not None else default

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return (step + 1) / self.warmup
        if self.total:
            p = (step - self.warmup) / max(1, self.total - self.warmup)
        else:
            p = self.clock() / (60 * self.minutes)
        p = min(max(p, 0.0), 1.0)
        return 1.0 - p if self.kind == "linear" else 0.5 * (1.0 + math.cos(math.pi * p))


# ---- resumable checkpoints (safetensors for tensors, JSON for the rest) --------------------
def _flatten_optimizer(opt) -> tuple[dict, dict]:
    sd = opt.state_dict()
    tensors, scalars = {}, {}
    for idx, st in sd["state"].items():
        for key, value in st.items():
            if torch.is_tensor(value):
                tensors[f"{idx}.{key}"] = value.detach().cpu().contiguous()
            else:
                scalars[f"{idx}.{key}"] = value
    return tensors, {"param_groups": sd["param_groups"], "scalars": scalars}


def _unflatten_optimizer(tensors: dict, meta: dict) -> dict:
    state: dict = {}
    for key, value in list(tensors.items()) + list(meta["scalars"].items()):
        idx, name = key.split(".", 1)
        state.setdefault(int(idx), {})[name] = value
    return {"state": state, "param_groups": meta["param_groups"]}


def save_checkpoint(run_dir: Path, dist: Dist, encoder, opt, sched, state: dict):
    """Write run_dir/checkpoint atomically: into checkpoint.tmp, then swap. A kill at any moment
    leaves a complete checkpoint behind (the new one or the previous one)."""
    final, tmp, old = run_dir / CHECKPOINT, run_dir / f"{CHECKPOINT}.tmp", run_dir / f"{CHECKPOINT}.old"
    if dist.main:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    dist.barrier()
    rng = {"torch_cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        rng["torch_cuda"] = torch.cuda.get_rng_state(dist.device)
    save_file(rng, tmp / f"rng-rank{dist.rank}.safetensors")
    if dist.main:
        save_file({k: v.detach().cpu().contiguous() for k, v in encoder.state_dict().items()},
                  tmp / "model.safetensors")
        opt_tensors, opt_meta = _flatten_optimizer(opt)
        save_file(opt_tensors, tmp / "optimizer.safetensors")
        sched_state = {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"}
        doc = dict(state, version=STATE_VERSION, world_size=dist.world, optimizer=opt_meta, scheduler=sched_state)
        (tmp / "state.json").write_text(json.dumps(doc, indent=1))
    dist.barrier()
    if dist.main:
        if final.exists():
            shutil.rmtree(old, ignore_errors=True)
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    dist.barrier()


def checkpoint_folder(run_dir: Path) -> Path | None:
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):  # .old: a kill between the two renames
        if (run_dir / name / "state.json").is_file():
            return run_dir / name
    return None


def read_checkpoint_state(folder: Path) -> dict:
    file = folder / "state.json"
    try:
        state = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TrainError(f"{file}: unreadable checkpoint state ({e})") from None
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        raise TrainError(f"{file}: not a checkpoint of this trainer (version {state.get('version')!r})"
                         if isinstance(state, dict) else f"{file}: not a checkpoint state")
    return state


def check_compatible(folder: Path, state: dict, config: ModelConfig, tok_hash: str, run: dict, world: int):
    file = folder / "state.json"
    problems = []
    if state.get("config") != config.to_dict():
        theirs, ours = state.get("config") or {}, config.to_dict()
        diff = [f"{k}: checkpoint {theirs.get(k)!r} vs now {ours.get(k)!r}" for k in ours if theirs.get(k) != ours[k]]
        problems.append("model config differs (" + "; ".join(diff[:6]) + ")")
    if state.get("tokenizer_hash") != tok_hash:
        problems.append(f"tokenizer differs (checkpoint {state.get('tokenizer_hash')} vs now {tok_hash})")
    for k in COMPAT_ARGS:
        if state.get("run", {}).get(k) != run.get(k):
            problems.append(f"{k}: checkpoint {state.get('run', {}).get(k)!r} vs now {run.get(k)!r}")
    if state.get("world_size") != world:
        problems.append(f"written by {state.get('world_size')} processes, resumed with {world}")
    if problems:
        raise TrainError(f"{file}: cannot resume, incompatible checkpoint: " + "; ".join(problems))


def load_checkpoint(folder: Path, dist: Dist, encoder, opt, sched, state: dict):
    def tensors(name):
        file = folder / name
        try:
            return load_file(file)
        except (SafetensorError, OSError, ValueError, FileNotFoundError) as e:
            raise TrainError(f"{file}: damaged or missing checkpoint file ({e})") from None

    weights = tensors("model.safetensors")
    try:
        encoder.load_state_dict(weights)
    except RuntimeError as e:
        raise TrainError(f"{folder / 'model.safetensors'}: weights do not fit the model ({e})") from None
    opt.load_state_dict(_unflatten_optimizer(tensors("optimizer.safetensors"), state["optimizer"]))
    sched.load_state_dict(dict(state["scheduler"], lr_lambdas=[None] * len(opt.param_groups)))
    rng = tensors(f"rng-rank{dist.rank}.safetensors")
    torch.set_rng_state(rng["torch_cpu"])
    if "torch_cuda" in rng and dist.device.type == "cuda":
        torch.cuda.set_rng_state(rng["torch_cuda"], dist.device)


# ---- metrics ------------------------------------------------------------------------
def append_jsonl(file: Path, row: dict):
    with open(file, "a") as f:
        f.write(json.dumps(row) + "\n")


def truncate_metrics(file: Path, step: int):
    """On resume: drop rows logged after the checkpoint (they are about to be recomputed)."""
    if not file.is_file():
        return
    keep = []
    for line in file.read_text().splitlines():
        try:
            if json.loads(line).get("step", 0) <= step:
                keep.append(line)
        except json.JSONDecodeError:
            continue
    tmp = file.with_suffix(".tmp")
    tmp.write_text("".join(l + "\n" for l in keep))
    os.replace(tmp, file)


def evaluate(mlm: MaskedLM, batches, dist: Dist) -> dict:
    was = mlm.training
    mlm.eval()
    loss = correct = count = 0.0
    for inputs, keep, labels in batches[dist.rank::dist.world]:
        keep = None if bool(keep.all()) else keep.to(dist.device)
        with autocast(dist.device):
            l, c, n = mlm.score(inputs.to(dist.device), keep, labels.to(dist.device))
        loss, correct, count = loss + l, correct + c, count + n
    loss, correct, count = dist.sum([loss, correct, count])
    mlm.train(was)
    mean = loss / max(count, 1)
    return {"loss": mean, "accuracy": correct / max(count, 1), "perplexity": math.exp(min(mean, 50.0)),
            "targets": int(count)}


def param_checksum(model: nn.Module) -> str:
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def command_line(dist: Dist, argv: list[str]) -> str:
    argv = shlex.join(argv)
    if dist.world > 1:
        return f"torchrun --nproc_per_node {dist.world} -m macaron.train.pretrain {argv}"
    return f"python -m macaron.train.pretrain {argv}"


# ---- the run ------------------------------------------------------------------------
def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        return train(args)
    except (DataError, TrainError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def log(dist: Dist, msg: str):
    if dist.main:
        print(f"[{dt.datetime.now():%H:%M:%S}] {msg}", flush=True)


def train(args) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    dist = Dist(args.device)
    try:
        return _train(args, dist)
    finally:
        dist.close()


def _train(args, dist: Dist) -> int:
    t_start = time.time()
    # -- everything is checked before anything is written (besides the corpus cache) --
    tok = load_tokenizer(args.tokenizer)
    sp = specials(tok, args.tokenizer)
    vocab = sp.vocab_size
    config = model_config(args, vocab)
    if config.pad_id != sp.pad:
        raise TrainError(f"{args.tokenizer}: [PAD] has id {sp.pad}, the model expects {config.pad_id}")
    if args.batch % (dist.world * args.accum):
        raise TrainError(f"--batch {args.batch} does not split over {dist.world} processes × {args.accum} "
                         f"accumulation steps")
    if args.seq_len > config.max_len:
        raise TrainError(f"--seq-len {args.seq_len} exceeds the model's max_len {config.max_len}")
    train_split = pretokenize(args.corpus, tok, "train", log=lambda m: log(dist, m))
    valid_split = pretokenize(args.corpus, tok, "valid", log=lambda m: log(dist, m))
    if int(np.max(train_split.ids)) >= vocab:
        raise TrainError(f"{train_split.folder}: cached token ids exceed the vocabulary of {args.tokenizer}")
    train_data = Packed(train_split, sp, args.seq_len, args.cross_documents)
    valid_data = Packed(valid_split, sp, args.seq_len, args.cross_documents)
    order = Order(len(train_data), args.batch, args.seed)
    stats_file = Path(args.corpus) / "stats.json"
    stats = cardlib.read_stats(stats_file)
    run = {k: getattr(args, k, None) for k in COMPAT_ARGS}
    run["corpus_stats"] = hashlib.sha256(json.dumps(stats, sort_keys=True).encode()).hexdigest()[:16]
    tok_hash = tokenizer_hash(tok)

    resume_from = checkpoint_folder(args.run_dir)
    state = None
    if args.resume:
        if resume_from is None:
            raise TrainError(f"{args.run_dir}: --resume, but the run folder holds no checkpoint "
                             f"({CHECKPOINT}/state.json)")
        state = read_checkpoint_state(resume_from)
        check_compatible(resume_from, state, config, tok_hash, run, dist.world)
    elif not args.overwrite:
        if resume_from is not None:
            raise TrainError(f"{resume_from}: the run folder already holds a checkpoint; pass --resume to "
                             f"continue it or --overwrite to start over")
        if (args.out / "config.json").exists():
            raise TrainError(f"{args.out / 'config.json'}: the model folder exists; pass --overwrite to replace it")

    total_steps = None
    if args.steps:
        total_steps = args.steps
    if args.tokens:
        by_tokens = order.steps_for_tokens(args.tokens, train_data.lengths)
        total_steps = min(total_steps, by_tokens) if total_steps else by_tokens

    torch.manual_seed(args.seed)  # the same initial weights for every rank (and every run of this seed)
    encoder = build(config, tok).to(dist.device)
    torch.manual_seed(args.seed * 1000 + 1 + dist.rank)  # dropout differs between ranks
    mlm = MaskedLM(encoder).train()
    net: nn.Module = mlm
    if dist.world > 1:
        net = nn.parallel.DistributedDataParallel(mlm, device_ids=[dist.device] if dist.device.type == "cuda" else None)
    if args.compile:
        net = torch.compile(net)
    opt = optimizer_for(mlm, args, dist.device)
    elapsed_before = state["elapsed"] if state else 0.0
    t0 = time.time()

    def clock():
        return elapsed_before + time.time() - t0

    schedule = Schedule(args, total_steps, clock)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, schedule)
    step, tokens = 0, 0
    if dist.main and (args.overwrite and not args.resume):  # only what this script wrote (a log may live here)
        for name in (CHECKPOINT, f"{CHECKPOINT}.tmp", f"{CHECKPOINT}.old"):
            shutil.rmtree(args.run_dir / name, ignore_errors=True)
    if dist.main:
        args.run_dir.mkdir(parents=True, exist_ok=True)
    dist.barrier()
    metrics = args.run_dir / "metrics.jsonl"
    if state:
        load_checkpoint(resume_from, dist, encoder, opt, sched, state)
        step, tokens = state["step"], state["tokens"]
        if dist.main:
            truncate_metrics(metrics, step)
        log(dist, f"resumed from {resume_from} at step {step:,} ({tokens:,} tokens)")
    elif dist.main:
        metrics.unlink(missing_ok=True)
    valid = validation_batches(valid_data, args.eval_seqs, args.eval_batch, args.eval_seed)
    n_params = encoder.num_parameters()
    log(dist, f"{config.name}: {config.scheme}, {n_params:,} parameters, {dist.world} process(es) on "
              f"{dist.device}, {torch.get_num_threads()} thread(s); {len(train_data):,} training sequences "
              f"(mean {train_data.lengths.mean():.1f} tokens), {sum(len(b[0]) for b in valid)} validation; "
              f"budget {total_steps or '?'} steps / {args.tokens or '-'} tokens / {args.minutes or '-'} min; "
              f"warm-up {schedule.warmup}")

    def state_doc():
        return {"step": step, "tokens": tokens, "elapsed": clock(), "config": config.to_dict(),
                "tokenizer_hash": tok_hash, "run": run, "total_steps": total_steps,
                "epoch": order.epoch(step), "args": {k: (str(v) if isinstance(v, Path) else v)
                                                     for k, v in vars(args).items()}}

    evals = {}

    def run_eval():
        result = evaluate(mlm, valid, dist)
        evals["last"], evals["step"] = result, step
        row = {"type": "eval", "step": step, "tokens": tokens, "elapsed": round(clock(), 2), **result}
        if dist.main:
            append_jsonl(metrics, row)
        log(dist, f"eval step {step:,} tokens {tokens:,}: loss {result['loss']:.4f} acc {result['accuracy']:.4f} "
                  f"ppl {result['perplexity']:.1f}")
        return result

    if not state:
        run_eval()  # the curve starts at the untrained model
    per_rank = args.batch // dist.world
    micro = per_rank // args.accum
    interactive = sys.stderr.isatty()
    from tqdm import tqdm
    bar = tqdm(total=total_steps, initial=step, unit="step", disable=not dist.main, dynamic_ncols=True,
               mininterval=1.0 if interactive else 60.0, file=sys.stderr)
    log_loss, log_n, log_tokens, log_t = 0.0, 0, 0, time.time()
    last_ckpt_t, halted = time.time(), False
    while True:
        done = (total_steps is not None and step >= total_steps) or \
            (args.minutes is not None and dist.agree(clock() >= 60 * args.minutes))
        if done:
            break
        indices = order.indices(step)
        mine = indices[dist.rank * per_rank:(dist.rank + 1) * per_rank]
        step_loss = 0.0
        for m in range(args.accum):
            ids, keep = train_data.batch(mine[m * micro:(m + 1) * micro])
            inputs, labels = mask_tokens(ids, sp, generator_for(args.seed, step, dist.rank * per_rank + m * micro))
            keep = None if bool(keep.all()) else keep.to(dist.device)
            sync = contextlib.nullcontext() if (dist.world == 1 or m == args.accum - 1) else net.no_sync()
            with sync:
                with autocast(dist.device):
                    loss = net(inputs.to(dist.device), keep, labels.to(dist.device))
                (loss / args.accum).backward()
            step_loss += loss.item() / args.accum
        if args.clip:
            nn.utils.clip_grad_norm_(mlm.parameters(), args.clip)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        batch_tokens = int(train_data.lengths[indices].sum())
        tokens += batch_tokens
        log_loss, log_n, log_tokens = log_loss + step_loss, log_n + 1, log_tokens + batch_tokens
        bar.update(1)
        if step % args.log_every == 0 or step == total_steps:
            now = time.time()
            tps = log_tokens / max(now - log_t, 1e-9)
            row = {"type": "train", "step": step, "tokens": tokens, "loss": log_loss / log_n,
                   "lr": sched.get_last_lr()[0], "tokens_per_s": round(tps, 1), "elapsed": round(clock(), 2)}
            if dist.main:
                append_jsonl(metrics, row)
            bar.set_postfix(loss=f"{row['loss']:.3f}", lr=f"{row['lr']:.2e}", tok_s=f"{tps:,.0f}", refresh=False)
            if not interactive:
                log(dist, f"step {step:,}/{total_steps or '?'} tokens {tokens:,} loss {row['loss']:.4f} "
                          f"lr {row['lr']:.2e} {tps:,.0f} tok/s")
            log_loss, log_n, log_tokens, log_t = 0.0, 0, 0, time.time()
        if step % args.eval_every == 0:
            t_eval = time.time()
            run_eval()
            log_t += time.time() - t_eval  # evaluation time is not training throughput
        halted = args.halt_after is not None and step >= args.halt_after
        due = step % args.checkpoint_every == 0 or \
            dist.agree(time.time() - last_ckpt_t >= 60 * args.checkpoint_minutes) or halted
        if due:
            t_ck = time.time()
            save_checkpoint(args.run_dir, dist, encoder, opt, sched, state_doc())
            last_ckpt_t = time.time()
            log_t += last_ckpt_t - t_ck
        if halted:
            break
    bar.close()
    if halted:
        log(dist, f"halted after step {step} (--halt-after); continue with --resume")
        return 0
    if evals.get("step") != step:
        run_eval()
    last_eval = evals["last"]
    save_checkpoint(args.run_dir, dist, encoder, opt, sched, state_doc())
    if args.checksums:
        Path(args.checksums).mkdir(parents=True, exist_ok=True)
        (Path(args.checksums) / f"rank{dist.rank}.json").write_text(
            json.dumps({"rank": dist.rank, "step": step, "tokens": tokens, "sha256": param_checksum(encoder)}))
    if dist.main:
        wall = clock()
        info = {"config": config.to_dict(), "parameters": n_params, "tokens": tokens, "steps": step,
                "batch": args.batch, "seq_len": args.seq_len, "lr": args.lr, "warmup": schedule.warmup,
                "schedule": args.schedule, "weight_decay": args.weight_decay, "dropout": args.dropout,
                "seed": args.seed, "accum": args.accum, "world_size": dist.world, "threads": torch.get_num_threads(),
                "final": last_eval, "wall_seconds": wall, "total_seconds": time.time() - t_start,
                "hardware": cardlib.hardware(dist.device), "date": dt.datetime.now(dt.timezone.utc).isoformat(
                    timespec="seconds"), "command": command_line(dist, args.argv), "stats": stats,
                "epochs": order.epoch(step), "eval_seqs": sum(len(b[0]) for b in valid),
                "eval_targets": last_eval["targets"], "train_sequences": len(train_data),
                "tokens_per_s": tokens / max(wall, 1e-9)}
        args.out.mkdir(parents=True, exist_ok=True)
        cardlib.training_curve(metrics, args.out / cardlib.CURVE, title=config.name)
        shutil.copyfile(metrics, args.out / "metrics.jsonl")
        encoder.eval()
        encoder.save(args.out, card=cardlib.render(info))
        log(dist, f"saved {args.out} ({tokens:,} tokens, {step:,} steps, held-out loss {last_eval['loss']:.4f}, "
                  f"accuracy {last_eval['accuracy']:.4f}, {wall / 60:.1f} min)")
    dist.barrier()
    return 0


if __name__ == "__main__":
    sys.exit(main())
