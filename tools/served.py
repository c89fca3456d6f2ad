"""The explorer served and driven, for the tests, the benchmarks and the site's screenshots.

`server()` starts `streamlit run app/main.py` (headless) on a free port and yields its address once it
answers its health check; CHROMIUM and ARGS launch Debian's Chromium for Playwright; `wave()` opens
sessions at once against a served app, a few in Chromium, the others over Streamlit's own websocket
protocol, each opening the link, typing its own sentence on Particles, moving the stage of training and
opening Compare (benchmarks/bench_server.py times them; tests/test_server.py checks each gets its
figures).

    sys.path.insert(0, "tools"); from served import server   (pytest has tools/ on its path)
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from macaron.lesson import DEFAULT_SENTENCE

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TIMEOUT = 300.0  # seconds a session waits for a figure before it counts as failed
# ms a browser test waits for what the app computes: a ceiling for a hang, not a timing (a sub-step's trace on a
# loaded 2-core machine has taken over 30 s)
PATIENCE = 180_000
ERRORS = "[data-testid='stException'], [data-testid='stAlertContentError']"
QUIET = "() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-testid=\"stSkeleton\"]')"

# In every page: when did the person act (Enter in a text box, a click on a link)?
MARK = """const mark = () => { window.__mark = performance.now(); };
document.addEventListener('keydown', e => { if (['Enter', 'ArrowLeft', 'Home'].includes(e.key)) mark(); }, true);
document.addEventListener('click', e => { if (e.target.closest('a')) mark(); }, true);"""
# Resolves when the first figure's title holds `kind` and its SVG shows `word` (a label reads "word" or
# "3·word"): ms since the mark.
DRAWN = """([kind, word]) => new Promise(resolve => {
    const has = () => { const g = document.querySelector('.js-plotly-plot');
        const title = g && g.querySelector('.gtitle');
        return title && title.textContent.includes(kind) && Array.from(g.querySelectorAll('text')).some(
            t => t.textContent === word || t.textContent.endsWith('·' + word)); };
    const done = () => resolve(performance.now() - (window.__mark || 0));
    if (has()) return done();
    const watch = new MutationObserver(() => { if (has()) { watch.disconnect(); done(); } });
    watch.observe(document.documentElement, {childList: true, subtree: true, characterData: true});
})"""
FIRST_SENTENCE = DEFAULT_SENTENCE  # the sentence the app opens with (macaron.lesson)
FIRST_WORD = "he"  # a word of it, one token for the shipped and the suite's tokenizers: a label in the first figure
PARTICLES, COMPARE = "sub-step", "layer time"  # in the title of each page's animation
STEPS = ("open", "enter", "stage", "compare")
STAGE = "Stage of training"  # the control's label
# The figure's particles as drawn (Plotly's gd.data), to see that a figure has been redrawn
DRAWN_DATA = "() => JSON.stringify(document.querySelector('.js-plotly-plot').data.map(t => t.x))"
# Once the figure differs from `before`, the caption names the stage and the script has run: ms since the mark
REDRAWN = """([before, caption]) => {
    const g = document.querySelector('.js-plotly-plot');
    const app = document.querySelector('[data-testid="stApp"]');
    const done = g && JSON.stringify(g.data.map(t => t.x)) !== before
        && app && app.getAttribute('data-test-script-state') === 'notRunning'
        && Array.from(document.querySelectorAll('[data-testid="stCaptionContainer"]')).some(
            c => c.textContent.startsWith(caption));
    return done ? performance.now() - window.__mark : false;
}"""


# ---- the server ---------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def server(env: dict | None = None, log: Path | None = None):
    """`streamlit run app/main.py` on a free port; yields (url, pid) once it answers its health check."""
    port = free_port()
    out = open(log, "w") if log else subprocess.DEVNULL
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app/main.py", "--server.headless", "true",
                             "--server.port", str(port), "--browser.serverAddress", "localhost"],
                            cwd=ROOT, env=dict(env or os.environ, PYTHONUNBUFFERED="1"), stdout=out,
                            stderr=subprocess.STDOUT)
    url = f"http://localhost:{port}"
    try:
        for _ in range(240):
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.25)
        else:
            raise RuntimeError("the server did not start")
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log:
            out.close()


def tree_cpu(root: int, skip: int) -> float:
    """CPU time used by the processes under `root` (and their children that have exited), not `skip`'s."""
    children: dict[int, list] = {}
    for d in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError):
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split() if d.name.isdigit() else None
            if fields:
                children.setdefault(int(fields[1]), []).append((int(d.name), fields))
    total, todo = 0, [root]
    while todo:
        for pid, fields in children.get(todo.pop(), []):
            if pid != skip:
                total += sum(map(int, fields[11:15]))  # utime, stime, cutime, cstime
                todo.append(pid)
    return total / os.sysconf("SC_CLK_TCK")


