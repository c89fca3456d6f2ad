"""The two models of a lockstep pair on the CPU: their steps in turn on every thread, or at the same time on a
thread each. The ratio is what `macaron.train.precision.AT_ONCE_KINDS` is chosen from, per CPU kind.

    python benchmarks/bench_pair.py [--sizes mini,small] [--precision auto|float32|bf16] [--batch 16] [--seq 128]
        [--steps 6] [--rounds 4] [--warmup 2] [--no-write]

The recipes' pairs (`make train-mini`, `make train-small`): the Transformer and the Macaron of a shape, post-LN,
dropout 0, on random batches of 16 × 128 tokens with 40 % masking, in the precision and with the attention kernel the
trainer takes on this CPU, AdamW and clipping as bench_train.py steps them. Two layouts, with two intra-op threads in
all:

    in turn   one model's step after the other's, each on both threads (what the trainer does elsewhere)
    at once   both steps at the same time on the trainer's pool (trainer.thread_per_model): a thread each

Rounds alternate the layouts (and which goes first); medians of the pair's step time. Tokens/s each = the batch's
tokens ÷ the pair's step time, as the trainer's log counts them. Rows go to RESULTS.md, section "A pair's steps: in
turn or at once", one per (device, pair, precision, batch).
"""
from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_train import VOCAB, Trainer, batches, fmt_load, load_average, ours  # noqa: E402
from macaron import ModelConfig  # noqa: E402
from macaron.network.operators import ATTENTION  # noqa: E402
from macaron.train import precision  # noqa: E402
from macaron.train.card import hardware  # noqa: E402
from macaron.train.objective import MaskedLM  # noqa: E402
from macaron.train.trainer import thread_per_model, threads  # noqa: E402
from results import RESULTS, old_rows, write_table  # noqa: E402

TITLE = "A pair's steps: in turn or at once"
SCHEMES = ("transformer", "macaron")  # the recipes' pairs
MASK_RATE = 0.4  # the recipes' --mask-rate
COLUMNS = ("device", "pair", "precision", "batch × seq", "threads", "attention", "in turn, tokens/s each",
           "at once, tokens/s each", "at once / in turn", "the trainer here", "date", "load")


def pair(size: str, seq: int, kernel: str) -> list[torch.nn.Module]:
    torch.manual_seed(0)
    return [MaskedLM(ours(ModelConfig.named(size, scheme=scheme, norm="post", vocab_size=VOCAB, max_len=max(512, seq),
                                            dropout=0.0, name=f"{scheme}-{size}"), kernel)) for scheme in SCHEMES]


def measure(size: str, dtype: torch.dtype, args) -> dict:
    """The pair of `size` stepped in both layouts, in alternating rounds."""
    before, device = load_average(), torch.device("cpu")
    kernel = precision.attention(device, dtype, args.seq)
    trainers = [Trainer(m.encoder.config.name, m, device, dtype) for m in pair(size, args.seq, kernel)]
    data = batches(args.steps, args.batch, args.seq, device, rate=MASK_RATE)
    pool = thread_per_model(len(trainers))
    layouts = {"in turn": lambda batch: [t.step(*batch) for t in trainers],
               "at once": lambda batch: list(pool.map(lambda t: t.step(*batch), trainers))}
    times: dict[str, list[float]] = {name: [] for name in layouts}
    try:
        for run in layouts.values():
            for batch in data[: args.warmup]:
                run(batch)
        for r in range(args.rounds):
            for name in sorted(layouts, reverse=r % 2 == 1):
                for batch in data:
                    t = time.perf_counter()
                    layouts[name](batch)
                    times[name].append(time.perf_counter() - t)
    finally:
        pool.shutdown()
    tokens = args.batch * args.seq
    each = {name: tokens / statistics.median(ts) for name, ts in times.items()}
    return {"pair": " + ".join(t.name for t in trainers), "precision": precision.name(dtype),
            "attention": ATTENTION[kernel], "each": each, "n": args.steps * args.rounds,
            "chosen": "at once" if precision.models_at_once(device) else "in turn",
            "load": (before, load_average())}


def report(device: str, blocks: list[dict], args) -> str:
    lines = [f"{device}, {len(SCHEMES)} threads in all, batch {args.batch} × {args.seq}, torch {torch.__version__}"]
    for b in blocks:
        turn, once = b["each"]["in turn"], b["each"]["at once"]
        lines.append(f"{b['pair']}, {b['precision']}, {b['attention']}, load average {fmt_load(b['load'])}: in turn "
                     f"{turn:,.0f} tokens/s each, at once {once:,.0f} (medians of {b['n']}): at once / in turn "
                     f"{once / turn:.2f}; the trainer takes them {b['chosen']} here")
    return "\n".join(lines)


def write(device: str, blocks: list[dict], args, path: Path = RESULTS):
    rows = old_rows(TITLE, COLUMNS, key=4, path=path)  # by device, pair, precision and batch
    for b in blocks:
        turn, once = b["each"]["in turn"], b["each"]["at once"]
        rows[(device, b["pair"], b["precision"], f"{args.batch} × {args.seq}")] = [
            device, b["pair"], b["precision"], f"{args.batch} × {args.seq}", str(len(SCHEMES)), b["attention"],
            f"{turn:,.0f}", f"{once:,.0f}", f"{once / turn:.2f}", b["chosen"], dt.date.today().isoformat(),
            fmt_load(b["load"])]
    intro = (f"`python benchmarks/bench_pair.py`: the recipes' pairs (`make train-mini`, `make train-small`: the "
             f"Transformer and the Macaron of a shape, post-LN, dropout 0) on random batches with {MASK_RATE:.0%} "
             f"masking, in the precision and with the attention kernel the trainer takes on that CPU, two intra-op "
             f"threads in all. In turn: one model's step after the other's on both threads; at once: the two steps at "
             f"the same time on the trainer's pool, a thread each. Alternating rounds, medians; tokens/s each = a "
             f"batch's tokens ÷ the pair's step time. The trainer here: the layout `macaron.train.precision."
             f"models_at_once` chooses on that CPU kind (the measurement it is chosen from). Load = 1-minute load "
             f"average before → after. torch {torch.__version__}.")
    write_table(TITLE, intro, COLUMNS, rows.values(), path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="mini,small", help="comma-separated, of mini, small (default mini,small)")
    p.add_argument("--precision", choices=precision.CHOICES, default="auto",
                   help="auto: what the trainer takes on this CPU (bf16 where native, else float32)")
    p.add_argument("--batch", type=int, default=16, help="sequences per step (default 16, the recipes')")
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--steps", type=int, default=6, help="timed steps per layout per round")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--warmup", type=int, default=2, help="untimed steps per layout first")
    p.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    args = p.parse_args(argv)
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if not sizes or set(sizes) - {"mini", "small"}:
        p.error(f"--sizes {args.sizes!r}: choose from mini, small")
    dtype = precision.choose(torch.device("cpu"), args.precision)
    device = hardware(torch.device("cpu"))
    with threads(len(SCHEMES)):  # the layout the trainer chooses between: a thread per model
        blocks = [measure(size, dtype, args) for size in sizes]
    print(report(device, blocks, args), flush=True)
    if not args.no_write:
        write(device, blocks, args)
        print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
