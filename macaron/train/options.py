"""The trainers' command lines: the options every task shares (the trainer's: optimisation, budget, evaluation and
checkpoints, the run), each task's own group (the masked LM's here, `masked_lm`; the translators' in
macaron.train.translate), and the masked LM's named models (a recipe and a size, "<recipe>-<size>") turned into
configs."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ..config import ModelConfig
from ..schemes import get_scheme, n_convection
from . import evaluate as ev
from . import precision
from .resume import TrainError

# the first line of macaron.train.pretrain's docstring
DESCRIPTION = "Masked-language-model pre-training of one model, or of several in lockstep."
PROG = "python -m macaron.train.pretrain"
ROOT = Path(__file__).resolve().parents[2]

# Named models: a recipe (the fields that differ from a Transformer) and a size, "<recipe>-<size>".
RECIPES = {
    "transformer": dict(scheme="transformer"),
    "macaron": dict(scheme="macaron"),
    "att-ffn-att": dict(scheme="att-ffn-att"),
    "transformer-halves": dict(scheme="transformer-halves"),  # the race's control (issue 47)
    "lie-trotter-gf": dict(scheme="lie-trotter-gf"),
    "parallel": dict(scheme="unsplit"),  # attention and FFN on one state, their moves added (GPT-J, PaLM)
    "synthesizer-dense": dict(scheme="transformer", attention="dense"),
    "synthesizer-random": dict(scheme="transformer", attention="random"),
    "synthesizer-dense-dot": dict(scheme="transformer", attention="dense+dot"),
    "floater": dict(scheme="transformer", position="floater"),
}
# Depth as time (DESIGN.md; docs/training-notes.md has the probes behind it): the size "ode" is the minis'
# width with one layer's weights at every depth, steps of h, norms without gain or bias (post-LN puts every
# state on one sphere), and Macaron's halves tied: transformer-ode, macaron-ode.
ODE_WIDTH, ODE = "mini", dict(shared=True, step=0.5, norm_affine=False, tied_halves=True)
SIZE_NAMES = ("mini", "small", "base", "ode")


# ---- arguments ----------------------------------------------------------------------
def masked_lm(p: argparse.ArgumentParser):
    """The masked LM's own options: its models, data, masking, batches and held-out set."""
    g = p.add_argument_group("model(s)")
    g.add_argument("--models", default=None,
                   help=f"comma list of <recipe>-<size> names trained in lockstep; recipes {sorted(RECIPES)}")
    g.add_argument("--size", default="mini", choices=["mini", "small", "base"])
    g.add_argument("--scheme", default="transformer")
    g.add_argument("--attention", default="dot")
    g.add_argument("--position", default="learned")
    g.add_argument("--norm", default="pre", choices=["pre", "post"])
    g.add_argument("--max-len", type=int, default=None, help="position table size (default: --seq-len)")
    g.add_argument("--name", default=None, help="name of the one model (default <scheme>-<size>)")
    g.add_argument("--shared", action="store_true", help="one set of layer weights at every depth (depth as time)")
    g.add_argument("--step", type=float, default=None, help="the layers' time step h (default 1; T = layers × h)")
    g.add_argument("--tied-halves", action="store_true",
                   help="models with two convection sub-steps (Macaron) use one FFN for both: Strang's same G")
    g.add_argument("--sphere", action="store_true",
                   help="norms without gain or bias: post-LN projects every state onto one sphere of radius √d")
    g.add_argument("--move-penalty", type=float, default=0.0,
                   help="add this × the mean over Euler moves of ‖Δx‖²/‖x‖² to the training loss (keeps steps small)")
    g = p.add_argument_group("data")
    g.add_argument("--data", default=None, help="a packed folder (python -m macaron.train.pack) or a text corpus")
    g.add_argument("--corpus", default=str(ROOT / "data" / "corpus"), help="text corpus (when --data is not given)")
    g.add_argument("--tokenizer", default=str(ROOT / "data" / "tokenizer.json"), help="with a text corpus")
    g.add_argument("--seq-len", type=int, default=128)
    g.add_argument("--mask-rate", type=float, default=0.15, help="share of the tokens chosen as targets")
    g.add_argument("--mask-only", action="store_true",
                   help="every target becomes [MASK] (default: BERT's 80 %% [MASK], 10 %% random, 10 %% unchanged)")
    g.add_argument("--no-cross-documents", dest="cross_documents", action="store_false",
                   help="start a new sequence at every document instead of packing documents with [SEP]")
    g = p.add_argument_group("batches")
    g.add_argument("--batch", type=int, default=32, help="sequences per optimizer step (all ranks together)")
    g.add_argument("--accum", type=int, default=1, help="gradient accumulation micro-steps per optimizer step")
    g.add_argument("--compile", action="store_true", help="torch.compile every encoder (sequences padded to "
                                                          "--seq-len, so one graph serves every batch)")
    g = p.add_argument_group("held-out set")
    g.add_argument("--eval-seqs", type=int, default=512, help="size of the fixed validation set (sequences)")
    g.add_argument("--eval-batch", type=int, default=64)
    g.add_argument("--eval-seed", type=int, default=ev.EVAL_SEED, help="masking seed of the validation set")


