"""Ship a run's progress: copy a milestone of every model of a run into the shipped model folders.

    python -m macaron.train.publish ~/.cache/macaron/runs/mini              (the newest milestone)
    python -m macaron.train.publish ~/.cache/macaron/runs/mini --step 4000  (the milestone of that step)

    python -m macaron.train.publish ~/.cache/macaron/runs/mini --with-milestones   (a finished pair)
    python -m macaron.train.publish RUN --race pretrained/race/seed-0 [--ship NAME]  (a race run: curves only)
    python -m macaron.train.publish RUN --race pretrained/race/translation/seed-0 --ship NAME --presets TEST.es
                                                      (translators: their test translations too; presets shipped)

A milestone (`pretrain --keep-every`) is a complete model folder: float16 weights, config, tokenizer,
metrics so far, training.json and a card that says how far the run is. Publishing writes it to the
folder `<out>/<name>`. Nothing is lost unless asked for in so many words: a folder that exists is replaced
only with `--replace`, and a run that has not finished its budget (its milestone's training.json: steps
before budget_steps) is published only with `--unfinished`, so that a long run can be committed as it goes
and a later session can warm-start from what was committed (`pretrain --warm-start`). Either refusal comes
before anything is written. `--with-milestones` also ships two
stages of learning inside it, `milestones/plateau` (the last evaluation whose context effect is below
0.05 nats) and `milestones/rise` (the first with at least half the published context effect), for
`macaron.sources.milestones` and `macaron.load(name, at=tokens)`.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from ..formats.folder import FACTS, read_json, read_metrics
from ..sources.milestones import milestones as milestones_of
from ..sources.milestones import stages
from ..sources.shipped import in_training

ROOT = Path(__file__).resolve().parents[2]


def milestones(run_dir: Path, name: str) -> list[Path]:
    """A model's milestone folders in training order."""
    return sorted(p for p in (Path(run_dir) / name / "milestones").glob("step-*") if (p / FACTS).is_file())


def stages_of_learning(milestone: Path) -> dict[str, int]:
    """{'plateau': step, 'rise': step} from the evaluations up to a milestone and its own final context effect
    (macaron.sources.milestones.stages)."""
    evals = [r for r in read_metrics(milestone / "metrics.jsonl") if r.get("type") == "eval" and "context_effect" in r]
    return stages(evals, read_json(milestone / FACTS)["final"]["context_effect"])


class Refused(Exception):
    """Publishing would lose something (replace a folder, or ship a run before its end) without being told to."""


def check_finished(folders: list[Path], unfinished: bool):
    """Refuse model folders of a run that has not reached its budget (training.json: steps < budget_steps), unless
    `unfinished`."""
    if unfinished:
        return
    early = [f for f in folders if in_training(f)]
    if early:
        facts = read_json(early[0] / FACTS)
        raise Refused(f"{', '.join(map(str, early))}: step {facts['steps']:,} of its {facts['budget_steps']:,}: the "
                      f"run has not finished its budget; pass --unfinished (make: UNFINISHED=1) to publish it anyway")


def check_new(targets: list[Path], replace: bool):
    """Refuse to write over folders that exist, unless `replace`."""
    there = [t for t in targets if t.exists()]
    if there and not replace:
        raise Refused(f"{', '.join(map(str, there))}: exists; publishing would replace it: pass --replace "
                      f"(make: REPLACE=1) to replace it (git checkout pretrained/ brings the shipped folders back)")


def _copy(source: Path, target: Path):
    """Replace target by a copy of source, never leaving half a folder behind."""
    tmp = target.with_name(f".{target.name}.publishing")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp)
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)


def publish(run_dir: Path, out: Path, step: int | None = None, with_milestones: bool = False, *,
            replace: bool = False, unfinished: bool = False) -> list[Path]:
    """Copy the chosen milestone of every model of the run to out/<name>; returns the folders written. Everything
    is found and checked first: a missing milestone or stage, a milestone before the run's end (unless
    `unfinished`) or a folder out/<name> that exists (unless `replace`) leaves every shipped folder as it was."""
    run_dir, out = Path(run_dir), Path(out)
    names = sorted(p.parent.name for p in run_dir.glob("*/milestones"))
    if not names:
        raise FileNotFoundError(f"{run_dir}: no milestones (train with --keep-every)")
    plan = {}  # name -> (milestone, {stage label: its milestone})
    for name in names:
        kept = milestones(run_dir, name)
        chosen = kept[-1] if step is None else next((k for k in kept if k.name == f"step-{step:06d}"), None)
        if chosen is None:
            raise FileNotFoundError(f"{run_dir / name / 'milestones'}: no milestone of step {step}")
        stages = {label: run_dir / name / "milestones" / f"step-{at:06d}"
                  for label, at in (stages_of_learning(chosen).items() if with_milestones else ())}
        for label, kept_at in stages.items():
            if not (kept_at / FACTS).is_file():
                raise FileNotFoundError(f"{kept_at}: the {label} milestone was not kept (train with --keep-every "
                                        f"equal to --eval-every)")
        plan[name] = chosen, stages
    check_finished([chosen for chosen, _ in plan.values()], unfinished)
    check_new([out / name for name in plan], replace)
    for name, (chosen, stages) in plan.items():
        _copy(chosen, out / name)
        for label, kept_at in stages.items():
            (out / name / "milestones").mkdir(exist_ok=True)
            _copy(kept_at, out / name / "milestones" / label)
    return [out / name for name in names]


