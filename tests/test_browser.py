"""Browser test: the real `streamlit run app/main.py` server, driven by Debian's Chromium via Playwright.

Opens every page, types a sentence, plays the animation and drags its slider, and reads what is
DRAWN (the SVG text and the pixels Plotly painted), not the figure's data: the title names each
sub-step as it comes, the mixing matrix beside it follows the same clock, labels never overlap, and
the sentence box, the whole plot and its Play button fit a 1280×720 and a 1024×768 screen. Also:
presenter mode, the guided lesson, a shared link, HTML in the sentence, no error element, a clean
server log. Screenshots go to screenshots/ (git-ignored) for a person to look at.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import urllib.parse
from pathlib import Path

import pytest

from macaron import lesson
from served import CHROMIUM, PATIENCE
from served import server as app_server

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "screenshots"
STEPS = len(lesson.LESSON)  # "Lesson k of STEPS"
pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not shutil.which("chromium"), reason="no Chromium"),
]
playwright_api = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server(models_dir, tmp_path_factory):
    """`streamlit run app/main.py` on the suite's tiny models, started as the benchmarks start it (tools/served.py)."""
    log = tmp_path_factory.mktemp("server") / "streamlit.log"
    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS"}
    env["MACARON_MODELS_DIR"] = str(models_dir)
    with app_server(env, log) as (url, _):
        yield url, log


@pytest.fixture()
def page(browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    yield pg
    pg.close()


QUIET = "() => !document.querySelector('[data-testid=\"stStatusWidget\"], [data-testid=\"stSkeleton\"]')"


def settle(page, timeout: float = PATIENCE) -> None:
    """Wait until a Plotly figure is drawn and Streamlit has finished running the page."""
    page.wait_for_selector(".js-plotly-plot", timeout=timeout)
    for _ in range(2):  # quiet twice in a row
        page.wait_for_function(QUIET, timeout=timeout)
        page.wait_for_timeout(600)


def no_errors(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0, page.locator(
        "[data-testid='stException']").first.inner_text()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))
    page.set_viewport_size({"width": 1280, "height": 4000})  # the whole page (Streamlit scrolls inside)
    page.wait_for_timeout(1200)
    page.screenshot(path=str(SHOTS / f"{name}_full.png"))
    page.set_viewport_size({"width": 1280, "height": 720})


def plot_data(page, index: int = 0) -> str:
    return page.evaluate("i => JSON.stringify(document.querySelectorAll('.js-plotly-plot')[i].data)", index)


DRAWN = """() => {  // what the first figure shows now: its title and the matrix caption, as drawn
    const g = document.querySelector('.js-plotly-plot');
    if (!g) return ['', ''];  // none on the page yet (a new page, a step of the lesson, is drawing)
    const title = g.querySelector('.gtitle');
    const notes = Array.from(g.querySelectorAll('.annotation-text')).map(e => e.textContent);
    return [title ? title.textContent : '', notes.find(n => n.startsWith('who pulls whom')) || ''];
}"""
KINDS = ("diffusion (attention)", "convection (FFN)")
HEARD = """word => {  // the first figure's 'whom a word listened to' line, as drawn: [its text, its font size]
    const g = document.querySelector('.js-plotly-plot');
    const t = g && Array.from(g.querySelectorAll('.annotation-text')).find(
        e => e.textContent.includes(word + ' listened to:'));
    return t ? [t.textContent, parseFloat(t.style.fontSize)] : null;
}"""


def drawn(page) -> tuple[str, str]:
    return tuple(page.evaluate(DRAWN))


def kind_of(text: str) -> str | None:
    return next((k for k in KINDS if k in text), None)


def slider_to(page, k: int) -> None:
    """Click the animation's own slider at step k, as a person would, and wait for the frame to be drawn."""
    page.locator(".js-plotly-plot .slider-rail-touch-rect").first.scroll_into_view_if_needed()
    box = page.locator(".js-plotly-plot .slider-container .slider-tick-rect").nth(k).bounding_box()
    rail = page.locator(".js-plotly-plot .slider-rail-touch-rect").first.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, rail["y"] + rail["height"] / 2)
    page.mouse.down()
    page.mouse.up()
    page.wait_for_function("k => document.querySelector('.js-plotly-plot').layout.sliders[0].active === k", arg=k,
                           timeout=10_000)
    page.wait_for_timeout(300)  # the frame's redraw


