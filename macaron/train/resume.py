"""Resumable checkpoints of a training run: safetensors for tensors, JSON for the rest, nothing pickled.

One folder holds the whole run (every model trained in lockstep), written atomically:

    <run-dir>/checkpoint/state.json                 step, tokens, budget, per model: config, optimizer
                                                      scalars and scheduler state
    <run-dir>/checkpoint/<name>.model.safetensors   weights
    <run-dir>/checkpoint/<name>.optimizer.safetensors  AdamW moments
    <run-dir>/checkpoint/rng-rank<r>.safetensors    every process's random state (dropout)
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from ..config import ModelConfig
from ..formats.folder import FACTS, read_json
from .card import penalties, precisions

CHECKPOINT = "checkpoint"
STATE_VERSION = 2


class TrainError(RuntimeError):
    """A run that cannot start or resume; the message names the file and the problem."""


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


def save(run_dir: Path, dist, members, state: dict):
    """Write run_dir/checkpoint atomically: into checkpoint.tmp, then swap. A kill at any moment
    leaves a complete checkpoint behind (the new one or the previous one)."""
    final, tmp, old = run_dir / CHECKPOINT, run_dir / f"{CHECKPOINT}.tmp", run_dir / f"{CHECKPOINT}.old"
    if dist.main:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    dist.barrier()
    rng = {"torch_cpu": torch.get_rng_state()}
    if dist.device.type == "cuda":
        rng["torch_cuda"] = torch.cuda.get_rng_state(dist.device)
    save_file(rng, tmp / f"rng-rank{dist.rank}.safetensors")
    if dist.main:
        doc = dict(state, version=STATE_VERSION, world_size=dist.world, members={})
        for m in members:
            save_file({k: v.detach().cpu().contiguous() for k, v in m.network.state_dict().items()},
                      tmp / f"{m.name}.model.safetensors")
            opt_tensors, opt_meta = _flatten_optimizer(m.opt)
            save_file(opt_tensors, tmp / f"{m.name}.optimizer.safetensors")
            sched = {k: v for k, v in m.sched.state_dict().items() if k != "lr_lambdas"}
            doc["members"][m.name] = {"config": m.config.to_dict(), "optimizer": opt_meta, "scheduler": sched}
        (tmp / "state.json").write_text(json.dumps(doc, indent=1))
    dist.barrier()
    if dist.main:
        if final.exists():
            shutil.rmtree(old, ignore_errors=True)
            final.rename(old)
        tmp.rename(final)
        shutil.rmtree(old, ignore_errors=True)
    dist.barrier()


def folder(run_dir: Path) -> Path | None:
    for name in (CHECKPOINT, f"{CHECKPOINT}.old"):  # .old: a kill between the two renames
        if (run_dir / name / "state.json").is_file():
            return run_dir / name
    return None


def read_state(ckpt: Path) -> dict:
    file = ckpt / "state.json"
    state = read_json(file, TrainError)
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        raise TrainError(f"{file}: not a checkpoint of this trainer (version {state.get('version')!r})"
                         if isinstance(state, dict) else f"{file}: not a checkpoint state")
    return state


def _config(stored: dict | None) -> dict:
    """A stored config with the fields added since it was written at their defaults (which keep a model as it
    was), so an older run compares equal to the same model now; {} when absent or unreadable."""
    try:
        return ModelConfig.from_dict(stored).to_dict() if stored else {}
    except (TypeError, ValueError):
        return dict(stored or {})


def check_compatible(ckpt: Path, state: dict, configs: dict, tok_hash: str, run: dict, world: int,
                     formerly: dict[str, str] | None = None):
    """Refuse to resume a checkpoint of another experiment; the message lists every difference. `run`: the terms
    the task records (Task.terms) and the budget, each compared with the checkpoint's, read under its former name
    (`formerly`) where the checkpoint was written before it had its own; terms the task does not record are not
    compared."""
    file = ckpt / "state.json"
    problems = []
    theirs_members = state.get("members") or {}
    if sorted(theirs_members) != sorted(configs):
        problems.append(f"models differ (checkpoint {sorted(theirs_members)} vs now {sorted(configs)})")
    for name, config in configs.items():
        theirs, ours = _config((theirs_members.get(name) or {}).get("config")), config.to_dict()
        if theirs and theirs != ours:
            diff = [f"{k}: checkpoint {theirs.get(k)!r} vs now {ours.get(k)!r}"
                    for k in ours if theirs.get(k) != ours[k]]
            problems.append(f"{name}: model config differs (" + "; ".join(diff[:6]) + ")")
    if state.get("tokenizer_hash") != tok_hash:
        problems.append(f"tokenizer differs (checkpoint {state.get('tokenizer_hash')} vs now {tok_hash})")
    recorded = state.get("run") or {}
    for k, now in run.items():
        theirs = recorded[k] if k in recorded else recorded.get((formerly or {}).get(k, k))
        if theirs != now:
            problems.append(f"{k}: checkpoint {theirs!r} vs now {now!r}")
    if state.get("world_size") != world:
        problems.append(f"written by {state.get('world_size')} processes, resumed with {world}")
    if problems:
        raise TrainError(f"{file}: cannot resume, incompatible checkpoint: " + "; ".join(problems))


def load(ckpt: Path, dist, members, state: dict):
    def tensors(name):
        file = ckpt / name
        try:
            return load_file(file)
        except (SafetensorError, OSError, ValueError, FileNotFoundError) as e:
            raise TrainError(f"{file}: damaged or missing checkpoint file ({e})") from None

    for m in members:
        saved = state["members"][m.name]
        try:
            m.network.load_state_dict(tensors(f"{m.name}.model.safetensors"))
        except RuntimeError as e:
            raise TrainError(f"{ckpt / f'{m.name}.model.safetensors'}: weights do not fit the model ({e})") from None
        m.opt.load_state_dict(_unflatten_optimizer(tensors(f"{m.name}.optimizer.safetensors"), saved["optimizer"]))
        m.sched.load_state_dict(dict(saved["scheduler"], lr_lambdas=[None] * len(m.opt.param_groups)))
    rng = tensors(f"rng-rank{dist.rank}.safetensors")
    torch.set_rng_state(rng["torch_cpu"])
    if "torch_cuda" in rng and dist.device.type == "cuda":
        torch.cuda.set_rng_state(rng["torch_cuda"], dist.device)


def warm_start(root: Path, members, run: dict) -> dict:
    """Load every model's weights from root/<name> (a published milestone or a finished model folder), whose
    training.json must hold the terms `run` (the task's published terms: else another experiment), and
    return where that run stood: {"step", "tokens", "elapsed", "warm_starts", "phases", "first_phase", "precisions",
    "penalties"}.
    Optimizers start afresh."""
    from ..formats.folder import CheckpointError
    from ..sources.loading import load as load_model

    facts = {}
    for m in members:
        folder = Path(root) / m.name
        info = read_json(folder / FACTS, TrainError)  # the facts of the run it continues
        problems = [f"{k}: {info.get(k)!r} there vs {now!r} now" for k, now in run.items() if info.get(k) != now]
        if _config(info.get("config")) != m.config.to_dict():
            problems.append("the model config differs")
        if problems:
            raise TrainError(f"{folder}: cannot warm-start, another experiment: " + "; ".join(problems))
        try:
            m.network.load_state_dict(load_model(folder, device=str(m.dist.device)).state_dict())
        except CheckpointError as e:
            raise TrainError(f"{folder}: cannot warm-start ({e})") from None
        facts[m.name] = info
    where = {(f["steps"], f["tokens"]) for f in facts.values()}
    if len(where) != 1:
        raise TrainError(f"{root}: the models stand at different steps {sorted(where)}; publish one milestone of "
                         f"the run for all of them")
    first = next(iter(facts.values()))
    return {"step": first["steps"], "tokens": first["tokens"], "elapsed": first["wall_seconds"],
            "warm_starts": first.get("warm_starts", []), "phases": first.get("phases", []),
            "precisions": precisions(first), "penalties": penalties(first),
            "first_phase": {"step": 0, "tokens": 0, "warmup": first.get("warmup"),
                            "total_steps": first.get("budget_steps"),
                            "lr": first.get("lr")}}