def check_masked_lm(args: argparse.Namespace, p: argparse.ArgumentParser):
    """The masked LM's options checked, and what follows from them: the models' names, the position table."""
    args.names = [n.strip() for n in args.models.split(",") if n.strip()] if args.models else \
        [args.name or f"{args.scheme}-{args.size}"]
    args.max_len = args.max_len or args.seq_len
    if not 0 < args.mask_rate < 1:
        p.error(f"--mask-rate {args.mask_rate}: give a share between 0 and 1")


def parser(prog: str = PROG, description: str = DESCRIPTION, own: Callable = masked_lm,
           **defaults) -> argparse.ArgumentParser:
    """A task's command line: its own options (`own(p)`: the masked LM's by default), then the trainer's, which
    every task shares, with the task's `defaults` for them."""
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    own(p)
    g = p.add_argument_group("model size (every model of the run)")
    g.add_argument("--d-model", type=int, help="override the width")
    g.add_argument("--layers", type=int, help="override the depth")
    g.add_argument("--heads", type=int, help="override the number of heads")
    g.add_argument("--ffn", type=int, help="override the FFN budget per layer")
    # Off by default: a model that sees most sequences about once has nothing to regularise, and dropout
    # slows budget pre-training (Geiping & Goldstein 2022, "Cramming", drop it for that reason)
    g.add_argument("--dropout", type=float, default=0.0)
    g = p.add_argument_group("optimisation")
    g.add_argument("--lr", type=float, default=5e-4)
    g.add_argument("--warmup", type=int, default=None, help="warm-up steps (none given: 6%% of the steps)")
    g.add_argument("--schedule", default="linear", choices=["linear", "cosine", "inverse-sqrt"])
    g.add_argument("--weight-decay", type=float, default=0.01)
    g.add_argument("--betas", type=float, nargs=2, default=(0.9, 0.98))
    g.add_argument("--eps", type=float, default=1e-6)
    g.add_argument("--clip", type=float, default=1.0, help="gradient norm clip (0: off)")
    g.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("budget (the first reached ends the run)")
    g.add_argument("--tokens", type=float, help="tokens to train on, as the task counts them (the masked LM: real, "
                                                "non-padding tokens; the translators: target tokens)")
    g.add_argument("--steps", type=int, help="optimizer steps")
    g.add_argument("--fit-minutes", type=float, help="probe the throughput, then train as long as fits this "
                                                     "wall-clock limit (from the start of the command)")
    g.add_argument("--probe-steps", type=int, default=None, help="timed probe steps (default 20 on CUDA, 3 on CPU)")
    g = p.add_argument_group("evaluation, logging, checkpoints")
    g.add_argument("--eval-every", type=int, default=100, help="steps between held-out evaluations")
    g.add_argument("--log-every", type=int, default=10)
    g.add_argument("--checkpoint-every", type=int, default=500, help="steps between resumable checkpoints")
    g.add_argument("--checkpoint-minutes", type=float, default=10.0, help="also checkpoint this often")
    g = p.add_argument_group("run")
    g.add_argument("--out", default=str(ROOT / "pretrained"), help="folder that receives one folder per model")
    g.add_argument("--run-dir", default=None, help="metrics and checkpoints (default runs/<first model>)")
    g.add_argument("--save-dtype", default="float32", choices=["float32", "float16"],
                   help="weights on disk (float16 halves the files; loaded as float32)")
    g.add_argument("--resume", action="store_true", help="continue from the run folder's checkpoint")
    g.add_argument("--warm-start", default=None, metavar="DIR",
                   help="no checkpoint (a new machine): continue from the weights in DIR/<name> (published "
                        "milestones, e.g. pretrained) at their recorded step, with a fresh optimizer")
    g.add_argument("--rewarm", type=int, default=200, help="warm-up steps of a warm start's fresh optimizer "
                                                           "or of a new phase")
    g.add_argument("--new-phase", action="store_true",
                   help="with --resume or --warm-start: continue past the run's budget in a new phase, --rewarm "
                        "steps of warm-up to --lr, then decay to the new --tokens/--steps")
    g.add_argument("--overwrite", action="store_true", help="start over even if the run/model folder exists")
    g.add_argument("--detach", action="store_true", help="run in the background (setsid nohup), log to "
                                                         "<run-dir>/train.log, and return at once")
    g.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    g.add_argument("--precision", default="auto", choices=precision.CHOICES,
                   help="auto: bf16 autocast where the CPU or GPU does bf16 natively, else float32")
    g.add_argument("--keep-every", type=int, default=None,
                   help="keep the weights (float16) every this many steps in <run-dir>/<name>/milestones/, "
                        "each a loadable model folder; a multiple of --eval-every, so each has its figures")
    g.add_argument("--device", default=None, help="cpu | cuda (default: cuda when present)")
    g.add_argument("--stop-after", type=int, default=None, metavar="STEP",
                   help="train until STEP, save a checkpoint and exit; continue later with --resume (a long run "
                        "split over sessions). At or past the budget: the run ends as usual")
    p.set_defaults(**defaults)
    return p


