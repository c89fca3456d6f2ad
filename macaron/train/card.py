"""The model card (README.md of a checkpoint folder), its facts (training.json) and training curve.

    python -m macaron.train.card pretrained/macaron-small     (render README.md and the curve again)
"""
from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

from ..formats.folder import FACTS, CheckpointError, read_facts, read_metrics
from ..network.operators import ATTENTION
from ..schemes import get_scheme
from .precision import cpu_kind

CURVE = "training_curve.png"


def corpus_table(stats: dict) -> str:
    """Words per source from the corpus builder's stats.json, and what was missing."""
    per = stats.get("per_source") or {}
    if not per:
        return "Corpus statistics (stats.json) were not available for this run.\n"
    about = stats.get("sources") or {}
    rows = []
    for name, splits in per.items():
        words = sum(int(s.get("words", 0)) for s in splits.values() if isinstance(s, dict))
        rows.append(f"| {name} | {words:,} | {about.get(name, '')} |")
    total = (stats.get("words") or {}).get("total")
    text = "| source | words | note |\n|---|---:|---|\n" + "\n".join(rows)
    text += f"\n| **total** | **{total:,}** | |\n" if isinstance(total, int) else "\n"
    failed = {n: why for n, why in (stats.get("skipped") or {}).items() if str(why).startswith("failed")}
    if stats.get("partial") or failed:
        text += ("\n**Partial corpus** (built with `--allow-partial`); missing: "
                 + "; ".join(f"{n} ({why})" for n, why in failed.items()) + "\n")
    return text


def hardware(device=None) -> str:
    import torch

    if device is not None and getattr(device, "type", str(device)) == "cuda":
        return f"GPU {torch.cuda.get_device_name(device)}"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"CPU {cpu} with {cpu_kind()} ({os.cpu_count()} cores visible)"  # the kind decides the fast path


def curve_figure(metrics_file: Path, lower: str, ratios: bool = True):
    """(pyplot, figure, axes, train rows, evaluation rows, the evaluations that measured `lower`) for a training
    curve: loss above, `lower` below where measured; None without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_metrics(metrics_file)
    train, evals = [r for r in rows if r.get("type") != "eval"], [r for r in rows if r.get("type") == "eval"]
    measured = [r for r in evals if lower in r]
    fig, axes = plt.subplots(2 if measured else 1, 1, figsize=(7, 6.2 if measured else 4.2), dpi=110, sharex=True,
                             squeeze=False, **({"gridspec_kw": {"height_ratios": [3, 2][: 2 if measured else 1]}}
                                               if ratios else {}))
    return plt, fig, axes, train, evals, measured


def training_curve(metrics_file: Path, png: Path, title: str = "", unigram: float | None = None,
                   mask_rate: float = 0.15) -> Path | None:
    """Loss (train and held-out) and the context effect against tokens seen (None without matplotlib)."""
    drawn = curve_figure(metrics_file, "context_effect")
    if drawn is None:
        return None
    plt, fig, axes, train, evals, effects = drawn
    ax = axes[0, 0]
    if train:
        ax.plot([r["tokens"] / 1e6 for r in train], [r["loss"] for r in train], lw=1, alpha=0.6,
                label=f"train loss ({mask_rate:.0%} of tokens masked)")
    if evals:
        ax.plot([r["tokens"] / 1e6 for r in evals], [r["loss"] for r in evals], "o-", ms=3, lw=1.5,
                label="held-out loss (fixed set, 15% masked)")
    if unigram is not None:
        ax.axhline(unigram, color="grey", ls="--", lw=1, label="unigram baseline (held-out)")
    ax.set_ylabel("MLM cross-entropy (nats)")
    ax.set_title(f"{title} — masked-LM pre-training" if title else "masked-LM pre-training")
    ax.legend()
    if effects:
        ax = axes[1, 0]
        ax.plot([r["tokens"] / 1e6 for r in effects], [r["context_effect"] for r in effects], "o-", ms=3, lw=1.5,
                color="#0072B2")
        ax.axhline(0, color="grey", lw=0.8)
        values = [r["context_effect"] for r in effects]
        ax.set_ylim(min(-0.1, min(values) * 1.1), max(0.5, max(values) * 1.1))  # 1e-4 nats should look like 0
        ax.set_ylabel("context effect (nats)")
    axes[-1, 0].set_xlabel("tokens seen (millions)")
    for row in axes:
        row[0].grid(alpha=0.3)
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png)
    plt.close(fig)
    return png


def _heldout(final: dict, eval_seqs) -> str:
    rows = [("MLM loss (nats / masked token)", f"{final['loss']:.4f}"),
            ("masked-token accuracy", f"{final['accuracy']:.1%}"),
            ("perplexity", f"{final['perplexity']:.1f}")]
    if "unigram_loss" in final:
        rows += [("unigram baseline on the same targets (nats)", f"{final['unigram_loss']:.4f}"),
                 ("context effect: loss with the unmasked words shuffled, minus the loss above (nats)",
                  f"{final['context_effect']:+.3f}")]
    if "context_use" in final:
        rows += [("context use: loss with the unmasked words replaced by random ones, minus the loss above (nats)",
                  f"{final['context_use']:+.3f}")]
    table = "| metric | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    return (f"{table}\n\nOn a fixed validation set of {eval_seqs} packed sequences ({final['targets']:,} masked "
            f"targets, masking seed fixed), identical for every model trained by this script, so these numbers "
            f"compare across models trained on the same corpus and tokenizer. The unigram baseline guesses every "
            f"masked token from training-set word counts alone; the context effect is how much worse the model "
            f"does when the words around each mask are shuffled: what it owes to word order (0 for a model that "
            f"ignores the other words, or reads them only as a bag of words); the context use, where given, is how "
            f"much worse it "
            f"does when those words are replaced by random ones: what it owes to them at all.\n")


def precisions(info: dict) -> list[list]:
    """[[step, precision, attention kernel], ...] of a run's facts; facts written before runs recorded it had one
    precision, and entries written before runs recorded the kernel ([step, precision]) were SDPA's, the only one."""
    steps = info.get("precisions") or [[0, info.get("precision", "float32")]]
    return [[step, name, *(kernel or ["sdpa"])] for step, name, *kernel in steps]