def count_pixels(png: bytes, rgb: tuple[int, int, int], tol: int = 40) -> int:
    import io

    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return int((np.abs(a - np.array(rgb)).sum(-1) < tol).sum())


def fits(page, *selectors) -> None:
    """Each element (a CSS selector or a locator) is on the first screen, whole: no scrolling needed."""
    w, h = page.viewport_size["width"], page.viewport_size["height"]
    for sel in selectors:
        b = (page.locator(sel) if isinstance(sel, str) else sel).first.bounding_box()
        assert b is not None, sel
        assert b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= w + 1 and b["y"] + b["height"] <= h + 1, \
            (sel, b, (w, h))


def test_particles_play_and_slider_redraw_every_panel_on_one_clock(server, page):
    url, _ = server
    page.goto(f"{url}/")
    settle(page)
    no_errors(page)
    box = page.get_by_label("Sentence", exact=True)
    box.fill("the river bank was full of water after the rain .")
    box.press("Enter")
    page.wait_for_function("() => Array.from(document.querySelectorAll('.js-plotly-plot .y2tick text'))"
                           ".some(t => t.textContent === 'water')", timeout=PATIENCE)
    settle(page)
    assert "rain" in page.url  # the sentence lives in the address bar
    title, matrix = drawn(page)
    assert "embedding" in title and "sub-step 0 of 4" in title and "no sub-step yet" in matrix
    # ▶ Play: sample what is drawn while it runs
    page.locator(".js-plotly-plot .updatemenu-button").first.click()
    seen = []
    for _ in range(30):
        page.wait_for_timeout(120)
        seen.append(drawn(page))
    titles = {t for t, _ in seen}
    assert len(titles) >= 4, titles  # the drawn title changes with the frames
    assert {kind_of(t) for t in titles} >= set(KINDS)  # it says which kind each sub-step is
    for title, matrix in seen:  # one clock: the matrix beside always shows the same sub-step
        assert kind_of(title) == kind_of(matrix), (title, matrix)
    title, matrix = drawn(page)
    assert "layer 2 · convection (FFN)" in title and "sub-step 4 of 4" in title  # Play stops at the end
    no_errors(page)
    # the animation's own slider redraws the same way, and the pixels follow the kind
    slider_to(page, 1)
    title, matrix = drawn(page)
    assert "layer 1 · diffusion (attention)" in title and "diffusion (attention)" in matrix
    plot = page.locator(".js-plotly-plot").first
    at_diffusion = plot.screenshot()
    slider_to(page, 2)
    title, matrix = drawn(page)
    assert "layer 1 · convection (FFN)" in title and "convection (FFN): identity" in matrix
    at_convection = plot.screenshot()
    vermillion, blue = (213, 94, 0), (0, 114, 178)
    assert count_pixels(at_convection, vermillion) > 3 * count_pixels(at_diffusion, vermillion) + 200
    assert count_pixels(at_diffusion, blue) > count_pixels(at_convection, blue) + 200
    shoot(page, "particles")
    page.set_viewport_size({"width": 1024, "height": 768})  # a classroom projector
    page.wait_for_timeout(1000)
    page.screenshot(path=str(SHOTS / "particles_projector_1024x768.png"))


def test_a_new_server_says_it_is_starting_until_the_first_figure(models_dir, browser, tmp_path):
    """The first visitor of a new server sees what it waits for (PyTorch, the models) at once, never a blank
    page; the message goes once the first figure is drawn. Its own server: the suite's is already warm."""
    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS"}
    env["MACARON_MODELS_DIR"] = str(models_dir)
    with app_server(env, tmp_path / "streamlit.log") as (url, _):
        pg = browser.new_page(viewport={"width": 1280, "height": 720})
        try:
            pg.goto(f"{url}/")
            seen = []  # what the main area shows, polled from the moment the page loads
            while pg.locator(".js-plotly-plot").count() == 0 and len(seen) < 600:
                seen.append(pg.locator("[data-testid='stMain']").inner_text())
                pg.wait_for_timeout(100)
            starting = [s for s in seen if "Starting the explorer" in s]
            assert starting and "loading PyTorch and the models" in starting[0], seen[:5]
            settle(pg)
            assert "Starting the explorer" not in pg.locator("[data-testid='stMain']").inner_text()
            no_errors(pg)
        finally:
            pg.close()


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)])
@pytest.mark.parametrize("path, first", [("/", "input[aria-label='Sentence']"),
                                         ("/compare", "input[aria-label='Sentence']"), ("/lab", None)])
