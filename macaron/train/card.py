"""The model card (README.md of a checkpoint folder) and its training-curve PNG."""
from __future__ import annotations

import json
import platform
from pathlib import Path

CURVE = "training_curve.png"


def read_stats(file: Path) -> dict:
    """The corpus builder's stats.json ({} when absent; an error naming the file when unreadable)."""
    from .data import DataError

    file = Path(file)
    if not file.is_file():
        return {}
    try:
        stats = json.loads(file.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"{file}: corpus statistics are not valid JSON ({e})") from None
    if not isinstance(stats, dict):
        raise DataError(f"{file}: corpus statistics should be a JSON object")
    return stats


def _words(value):
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, dict):
        for key in ("words", "n_words", "word_count", "train_words"):
            if isinstance(value.get(key), (int, float)):
                return int(value[key])
    return None


def sources(stats: dict) -> list[tuple[str, int | None, str]]:
    """(source, words, note) rows from stats.json, whatever of its common layouts it uses.

    The corpus builder writes {"sources": {name: about}, "per_source": {name: {split: {"words": n}}}}."""
    about = stats.get("sources") if isinstance(stats.get("sources"), dict) else {}
    per = stats.get("per_source")
    rows = []
    if isinstance(per, dict):
        for name, value in per.items():
            words = _words(value)
            if words is None and isinstance(value, dict):
                counted = [_words(v) for v in value.values() if isinstance(v, dict)]
                words = sum(w for w in counted if w is not None) if counted else None
            note = about.get(name, "")
            rows.append((str(name), words, note if isinstance(note, str) else ""))
        return rows
    found = stats.get("sources", stats.get("words_per_source"))
    if isinstance(found, dict):
        for name, value in found.items():
            note = ""
            if isinstance(value, dict):
                note = str(value.get("about") or value.get("license") or value.get("description") or "")
            rows.append((str(name), _words(value), note))
    elif isinstance(found, list):
        for item in found:
            if isinstance(item, dict):
                name = item.get("name") or item.get("source") or "?"
                note = str(item.get("about") or item.get("license") or item.get("description") or "")
                rows.append((str(name), _words(item), note))
    return rows


def total_words(stats: dict, rows) -> int | None:
    for key in ("words", "total_words", "n_words"):
        if isinstance(stats.get(key), (int, float)):
            return int(stats[key])
        if isinstance(stats.get(key), dict) and isinstance(stats[key].get("total"), (int, float)):
            return int(stats[key]["total"])
    counted = [w for _, w, _ in rows if w is not None]
    return sum(counted) if counted else None


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
    import os
    return f"CPU {cpu} ({os.cpu_count()} cores visible)"


def read_metrics(file: Path) -> tuple[list[dict], list[dict]]:
    train, evals = [], []
    for line in Path(file).read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        (evals if row.get("type") == "eval" else train).append(row)
    return train, evals


def training_curve(metrics_file: Path, png: Path, title: str = "") -> Path:
    """Train loss and held-out loss against tokens seen."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    train, evals = read_metrics(metrics_file)
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    if train:
        ax.plot([r["tokens"] for r in train], [r["loss"] for r in train], lw=1, alpha=0.7, label="train loss")
    if evals:
        ax.plot([r["tokens"] for r in evals], [r["loss"] for r in evals], "o-", ms=3, lw=1.5,
                label="held-out loss")
    ax.set_xlabel("tokens seen")
    ax.set_ylabel("MLM cross-entropy (nats)")
    ax.set_title(f"{title} — masked-LM pre-training" if title else "masked-LM pre-training")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png)
    plt.close(fig)
    return png


def _fmt(n) -> str:
    if n is None:
        return "?"
    return f"{n:,}" if isinstance(n, int) else f"{n:.4g}"


def render(info: dict) -> str:
    """Markdown model card from the run's facts (see pretrain.py for the keys)."""
    c = info["config"]
    final = info["final"]
    stats = info.get("stats") or {}
    rows = sources(stats)
    total = total_words(stats, rows)
    if rows:
        src = "\n".join(f"| {name} | {_fmt(words)} | {note} |" for name, words, note in rows)
        corpus = f"| source | words | note |\n|---|---:|---|\n{src}\n| **total** | **{_fmt(total)}** | |\n"
    else:
        corpus = "Corpus statistics (stats.json) were not available for this run.\n"
    minutes = info["wall_seconds"] / 60
    params = "\n".join(f"| `{k}` | `{v}` |" for k, v in c.items())
    kind = {"transformer": "Transformer (Lie–Trotter splitting: diffusion then convection)",
            "macaron": "Macaron (Strang–Marchuk splitting: ½ FFN, attention, ½ FFN)",
            "att-ffn-att": "Att-FFN-Att (½ attention, FFN, ½ attention)"}.get(c["scheme"], c["scheme"])
    return f"""# {c['name']}

A {kind} encoder, {c['n_layers']} layers × {c['d_model']} ({c['n_heads']} heads, FFN budget {c['ffn_total']}
per layer), {c['norm']}-LN, {c['attention']} attention, {c['position']} positions,
**{info['parameters']:,} parameters**, pre-trained with BERT's masked-language-model objective by
`macaron.train.pretrain`. Load it with `macaron.load("{c['name']}")` or `macaron.load(path)`.

## Held-out result

| metric | value |
|---|---|
| MLM loss (nats / masked token) | {final['loss']:.4f} |
| masked-token accuracy | {final['accuracy']:.4f} |
| perplexity | {final['perplexity']:.2f} |

On a fixed validation set of {info['eval_seqs']} packed sequences ({final['targets']:,} masked targets,
masking seed fixed), identical for every model trained by this script, so these numbers compare across
models trained on the same corpus and tokenizer.

![training curve]({CURVE})

Train loss and held-out loss against tokens seen; the raw numbers are in [metrics.jsonl](metrics.jsonl).

## Training

| | |
|---|---|
| tokens seen | {info['tokens']:,} ({info['epochs']:.2f} epochs of {info['train_sequences']:,} packed sequences) |
| optimizer steps | {info['steps']:,} |
| batch | {info['batch']} sequences × ≤ {info['seq_len']} tokens (gradient accumulation {info['accum']}, {info['world_size']} process(es)) |
| learning rate | {info['lr']:g} peak, AdamW (weight decay {info['weight_decay']}), {info['warmup']} warm-up steps, {info['schedule']} decay |
| dropout | {info['dropout']} |
| masking | 15% of tokens ([CLS]/[SEP]/[PAD] never), 80% [MASK] / 10% random / 10% kept, re-drawn each visit |
| seed | {info['seed']} (data order and masks depend on the seed only, not on the model) |
| wall time | {minutes:.1f} min of training ({info['tokens_per_s']:,.0f} tokens/s) |
| hardware | {info['hardware']}, {info['threads']} thread(s) per process |
| date | {info['date']} |

Command:

```
{info['command']}
```

## Corpus

{corpus}
These are small public-domain and freely licensed English texts; a model trained on a few million
tokens on a CPU is a research toy for looking at token trajectories, not a general-purpose encoder.

## Configuration

| field | value |
|---|---|
{params}
"""
