"""Benchmarks write their figures into RESULTS.md, one `## section` each, replaced on re-run; median_ms times
functions alike for all of them."""
from __future__ import annotations

import re
import statistics
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
HEADER = ("# Benchmark results\n\nWritten by the scripts in this folder; each section is replaced when its script "
          "runs again.\n")


def section_pattern(title: str) -> re.Pattern:
    """A `## title` section of RESULTS.md, up to the next one."""
    return re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)


def write_section(title: str, body: str, path: Path = RESULTS) -> None:
    text = path.read_text() if path.exists() else HEADER
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = section_pattern(title)
    text = pattern.sub(lambda _: section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text)


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def old_rows(title: str, columns: tuple[str, ...], key: int = 3, path: Path = RESULTS) -> dict[tuple, list[str]]:
    """The rows of a section's table by their first `key` cells, laid out as `columns` by header name (a column the
    old table did not have reads "–"), so that a script can replace some rows and keep the others."""
    text = path.read_text() if path.exists() else ""
    found = section_pattern(title).search(text)
    lines = [line for line in (found.group(0) if found else "").splitlines() if line.startswith("| ")]
    if not lines:
        return {}
    header, rows = cells(lines[0]), {}
    for line in lines[1:]:
        by_name = dict(zip(header, cells(line)))
        row = [by_name.get(column, "–") for column in columns]
        rows[tuple(row[:key])] = row
    return rows


def write_table(title: str, intro: str, columns: tuple[str, ...], rows, path: Path = RESULTS) -> None:
    """A section of an introduction and one table."""
    table = [f"| {' | '.join(columns)} |", f"|{'---|' * len(columns)}"] + [f"| {' | '.join(r)} |" for r in rows]
    write_section(title, intro + "\n\n" + "\n".join(table), path)


def median_ms(fns: dict, repeats: int) -> dict:
    """Each function's median wall time in ms over `repeats` rounds, run interleaved after one warm-up each."""
    times = {k: [] for k in fns}
    for fn in fns.values():
        fn()  # warm-up
    for _ in range(repeats):
        for k, fn in fns.items():  # interleaved: background load hits all alike
            t = time.perf_counter()
            fn()
            times[k].append(1000 * (time.perf_counter() - t))
    return {k: statistics.median(v) for k, v in times.items()}