def penalties(info: dict) -> list[list]:
    """[[step, λ], ...]: the move penalty from the step it began (a resumed run may raise it); facts written
    before runs recorded it had one."""
    return info.get("penalties") or [[0, info.get("move_penalty", 0.0)]]


def _penalty(info: dict) -> list[str]:
    steps = penalties(info)
    if not any(lam for _, lam in steps):
        return []
    (_, first), *later = steps
    said = f"{first:g}" + "".join(f", {lam:g} from step {step:,}" for step, lam in later)
    return [f"trained with a move penalty λ × mean ‖Δx‖²/‖x‖² added to the loss, λ = {said}"]


def precision_words(info: dict) -> str:
    """What the run computed with: one precision and attention kernel, or each from the step it began (a run
    resumed on another CPU)."""
    said = [(step, f"{name} with {ATTENTION[kernel]}") for step, name, kernel in precisions(info)]
    if len(said) == 1:
        return said[0][1]
    return ", ".join(f"{name} from step {step:,}" for step, name in said)


def orders_section(record: dict | None) -> str:
    """The splitting orders measured on the model's own fields (macaron.studies.orders' record), if any."""
    if record is None:
        return ""
    rows = []
    for scheme in ("lie-trotter", "strang"):
        for solver, words in (("exact", "exact"), ("euler", "one Euler move")):
            local, whole = (record[f"{part}_slope"][scheme][solver] for part in ("local", "global"))
            theory = record["expected"][scheme][solver]
            rows.append(f"| {get_scheme(scheme).title} | {words} | {local[0]:.2f} [{local[1]:.2f}, {local[2]:.2f}] "
                        f"({theory[0]}) | {whole[0]:.2f} [{whole[1]:.2f}, {whole[2]:.2f}] ({theory[1]}) | "
                        f"{record['local_error'][scheme][solver][0]:.2g} |")
    return f"""
## Splitting orders on its own fields

Each scheme's step built from this model's own attention F and FFN G, held against the exact flow of the field
its layer is consistent with (torchdiffeq, float64; with norms without gain, the flow projected on the sphere),
from {record['states']} states entering a layer ({record['sentences']} shipped sentences) at steps h, h/2, h/4,
h/8, and at T = {record['horizon']:g} over {record['global_sentences']} sentences: slopes of log error (‖error‖/‖x‖,
mean over tokens) against log step, in square brackets a 95 % bootstrap interval over the sentences, in
parentheses the theorem's order (`python -m macaron.studies.orders --save`, measured {record['measured']} on these
weights).

| scheme | sub-flows | local slope | global slope | local error at h |
|---|---|---|---|---|
""" + "\n".join(rows) + "\n"