def test_the_first_screen_holds_the_sentence_the_plot_and_play(server, browser, size, path, first):
    url, _ = server
    pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        pg.goto(f"{url}{path}")
        settle(pg)
        no_errors(pg)
        fits(pg, *([first] if first else []), ".js-plotly-plot", ".js-plotly-plot .updatemenu-button")
    finally:
        pg.close()


def test_presenter_first_screen_holds_the_stage_control_and_play(models_dir, browser, tmp_path):
    """Models shipped with their stages of training, on a projector (1280×720, no sidebar): the stage
    controls sit on one line above the figure, and the sentence, the controls, the whole plot and ▶ Play
    still fit the first screen — on Particles, in the lesson's step 6 and on Compare. Moving the control
    (the keys a person presses) redraws the figure and names the stage."""
    from conftest import add_stages

    staged = [add_stages(shutil.copytree(models_dir / name, tmp_path / f"staged-{name}"))
              for name in ("tiny-transformer", "tiny-macaron")]
    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS_DIR"}
    env["MACARON_MODELS"] = ",".join(map(str, staged))
    first = "input[aria-label='Sentence']", ".js-plotly-plot", ".js-plotly-plot .updatemenu-button"
    with app_server(env, tmp_path / "streamlit.log") as (url, _):
        pg = browser.new_page(viewport={"width": 1280, "height": 720})
        try:
            for shot, path, controls in (
                    ("lesson-6", "/?lesson=6&present=1", ["Stage of training"]),
                    ("compare", "/compare?present=1", ["Stage of training, model A", "Stage of training, model B"]),
                    ("particles", "/?present=1", ["Stage of training"])):
                pg.goto(f"{url}{path}")
                settle(pg)
                no_errors(pg)
                thumbs = [pg.get_by_role("slider", name=c) for c in controls]  # name: the hidden label
                fits(pg, *first, *thumbs)
                pg.screenshot(path=str(SHOTS / f"presenter_stages_{shot}.png"))
            main = pg.locator("[data-testid='stMain']")
            assert "Stage of training · final" in main.inner_text()
            before = plot_data(pg)
            thumbs[0].focus()
            pg.keyboard.press("Home")
            pg.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText"
                                 ".includes('Stage of training · random start')", timeout=PATIENCE)
            settle(pg)
            assert plot_data(pg) != before and "at=random" in pg.url
            no_errors(pg)
        finally:
            pg.close()


def test_thirty_labels_drawn_without_overlap(server, browser):
    url, _ = server
    long = ("after the long meeting , the tired engineers walked slowly to the small cafe near the old station "
            "and ordered coffee , tea and two slices of the cake .")  # 30 particles besides [CLS] and [SEP]
    for size in ((1024, 768), (1920, 1080)):
        pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
        try:
            pg.goto(f"{url}/?s={urllib.parse.quote(long)}&norm=0")  # raw: the embedding is one dot
            settle(pg)
            for k in (0, 4):
                if k:
                    slider_to(pg, k)
                boxes = pg.evaluate("""() => {  // the labels: the only text drawn on the particles' plane
                    return Array.from(document.querySelectorAll('.js-plotly-plot .subplot.xy .textpoint text'))
                        .map(t => { const b = t.getBoundingClientRect(); return [b.left, b.right, b.top, b.bottom]; });
                }""")
                assert len(boxes) == 30, len(boxes)  # every particle labelled
                for i, a in enumerate(boxes):
                    for b in boxes[i + 1:]:
                        overlap = min(a[1], b[1]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[2], b[2])
                        assert min(overlap) <= 1, (size, k, a, b)
            pg.screenshot(path=str(SHOTS / f"particles_30_labels_{size[0]}x{size[1]}.png"))
        finally:
            pg.close()


