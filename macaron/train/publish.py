"""Ship a run's progress: copy a milestone of every model of a run into the shipped model folders.

    python -m macaron.train.publish ~/.cache/macaron/runs/mini              (the newest milestone)
    python -m macaron.train.publish ~/.cache/macaron/runs/mini --step 4000  (the milestone of that step)

A milestone (`pretrain --keep-every`) is a complete model folder: float16 weights, config, tokenizer,
metrics so far, training.json and a card that says how far the run is. Publishing replaces the
folder `<out>/<name>` by it, so a long run can be committed as it goes and a later session can
warm-start from what was committed (`pretrain --warm-start`).
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def milestones(run_dir: Path, name: str) -> list[Path]:
    """A model's milestone folders in training order."""
    return sorted(p for p in (Path(run_dir) / name / "milestones").glob("step-*") if (p / "training.json").is_file())


def publish(run_dir: Path, out: Path, step: int | None = None) -> list[Path]:
    """Copy the chosen milestone of every model of the run to out/<name>; returns the folders written."""
    run_dir, out = Path(run_dir), Path(out)
    names = sorted(p.parent.name for p in run_dir.glob("*/milestones"))
    if not names:
        raise FileNotFoundError(f"{run_dir}: no milestones (train with --keep-every)")
    written = []
    for name in names:
        kept = milestones(run_dir, name)
        chosen = kept[-1] if step is None else next((k for k in kept if k.name == f"step-{step:06d}"), None)
        if chosen is None:
            raise FileNotFoundError(f"{run_dir / name / 'milestones'}: no milestone of step {step}")
        target = out / name
        tmp = out / f".{name}.publishing"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(chosen, tmp)
        shutil.rmtree(target, ignore_errors=True)
        tmp.rename(target)
        written.append(target)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m macaron.train.publish", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir")
    p.add_argument("--out", default=str(ROOT / "pretrained"))
    p.add_argument("--step", type=int, default=None, help="the milestone of this step (default: the newest)")
    args = p.parse_args(argv)
    try:
        for folder in publish(Path(args.run_dir), Path(args.out), args.step):
            print(f"published {folder}")
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