def at_once_words(models: int, threads: int) -> str:
    """How a lockstep run's models shared the threads when they stepped at once: 'on a thread each', '2 to a thread'."""
    return "on a thread each" if models <= threads else f"{models // threads} to a thread"


def render(info: dict, orders: dict | None = None) -> str:
    """Markdown model card from the run's facts (see output.Output.facts for the keys) and, where measured,
    its splitting orders (macaron.studies.orders' record)."""
    c, final = info["config"], info["final"]
    minutes = info["wall_seconds"] / 60
    params = "\n".join(f"| `{k}` | `{v}` |" for k, v in c.items())
    scheme = get_scheme(c["scheme"])
    kind = f"{scheme.layer} ({scheme.title})"
    together = [n for n in info.get("trained_with", []) if n != c["name"]]
    lockstep = (f"| trained in lockstep with | {', '.join(together)} (same batches, masks and token count) |\n"
                if together else "")
    at_once = (f", the models' steps at once {at_once_words(len(info.get('trained_with', [])), info['threads'])}"
               if info.get("at_once") else "")
    storage = ("Weights are stored in float16 (loaded as float32).\n\n" if info.get("save_dtype") == "float16"
               else "")
    budget = info.get("budget_steps")
    if budget and info["steps"] < budget:
        storage += (f"**Training in progress:** these weights and figures are from step {info['steps']:,} of "
                    f"{budget:,} steps ({info['tokens']:,} of {info.get('budget_tokens') or 0:,} tokens); the learning "
                    f"rate decays to zero at the end of the budget.\n\n")
    if c.get("shared") or c.get("step", 1.0) != 1.0:  # depth as time: what makes it an ODE, and the penalty
        time = c.get("step", 1.0) * c["n_layers"]
        storage += ("**Depth as time:** " + ", ".join(
            (["one layer's weights at every step (an autonomous flow)"] if c.get("shared") else [])
            + [f"steps of h = {c.get('step', 1.0):g}, so the {c['n_layers']} layers run to T = {time:g}"]
            + (["Macaron's two halves one FFN (Strang's same G)"] if c.get("tied_halves") else [])
            + (["norms without gain or bias (every state on one sphere of radius √d)"]
               if c.get("norm_affine", True) is False else [])
            + _penalty(info)) + ".\n\n")
    rate = info.get("mask_rate", 0.15)
    masking = (f"{rate:.0%} of tokens ([CLS]/[SEP]/[PAD] never), "
               + ("all [MASK]" if info.get("mask_only") else "80% [MASK] / 10% random / 10% kept")
               + ", re-drawn each visit")
    start = (f"| random start | rebuilt from the seed (`torch.manual_seed({info['seed']})`, "
             f"then `macaron.build(config)`); "
             f"SHA-256 of its weights `{info['init_sha256'][:16]}…` (full value in {FACTS}) |\n"
             if info.get("init_sha256") else "")
    for w in info.get("warm_starts") or []:
        start += (f"| warm start | at step {w['step']:,} ({w['tokens']:,} tokens) from `{w['from']}`: the weights "
                  f"as published, a fresh optimizer, "
                  + (f"{w['rewarm'][1]} steps of re-warm-up" if w['rewarm'][1] else "a new phase's warm-up")
                  + f" ({w['date'][:10]}) |\n")
    for i, ph in enumerate(info.get("phases") or [], 1):
        start += (f"| phase {i} | from step {ph['step']:,} ({ph['tokens']:,} tokens): {ph['warmup']:,} steps of "
                  f"warm-up to lr {ph['lr']:g}, then {info.get('schedule', 'linear')} decay to zero at step "
                  f"{ph['total_steps']:,}" + (f" ({ph['date'][:10]})" if "date" in ph else "") + " |\n")
    return f"""# {c['name']}

A {kind} encoder, {c['n_layers']} layers × {c['d_model']} ({c['n_heads']} heads, FFN budget {c['ffn_total']}
per layer), {c['norm']}-LN, {c['attention']} attention, {c['position']} positions,
**{info['parameters']:,} parameters**, pre-trained with BERT's masked-language-model objective by
`macaron.train.pretrain`. Load it with `macaron.load("{c['name']}")` or `macaron.load(path)`.
{storage}
## Held-out result

{_heldout(final, info['eval_seqs'])}
![training curve]({CURVE})

Train loss, held-out loss and the context effect against tokens seen; the raw numbers are in [metrics.jsonl](metrics.jsonl) and
every fact of this card in [{FACTS}]({FACTS}).
{orders_section(orders)}
## Training

| | |
|---|---|
| tokens seen | {info['tokens']:,} ({info['epochs']:.2f} epochs of {info['train_sequences']:,} packed sequences) |
| optimizer steps | {info['steps']:,} |
| batch | {info['batch']} sequences × ≤ {info['seq_len']} tokens (gradient accumulation {info['accum']}, {info['world_size']} process(es)) |
| learning rate | {info['lr']:g} peak, AdamW (weight decay {info['weight_decay']}), {info['warmup']} warm-up steps, {info['schedule']} decay |
| dropout | {info['dropout']} |
| masking | {masking} |
| seed | {info['seed']} (data order and masks depend on the seed only, not on the model) |
{start}{lockstep}| wall time | {minutes:.1f} min of training ({info['tokens_per_s']:,.0f} tokens/s) |
| hardware | {info['hardware']}, {info['threads']} thread(s) per process{at_once}, {precision_words(info)} |
| date | {info['date']} |

Command:

```
{info['command']}
```

## Corpus

{corpus_table(info.get('stats') or {})}
These are small public-domain and freely licensed English texts read out of registry packages
(`python -m macaron.train.corpus`); a model trained on them is a research toy for looking at token
trajectories, not a general-purpose encoder.

## Configuration

| field | value |
|---|---|
{params}
"""  # noqa: E501  (the card's Markdown: a table row is one line)