def test_presenter_mode_and_the_lesson(server, page):
    url, _ = server
    page.goto(f"{url}/?present=1&lesson=1")
    settle(page)
    no_errors(page)
    assert not page.locator("[data-testid='stSidebar']").is_visible()
    size = page.evaluate("() => parseFloat(getComputedStyle(document.querySelector('.js-plotly-plot .gtitle'))"
                         ".fontSize)")
    assert size >= 19
    fits(page, "input[aria-label='Sentence']", ".js-plotly-plot", ".js-plotly-plot .updatemenu-button")
    page.get_by_text(f"Lesson 1 of {STEPS}").wait_for()
    shoot(page, "particles_presenter")
    settle(page)  # the shot's resizes told the app of a new room: it redraws, and a stale copy of Next can linger
    page.get_by_role("button", name="Next").click()
    page.wait_for_function("() => location.search.includes('lesson=2')", timeout=PATIENCE)
    page.wait_for_function(f"() => ({DRAWN})()[0].includes('diffusion')", timeout=PATIENCE)
    assert "present=1" in page.url and not page.locator("[data-testid='stSidebar']").is_visible()
    # step 2 rings bank and writes whom it listened to above the plot, at a size a room reads (issue 77)
    # (read on the first figure: while Streamlit redraws, a stale copy of the note can sit beside the new one)
    text, size = page.wait_for_function(HEARD, arg="bank", timeout=PATIENCE).json_value()
    assert re.search(r"bank listened to: .+ \d+ % · .+ \d+ %", text), text
    assert size >= 16, size


def test_each_lesson_step_keeps_its_figure_and_play_on_the_first_screen(server, page):
    """Issue 77: a step's text is short enough that its figure's ▶ Play is on the first screen at 1280×720 (the
    figures behind an ⓘ) — every step the suite's tiny models can open (6 needs stages, 7 a translator)."""
    url, _ = server
    for k in (1, 2, 3, 4, 5, 8):
        page.goto(f"{url}/?lesson={k}")
        page.get_by_text(f"Lesson {k} of {STEPS}").wait_for(timeout=PATIENCE)
        settle(page)
        no_errors(page)
        try:
            fits(page, ".js-plotly-plot .updatemenu-button")
        except AssertionError as e:
            page.screenshot(path=str(SHOTS / f"lesson_{k}_first_screen.png"))
            raise AssertionError(f"lesson step {k}: {e}") from None


PLANES = r"""() => ['xy', 'x2y2'].map(id => {  // each plane of the first figure as drawn: its drag area,
    const g = document.querySelector('.js-plotly-plot');  // and every numeric tick label, centred, on screen
    const area = g.querySelector(`.draglayer .${id} .nsewdrag`);
    const ticks = (axis) => Array.from(g.querySelectorAll(`.subplot.${id} .${axis} text`))
        .map(t => { const b = t.getBoundingClientRect(); const v = parseFloat(t.textContent.replace('−', '-'));
                    return [v, (b.left + b.right) / 2, (b.top + b.bottom) / 2]; })
        .filter(([v]) => Number.isFinite(v));
    const [x, y] = id === 'xy' ? ['xtick', 'ytick'] : ['x2tick', 'y2tick'];
    return area && {height: area.getBoundingClientRect().height, x: ticks(x), y: ticks(y)};
}).filter(p => p && p.x.length > 1)"""


PRESENTED = r"""() => {  // the particle plane's height, its labels (text, px), the matrix's columns, the sentence box
    const g = document.querySelector('.js-plotly-plot'), box = document.querySelector("input[aria-label='Sentence']");
    const area = g && g.querySelector('.nsewdrag');
    return {height: area ? area.getBoundingClientRect().height : 0, sentence: box ? box.value : null,
            labels: g ? Array.from(g.querySelectorAll('.subplot.xy .textpoint text'))
                .map(t => [t.textContent, parseFloat(getComputedStyle(t).fontSize)]) : [],
            columns: g ? Array.from(g.querySelectorAll('.x2tick text')).map(t => t.textContent) : []};
}"""


def unit_px(ticks: list, coordinate: int) -> float:
    """Pixels per unit on one axis, from the first and last of its drawn tick labels."""
    (v0, *p0), (v1, *p1) = ticks[0], ticks[-1]
    return abs(p1[coordinate] - p0[coordinate]) / abs(v1 - v0)