PRESETS, PRESET_WORDS = 8, 5  # a shipped translator's preset sentences: the first 8 of its test set with 5+ words
KEPT = (FACTS, "metrics.jsonl", "test.hyp.en")  # what a race run keeps (a translator's test translations too)


def presets(test_source: Path, n: int = PRESETS) -> list[str]:
    """The first n sentences of a test set's source with at least PRESET_WORDS words, in file order (none chosen by
    how a model translates them)."""
    lines = Path(test_source).read_text(encoding="utf-8").splitlines()
    return [line for line in lines if len(line.split()) >= PRESET_WORDS][:n]


def publish_race(models: Path, out: Path, ship: tuple[str, ...] = (), shipped: Path = ROOT / "pretrained", *,
                 replace: bool = False, unfinished: bool = False, test_source: Path | None = None) -> list[Path]:
    """A race run's finished models (`pretrain --out`): each one's curve and facts (a translator's test translations
    too) to out/<name> (no weights: macaron.studies.zoo reads these), and the models named in `ship` whole to
    shipped/<name>, as the explorer's models, with `presets.txt` from `test_source` for a translator. Checked first:
    models before their budget (unless `unfinished`), and folders that exist (unless `replace`: a race model shipped as
    macaron-mini would replace the shipped 40 M-token one)."""
    folders = sorted(p.parent for p in Path(models).glob(f"*/{FACTS}"))
    if not folders:
        raise FileNotFoundError(f"{models}: no finished model folders (a race run writes them at its end)")
    unknown = set(ship) - {f.name for f in folders}
    if unknown:
        raise FileNotFoundError(f"{models}: no model {sorted(unknown)} to ship")
    check_finished(folders, unfinished)
    check_new([out / f.name for f in folders] + [shipped / name for name in sorted(ship)], replace)
    chosen = presets(test_source) if test_source is not None else []
    if test_source is not None and not chosen:
        raise Refused(f"{test_source}: no sentence of {PRESET_WORDS} words or more for the presets")
    written = []
    for folder in folders:
        (out / folder.name).mkdir(parents=True, exist_ok=True)
        for name in KEPT:
            if name != "test.hyp.en" or (folder / name).is_file():  # a translator's translations; the rest always
                shutil.copyfile(folder / name, out / folder.name / name)
        written.append(out / folder.name)
        if folder.name in ship:
            _copy(folder, shipped / folder.name)
            if chosen:
                (shipped / folder.name / "presets.txt").write_text("".join(line + "\n" for line in chosen),
                                                                   encoding="utf-8")
            written.append(shipped / folder.name)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m macaron.train.publish", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir")
    p.add_argument("--out", default=str(ROOT / "pretrained"))
    p.add_argument("--step", type=int, default=None, help="the milestone of this step (default: the newest)")
    p.add_argument("--with-milestones", action="store_true", help="ship the plateau and rise milestones inside it")
    p.add_argument("--race", metavar="DIR", default=None,
                   help="a race run (docs/results/races.md): copy each finished model's curve and facts to DIR/<name>")
    p.add_argument("--ship", default="", help="with --race: comma list of models also shipped whole to --out")
    p.add_argument("--presets", metavar="TEST_SOURCE", default=None,
                   help="with --ship: a translator's test set source; its first sentences become the shipped "
                        "folder's presets.txt (the Translate page's presets)")
    p.add_argument("--replace", action="store_true", help="replace folders that exist (else publishing refuses)")
    p.add_argument("--unfinished", action="store_true",
                   help="publish a run that has not reached its budget (else publishing refuses)")
    args = p.parse_args(argv)
    told = dict(replace=args.replace, unfinished=args.unfinished)
    try:
        if args.race:
            ship = tuple(n for n in args.ship.split(",") if n)
            test_source = Path(args.presets) if args.presets else None
            for folder in publish_race(Path(args.run_dir) / "models", Path(args.race), ship, Path(args.out),
                                       test_source=test_source, **told):
                print(f"published {folder}")
            return 0
        for folder in publish(Path(args.run_dir), Path(args.out), args.step, args.with_milestones, **told):
            print(f"published {folder}: " + "; ".join(map(str, milestones_of(folder))))
    except (FileNotFoundError, Refused) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