# ---- the sessions -------------------------------------------------------------------------------------
def words_for(tokenizer, n: int, avoid: str) -> list[str]:
    """n different words that are one token each for `tokenizer` (a label in the figure shows each whole)."""
    vocab = sorted(tokenizer.get_vocab())
    words = [w for w in vocab if w.isalpha() and len(w) >= 4 and w not in avoid.split()
             and len(tokenizer.encode(w).ids) == 3]  # [CLS] word [SEP]
    if len(words) < n:
        raise ValueError(f"the tokenizer has only {len(words)} usable words for {n} sessions")
    step = len(words) // n
    return [words[i * step] for i in range(n)]


def sentence(word: str) -> str:
    return f"the {word} sat on the bank of the river ."


async def drawn(page, kind: str, word: str) -> float:
    return await asyncio.wait_for(page.evaluate(DRAWN, [kind, word]), TIMEOUT)


async def browser_session(browser, url: str, word: str, first_word: str, ready: asyncio.Barrier,
                          delay: float, stage: tuple | None) -> dict:
    """In Chromium: open the link, type a sentence with `word` on Particles, press Enter, move the stage
    control to `stage` (name, keys; None: the model has no stages), then open Compare."""
    ctx = await browser.new_context(viewport={"width": 1280, "height": 720})
    out = dict(word=word, client="browser")
    try:
        await ctx.add_init_script(MARK)
        page = await ctx.new_page()
        await page.goto(f"{url}/", wait_until="domcontentloaded", timeout=TIMEOUT * 1000)
        out["open"] = await drawn(page, PARTICLES, first_word)  # since the link was opened: the page's time origin
        await ready.wait()
        await asyncio.sleep(delay)
        box = page.get_by_label("Sentence", exact=True)
        await box.fill(sentence(word))
        await box.press("Enter")
        out["enter"] = await drawn(page, PARTICLES, word)
        if stage:
            name, keys = stage
            await page.wait_for_function(QUIET, timeout=TIMEOUT * 1000)
            before = await page.evaluate(DRAWN_DATA)
            thumb = page.get_by_role("slider", name=STAGE)  # the accessible name holds the label (substring)
            for key in keys:
                await thumb.press(key)
            redrawn = await page.wait_for_function(REDRAWN, arg=[before, f"{name} ·"], timeout=TIMEOUT * 1000,
                                                   polling=50)
            out["stage"] = await redrawn.json_value()
        await page.locator("[data-testid='stSidebarNav'] a", has_text="Compare").click()
        out["compare"] = await drawn(page, COMPARE, word)
        await page.wait_for_function(QUIET, timeout=TIMEOUT * 1000)  # the rest of the page has run
        out["errors"] = [await e.inner_text() for e in await page.locator(ERRORS).all()]
    except Exception as e:  # a session that failed is reported, and the others go on
        out["failed"] = f"{type(e).__name__}: {e}"[:300]
        with contextlib.suppress(Exception):  # what the person would have seen, for whoever reads the failure
            (ROOT / "screenshots").mkdir(exist_ok=True)
            await page.screenshot(path=str(ROOT / "screenshots" / f"bench-server-failed-{word}.png"), full_page=True)
        if "open" not in out:
            await ready.abort()  # the others must not wait for this one
    finally:
        out["context"] = ctx
    return out


class Client:
    """A session over Streamlit's own websocket protocol, as the browser's frontend speaks it, but
    drawing nothing: the time until the server has sent a figure."""

    def __init__(self, url: str):
        self.url, self.query, self.pages, self.page, self.inputs, self.errors = url, "", {}, "", {}, []
        self.texts: list[str] = []  # the text elements sent since the last rerun

    async def __aenter__(self):
        import websockets

        self.ws = await websockets.connect(self.url.replace("http", "ws", 1) + "/_stcore/stream",
                                           subprotocols=["streamlit"], origin=self.url, max_size=None)
        return self

    async def __aexit__(self, *exc):
        await self.ws.close()

    async def rerun(self, widgets: dict | None = None, page: str | None = None) -> None:
        """What the frontend sends after Enter in a text box (widgets: id → text; a select_slider's id → [its
        option]) or a click on a page."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        self.texts = []
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string, state.page_script_hash = ("", self.pages[page]) if page else (self.query, self.page)
        for wid, value in (widgets or {}).items():
            if isinstance(value, list):  # a select_slider: its option's label
                state.widget_states.widgets.add(id=wid).string_array_value.data.extend(value)
            else:
                state.widget_states.widgets.add(id=wid, string_value=value)
        await self.ws.send(msg.SerializeToString())

    async def until(self, kind: str | None = None, word: str = "") -> None:
        """Read the server's messages until a figure whose spec holds `kind` and `word` (kind None: until
        the run has finished), noting the page's text boxes, pages, address and errors on the way."""
        from streamlit.proto.Alert_pb2 import Alert
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await self.ws.recv())
            what = msg.WhichOneof("type")
            if what == "script_finished" and kind is None:
                return
            if what == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
                self.page = msg.navigation.page_script_hash
            elif what == "page_info_changed":
                self.query = msg.page_info_changed.query_string
            elif what == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                element = el.WhichOneof("type")
                if element == "text_input":
                    self.inputs[el.text_input.label] = el.text_input.id
                elif element == "slider":
                    self.inputs[el.slider.label] = el.slider.id
                elif element == "markdown":
                    self.texts.append(el.markdown.body)
                elif element == "exception" or (element == "alert" and el.alert.format == Alert.ERROR):
                    self.errors.append(el.exception.message if element == "exception" else el.alert.body)
                elif element == "plotly_chart" and kind and kind in el.plotly_chart.spec \
                        and f'{word}"' in el.plotly_chart.spec:
                    return


