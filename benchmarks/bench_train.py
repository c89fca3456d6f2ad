"""Training throughput: our Transformer against Hugging Face BertForMaskedLM of the same shape, in
float32 and, where the hardware does bf16 natively, in bf16 autocast.

    python benchmarks/bench_train.py [--sizes mini,small] [--precision auto|float32|bf16] [--batch 32]
        [--seq 128] [--steps 6] [--rounds 3] [--warmup 2] [--threads N] [--cpu] [--no-write]

Shapes: `mini` (6 × 256, 4 heads, FFN 1024) and `small` (6 × 512, 8 heads, FFN 2048), vocabulary 8192,
dropout 0 (as the trainer pre-trains). One training step = forward + backward + gradient clipping at 1.0
+ AdamW, on random batches with 15% BERT masking. Contestants for each (shape, precision):

    ours            MaskedLM: the MLM head on the masked positions only, as macaron.train.pretrain trains
    ours-full-head  our model with the head on every position: the same work as the peer
    ours-other-attention  "ours" with the attention kernel the trainer does not take here (SDPA or
                    matmul–softmax, macaron.train.precision.attention): whether its choice still wins
    hf-bert         transformers BertForMaskedLM, attn_implementation="sdpa", the head on every position
                    as a user runs it
    ours-compiled   CUDA only: the encoder under torch.compile, as `pretrain --compile` trains there

Measurements are interleaved (ours, peer, ours, peer, ...) so machine load hits all alike; medians of
per-step times are reported.

Precision: float32 always, bf16 autocast (macaron.train.precision.autocast) only where
macaron.train.precision.native_bf16 finds bf16 native. Emulated bf16 is ~40× slower than float32 on a
CPU without it, so there it is reported as not timed. --precision float32 or bf16 times just that one
(bf16 forced is timed even when emulated).

FLOPs per step (forward + backward) are counted once per contestant with torch.utils.flop_counter. The
achieved FLOP/s is given as a share of a matmul rate measured in the same run, in the same dtype with
the same threads, before the shapes and again before each round of each (the best of them, as the machine's speed
drifts): the best torch.mm of the FFN products of 32 × 128 tokens on the CPU, of an 8192² product on CUDA (there
the share is the MFU). Rows go to RESULTS.md, section "Training throughput", one
per (device, shape, precision), replaced when that combination runs again.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from macaron import ModelConfig, build  # noqa: E402
from macaron.config import SIZES as KNOWN_SIZES  # noqa: E402
from macaron.network.operators import ATTENTION, use_attention  # noqa: E402
from macaron.train import precision  # noqa: E402
from macaron.train.card import hardware  # noqa: E402
from macaron.train.data import IGNORE, Specials, mask_tokens  # noqa: E402
from macaron.train.objective import MaskedLM  # noqa: E402
from results import RESULTS, old_rows, write_table  # noqa: E402

TITLE = "Training throughput"
VOCAB = 8192
SP = Specials(pad=0, unk=1, cls=2, sep=3, mask=4, vocab_size=VOCAB)
SIZES = ("mini", "small")  # the default --sizes
# The rate's products on the CPU: the FFN's up and down projections of small and mini at 32 × 128 tokens
CPU_MATMULS = ((4096, 512, 2048), (4096, 2048, 512), (4096, 256, 1024))
CUDA_MATMULS = ((8192, 8192, 8192),)  # large enough to reach the GPU's peak
VECTOR_FLAGS = ("avx", "amx", "fma", "asimd", "sve")  # flag prefixes worth naming in the report


# ---- the contestants ------------------------------------------------------------------
class FullHead(torch.nn.Module):
    """Our encoder with the MLM head on every position (what BertForMaskedLM does)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, ids, attention_mask, labels):
        logits = self.encoder.head(self.encoder(ids, attention_mask))
        return F.cross_entropy(logits.float().flatten(0, 1), labels.flatten(), ignore_index=IGNORE)


class Peer(torch.nn.Module):
    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, ids, attention_mask, labels):
        return self.bert(input_ids=ids, attention_mask=attention_mask, labels=labels).loss


def model_config(size: str, seq: int) -> ModelConfig:
    return ModelConfig.named(size, scheme="transformer", vocab_size=VOCAB, max_len=max(512, seq), dropout=0.0,
                             name=size)


def shape_name(cfg: ModelConfig) -> str:
    return f"{cfg.name} ({cfg.n_layers} × {cfg.d_model}, {cfg.n_heads} heads, FFN {cfg.ffn_total})"