@pytest.mark.parametrize("size, least", [((1920, 1080), 0.45), ((1280, 720), 0.40)])
def test_presenter_plane_fills_the_screen_at_true_aspect(server, browser, size, least):
    """On a projector the particle plane is as tall as the screen leaves, ▶ Play still on it, a unit of PC1 as
    long as a unit of PC2 as drawn (read off the tick labels), its labels at 18 px, and the matrix beside it
    names its columns by token; Compare's two planes each take a third of a 1920 × 1080 screen or more."""
    url, _ = server
    columns = ["[CLS]", "the", "cat", "sat", "on", "the", "mat", ".", "[SEP]"]
    compact = json.dumps(columns, separators=(",", ":"))  # as JSON.stringify writes them
    pg = browser.new_page(viewport={"width": size[0], "height": size[1]})
    try:
        pg.goto(f"{url}/?present=1&s={urllib.parse.quote('the cat sat on the mat .')}")
        settle(pg)
        # what is asserted below, waited for as one drawn state: the browser's size report reruns the page and
        # redraws the figure, later on a loaded machine, and a reading taken mid-redraw would be of neither figure
        pg.wait_for_function(f"""() => {{
            const s = ({PRESENTED})();
            return s.height >= {least} * innerHeight && s.sentence === 'the cat sat on the mat .'
                && ['cat', 'sat', 'mat'].every(w => s.labels.some(([t]) => t === w))
                && JSON.stringify(s.columns) === {json.dumps(compact)} && ({QUIET})();
        }}""", timeout=120_000)
        no_errors(pg)
        fits(pg, ".js-plotly-plot .updatemenu-button")
        shown = pg.evaluate(PRESENTED)
        assert shown["sentence"] == "the cat sat on the mat ." and shown["columns"] == columns
        (plane,) = pg.evaluate(PLANES)  # the matrix beside it has no numbers on its axes
        assert plane["height"] >= least * size[1], plane
        assert unit_px(plane["x"], 0) == pytest.approx(unit_px(plane["y"], 1), rel=0.05)
        assert {"cat", "sat", "mat"} <= {t for t, _ in shown["labels"]} and min(px for _, px in shown["labels"]) >= 18
        pg.screenshot(path=str(SHOTS / f"presenter_{size[0]}x{size[1]}.png"))
        if size[0] == 1280:  # a window made taller (or a screen rotated): the plane follows
            pg.set_viewport_size({"width": 1280, "height": 960})
            pg.wait_for_function(f"() => document.querySelector('.js-plotly-plot .nsewdrag')"
                                 f".getBoundingClientRect().height > {plane['height'] + 150}", timeout=120_000)
            fits(pg, ".js-plotly-plot .updatemenu-button")
        if size[0] == 1920:
            pg.goto(f"{url}/compare?present=1")
            settle(pg)
            pg.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .nsewdrag').length >= 2 && "
                                 "Array.from(document.querySelectorAll('.js-plotly-plot .nsewdrag')).slice(0, 2)"
                                 ".every(a => a.getBoundingClientRect().height >= 0.35 * innerHeight)",
                                 timeout=120_000)
            fits(pg, ".js-plotly-plot .updatemenu-button")
            panels = pg.evaluate(PLANES)
            assert len(panels) == 2 and all(p["height"] >= 0.35 * size[1] for p in panels), panels
            for p in panels:
                assert unit_px(p["x"], 0) == pytest.approx(unit_px(p["y"], 1), rel=0.05)
            pg.screenshot(path=str(SHOTS / "presenter_compare_1920x1080.png"))
    finally:
        pg.close()


