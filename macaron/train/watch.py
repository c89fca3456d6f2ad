"""Follow a (detached) training run: a status line per model every so often, until it is done.

    python -m macaron.train.watch ~/.cache/macaron/runs/mini [--seconds 540] [--every 30]

One line per model: step of the budget, tokens, train loss, the last held-out loss, accuracy and
context effect, throughput and the time left at that rate; and the outlook the campaign stops by
(issue 19): accuracy and context effect extrapolated five more hours of training at that rate, by a
straight line through the last evaluations against log(tokens). `--seconds 0` prints once. Exits 0 when
`done.json` appears, 1 if the training process died without it (the log tail says why), and 0 after
--seconds otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from ..formats.folder import read_metrics


def read_rows(metrics: Path) -> tuple[dict | None, list[dict]]:
    """(the last training row, every evaluation) of a metrics.jsonl."""
    rows = read_metrics(metrics)
    train = next((r for r in reversed(rows) if r.get("type") != "eval"), None)
    return train, [r for r in rows if r.get("type") == "eval"]


def outlook(evals: list[dict], tokens_per_s: float, hours: float = 5.0, last: int = 8) -> dict | None:
    """Accuracy and context effect `hours` of training ahead at tokens_per_s: the least-squares line through
    the last `last` evaluations against log(tokens), extrapolated. None with fewer than three of them."""
    rows = [r for r in evals if r.get("tokens", 0) > 0 and "context_effect" in r][-last:]
    if len(rows) < 3 or tokens_per_s <= 0:
        return None
    x = np.log([r["tokens"] for r in rows])
    if np.ptp(x) < 1e-6:  # one token count repeated (a resumed run evaluating again): no line
        return None
    ahead = rows[-1]["tokens"] + tokens_per_s * 3600 * hours
    out = {"tokens": ahead, "hours": hours, "evaluations": len(rows)}
    for key in ("accuracy", "context_effect"):
        out[key] = float(np.polyval(np.polyfit(x, [r[key] for r in rows], 1), np.log(ahead)))
    return out


def total_steps(run_dir: Path) -> int | None:
    """The run's budget in steps: from its checkpoint (any run) or budget.json (--fit-minutes)."""
    for file, key in ((run_dir / "checkpoint" / "state.json", ("run", "total_steps")),
                      (run_dir / "budget.json", ("steps",))):
        try:
            doc = json.loads(file.read_text())
            for k in key:
                doc = doc[k]
            return int(doc)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def status(run_dir: Path) -> str:
    total = total_steps(run_dir)
    lines = []
    for metrics in sorted(run_dir.glob("*/metrics.jsonl")):
        train, history = read_rows(metrics)
        evals = history[-1] if history else None
        if train is None:
            lines.append(f"  {metrics.parent.name}: no training step logged yet")
            continue
        left = ""
        if total and train.get("tokens_per_s") and train["step"]:
            secs = (total - train["step"]) * train["tokens"] / train["step"] / train["tokens_per_s"]
            left = f", ~{secs / 3600:.1f} h left at this rate"
        held = ""
        if evals:
            effect = f", context effect {evals['context_effect']:+.2f} nats" if "context_effect" in evals else ""
            held = f", held-out {evals['loss']:.3f} (acc {evals['accuracy']:.1%}{effect})"
        lines.append(f"  {metrics.parent.name}: step {train['step']:,}/{total or '?'}, {train['tokens']:,} tokens, "
                     f"loss {train['loss']:.3f}{held}, {train.get('tokens_per_s', 0):,.0f} tok/s{left}")
        ahead = outlook(history, train.get("tokens_per_s", 0))
        if ahead:
            lines.append(f"    in {ahead['hours']:g} more hours ({ahead['tokens'] / 1e6:,.0f} M tokens) "
                         f"by the line through "
                         f"the last {ahead['evaluations']} evaluations against log(tokens): accuracy "
                         f"~{ahead['accuracy']:.1%}, context effect ~{ahead['context_effect']:+.2f} nats")
    return "\n".join(lines) or "  (no metrics yet)"


def trainer_pid(run_dir: Path) -> int | None:
    """The pid in <run-dir>/train.pid while that process lives and, where Linux's /proc tells, is still a trainer
    (not a later process given the same pid)."""
    try:
        pid = int((run_dir / "train.pid").read_text())
        os.kill(pid, 0)
    except PermissionError:  # alive, another user's
        return pid
    except (OSError, ValueError):
        return None
    if not Path("/proc/self").exists():  # no /proc here: liveness is all we know
        return pid
    try:
        return pid if b"macaron.train." in Path(f"/proc/{pid}/cmdline").read_bytes() else None
    except OSError:  # gone meanwhile
        return None


def alive(run_dir: Path) -> bool | None:
    """None without a train.pid, else whether its trainer is at work."""
    return None if not (run_dir / "train.pid").is_file() else trainer_pid(run_dir) is not None


def tail(file: Path, n: int = 15) -> str:
    return "\n".join(file.read_text(errors="replace").splitlines()[-n:]) if file.is_file() else ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m macaron.train.watch", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--seconds", type=float, default=540.0, help="stop watching after this long")
    p.add_argument("--every", type=float, default=30.0, help="seconds between status lines")
    args = p.parse_args(argv)
    t0 = time.time()
    while True:
        done = args.run_dir / "done.json"
        print(f"[{time.strftime('%H:%M:%S')}] {args.run_dir}\n{status(args.run_dir)}", flush=True)
        if done.is_file():
            print(f"done: {done.read_text().strip()[:2000]}", flush=True)
            return 0
        if alive(args.run_dir) is False:
            print(f"the training process is gone without {done.name}; log tail:\n{tail(args.run_dir / 'train.log')}",
                  flush=True)
            return 1
        if time.time() - t0 + args.every > args.seconds:  # --seconds 0: once
            print(tail(args.run_dir / "train.log", 5), flush=True)
            return 0
        time.sleep(args.every)


if __name__ == "__main__":
    sys.exit(main())