def peer_model(cfg: ModelConfig):
    from transformers import BertConfig, BertForMaskedLM

    bert = BertConfig(vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, num_hidden_layers=cfg.n_layers,
                      num_attention_heads=cfg.n_heads, intermediate_size=cfg.ffn_total,
                      max_position_embeddings=cfg.max_len, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    return BertForMaskedLM._from_config(bert, attn_implementation="sdpa")


class Trainer:
    """One contestant: a model, its AdamW, the compute dtype and the step times measured so far."""

    def __init__(self, name: str, net: torch.nn.Module, device: torch.device, dtype: torch.dtype):
        self.name, self.net, self.device, self.dtype = name, net.to(device).train(), device, dtype
        self.opt = torch.optim.AdamW(self.net.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-6,
                                     weight_decay=0.01, fused=True)  # as the trainer's optimizer_for
        self.params = sum(p.numel() for p in self.net.parameters())
        self.times: list[float] = []

    def loss(self, inputs, labels):
        with precision.autocast(self.device, self.dtype):
            return self.net(inputs, None, labels)

    def step(self, inputs, labels):
        self.loss(inputs, labels).backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)

    def timed(self, data, sync):
        for inputs, labels in data:
            sync()
            t = time.perf_counter()
            self.step(inputs, labels)
            sync()
            self.times.append(time.perf_counter() - t)

    def flops(self, inputs, labels) -> float:
        """FLOPs of forward + backward (clipping and AdamW are elementwise, not counted). SDPA is counted as its
        math backend's products: the counter does not see inside the CPU flash kernel, so every contestant's
        attention counts alike, whichever kernel it trains with."""
        with FlopCounterMode(display=False) as counter, sdpa_kernel(SDPBackend.MATH):
            self.loss(inputs, labels).backward()
        self.opt.zero_grad(set_to_none=True)
        return float(counter.get_total_flops())