async def client_session(url: str, word: str, first_word: str, ready: asyncio.Barrier, delay: float,
                         stage: tuple | None) -> dict:
    """The same steps as browser_session, over the protocol: ms from the message sent to the figure received."""
    out = dict(word=word, client="protocol")

    async def step(c: Client, kind: str, w: str, **rerun) -> float:
        t0 = time.perf_counter()
        await c.rerun(**rerun)
        await asyncio.wait_for(c.until(kind, w), TIMEOUT)
        ms = (time.perf_counter() - t0) * 1000
        await asyncio.wait_for(c.until(), TIMEOUT)  # the rest of the page
        return ms

    try:
        async with Client(url) as c:
            out["open"] = await step(c, PARTICLES, first_word)
            await ready.wait()
            await asyncio.sleep(delay)
            out["enter"] = await step(c, PARTICLES, word, widgets={c.inputs["Sentence"]: sentence(word)})
            if stage:
                out["stage"] = await step(c, PARTICLES, word, widgets={c.inputs[STAGE]: [stage[0]]})
                if not any(t.startswith(f"{stage[0]} ·") for t in c.texts):  # an unknown stage falls back silently
                    raise RuntimeError(f"the page did not say it drew the stage {stage[0]!r}")
            out["compare"] = await step(c, COMPARE, word, page="compare")
            out["errors"] = c.errors
    except Exception as e:  # reported, and the others go on
        out["failed"] = f"{type(e).__name__}: {e}"[:300]
        if "open" not in out:
            await ready.abort()
    return out


def niced_chromium() -> str:
    """Chromium at nice 10, unable to raise its priority again (as root it would set some threads to
    -8): in a class the browsers run on the students' computers, so here they take what the server
    leaves. Falls back to plain Chromium where setpriv is missing."""
    if not shutil.which("setpriv"):
        return CHROMIUM
    path = Path(tempfile.mkdtemp()) / "chromium"
    path.write_text(f'#!/bin/sh\nexec setpriv --bounding-set -sys_nice --inh-caps -sys_nice nice -n 10 {CHROMIUM} '
                    '"$@"\n')
    path.chmod(0o755)
    return str(path)


async def wave(url: str, words: list[str], first_word: str, browsers: int, spread: float = 0.0,
               server_pid: int | None = None, targets: list | None = None) -> tuple[list[dict], float]:
    """One session per word, all at once: the first `browsers` in Chromium, the others over the protocol.
    When all have their first figure, each types its sentence (after a delay spread evenly over
    `spread` seconds). Returns the sessions' results and the CPU seconds Chromium used."""
    from playwright.async_api import async_playwright

    n = len(words)
    ready = asyncio.Barrier(n)
    delays = [spread * i / max(1, n - 1) for i in range(n)]
    async with async_playwright() as p:
        browser = (await p.chromium.launch(executable_path=niced_chromium(), headless=True, args=ARGS)
                   if browsers else None)
        stages = [targets[i % len(targets)] if targets else None for i in range(n)]
        results = await asyncio.gather(
            *(browser_session(browser, url, w, first_word, ready, d, st) for w, d, st in
              zip(words[:browsers], delays, stages)),
            *(client_session(url, w, first_word, ready, d, st) for w, d, st in
              zip(words[browsers:], delays[browsers:], stages[browsers:])))
        client_cpu = tree_cpu(os.getpid(), skip=server_pid) if browser else 0.0
        for r in results:
            if "context" in r:
                await r.pop("context").close()
        if browser:
            await browser.close()
    return results, client_cpu


# ---- the benchmark ------------------------------------------------------------------------------------
