"""Splitting lab speed: one full convergence study (8 step sizes, 64 particles, every scheme,
exact and Euler sub-flows, local and global errors), target ≤ 150 ms for the linear system.

Cold = a fresh system each repeat, so no cached exact flows (the graph's eigendecomposition
is cached per (n, seed) and built once in the warm-up, as in the app). Cached = the same
study again on the same system object, as when the app redraws. Also times the particle
paths of one animation. Medians after a warm-up; writes a "Splitting lab" section into
benchmarks/RESULTS.md.
Usage: python benchmarks/bench_toy.py [--repeats 7]
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from datetime import date

import numpy as np
import scipy

from macaron import lab
from results import write_section

TARGET_MS = 150.0
N_PARTICLES = 64


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def median_ms(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - t))
    return statistics.median(times), min(times)


def measure(make, repeats: int) -> dict:
    x0 = lab.initial_positions(N_PARTICLES)
    cold = median_ms(lambda: lab.convergence_study(make(n=N_PARTICLES), x0), repeats)
    system = make(n=N_PARTICLES)
    cached = median_ms(lambda: lab.convergence_study(system, x0), repeats)
    paths = median_ms(lambda: lab.particle_paths(make(n=N_PARTICLES), x0, n_steps=32), repeats)
    study = lab.convergence_study(system, x0)
    return {"name": system.name, "cold": cold, "cached": cached, "paths": paths, "study": study}


def slope_table(results) -> list[str]:
    rows = ["| system | scheme | sub-flows | local slope | global slope | expected |", "|---|---|---|---|---|---|"]
    for r in results:
        s = r["study"]
        for (name, solver), (local, global_) in lab.EXPECTED_ORDER.items():
            rows.append(f"| {r['name']} | {name} | {solver} | {s.local_slope[name][solver]:.2f} "
                        f"| {s.global_slope[name][solver]:.2f} | {local} / {global_} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    results = [measure(lab.linear_system, args.repeats),
               measure(lab.attention_system, max(3, args.repeats // 2))]
    lines = [f"| system | cold study ms (min) | ratio to {TARGET_MS:.0f} ms | cached re-run ms "
             f"| paths, 32 steps, ms |", "|---|---|---|---|---|"]
    for r in results:
        (cold, cold_min), (cached, _), (paths, _) = r["cold"], r["cached"], r["paths"]
        line = (f"| {r['name']} | {cold:.1f} ({cold_min:.1f}) | {cold / TARGET_MS:.2f} "
                f"| {cached:.1f} | {paths:.1f} |")
        lines.append(line)
        print(f"{r['name']:10s} cold {cold:8.1f} ms (min {cold_min:.1f})  ratio to target "
              f"{cold / TARGET_MS:.2f}  cached {cached:.1f} ms  paths {paths:.1f} ms")

    machine = (f"{date.today()}, {cpu_name()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"numpy {np.__version__}, scipy {scipy.__version__}; {N_PARTICLES} particles in 2-D, "
               f"8 step sizes, {len(lab.registered())} schemes × (exact, Euler) sub-flows; median of "
               f"{args.repeats} (linear), {max(3, args.repeats // 2)} (attention). "
               f"Target: linear ≤ {TARGET_MS:.0f} ms.")
    body = "\n".join([machine, "", *lines, "", "Fitted slopes (log-log, np.polyfit):", "", *slope_table(results)])
    write_section("Splitting lab", body)
    print("\n".join(slope_table(results)))


if __name__ == "__main__":
    main()