def top_ops(trainer: Trainer, data, n: int = 3) -> str:
    """Where one training step of a contestant spends its time: the n ops with the largest share of the
    step's self time (torch.profiler), e.g. 'copy_ 20%, mm 15%, flash-attention backward 11%'."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if trainer.device.type == "cuda" else [])
    with profile(activities=activities) as prof:
        trainer.step(*data[0])
    events = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    device = trainer.device.type == "cuda"
    own = {e.key: e.self_device_time_total if device else e.self_cpu_time_total for e in events}
    total = sum(own.values()) or 1.0
    names = {"aten::_scaled_dot_product_flash_attention_for_cpu_backward": "flash-attention backward"}
    top = sorted(own.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{names.get(k, k.removeprefix('aten::'))} {100 * v / total:.0f}%" for k, v in top)


def ours(cfg: ModelConfig, kernel: str):
    """Our encoder, its attention computed with `kernel` (operators.use_attention)."""
    encoder = build(cfg)
    use_attention(encoder, kernel)
    return encoder


def other(kernel: str) -> str:
    """The attention kernel the trainer does not take."""
    return next(k for k in ATTENTION if k != kernel)


def contestants(cfg: ModelConfig, device: torch.device, dtype: torch.dtype, kernel: str) -> list[Trainer]:
    torch.manual_seed(0)
    trainers = [Trainer("ours", MaskedLM(ours(cfg, kernel)), device, dtype),
                Trainer("ours-full-head", FullHead(ours(cfg, kernel)), device, dtype),
                Trainer("ours-other-attention", MaskedLM(ours(cfg, other(kernel))), device, dtype),
                Trainer("hf-bert", Peer(peer_model(cfg)), device, dtype)]
    if device.type == "cuda":  # as `pretrain --compile` trains on the GPU: the encoder compiled, the head eager
        compiled = ours(cfg, kernel)
        compiled.compile()
        trainers.insert(1, Trainer("ours-compiled", MaskedLM(compiled), device, dtype))
    return trainers


def batches(n: int, batch: int, seq: int, device, seed: int = 0, rate: float = 0.15):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        ids = torch.randint(SP.first_ordinary, VOCAB, (batch, seq), generator=g)
        ids[:, 0], ids[:, -1] = SP.cls, SP.sep
        inputs, labels = mask_tokens(ids, SP, g, rate)
        out.append((inputs.to(device), labels.to(device)))
    return out


# ---- the machine ----------------------------------------------------------------------
def syncer(device: torch.device):
    return torch.cuda.synchronize if device.type == "cuda" else (lambda: None)


def matmul_rate(device: torch.device, dtype: torch.dtype, runs: int = 3) -> float:
    """Best FLOP/s of torch.mm over the shapes, in dtype: the denominator of the share."""
    cuda = device.type == "cuda"
    shapes, inner = (CUDA_MATMULS, 20) if cuda else (CPU_MATMULS, 1)  # one 8192² product is too short to time
    sync, best = syncer(device), 0.0
    for m, k, n in shapes:
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        for _ in range(runs):  # the best of runs: the first one also warms up
            sync()
            t = time.perf_counter()
            for _ in range(inner):
                torch.mm(a, b)
            sync()
            best = max(best, inner * 2 * m * k * n / (time.perf_counter() - t))
    return best


def kind(device: torch.device) -> str:
    return "GPU" if device.type == "cuda" else "CPU"


def flags_found(device: torch.device) -> str:
    """The bf16 flag (or why there is none) and the vector extensions, for the report."""
    if device.type == "cuda":
        return f"bf16 {'native' if precision.native_bf16(device) else 'not supported'} on this GPU"
    native = precision.native_bf16(device)
    vector = " ".join(sorted(f for f in precision.cpu_flags() if f.startswith(VECTOR_FLAGS))) or "none found"
    bf16 = native or f"none of {', '.join(precision.NATIVE_BF16)}"
    return f"bf16 flags: {bf16}; vector flags: {vector}"


def plan(device: torch.device, requested: str) -> tuple[list[torch.dtype], str | None]:
    """The dtypes to time, and the note saying why bf16 is not timed (None when nothing is left out)."""
    if requested == "float32":
        return [torch.float32], None
    if requested == "bf16":
        if not precision.native_bf16(device):
            print(f"warning: bf16 is emulated on this {kind(device)} ({flags_found(device)}): timed because "
                  f"--precision bf16 asked for it, expect it many times slower than float32", file=sys.stderr)
        return [torch.bfloat16], None
    if precision.native_bf16(device):
        return [torch.float32, torch.bfloat16], None
    return [torch.float32], f"bf16: not native on this {kind(device)} ({flags_found(device)}), not timed"


def load_average() -> float | None:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else None


# ---- measuring --------------------------------------------------------------------------
def measure(cfg: ModelConfig, device: torch.device, dtype: torch.dtype, rate: float, args, batch: int) -> dict:
    """One (shape, precision): every contestant warmed up, then timed in interleaved rounds."""
    before = load_average()
    kernel = precision.attention(device, dtype, args.seq)  # as the trainer chooses it
    trainers = contestants(cfg, device, dtype, kernel)
    data = batches(args.steps, batch, args.seq, device)
    sync = syncer(device)
    for t in trainers:  # warm-up: allocator, kernels, autotuning (and compilation, before any counting mode)
        for inputs, labels in data[: args.warmup]:
            t.step(inputs, labels)
    # counted eagerly: a compiled model's FLOPs are those of the same model run eagerly ("ours")
    flops = {t.name: t.flops(*data[0]) for t in trainers if t.name != "ours-compiled"}
    flops.setdefault("ours-compiled", flops["ours"])
    for _ in range(args.rounds):  # the rate again before each round: a virtual machine's speed drifts by a third
        rate = max(rate, matmul_rate(device, dtype, runs=1))
        for t in trainers:
            t.timed(data, sync)
    profile = top_ops(trainers[0], data)  # "ours" (compiled on CUDA: the first is the eager one there too)
    tokens = batch * args.seq
    models = {}
    for t in trainers:
        step_s = statistics.median(t.times)
        models[t.name] = {"step_s": step_s, "tokens_per_s": tokens / step_s, "flops": flops[t.name],
                          "share": flops[t.name] / step_s / rate, "params": t.params, "n": len(t.times)}
    return {"shape": cfg.name, "shape_name": shape_name(cfg), "precision": precision.name(dtype),
            "path": ATTENTION[kernel], "other_path": ATTENTION[other(kernel)], "batch": batch, "seq": args.seq,
            "rate": rate, "models": models, "load": (before, load_average()), "profile": profile,
            "attention": next(t for t in trainers if t.name == "hf-bert").net.bert.config._attn_implementation}


def run_device(device: torch.device, args) -> dict:
    """Every requested shape in every precision this device gets, with the matmul rate of each dtype."""
    batch = args.batch or (64 if device.type == "cuda" else 32)
    dtypes, note = plan(device, args.precision)
    configs = [model_config(size, args.seq) for size in args.sizes]
    blocks, rates = [], {}
    for dtype in dtypes:
        rate = matmul_rate(device, dtype)
        blocks += [measure(cfg, device, dtype, rate, args, batch) for cfg in configs]
        rates[precision.name(dtype)] = max(b["rate"] for b in blocks[-len(configs):])
    if note:
        blocks += [{"shape": cfg.name, "precision": "bf16", "batch": batch, "seq": args.seq, "note": note}
                   for cfg in configs]
    return {"device": hardware(device), "cuda": device.type == "cuda", "threads": torch.get_num_threads(),
            "flags": flags_found(device), "note": note, "rates": rates, "blocks": blocks}


# ---- the report -----------------------------------------------------------------------
def fmt_load(load: tuple[float | None, float | None]) -> str:
    return " → ".join("?" if x is None else f"{x:.1f}" for x in load)


def report(res: dict) -> str:
    share = "MFU" if res["cuda"] else "of the matmul rate"
    lines = [f"{res['device']}, {res['threads']} thread(s), torch {torch.__version__}",
             f"  {res['note'] or res['flags']}"]  # the note names the flags too
    shapes = ", ".join(f"{m}×{k}·{k}×{n}" for m, k, n in (CUDA_MATMULS if res["cuda"] else CPU_MATMULS))
    for name, rate in res["rates"].items():
        lines.append(f"  matmul rate, {name}: {rate / 1e9:,.1f} GFLOP/s (best torch.mm of {shapes})")
    for b in res["blocks"]:
        if "note" in b:
            continue
        lines.append(f"{b['shape_name']}, {b['precision']}, batch {b['batch']} × {b['seq']}, "
                     f"load average {fmt_load(b['load'])} (before → after)")
        for name, m in b["models"].items():
            lines.append(f"  {name:20} {m['tokens_per_s']:9,.0f} tokens/s  ({1000 * m['step_s']:,.1f} ms/step, "
                         f"{m['flops'] / 1e9:,.2f} GFLOP/step, {m['flops'] / m['step_s'] / 1e9:,.1f} GFLOP/s = "
                         f"{100 * m['share']:.0f}% {share}; {m['params']:,} params; median of {m['n']})")
        lines.append(f"  ours trains with {b['path']}; where it spends a step (self time of its ops): {b['profile']}")
        lines.append(f"  ours with {b['other_path']} instead: {other_attention(b['models'])} as fast")
        ratio = {name: m["tokens_per_s"] / b["models"]["hf-bert"]["tokens_per_s"] for name, m in b["models"].items()}
        compiled = f"; ours-compiled / HF {ratio['ours-compiled']:.2f}" if "ours-compiled" in ratio else ""
        lines.append(f"  ratio ours / HF {ratio['ours']:.2f}; same-work ratio ours-full-head / HF "
                     f"{ratio['ours-full-head']:.2f}{compiled}  (HF BertForMaskedLM, {b['attention']} attention, "
                     f"runs its head on every position, as a user runs it)")
    return "\n".join(lines)


# ---- RESULTS.md -------------------------------------------------------------------------
COLUMNS = ("device", "shape", "precision", "batch × seq", "threads", "ours tokens/s", "HF tokens/s", "ratio",
           "full-head tokens/s", "same-work ratio", "GFLOP/step (ours)", "share of matmul rate ours / HF",
           "matmul rate GFLOP/s", "attention of ours: top ops (self time)", "ours with the other attention",
           "date", "load")


def other_attention(models: dict) -> str:
    """How fast "ours" trains with the other kernel, as a multiple of its speed with the trainer's (both eager, also
    on CUDA, where the table's "ours" is the compiled one)."""
    return f"{models['ours-other-attention']['tokens_per_s'] / models['ours']['tokens_per_s']:.2f}×"


