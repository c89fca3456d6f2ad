"""The precision a training run computes in: bf16 autocast where the hardware does bf16 natively,
float32 elsewhere. Master weights and optimizer state are float32 either way.

Where bf16 is not native, PyTorch emulates it, and the emulation is far slower than float32:
measured on an AMD EPYC with AVX2 but no AVX-512 (2 threads, torch 2.13.0, 2026-11-24) a bf16
matmul of 4096×512·512×2048 ran at 1 GFLOP/s against 92 in float32, and a training step of the
6 × 256 Transformer took 45 s instead of 1.1 s. On a Zen 4 with AVX512_BF16 bf16 is 2.3-3× faster
than float32 (shared/cpu-training.md). So the choice is made from the CPU's flags, at run time.
"""
from __future__ import annotations

import contextlib
import functools
from pathlib import Path

import torch

# x86 flags (/proc/cpuinfo "flags") and the Arm feature ("Features") that mean bf16 matrix products in hardware
NATIVE_BF16 = ("avx512_bf16", "amx_bf16", "bf16")
CHOICES = ("auto", "bf16", "float32")


@functools.lru_cache(maxsize=1)
def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The CPU's feature flags (empty where /proc/cpuinfo does not exist, e.g. macOS)."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return frozenset()
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            flags.update(value.split())
    return frozenset(flags)


# The CPU kinds these machines change between (shared/cpu-training.md), best first: (flags, name)
CPU_KINDS = ((("amx_bf16", "amx_tile"), "AMX"), (("avx512_bf16",), "AVX512_BF16"), (("avx512f",), "AVX-512"),
             (("avx2",), "AVX2"), (("bf16",), "Arm BF16"))


def cpu_kind(flags: frozenset[str] | None = None) -> str:
    """The widest matrix/vector extension of this CPU that the training path depends on: 'AMX',
    'AVX512_BF16', 'AVX-512', 'AVX2', 'Arm BF16', or 'no AVX2'."""
    have = cpu_flags() if flags is None else flags
    return next((name for needs, name in CPU_KINDS if all(f in have for f in needs)), "no AVX2")


def native_bf16(device: torch.device, flags: frozenset[str] | None = None) -> str | None:
    """What makes bf16 native on this device (a flag name, or 'CUDA'), None when it is not."""
    if device.type == "cuda":
        return "CUDA" if torch.cuda.is_bf16_supported() else None
    have = cpu_flags() if flags is None else flags
    return next((f for f in NATIVE_BF16 if f in have), None)


def choose(device: torch.device, requested: str = "auto", flags: frozenset[str] | None = None) -> torch.dtype:
    """The compute dtype for `requested` ('auto', 'bf16' or 'float32') on this device."""
    if requested not in CHOICES:
        raise ValueError(f"precision {requested!r}: choose one of {', '.join(CHOICES)}")
    if requested == "auto":
        return torch.bfloat16 if native_bf16(device, flags) else torch.float32
    return torch.bfloat16 if requested == "bf16" else torch.float32


def describe(device: torch.device, dtype: torch.dtype, requested: str = "auto") -> str:
    """One line for the log: what was chosen and why."""
    why = native_bf16(device)
    if dtype == torch.float32:
        if requested == "float32":
            return "float32 (asked for with --precision float32)"
        return (f"float32: this {device.type.upper()} has no native bf16 (none of {', '.join(NATIVE_BF16)}), "
                f"and emulated bf16 is many times slower")
    if why is None:
        return "bf16 autocast, asked for with --precision bf16, though this device has no native bf16 (slow)"
    return f"bf16 autocast (native: {why}); weights and optimizer state stay float32"


# The attention kernel of a training step, by CPU kind. On an Intel Xeon with AMX (2 threads, torch 2.13.0,
# 2026-11-26) SDPA's CPU flash kernel took 62 ms for the forward and backward of a layer's attention of the 6 × 512 at
# batch 32 × 128 in bf16, twice its float32 time, and matmul, softmax, matmul in bf16 took 20 ms (28 with a padding
# mask): whole steps ran 1.3-1.5× faster (docs/training-notes.md). In float32 the two are even, so SDPA stays; on the
# other kinds SDPA is what was measured. benchmarks/bench_train.py times both kernels on the CPU it runs on (its
# "other attention", 2026-11-27 on the AMX Xeon: SDPA at 0.71x and 0.76x in bf16, matmul at 0.92x and 1.01x in
# float32). Longer sequences turn it round (the same 4,096 tokens a batch, masked): at 64 and 128 tokens matmul took
# 17 and 24 ms against SDPA's 48 and 51, at 256 43 against 40, at 512 118 against 56. On a Zen 4 EPYC (AVX512_BF16,
# 2 threads, idle, 2026-11-27) bench_train.py's steps with matmul attention ran 1.25x (mini) and 1.11x (6 x 512) as
# fast as with SDPA in bf16 (issue 47).
MATMUL_ATTENTION_KINDS = ("AMX", "AVX512_BF16")
MATMUL_ATTENTION_MAX_LEN = 128


def attention(device: torch.device, dtype: torch.dtype, seq_len: int, flags: frozenset[str] | None = None) -> str:
    """The attention kernel to train sequences of up to seq_len tokens with: 'matmul' (bf16 on a CPU kind where SDPA's
    backward is slow for short sequences) or 'sdpa'."""
    slow = device.type == "cpu" and dtype == torch.bfloat16 and cpu_kind(flags) in MATMUL_ATTENTION_KINDS
    return "matmul" if slow and seq_len <= MATMUL_ATTENTION_MAX_LEN else "sdpa"


# How the models of a lockstep run share the cores, by CPU kind (benchmarks/bench_pair.py measures it). On the AMX
# Xeon (2 cores, the recipes' batch 16 x 128, 2026-11-27) the two models of the minis' and of the 6 x 512 pair's
# recipes, stepping at once on one thread each, trained 12 % (5,802 against 5,158 tokens/s each, medians of 10 log
# readings) and 9 % (2,405 against 2,200, medians of 5) faster in bf16 than one after the other on two threads, and
# bench_pair.py gave 1.08x and 1.12x in bf16, 1.06-1.12x and 1.05-1.07x in float32 (3 runs): two threads ran one
# model's step only 1.8-1.9x as fast as one (docs/training-notes.md). On the AVX2-only EPYC (float32), where two
# threads ran a step 2.0x as fast as one, one process per model on a thread each was the slower (3,380 against 3,700
# tokens/s in all): it keeps turns. On a Zen 4 EPYC (AVX512_BF16, idle, 2026-11-27) bench_pair.py's minis stepped
# at once at 3,073 tokens/s each against 2,619 in turn (1.17x, issue 47).
AT_ONCE_KINDS = ("AMX", "AVX512_BF16")


def models_at_once(device: torch.device, flags: frozenset[str] | None = None) -> bool:
    """Whether a lockstep run steps its models at the same time, one thread each, rather than in turn on every
    thread (the caller checks what else it needs: a thread per model, one process, models it can run so)."""
    return device.type == "cpu" and cpu_kind(flags) in AT_ONCE_KINDS


def autocast(device: torch.device, dtype: torch.dtype):
    """The autocast context for dtype (nothing for float32)."""
    if dtype == torch.float32:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def name(dtype: torch.dtype) -> str:
    return "bf16" if dtype == torch.bfloat16 else "float32"