def test_a_clicker_walks_the_lesson(server, page):
    """PageDown / PageUp (a presenter's clicker) and → / ← go to the next and previous step: the address and the
    drawn "Lesson k of n" follow; in the sentence box the arrows move the cursor, not the lesson. Space plays."""
    url, _ = server
    page.goto(f"{url}/?present=1&lesson=1")
    settle(page)
    page.get_by_text(f"Lesson 1 of {STEPS}").wait_for()
    for key, k in (("PageDown", 2), ("ArrowRight", 3), ("PageUp", 2), ("ArrowLeft", 1)):
        page.locator("h1").first.click()  # the focus on the page, as after a click on it
        page.keyboard.press(key)
        page.wait_for_function(f"() => location.search.includes('lesson={k}')", timeout=PATIENCE)
        page.get_by_text(f"Lesson {k} of {STEPS}").wait_for()
        settle(page)
    box = page.locator("input[aria-label='Sentence']")
    box.click()
    box.press("ArrowLeft")
    box.press("ArrowRight")
    page.wait_for_timeout(1500)
    assert "lesson=1" in page.url and page.get_by_text(f"Lesson 1 of {STEPS}").is_visible()
    page.locator("h1").first.click()
    first = drawn(page)[0]
    page.keyboard.press(" ")
    page.wait_for_function(f"() => ({DRAWN})()[0] !== {first!r}", timeout=10_000)  # Play: the title moves on
    page.keyboard.press(" ")  # Pause: it stays
    page.wait_for_timeout(800)
    paused = drawn(page)[0]
    page.wait_for_timeout(1500)
    assert drawn(page)[0] == paused


def test_a_lesson_step_typed_by_hand_opens_on_its_own_page(server, page):
    """/?lesson=4 names the default page (Particles) in its address; step 4 is the Splitting lab's: the
    person sees the lab's title under the step's text, not Particles with the wrong step's words."""
    url, _ = server
    page.goto(f"{url}/?lesson=4")
    page.wait_for_function("() => location.pathname.endsWith('/lab')", timeout=PATIENCE)
    settle(page)
    no_errors(page)
    assert page.locator("h1").first.inner_text().startswith("Splitting lab")
    page.get_by_text(f"Lesson 4 of {STEPS}").wait_for()
    fits(page, ".js-plotly-plot .updatemenu-button")  # the step's ▶ Play on the first 1280 × 720 screen


def test_particles_long_sentence_mask_and_3d(server, page):
    url, _ = server
    long = ("after the long meeting , the tired engineers walked slowly to the small cafe near the old station "
            "and ordered coffee , tea and two slices of cake .")
    page.goto(f"{url}/?s={urllib.parse.quote(long)}&mask=8&attr=1&frame=3")
    settle(page)
    no_errors(page)
    assert page.get_by_label("Sentence", exact=True).input_value() == long
    shoot(page, "particles_long_mask")
    page.goto(f"{url}/?s={urllib.parse.quote('the capital of france is [MASK] .')}&dim=3D")
    settle(page)
    no_errors(page)
    assert '"scatter3d"' in plot_data(page)
    page.wait_for_timeout(1000)
    page.screenshot(path=str(SHOTS / "particles_3d.png"))


def test_html_in_the_sentence_is_shown_not_run(server, page):
    url, _ = server
    evil = "<img src=x onerror=\"window.__xss=1\"><script>window.__xss=2</script> the bank"
    page.goto(f"{url}/?s={urllib.parse.quote(evil)}&attr=1")
    settle(page)
    no_errors(page)
    assert page.evaluate("() => window.__xss") is None
    assert page.get_by_label("Sentence", exact=True).input_value() == evil


def test_bad_input_shows_a_message(server, page):
    url, _ = server
    page.goto(f"{url}/")
    settle(page)
    box = page.get_by_label("Sentence", exact=True)
    box.fill("")
    box.press("Enter")
    page.get_by_text("The text is empty").wait_for(timeout=PATIENCE)
    no_errors(page)
    box.fill("😀 مرحبا " + "word " * 1000)
    box.press("Enter")
    page.get_by_text("Truncated:").wait_for(timeout=PATIENCE)
    settle(page)
    no_errors(page)
    page.screenshot(path=str(SHOTS / "particles_bad_input.png"))


def test_the_view_switch_survives_empty_sentences(server, page):
    """Runs with no sentence draw no figure and no switch under it; the next sentence shows the view picked
    before, drawn as picked (two empty runs in a row once left both options unpicked, then the raw view)."""
    url, _ = server
    page.goto(f"{url}/")
    settle(page)
    raw = page.locator("button", has_text="Raw residual stream").first
    raw.click()
    settle(page)
    box = page.get_by_label("Sentence", exact=True)
    for text in ("", "   ", "the river bank ."):
        box.fill(text)
        box.press("Enter")
        if text.strip():
            settle(page)
        else:
            page.get_by_text("The text is empty").wait_for(timeout=PATIENCE)
            page.wait_for_function(QUIET, timeout=PATIENCE)
    no_errors(page)
    assert raw.get_attribute("aria-checked") == "true"
    assert page.locator("button", has_text="What the operators read").first.get_attribute("aria-checked") == "false"
    captions = page.locator("[data-testid='stCaptionContainer']").all_inner_texts()
    assert any(c.startswith("The raw residual stream, sizes kept") for c in captions), captions
    assert "norm=0" in page.url


