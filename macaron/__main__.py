"""Command line:

    python -m macaron trace --model NAME_OR_PATH "a sentence" [--json FILE]
    python -m macaron dynamics --model A [--model B] [--sentences FILE] --out DIR
    python -m macaron lesson --out lesson.html [--model T --model M] [--learning NAME] [--translator NAME]
                                               [--present]
    python -m macaron list                     shipped models, then those in the caches (imported, the Hub's)
    python -m macaron fetch NAME               paper-macaron-bert-base (the paper's release, converted once), or a
                                               Hugging Face Hub id (bert-base-uncased, owner/name) into the Hub cache
    python -m macaron import-fairseq CHECKPOINT --dict DICT [--bpe-codes CODES] [--name NAME] [--out FOLDER]
                                               the paper's own models (BERT and translation; --source-dict and
                                               --target-dict for a translation model's separate dictionaries), into
                                               the models cache, where list and the explorer find them (or FOLDER)
    python -m macaron bleu MODEL --data FOLDER [--beam N] [--lenpen A] [--max-sentences N] [--reference FILE]
                                               the paper's BLEU rows: a translation model on fairseq's binarized
                                               test set, with the paper's settings, scored its way and sacrebleu's
    python -m macaron zoo [--json|--markdown]  the race of splitting schemes, from the stored curves
    python -m macaron zoo --path [A,B]         one gap along training (default: the Transformer − the control)
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np

from .formats.folder import CheckpointError
from .network.reading import InputError
from .sources import locate as sources
from .sources.loading import load
from .sources.shipped import available
from .studies import analysis


def table(model, traj) -> str:
    masks = [i for i, t in enumerate(traj.tokens) if t == "[MASK]"] if not traj.causal else [traj.guess_at]
    guesses = {i: model.logit_lens(traj, i, k=3) for i in masks if i is not None and model.has_head}
    norms = np.linalg.norm(traj.displacements, axis=-1).mean(axis=1)
    width = max(len(label) for label in traj.labels)
    lines = [f"{traj.meta['model']}: {len(traj.tokens)} tokens, scheme {traj.meta['scheme']}, "
             f"norm {traj.meta['norm']}, device {traj.meta['device']}"]
    if traj.truncated:
        lines.append(f"note: {traj.truncated} tokens beyond the model's limit were dropped")
    lines.append(f"{'sub-step':<{width}}  {'mean |Δx|':>9}" + (
        "  top guesses for " + analysis.guess_said(traj) if traj.causal and guesses else
        "  top [MASK] guesses" if guesses else ""))
    for k, label in enumerate(traj.labels):
        move = "" if k == 0 else f"{norms[k - 1]:9.3f}"
        guess = "  ".join(" ".join(f"{tok}:{p:.2f}" for tok, p in guesses[i][k]) for i in guesses)
        lines.append(f"{label:<{width}}  {move:>9}  {guess}".rstrip())
    return "\n".join(lines)


def write_csv(path: Path, rows: list[dict]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else [])
        w.writeheader()
        w.writerows(rows)


def _finite(x):
    """JSON has no NaN: write null."""
    if isinstance(x, float) and not np.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def dynamics(args) -> int:
    """Every measure of macaron.studies.dynamics for each model over a sentence set, as CSV and JSON, and the
    figures as one HTML report and one PNG each."""
    import torch

    from . import sentences
    from .plot import dynamics as P
    from .studies import dynamics as D

    if str(args.device).startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {args.device}: this machine has no CUDA GPU that torch can use")
    texts = sentences.read(args.sentences)
    if not texts:
        raise InputError(f"{args.sentences}: no sentences")
    models = [load(m, args.device) for m in args.model]
    names = [m.config.name or Path(path).name for m, path in zip(models, args.model)]
    opts = dict(max_tokens=args.max_tokens, batch_size=args.batch_size, progress=not args.quiet)
    n_exp = len(texts) if args.experiments is None else min(args.experiments, len(texts))
    sets, extended, results = [], [], []
    for model in models:
        sets.append(D.measure_set(model, texts, **opts))
        extended.append(D.measure_set(model, texts, program=D.extended(model, args.extend), **opts))
        results.append(D.run_experiments(model, texts[:n_exp], **opts) if n_exp else [])
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "measures.csv", [r for s in sets for r in s.rows()])
    write_csv(out / "extended.csv", [r for s in extended for r in s.rows()])
    for kind in ("role", "token"):
        write_csv(out / f"leaders_by_{kind}.csv", [dict(model=n, **r.to_dict()) for n, s in zip(names, sets)
                                                   for r in getattr(s.leaders, f"by_{kind}")])
    write_csv(out / "experiments.csv", [dict(model=n, **r.to_dict()) for n, rs in zip(names, results) for r in rs])
    summary = dict(sentences=str(args.sentences), n_sentences=len(texts), n_experiment_sentences=n_exp,
                   extend=args.extend, models={n: dict(measures=s.to_dict(), extended=e.to_dict(),
                                                        experiments=[r.to_dict() for r in rs])
                                               for n, s, e, rs in zip(names, sets, extended, results)})
    (out / "dynamics.json").write_text(json.dumps(_finite(summary), ensure_ascii=False, indent=1))

    figures = {m: P.over_depth(sets, m, names) for m in ("clusters", "rank_one", "energy", "step")}
    figures["cosines"] = P.cosine_histograms(sets, names)
    figures.update({m: P.attention(sets, m, names) for m in ("entropy", "ds_gap", "attention_rank")})
    figures["leaders"] = P.leaders(sets, names)
    if n_exp:
        figures["experiments"] = P.experiments(results, names, [m.config.scheme for m in models])
    depth = max(len(m.layers) for m in models)
    figures.update({f"extended:{m}": P.over_depth(extended, m, names, trained_depth=depth)
                    for m in ("clusters", "energy")})
    (out / "dynamics.html").write_text(P.report_html(
        figures, "Macaron Explorer · dynamics", f"{', '.join(names)} on {len(texts)} sentences ({args.sentences}); "
        f"experiments on {n_exp}; last layer repeated {args.extend} more times."), encoding="utf-8")
    for key, fig in figures.items():
        P.to_png(fig, out / f"{key.replace(':', '_')}.png")
    print(f"{len(texts)} sentences · {', '.join(names)} · written to {out}/: measures.csv, extended.csv, "
          f"leaders_by_role.csv, leaders_by_token.csv, experiments.csv, dynamics.json, dynamics.html, "
          f"{len(figures)} PNG figures")
    return 0


def lesson(args) -> int:
    """The guided lesson as one HTML file: built whole in memory, then written beside the target and renamed,
    so a failure leaves no file (and an existing one as it was)."""
    import torch

    from .plot import lesson as L

    if str(args.device).startswith("cuda") and not torch.cuda.is_available():
        raise InputError(f"--device {args.device}: this machine has no CUDA GPU that torch can use")
    out = args.out
    if out.is_dir() or not out.parent.is_dir():  # before the work, not after
        L.write(out, "")  # raises the message (writes nothing)
    text = L.lesson_html(args.model, args.learning, translator=args.translator, present=args.present,
                         device=args.device)
    L.write(out, text)
    print(f"lesson written to {out} ({len(text.encode()) / 1e6:.1f} MB): open it in any browser, offline")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m macaron", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    tr = sub.add_parser("trace", help="trace a sentence sub-step by sub-step")
    tr.add_argument("text")
    tr.add_argument("--model", default=None, help=f"shipped name {available()}, a folder, an imported release or a "
                                                  f"Hugging Face Hub id (the Hub cache first, else downloaded)")
    tr.add_argument("--json", type=Path, help="write the trajectory to this JSON file")
    dy = sub.add_parser("dynamics", help="particle-system measures and ODE experiments over a sentence set")
    dy.add_argument("--model", action="append", required=True,
                    help="shipped name, folder or Hub id; repeat for a second")
    dy.add_argument("--sentences", default="all", help="a shipped set (all, everyday, technical) or a text file, "
                                                       "one sentence a line (default: all)")
    dy.add_argument("--out", type=Path, required=True, help="folder for the CSV, JSON, HTML and PNG files")
    dy.add_argument("--device", default=None, help="cpu or cuda (default: cuda when there is one)")
    dy.add_argument("--batch-size", type=int, default=64)
    dy.add_argument("--max-tokens", type=int, default=None, help="cut longer sentences ([SEP] kept last)")
    dy.add_argument("--experiments", type=int, default=None,
                    help="run the ODE experiments on the first N sentences (default: all; 0: none)")
    dy.add_argument("--extend", type=int, default=12, help="repeat the last layer this many more times (default 12)")
    dy.add_argument("--quiet", action="store_true", help="no progress bars")
    le = sub.add_parser("lesson",
                        help="the guided lesson as one self-contained HTML file (offline; prints as a handout)")
    le.add_argument("--out", type=Path, required=True, help="the HTML file to write (replaced only once complete)")
    le.add_argument("--model", action="append", default=None,
                    help="the Transformer, then (repeat) the Macaron model: shipped names or folders "
                         "(default: the shipped default pair)")
    le.add_argument("--learning", default=None, help="the model whose stages of training step 6 shows (default: "
                                                     "one that ships them)")
    le.add_argument("--translator", default=None, help="the translation model step 7 shows, a shipped name or a "
                                                       "folder (default: macaron-es-en)")
    le.add_argument("--present", action="store_true", help="presenter-sized fonts, for a projector")
    le.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    sub.add_parser("list", help="list the shipped models, then the imported and Hub-cached ones that load")
    fe = sub.add_parser("fetch", help="download a model: the paper's release (converted once) or a Hub id")
    fe.add_argument("name", help="paper-macaron-bert-base, paper-macaron-iwslt14-de-en, "
                                 "paper-macaron-wmt14-en-de-base, paper-macaron-wmt14-en-de-big, or a Hugging Face "
                                 "Hub id such as bert-base-uncased")
    im = sub.add_parser("import-fairseq", help="import one of the paper's fairseq 0.6 checkpoints as a model folder")
    im.add_argument("checkpoint", type=Path, help="the .pt file (read as data only: torch's weights-only unpickler)")
    im.add_argument("--dict", type=Path, default=None,
                    help="its dict.txt (a BERT model's BertDictionary; a translation model's joined dictionary)")
    im.add_argument("--source-dict", type=Path, default=None,
                    help="a translation model's source dictionary (dict.de.txt), when not joined")
    im.add_argument("--target-dict", type=Path, default=None, help="... and its target dictionary (dict.en.txt)")
    im.add_argument("--bpe-codes", type=Path, default=None,
                    help="its BPE codes (fastBPE's or subword-nmt's); without them the reading is approximate")
    im.add_argument("--out", type=Path, default=None,
                    help="the model folder to write (default: the models cache's folder of its name, where fetch "
                         "writes and list and the explorer look)")
    im.add_argument("--name", default=None,
                    help="the model's name (default: --out's folder's, else the checkpoint file's without .pt)")
    bl = sub.add_parser("bleu", help="the paper's BLEU rows: translate fairseq's binarized test set and score it")
    bl.add_argument("model", help="a translation model: an imported release's name or folder (as trace's --model)")
    bl.add_argument("--data", type=Path, default=None,
                    help="the test set's folder, as the release's archives hold it: test.SRC-TGT.LANG.bin/.idx and "
                         "dict.LANG.txt (default, for a release fetch knows: the test set it fetched with it)")
    bl.add_argument("--source-lang", default=None, help="default: the model's (else the file names')")
    bl.add_argument("--target-lang", default=None, help="default: the model's (else the file names')")
    bl.add_argument("--split", default="test", help="which split of the folder (default: test)")
    bl.add_argument("--beam", type=int, default=None, help="default: the paper's (IWSLT14 5, WMT14 4)")
    bl.add_argument("--lenpen", type=float, default=None, help="default: the paper's (IWSLT14 1.0, WMT14 0.6)")
    bl.add_argument("--max-sentences", type=int, default=None, help="translate and score only the first N")
    bl.add_argument("--reference", type=Path, default=None,
                    help="raw (detokenised) references, one a line, for sacrebleu's standard score (default: the "
                         "binarized target, detokenised)")
    bl.add_argument("--device", default=None, help="cpu or cuda (default: cuda when there is one)")
    bl.add_argument("--quiet", action="store_true", help="no progress bar")
    zo = sub.add_parser("zoo", help="the race of splitting schemes: runs, seed spread and paired differences")
    zo.add_argument("--json", action="store_true", help='print {"runs": [...], "differences": [...]}')
    zo.add_argument("--markdown", action="store_true", help="the races page's tables of runs and differences")
    zo.add_argument("--root", type=Path, default=None, help="the race's folder (default pretrained/race)")
    zo.add_argument("--path", nargs="?", const="lie-trotter,lie-trotter-halves", default=None, metavar="A,B",
                    help="the gap A − B at every evaluation and aligned at the plateau exits (default: the Transformer "
                         "and the control); with --json as JSON")
    args = parser.parse_args(argv)
    if args.command == "list":
        return listing()
    try:  # bad input (a model, a file, a sentence) is one line for the person who typed it
        return {"lesson": lesson, "dynamics": dynamics, "zoo": zoo, "fetch": fetch, "import-fairseq": import_fairseq,
                "bleu": bleu}.get(args.command, trace)(args)
    except (CheckpointError, InputError, OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def listing() -> int:
    print("\n".join(available()) or "no shipped models in pretrained/")
    for name, folder in sources.cached().items():
        print(f"{name}  ({folder})")
    return 0


def fetch(args) -> int:
    """The paper's release or a Hub model onto this machine, with a progress bar (stderr)."""
    if not args.name.strip() or Path(args.name).expanduser().is_file():
        raise InputError(f"{args.name!r}: not a model's name; fetch takes a release's name or a Hub id (python -m "
                         f"macaron fetch --help); a checkpoint file is imported by python -m macaron import-fairseq")
    sources.fetch(args.name)
    return 0


