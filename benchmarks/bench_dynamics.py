"""Tracing many sentences: trajectories/s in padded batches versus one sentence at a time.

  batched / one at a time, 32 tokens, CPU     target ≥ 3

Beside each ratio, what bounds it: the arithmetic of one trajectory (torch's FlopCounterMode) and the
rate of one large float32 matrix product on the same device and threads, measured in the same run.
No batch computes faster than that rate, so rate ÷ (one at a time) is the most batching can gain.

Rows: random token ids of a fixed length (32, 128) through a `mini` (6 × 256) and a `small`
(6 × 512) Transformer with random weights, and the shipped sentence set (9 to 25 tokens, padded)
traced and measured (macaron.studies.dynamics.measure_set), the whole path of `python -m macaron dynamics`.
On a CPU, with one thread and with every core. The two ways take turns, best of --repeats rounds
each (the least disturbed by other work on the machine). Writes its table to benchmarks/RESULTS.md, one
section per device kind.
Usage: python benchmarks/bench_dynamics.py [--device cuda] [--sentences 256]
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import date

import torch
from torch.utils.flop_counter import FlopCounterMode

import macaron
from macaron import sentences
from macaron.studies import dynamics
from results import write_section


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def best_seconds(fns: dict, device: str, repeats: int) -> dict:
    """Best of `repeats` wall-clock runs of each function after a warm-up, the functions taking turns
    (other work on the machine then slows all alike; the best run is the least disturbed)."""
    best = {k: float("inf") for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for k, fn in fns.items():
            sync(device)
            t = time.perf_counter()
            fn()
            sync(device)
            best[k] = min(best[k], time.perf_counter() - t)
    return best


def matmul_gflops(device: str, repeats: int) -> float:
    """GFLOP/s of one large float32 matrix product (2048 × 512 by 512 × 2048) on this device."""
    a, b = torch.randn(2048, 512, device=device), torch.randn(512, 2048, device=device)
    t = best_seconds({"mm": lambda: [a @ b for _ in range(10)]}, device, repeats)["mm"]
    return 10 * 2 * 2048 * 512 * 2048 / t / 1e9


def gflop_per_trace(model, ids: list[int]) -> float:
    with FlopCounterMode(display=False) as count:
        model.trace(ids)
    return count.get_total_flops() / 1e9


def device_name(device: str) -> str:
    if device.startswith("cuda"):
        return f"CUDA {torch.cuda.get_device_name(torch.device(device))}"
    return f"CPU {platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def measure(dev: str, n: int, batch: int, repeats: int) -> list[tuple]:
    rows = []
    for size in ("mini", "small"):
        torch.manual_seed(0)
        model = macaron.build(macaron.ModelConfig.named(size, scheme="transformer", vocab_size=8192)).to(dev)
        for T in (32, 128):
            ids = torch.randint(5, 8192, (n, T)).tolist()
            t = best_seconds({"one": lambda: [model.trace(x) for x in ids],
                              "batched": lambda: model.trace(ids, batch_size=batch)}, dev, repeats)
            rows.append((f"{size} ({model.config.n_layers} × {model.config.d_model})", f"{T} tokens", n,
                         n / t["one"], n / t["batched"], gflop_per_trace(model, ids[0])))
    texts = sentences.read()
    try:
        model = macaron.load("transformer-mini", dev)
    except macaron.CheckpointError as e:  # shipped weights set aside (the GPU machine's upload limit)
        print(f"skipping the shipped-set row: {e}")
        return rows
    t = best_seconds({"one": lambda: dynamics.aggregate([dynamics.measure(model.trace(s)) for s in texts]),
                      "batched": lambda: dynamics.measure_set(model, texts, batch_size=batch)}, dev, repeats)
    rows.append(("transformer-mini, traced and measured", "the shipped set (9–25 tokens)", len(texts),
                 len(texts) / t["one"], len(texts) / t["batched"], None))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--sentences", type=int, default=64, help="sentences per fixed-length row")
    ap.add_argument("--batch", type=int, default=64, help="at most this many sentences a batch")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    dev = args.device
    threads = [None] if dev.startswith("cuda") else [1, os.cpu_count()]
    rows, rates = [], {}
    for n_threads in threads:
        if n_threads:
            torch.set_num_threads(n_threads)
        h = n_threads or "–"
        rates[h] = matmul_gflops(dev, args.repeats)
        rows += [(h, *r) for r in measure(dev, args.sentences, args.batch, args.repeats)]
    lines = ["| threads | model | sentences of | n | one at a time, traj/s | batched, traj/s | ratio (target ≥ 3 at "
             "32 tokens, CPU) | GFLOP a trajectory | batched GFLOP/s ÷ matmul rate | most batching can gain "
             "(matmul rate ÷ one at a time) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for h, m, t, n, a, b, g in rows:
        bound = f"{g:.3f} | {b * g / rates[h]:.0%} | {rates[h] / (a * g):.1f}" if g else "– | – | –"
        lines.append(f"| {h} | {m} | {t} | {n} | {a:.0f} | {b:.0f} | {b / a:.1f} | {bound} |")
    load = f"; load average {os.getloadavg()[0]:.1f} at the end (other work on the machine)" if hasattr(
        os, "getloadavg") else ""
    body = (f"`python benchmarks/bench_dynamics.py --device {dev}`: {date.today()}, {device_name(dev)}, torch "
            f"{torch.__version__}, batches of at most {args.batch} sentences and "
            f"{macaron.network.model.BATCH_TOKENS['cuda' if dev.startswith('cuda') else 'cpu']} padded tokens, "
            f"best of {args.repeats}{load}. Every trajectory records "
            "every sub-step's state and the attention weights (not the fused kernel). Matmul rate (2048 × 512 by "
            "512 × 2048, float32): " + ", ".join(f"{r:.0f} GFLOP/s with {h} thread(s)" for h, r in rates.items())
            + ".\n\n" + "\n".join(lines))
    print(body)
    write_section(f"Batched tracing ({'CUDA' if dev.startswith('cuda') else 'CPU'})", body)


if __name__ == "__main__":
    main()