def test_compare_both_modes(server, page):
    url, _ = server
    page.goto(f"{url}/compare")
    settle(page)
    no_errors(page)
    title = "() => document.querySelector('.js-plotly-plot .gtitle').textContent"
    assert "t = 0" in page.evaluate(title)
    page.locator(".js-plotly-plot .updatemenu-button").first.click()
    page.wait_for_timeout(2500)
    assert "t = 0 " not in page.evaluate(title) + " "  # the drawn clock moved on
    no_errors(page)
    shoot(page, "compare_models")
    page.get_by_role("radio", name="Overlaid after Procrustes").click()
    page.wait_for_function("() => location.search.includes('view=overlay')", timeout=PATIENCE)
    settle(page)
    slider_to(page, 4)
    assert "t = 1" in page.evaluate(title) and "residual here" in page.evaluate(title)
    shoot(page, "compare_overlay")
    page.get_by_text("One model · two sentences").click()
    page.wait_for_function("() => location.search.includes('mode=sentences')", timeout=PATIENCE)
    settle(page)
    no_errors(page)
    assert "bank" in plot_data(page)
    shoot(page, "compare_sentences")


def test_lab_page(server, page):
    url, _ = server
    page.goto(f"{url}/lab")
    page.wait_for_selector("h1", timeout=PATIENCE)
    for _ in range(3):  # quiet three times in a row: the page has finished drawing
        page.wait_for_function(QUIET, timeout=120_000)
        page.wait_for_timeout(1000)
    no_errors(page)
    shoot(page, "lab")


def test_lab_draws_the_race_with_a_legend_clear_of_the_plot(server, page):
    """Section 4 on the stored race, in Chromium at 1280×720: each scheme's name and seed count drawn in the
    curves' legend, in one column right of the plot area (not on it, a wide plot left); every paired difference
    named on the drawn axis."""
    from collections import Counter

    from macaron.schemes import get_scheme
    from macaron.studies import zoo

    race = zoo.runs()
    url, _ = server
    page.goto(f"{url}/lab")
    heading = page.get_by_role("heading", name="4 · The race")
    heading.first.wait_for(timeout=120_000)
    heading.first.scroll_into_view_if_needed()
    for _ in range(3):
        page.wait_for_function(QUIET, timeout=120_000)
        page.wait_for_timeout(800)
    no_errors(page)
    after = "xpath=following::div[contains(concat(' ', normalize-space(@class), ' '), ' js-plotly-plot ')]"
    curves, diffs = heading.first.locator(f"{after}[1]"), heading.first.locator(f"{after}[2]")
    curves.scroll_into_view_if_needed()
    shown = curves.locator(".legendtext").evaluate_all("els => els.map(e => e.textContent)")
    seeds = Counter((r.scheme, r.budget) for r in race)
    several = len(zoo.budgets(race)) > 1
    assert sorted(shown) == sorted(f"{get_scheme(s).short}{f', {zoo.millions(b)}' if several else ''}, "
                                   f"{n} seed{'s' if n > 1 else ''}" for (s, b), n in seeds.items())
    items = [b for b in (x.bounding_box() for x in curves.locator(".legend .traces").all())]
    plot = curves.locator(".nsewdrag").first.bounding_box()
    assert min(b["x"] for b in items) >= plot["x"] + plot["width"] - 1, (items, plot)  # right of the plot, not on it
    assert max(b["x"] + b["width"] for b in items) <= 1280 - 10  # and on the page
    assert max(b["x"] for b in items) - min(b["x"] for b in items) < 2 and plot["width"] > 500  # one column
    diffs.scroll_into_view_if_needed()
    ticks = diffs.locator(".ytick text").evaluate_all(
        "els => els.map(e => [e.getBoundingClientRect().top, e.textContent])")
    rows = [text for _, text in sorted(ticks)]  # top to bottom, as read
    assert rows == [zoo.label(d, several) for d in zoo.differences(race)]
    shoot(page, "lab_race")
    gaps = heading.first.locator(f"{after}[3]")  # the Transformer − control gap along training
    gaps.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    drawn = gaps.locator("text").evaluate_all("els => els.map(e => e.textContent)")
    assert "Lie–Trotter − Control: the gap in held-out loss along training" in drawn
    assert {"against tokens seen", "aligned at each run's plateau exit", "Lie–Trotter leaves the plateau",
            "Control leaves the plateau"} <= set(drawn)
    for budget in zoo.budgets(race):
        paths = [p for p in zoo.paths(race) if p["budget"] == budget]
        seeds = ", ".join(str(p["seed"]) for p in paths)
        assert f"{zoo.millions(budget)} tokens, seed{'s' if len(paths) > 1 else ''} {seeds}" in drawn
    box = gaps.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1280  # the whole figure on the page
    shoot(page, "lab_race_gaps")


