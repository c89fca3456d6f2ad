"""A translator's model card and training curve, written from the facts macaron.train.translate records.

    python -m macaron.train.translator_card FOLDER...     the cards rendered again from their training.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..formats.folder import FACTS
from ..schemes import get_scheme
from .card import CURVE, curve_figure, precision_words, rendered, rerender, trained_facts


def direction(config: dict) -> str:
    """"es → en": the languages' codes as the data folder named them (the card's and the curve's words)."""
    return f"{config.get('source_lang', '?')} → {config.get('target_lang', '?')}"


def curve(metrics_file: Path, png: Path, title: str = "", pair: str = "") -> Path | None:
    """Train and dev loss, and dev BLEU where measured, against target tokens seen (None without matplotlib)."""
    drawn = curve_figure(metrics_file, "dev_bleu", ratios=False)
    if drawn is None:
        return None
    plt, fig, axes, train, evals, bleus = drawn
    ax = axes[0, 0]
    ax.plot([r["tokens"] / 1e6 for r in train], [r["loss"] for r in train], lw=1, alpha=0.6,
            label="train loss (label-smoothed, ε 0.1)")
    ax.plot([r["tokens"] / 1e6 for r in evals], [r["loss"] for r in evals], "o-", ms=3, lw=1.5,
            label="dev loss (no smoothing)")
    ax.set_ylabel("cross-entropy (nats / target token)")
    ax.set_title(" — ".join(t for t in (title, pair) if t))
    ax.legend()
    if bleus:
        ax = axes[1, 0]
        ax.plot([r["tokens"] / 1e6 for r in bleus], [r["dev_bleu"] for r in bleus], "o-", ms=3, lw=1.5,
                color="#0072B2")
        ax.set_ylabel(f"dev BLEU (greedy, {bleus[-1].get('dev_bleu_sentences', '?')} sentences)")
    axes[-1, 0].set_xlabel("target tokens seen (millions)")
    for row in axes:
        row[0].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return Path(png)


def render(info: dict) -> str:
    """Markdown card from the facts (translate.TranslatorOutput.facts)."""
    c, final = info["config"], info["final"]
    enc, dec = c["encoder"], c["decoder"]
    scheme = get_scheme(enc["scheme"])
    together = [n for n in info.get("trained_with", []) if n != c["name"]]
    best = info.get("best") or {}
    if "bleu" in final:
        result = (f"| test BLEU | **{final['bleu']:.2f}** |\n| test chrF | {final['chrf']:.2f} |\n"
                  f"| dev loss (nats / target token) | {final['loss']:.4f} |\n\n"
                  f"The {final['sentences']:,} test pairs translated by beam search (beam {final['beam']}, length "
                  f"penalty {final['lenpen']:g}, the paper's IWSLT14 setting), scored by sacreBLEU against the "
                  f"references as Tatoeba has them: `{final['bleu_signature']}`, `{final['chrf_signature']}`. The "
                  f"weights are those of the lowest dev loss, at step {best.get('step', 0):,} of {info['steps']:,}.")
    else:
        result = (f"| dev loss (nats / target token) | {final['loss']:.4f} |\n| dev next-word accuracy | "
                  f"{final['accuracy']:.1%} |\n\nAt step {final.get('step', info['steps']):,}; not yet scored on test.")
    budget = info.get("budget_steps")
    progress = (f"**Training in progress:** step {info['steps']:,} of {budget:,}.\n\n"
                if budget and info["steps"] < budget else "")
    stats = info.get("stats") or {}
    sizes = ", ".join(f"{k} {v['pairs']:,} pairs" for k, v in stats.get("splits", {}).items())
    origin = stats.get("source", "a folder of sentence pairs")
    return f"""# {c['name']}

A translator ({direction(c)}): an encoder–decoder whose layers are {scheme.layer}s ({scheme.title}; the decoder adds
cross-attention after each self-attention), {enc['n_layers']} + {dec['n_layers']} layers × {enc['d_model']}
({enc['n_heads']} heads, FFN budget {enc['ffn_total']} a layer), {enc['norm']}-LN, {enc['position']} positions, one
token table for source, target and head, **{info['parameters']:,} parameters**, trained by `macaron.train.translate`.
Load it with `macaron.load(path)`; `model.translate(sentence)`.

{progress}## Result

| metric | value |
|---|---|
{result}

![training curve]({CURVE})

Every fact of this card is in [{FACTS}]({FACTS}); the curve's numbers in [metrics.jsonl](metrics.jsonl).

## Training

| | |
|---|---|
| target tokens seen | {info['tokens']:,} ({info['epochs']:.2f} epochs) in {info['steps']:,} steps |
| batch | sentences of like length, ≤ {info['max_tokens']:,} padded tokens |
| objective | cross-entropy with label smoothing {info['label_smoothing']} |
| learning rate | {info['lr']:g} peak after {info['warmup']} warm-up steps, then ∝ 1/√step; AdamW (weight decay {info['weight_decay']}) |
| dropout | {info['dropout']} |
| seed | {info['seed']} (the batches' order depends on the seed only, not on the model) |
| trained in lockstep with | {', '.join(together) or '—'} |
| wall time | {info['wall_seconds'] / 60:.1f} min of training ({info['tokens_per_s']:,.0f} target tokens/s for the lockstep) |
| hardware | {info['hardware']}, {info['threads']} thread(s), {precision_words(info)} |
| date | {info['date']} |

```
{info['command']}
```

## Data

Tatoeba's sentence pairs ({direction(c)}) as manythings.org/anki exports them: {origin} (Tatoeba's sentences are
CC-BY 2.0 France; attribution: www.manythings.org/anki and tatoeba.org), split by `macaron.train.tatoeba`: {sizes}; the dev and
test pairs are whole groups of pairs that share a sentence, so no dev or test sentence occurs in training on either
side. A joint Unigram vocabulary of {enc['vocab_size']:,} pieces of the training pairs. A research toy for
looking at two particle systems, not a general-purpose translator.
"""  # noqa: E501


def write(folder: Path, info: dict) -> None:
    """training.json, README.md and (where matplotlib is installed) the training curve."""
    folder = Path(folder)
    text = rendered(render, folder, info)
    (folder / FACTS).write_text(json.dumps(info, indent=1) + "\n")
    (folder / "README.md").write_text(text, encoding="utf-8")
    if (folder / "metrics.jsonl").is_file():
        curve(folder / "metrics.jsonl", folder / CURVE, info["config"]["name"], direction(info["config"]))


def translator_facts(folder: Path) -> dict:
    """A translator's training.json, as macaron.train.translate writes it: an error that names what is wrong (no such
    folder, no facts, a masked LM's)."""
    return trained_facts(folder, "translation")


def main(argv=None) -> int:
    return rerender(argv, "translation", write)


if __name__ == "__main__":
    sys.exit(main())