def write(folder: Path, info: dict) -> None:
    """training.json, README.md and (where matplotlib is installed) the training curve."""
    folder = Path(folder)
    text = rendered(render, folder, info, _orders(folder))
    (folder / FACTS).write_text(json.dumps(info, indent=1) + "\n")
    (folder / "README.md").write_text(text)
    if (folder / "metrics.jsonl").is_file():
        training_curve(folder / "metrics.jsonl", folder / CURVE, info["config"]["name"],
                       info["final"].get("unigram_loss"), info.get("mask_rate", 0.15))


def _orders(folder: Path) -> dict | None:
    """The folder's measured orders if they are of its weights (a stale or damaged record is left out)."""
    from ..sources.loading import load
    from ..studies import orders  # and the claim measured on the trained ODE pair's Macaron (lab section 3e)

    try:
        return orders.read(folder, load(folder, device="cpu")) if (folder / orders.FILE).exists() else None
    except CheckpointError as e:
        print(f"{folder}: the card leaves the splitting orders out ({e})", file=sys.stderr)
        return None


KINDS = {"mlm": "a masked LM", "translation": "a translator"}  # a training.json's "task" (none: a masked LM's)


def trained_facts(folder: Path, task: str = "mlm") -> dict:
    """The training.json of a folder macaron.train wrote for `task`, for what rewrites its card: an error that names
    what is wrong (no such folder, no facts, the facts of another kind of model)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: no such folder")
    facts = read_facts(folder)
    if facts is None:
        raise CheckpointError(f"{folder}: no {FACTS}: not a model folder that macaron.train wrote")
    found = facts.get("task", "mlm")
    if found != task:
        raise CheckpointError(f"{folder / FACTS}: the facts of {KINDS.get(found, repr(found))}, not of {KINDS[task]}")
    return facts


def rendered(render, folder: Path, *facts) -> str:
    """A card's text from `render(*facts)`, before anything is written: an error naming the folder's facts where they
    lack a field the card reads (facts of an older version, a file edited by hand)."""
    try:
        return render(*facts)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise CheckpointError(f"{Path(folder) / FACTS}: a field the card reads is missing or wrong ({e!r})") from None


def update_evaluation(folder: Path, result: dict) -> None:
    """Replace the held-out numbers of a model folder (python -m macaron.train.evaluate --write)."""
    info = trained_facts(folder)
    info["final"] = result
    write(folder, info)


def rerender(argv, task: str, write) -> int:
    """The command that writes cards again from their facts: every folder's facts checked (`task`'s) before any card
    is written by `write(folder, facts)`; a refusal is one error line and exit status 2."""
    try:
        found = [(folder, trained_facts(folder, task)) for folder in map(Path, sys.argv[1:] if argv is None else argv)]
        for folder, facts in found:
            write(folder, facts)
            print(f"rendered {folder / 'README.md'}")
    except CheckpointError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv=None) -> int:
    return rerender(argv, "mlm", write)


if __name__ == "__main__":
    sys.exit(main())
