"""Serving a class: N sessions at once against one real server on this machine.

Starts `streamlit run app/main.py` (headless, the app as shipped: its default models; tools/served.py,
as the tests do) and opens N sessions at once. A few run in one headless Chromium (a context each) and
time what a person sees, in the page's own clock; the others speak Streamlit's own websocket protocol, as the browser's
frontend does, and time until the server has sent the figure (in a class the browsers run on the
students' computers; thirty of them here would measure this machine's Chromium, not the server).
Each session:

  open     opens the link (all at once; the first wave on the freshly started server): the first
           figure drawn, or sent
  enter    types its own sentence on Particles and presses Enter: the figure whose SVG (or spec)
           shows the sentence's own word
  stage    moves the stage-of-training control (where the model offers stages of training) from the
           last stage to an earlier one, the sessions taking each in turn: that stage's figure
  compare  then clicks Compare: the Compare figure with that word

and must end with its figures and no error element (no exception or error message). Also the
server's peak resident memory (VmHWM), its RSS after each wave has left, and the CPU seconds of
the server and of Chromium. Later waves bring new sessions with new sentences: memory must stay
flat. Writes the "Serving a class" section of benchmarks/RESULTS.md (with --write).

Usage: python benchmarks/bench_server.py [--sessions 30] [--browsers 3] [--waves 3] [--spread 0] [--write]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from served import FIRST_SENTENCE, FIRST_WORD, STEPS, server, wave, words_for  # noqa: E402


def earlier(names: list[str]) -> list[tuple[str, list[str]]]:
    """Each stage before the last, with the keys a person presses on the control to reach it from the last."""
    return [(name, ["Home"] if i == 0 else ["ArrowLeft"] * (len(names) - 1 - i)) for i, name in enumerate(names[:-1])]


# ---- the server's use of the machine ------------------------------------------------------------------
def status_kib(pid: int, field: str) -> int:
    """A VmRSS / VmHWM line of /proc/<pid>/status, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def cpu_seconds(pid: int) -> float:
    """CPU time used so far by one process (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---- the figures -------------------------------------------------------------------------------------
def quantiles(ms: list[float]) -> tuple[float, float, float]:
    """p50, p95, max in seconds."""
    s = sorted(x / 1000 for x in ms)
    return statistics.median(s), s[min(len(s) - 1, round(0.95 * (len(s) - 1)))], s[-1]


def summary(results: list[dict]) -> dict:
    ok = [r for r in results if "failed" not in r and not r["errors"]]
    row = dict(n=len(results), ok=len(ok))
    for k in STEPS:
        got = [r[k] for r in results if k in r]
        row[k] = quantiles(got) if got else (float("nan"),) * 3
    return row


def by_client(results: list[dict]) -> dict[str, dict]:
    """The summary of the browser sessions and of the protocol ones, apart."""
    return {c: summary([r for r in results if r["client"] == c]) for c in ("browser", "protocol")
            if any(r["client"] == c for r in results)}


def settle(pid: int, seconds: float) -> float:
    """RSS after the server has been idle a while (sessions gone, their state released)."""
    time.sleep(seconds)
    return status_kib(pid, "VmRSS") / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--browsers", type=int, default=3, help="how many of the sessions run in Chromium (the others "
                    "speak Streamlit's protocol: in a class the browsers run on the students' computers)")
    ap.add_argument("--waves", type=int, default=3, help="waves of new sessions, one after the other")
    ap.add_argument("--spread", type=float, default=0.0,
                    help="seconds over which the sessions' Enter presses are spread (0: all at once)")
    ap.add_argument("--idle", type=float, default=20.0, help="seconds to wait after a wave before reading RSS")
    ap.add_argument("--write", action="store_true", help="write the section of benchmarks/RESULTS.md")
    args = ap.parse_args()

    import macaron

    env = {k: v for k, v in os.environ.items() if k not in ("MACARON_MODELS", "MACARON_MODELS_DIR")}
    default = macaron.default_pair(macaron.available())[0]  # the model the app opens first
    targets = earlier([m.name for m in macaron.milestones(default)])  # none where it offers one stage
    tok = macaron.load(default, device="cpu").tokenizer
    all_words = words_for(tok, args.sessions * args.waves, FIRST_SENTENCE)
    first_word = FIRST_WORD  # in the app's default sentence: the first figure a session draws
    rows, rss_after = [], []
    load0 = os.getloadavg()[0]
    with server(env, Path("/tmp/bench_server.log")) as (url, pid):
        print(f"server {url}, pid {pid}", flush=True)
        cpu0, t0, client_cpu = cpu_seconds(pid), time.perf_counter(), 0.0
        for w in range(args.waves):
            words = all_words[w * args.sessions:(w + 1) * args.sessions]
            results, cpu = asyncio.run(wave(url, words, first_word, args.browsers, args.spread, pid, targets))
            client_cpu += cpu
            rows.append(by_client(results))
            for r in results:
                if "failed" in r or r["errors"]:
                    print("session", r["word"], r.get("failed") or r["errors"])
            rss_after.append(settle(pid, args.idle))
            print(f"wave {w + 1}: {rows[-1]}; RSS after {rss_after[-1]:.2f} GiB", flush=True)
        wall, server_cpu = time.perf_counter() - t0, cpu_seconds(pid) - cpu0
        peak = status_kib(pid, "VmHWM") / 2**20
    print(f"peak RSS {peak:.2f} GiB; CPU: server {server_cpu:.0f} s, Chromium {client_cpu:.0f} s, in {wall:.0f} s; "
          f"load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after")
    if args.write:
        write(args, rows, peak, rss_after, server_cpu, client_cpu, wall, load0, default, targets)


def write(args, rows, peak, rss_after, server_cpu, client_cpu, wall, load0, default, targets) -> None:
    from results import write_section

    cpu = platform.processor() or platform.machine()
    head = (f"`python benchmarks/bench_server.py --sessions {args.sessions} --browsers {args.browsers} --waves "
            f"{args.waves} --spread {args.spread:g}`: {date.today()}, {cpu}, {os.cpu_count()} cores, one machine for "
            f"the server and every session; the app as shipped (default models {default} and its Macaron partner). "
            f"{args.browsers} sessions in headless Chromium (a context each, niced: in a class the browsers run on "
            "the students' computers), the others over Streamlit's own websocket protocol (the time until the "
            f"server has sent the figure, nothing drawn). 1-minute load average {load0:.1f} before (other work on "
            "the machine). Stage of training: "
            + (f"each session moves the control from the final weights to one of {', '.join(n for n, _ in targets)} "
               "in turn (its model loaded on first use)." if targets else "the default model offers one stage only."))
    body = [head, "", "| wave | sessions | ok | link → first figure p50 / p95 / max s | Enter → figure p50 / p95 / "
                      "max s | stage of training → figure p50 / p95 / max s | click Compare → figure p50 / p95 / "
                      "max s |", "|---|---|---|---|---|---|---|"]
    for i, wave_rows in enumerate(rows, 1):
        for client, r in wave_rows.items():
            cells = [" / ".join("—" if x != x else f"{x:.1f}" for x in r[k]) for k in STEPS]
            body.append(f"| {i}{' (fresh server)' if i == 1 else ''} | {r['n']} {client} | {r['ok']} | "
                        + " | ".join(cells) + " |")
    body += ["", f"Server memory: peak RSS {peak:.2f} GiB; after each wave had left and {args.idle:g} s idle: "
             + ", ".join(f"{x:.2f}" for x in rss_after) + f" GiB. CPU: the server used {server_cpu:.0f} s, "
             f"Chromium {client_cpu:.0f} s, in {wall:.0f} s."]
    alone = ", no browser on the server's cores" if args.browsers == 0 else ""  # what the server alone sustains
    write_section(f"Serving a class ({args.sessions} sessions{alone})", "\n".join(body))


if __name__ == "__main__":
    main()