def test_lab_draws_a_trained_flows_measured_orders(tokenizer, browser, tmp_path):
    """Section 3e in Chromium, its own server on a tiny ODE pair: the Macaron's measured orders drawn as a
    person reads them (its name above, the y axis saying what is measured, each scheme's slopes in the drawn
    legend, as its orders.json holds them); the Transformer without a record gets no chart."""
    import json

    import torch

    import macaron
    from macaron import ModelConfig
    from macaron.studies import orders

    for scheme in ("transformer", "macaron"):
        torch.manual_seed(0)
        config = ModelConfig(scheme=scheme, d_model=32, n_layers=2, n_heads=4, ffn_total=128, max_len=128, dropout=0.0,
                             vocab_size=tokenizer.get_vocab_size(), name=f"flow-{scheme}", norm="post",
                             norm_affine=False, shared=True, step=0.5, tied_halves=scheme == "macaron")
        macaron.save(macaron.build(config, tokenizer), tmp_path / "m" / f"flow-{scheme}")
    record = orders.measure(macaron.load(tmp_path / "m" / "flow-macaron"), ["the cat sat ."], ["the cat sat ."])
    (tmp_path / "m" / "flow-macaron" / orders.FILE).write_text(json.dumps(record))
    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS"}
    env["MACARON_MODELS_DIR"] = str(tmp_path / "m")
    with app_server(env, tmp_path / "streamlit.log") as (url, _):
        pg = browser.new_page(viewport={"width": 1280, "height": 720})
        try:
            pg.goto(f"{url}/lab?a=flow-transformer&b=flow-macaron")
            pg.wait_for_selector("text=3e · The splitting order on a trained flow", timeout=120_000)
            for _ in range(3):
                pg.wait_for_function(QUIET, timeout=120_000)
                pg.wait_for_timeout(800)
            no_errors(pg)
            heading = pg.locator("[data-testid='stMarkdownContainer'] strong", has_text="flow-macaron")
            assert heading.count() == 1 and heading.first.is_visible()
            chart = heading.first.locator(  # the chart under the model's name (section 4's race follows 3e)
                "xpath=following::div[contains(concat(' ', normalize-space(@class), ' '), ' js-plotly-plot ')][1]")
            chart.scroll_into_view_if_needed()
            legend = chart.locator(".legendtext").evaluate_all("els => els.map(e => e.textContent)")
            for scheme, name in (("lie-trotter", "Lie–Trotter"), ("strang", "Strang–Marchuk")):
                local = record["local_slope"][scheme]["exact"][0]
                assert any(t.startswith(name) and f"slope local {local:.2f}" in t for t in legend), legend
            assert chart.locator(".ytitle").first.text_content() == orders.ERROR
            # no record: no chart of its own (3e heads each chart with its model's name in bold)
            assert pg.locator("[data-testid='stMarkdownContainer'] strong", has_text="flow-transformer").count() == 0
            shoot(pg, "lab_trained_orders")
        finally:
            pg.close()


def test_server_log_is_clean(server):
    """Run last in this module: no warnings or tracebacks while serving every page above."""
    _, log = server
    text = log.read_text()
    bad = [line for line in text.splitlines() if any(w in line for w in ("Traceback", "WARNING", "Warning", "Error"))]
    assert not bad, text