def zoo(args) -> int:
    from .schemes import get_scheme
    from .studies import translation_race as bleu_race
    from .studies import zoo as race

    stored = race.runs(args.root, task=None)  # the folder read once: the masked LM's runs, then the translators'
    runs, translators = [r for r in stored if r.task == "mlm"], [r for r in stored if r.task == "translation"]
    if args.path:
        a, _, b = args.path.partition(",")
        found = race.paths(runs, get_scheme(a).name, get_scheme(b).name)
        print(json.dumps(found, indent=1) if args.json else race.path_report(found))
        return 0
    if args.json:
        print(json.dumps({"runs": [r.summary() for r in [*runs, *translators]], "differences": race.differences(runs),
                          "translation": bleu_race.differences(translators, args.root)}, indent=1))
    else:
        table = "\n\n" + bleu_race.markdown(translators, args.root) if translators else ""
        print((race.markdown(runs) if args.markdown else race.report(runs)) + table)
    return 0


def import_fairseq(args) -> int:
    from .formats.fairseq_import import import_fairseq as convert

    if args.checkpoint.is_dir():
        raise CheckpointError(f"{args.checkpoint}: a folder; give the fairseq checkpoint file (.pt) itself"
                              + (" (this one is a model folder already: open it as it is)"
                                 if (args.checkpoint / "config.json").is_file() else ""))
    out = convert(args.checkpoint, args.dict, args.bpe_codes, args.out or imported_folder(args), args.name,
                  source_dict=args.source_dict, target_dict=args.target_dict)
    model = load(out, "cpu")
    c = model.config
    systems = [c.encoder, c.decoder] if model.kind == "translator" else [c]
    what = " and ".join(f"{s.n_layers} layers × {s.d_model}, {s.vocab_size:,} tokens" for s in systems)
    kind = f"{c.source_lang} → {c.target_lang}, scheme {c.encoder.scheme}" if len(systems) == 2 else \
        f"scheme {c.scheme}"
    print(f"{out}: {c.name}, {kind}, {what}" + ("" if args.bpe_codes else "; reading approximate (no --bpe-codes)")
          + f"; see {out / 'README.md'}")
    return 0