def row(res: dict, b: dict) -> list[str]:
    head = [res["device"], b["shape"], b["precision"], f"{b['batch']} × {b['seq']}", str(res["threads"])]
    today = dt.date.today().isoformat()
    if "note" in b:
        return head + [b["note"]] + ["–"] * (len(COLUMNS) - len(head) - 3) + [today, "–"]
    models = b["models"]
    ours = models["ours-compiled" if "ours-compiled" in models else "ours"]
    hf, full = models["hf-bert"], models["ours-full-head"]
    figures = [f"{ours['tokens_per_s']:,.0f}", f"{hf['tokens_per_s']:,.0f}",
               f"{ours['tokens_per_s'] / hf['tokens_per_s']:.2f}", f"{full['tokens_per_s']:,.0f}",
               f"{full['tokens_per_s'] / hf['tokens_per_s']:.2f}", f"{ours['flops'] / 1e9:,.1f}",
               f"{100 * ours['share']:.0f}% / {100 * hf['share']:.0f}%", f"{b['rate'] / 1e9:,.0f}",
               f"{b['path']}: {b['profile']}", f"{b['other_path']}: {other_attention(models)}",
               today, fmt_load(b["load"])]
    return head + figures


def write(results: list[dict], path: Path = RESULTS):
    """One row per (device, shape, precision): a new figure replaces that combination's old row, other rows
    stay. A "not timed" row only fills a gap; it never replaces a figure taken with --precision bf16."""
    rows = old_rows(TITLE, COLUMNS, path=path)
    for res in results:
        for b in res["blocks"]:
            key = (res["device"], b["shape"], b["precision"])
            if "note" not in b or key not in rows:
                rows[key] = row(res, b)
    body = (f"`python benchmarks/bench_train.py`: training tokens/s (forward + backward + clipping + AdamW step) "
            f"of our Transformers `mini` (6 × 256, 4 heads, FFN 1024) and `small` (6 × 512, 8 heads, FFN 2048), "
            f"vocabulary 8192, pre-LN, dropout 0 (as the trainer pre-trains), against Hugging Face "
            f"`BertForMaskedLM` of the same shape (`attn_implementation=\"sdpa\"`, dropout 0, the MLM head on every "
            f"position as a user runs it); the same random batches with 15% masking, the same precision, "
            f"interleaved, medians. \"ours\" runs the MLM head on the masked positions only, as "
            f"`macaron.train.pretrain` trains; \"full head\" runs it on every position like the peer (the same "
            f"work: the same-work ratio). float32 always; bf16 autocast (weights and optimizer state float32) only "
            f"where the hardware does bf16 natively: elsewhere it is emulated, many times slower, and not timed. "
            f"GFLOP/step counted with `torch.utils.flop_counter` (forward + backward; SDPA counted as its math "
            f"backend's products, so every contestant's attention counts alike; rows dated before 2026-11-26 left "
            f"out the CPU flash kernel's; \"ours\" counts the ≤ 63 padding rows of its head, ~0.4 %); share of "
            f"matmul rate = "
            f"achieved FLOP/s ÷ the best `torch.mm` rate measured in the same run (before it and before each round of "
            f"the shape's timing), same dtype and threads "
            f"(on the CPU 4096 × 512·512 × 2048, 4096 × 2048·2048 × 512, 4096 × 256·256 × 1024; on CUDA 8192², "
            f"so there it is the MFU, and \"ours\" is the compiled encoder, as `pretrain --compile` trains, the "
            f"peer eager). Attention of ours: the kernel the trainer takes on this CPU kind in this precision "
            f"(`macaron.train.precision.attention`; rows without it are SDPA's); top ops: the three aten ops with "
            f"the largest share of one step's self time of \"ours\" (`torch.profiler`); the other attention: "
            f"\"ours\" with the kernel the trainer does not take, timed in the same rounds, as a multiple of "
            f"eager \"ours\" (below 1: the trainer's choice wins; rows without it are older). The device names the CPU "
            f"kind (AMX, AVX512_BF16, AVX2: the flags the fast path depends on). Load = 1-minute load average "
            f"before → after (other jobs on the machine). "
            f"Python {platform.python_version()}, torch {torch.__version__}.")
    write_table(TITLE, body, COLUMNS, rows.values(), path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default=",".join(SIZES),
                   help=f"comma-separated, of {', '.join(KNOWN_SIZES)} (default {','.join(SIZES)})")
    p.add_argument("--precision", choices=precision.CHOICES, default="auto",
                   help="auto: float32, plus bf16 where native; bf16 forces it even where emulated (slow)")
    p.add_argument("--batch", type=int, default=None, help="sequences per step (default 32 on CPU, 64 on CUDA)")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--steps", type=int, default=6, help="timed steps per model per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=2, help="untimed steps per model first")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    p.add_argument("--cpu", action="store_true", help="the CPU figures only, even where CUDA is present")
    p.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = p.parse_args(argv)
    args.sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    unknown = set(args.sizes) - set(KNOWN_SIZES)
    if unknown or not args.sizes:
        p.error(f"--sizes {','.join(sorted(unknown))}: choose from {', '.join(KNOWN_SIZES)}")
    if args.threads:
        torch.set_num_threads(args.threads)
    devices = [torch.device("cpu")]  # the CPU figures always, the GPU's where there is a GPU
    if torch.cuda.is_available() and not args.cpu:
        devices.append(torch.device("cuda"))
    results = []
    for device in devices:
        results.append(run_device(device, args))
        print(report(results[-1]), flush=True)
    if not args.no_write:
        write(results)
        print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