def parse_args(argv=None, p: argparse.ArgumentParser | None = None, check: Callable = check_masked_lm
               ) -> argparse.Namespace:
    """The command line of a task (`p`, checked by `check(args, p)`, which sets args.names; by default the masked
    LM's), and the trainer's options checked."""
    p = p or parser()
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    args.module = p.prog.split()[-1]  # the trainer --detach starts again, and the card's command names
    if not (args.tokens or args.steps or args.fit_minutes):
        p.error("give a budget: --tokens, --steps or --fit-minutes")
    check(args, p)
    if len(set(args.names)) != len(args.names):
        p.error(f"--models names a model twice: {args.names}")
    args.out = Path(args.out)
    args.run_dir = Path(args.run_dir) if args.run_dir else ROOT / "runs" / args.names[0]
    args.tokens = int(args.tokens) if args.tokens else None
    if args.new_phase and not (args.resume or args.warm_start) or args.new_phase and args.fit_minutes:
        p.error("--new-phase continues a run: give --resume or --warm-start, and --tokens or --steps")
    if args.warm_start and args.resume:
        p.error("--warm-start or --resume, not both: --resume continues a checkpoint, --warm-start published weights")
    if args.stop_after is not None and args.stop_after < 1:
        p.error(f"--stop-after {args.stop_after}: give the step to stop after (1 or more)")
    if args.keep_every is not None and (args.keep_every < 1 or args.keep_every % args.eval_every):
        p.error(f"--keep-every {args.keep_every}: a positive multiple of --eval-every {args.eval_every}")
    return args


def _halves(scheme: str) -> bool:
    """Whether the scheme has convection sub-steps to tie (Macaron's halves): ties apply where they can."""
    return n_convection(get_scheme(scheme).substeps) > 1


def model_configs(args, vocab_size: int) -> dict[str, ModelConfig]:
    """name -> config, from --models recipes or from the single-model flags; overrides apply to all."""
    common = dict(norm=args.norm, dropout=args.dropout, vocab_size=vocab_size, max_len=args.max_len)
    out = {}
    for name in args.names:
        if args.models:
            recipe, _, size = name.rpartition("-")
            if recipe not in RECIPES or size not in SIZE_NAMES:
                raise TrainError(f"--models: {name!r} is not <recipe>-<size> with a recipe of {sorted(RECIPES)} "
                                 f"and a size of {', '.join(SIZE_NAMES)}")
            fields = {**common, "scheme": "transformer", "attention": "dot", "position": "learned", **RECIPES[recipe]}
            if size == "ode":
                size = ODE_WIDTH
                fields.update(ODE, tied_halves=ODE["tied_halves"] and _halves(fields["scheme"]))
        else:
            size = args.size
            fields = dict(common, scheme=args.scheme, attention=args.attention, position=args.position)
        try:
            cfg = ModelConfig.named(size, **fields, name=name)
            for field, value in (("d_model", args.d_model), ("n_layers", args.layers), ("n_heads", args.heads),
                                 ("ffn_total", args.ffn), ("step", args.step), ("shared", args.shared or None),
                                 ("tied_halves", args.tied_halves and _halves(cfg.scheme) or None),
                                 ("norm_affine", False if args.sphere else None)):
                if value is not None:
                    setattr(cfg, field, value)
            out[name] = ModelConfig.from_dict(cfg.to_dict())  # re-validate after the overrides
        except ValueError as e:
            raise TrainError(f"{name}: {e}") from None
    return out