def imported_folder(args) -> Path:
    """Where an import without --out goes: the models cache (macaron.sources.releases.imported_dir, where fetch writes
    and list and the explorer look), under --name or the checkpoint file's name; a model there already is kept (two
    releases' checkpoints share a file name)."""
    from .sources.releases import imported_dir

    name = args.name or args.checkpoint.stem
    if name in ("", ".", "..") or Path(name).name != name:
        raise ValueError(f"--name {name!r}: a model's name is one folder's name, without '/'")
    folder = imported_dir() / name
    if folder.exists():
        raise CheckpointError(f"{folder}: a model named {name} is imported already; give another --name, or delete "
                              f"the folder to import it again")
    return folder


def bleu(args) -> int:
    """The paper's BLEU rows: the model on a binarized test set, scored its way and
    sacrebleu's (macaron.studies.bleu)."""
    from .sources.releases import release_test_set
    from .studies import bleu as B

    if args.data is None:  # a fetched release brought its test set
        args.data = release_test_set(args.model)
        if args.data is None:
            raise CheckpointError(f"{args.model}: give the test set's folder with --data (only a release fetched "
                                  f"with `python -m macaron fetch NAME` brings its own; {B.OWN_TEST_SET})")
    B.check_folder(args.data)  # before the model's load, which can take a while
    folder = sources.locate(args.model)
    model = load(folder, args.device)
    B.require_translation(model)
    c = model.config
    data = B.read_set(args.data, args.source_lang or c.source_lang, args.target_lang or c.target_lang, args.split)
    scores = B.evaluate(model, data, args.beam, args.lenpen, args.max_sentences, B.imported_arch(folder),
                        args.reference, progress=not args.quiet)
    print(B.report(scores, c.name or folder.name))
    return 0


def trace(args) -> int:
    model = load(args.model or (available() or ["(none shipped)"])[0])
    if model.kind == "translator":  # an encoder–decoder: both systems, and the translation
        result = model.translate(args.text)
        print(f"{table(model.encoder, result.source)}\n\n{table(model.decoder, result.target)}\n\n"
              f"translation: {result.text}")
        doc = dict(source=result.source.to_dict(), target=result.target.to_dict(), target_ids=result.target_ids,
                   text=result.text)
    else:
        traj = model.trace(args.text)
        print(table(model, traj))
        doc = traj.to_dict()
    if args.json:
        args.json.write_text(json.dumps(doc, ensure_ascii=False))
        print(f"trajectory written to {args.json}")
    return 0

if __name__ == "__main__":
    sys.exit(main())
