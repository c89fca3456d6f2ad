"""The lesson file in Debian's Chromium, opened from file:// with the network off and every request that
is not a file:// one blocked and counted (none expected), on the shipped default models: every step's
figure is drawn, ▶ Play changes the drawn title, step 6's stage buttons change the drawn guesses and the
particles, and the page prints as a handout of one step a page (page.pdf, then pdftoppm and pdftotext:
what is on each page, in text and in the colours of diffusion and convection). What is read is what is
drawn (SVG text, pixels), not the figures' data. Screenshots and the printed pages go to screenshots/."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from served import CHROMIUM
from test_browser import SHOTS, count_pixels, shoot

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not shutil.which("chromium"), reason="no Chromium"),
]
playwright_api = pytest.importorskip("playwright.sync_api")

import macaron  # noqa: E402
from macaron import lesson  # noqa: E402
from macaron.__main__ import main  # noqa: E402

BLUE, VERMILLION = (0, 114, 178), (213, 94, 0)  # diffusion, convection (macaron.plot.style)
WHATIF = next(k for k, s in enumerate(lesson.LESSON, 1) if s.view.get("if"))  # step 8: diffusion switched off


@pytest.fixture(scope="module")
def lesson_file(tmp_path_factory) -> Path:
    """`python -m macaron lesson` with its defaults: the shipped default pair, step 6 on a model with stages."""
    out = tmp_path_factory.mktemp("lesson") / "lesson.html"
    assert main(["lesson", "--out", str(out)]) == 0
    return out


@pytest.fixture()
def opened(browser, lesson_file):
    """(page, requests): the file opened at 1280×720 with the network off; every request not for a file:// URL
    is blocked and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)
    outside = []

    def block(route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", block)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(lesson_file.as_uri())
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length > 0")
    page.wait_for_timeout(800)
    yield page, outside
    assert not errors, errors
    context.close()


def title_of(page, figure: str) -> str:
    return page.evaluate("sel => document.querySelector(sel + ' .gtitle').textContent", figure)


def test_every_step_is_drawn_from_the_file_with_nothing_fetched(opened):
    page, outside = opened
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "lesson_file_top.png"))
    for k, step in enumerate(lesson.LESSON, start=1):
        section = f"#step-{k}"
        page.locator(section).scroll_into_view_if_needed()
        page.goto(page.url.split("#")[0] + f"#step-{k}")
        page.wait_for_timeout(300)
        shown = f"{section} .stage.shown .figure" if k == 6 else f"{section} .figure"
        dots = page.evaluate("sel => document.querySelectorAll(sel + ' .scatterlayer .point').length", shown)
        assert dots >= 10, (k, dots)  # the particles (or the toy system's) are drawn
        assert step.title in page.locator(f"{section} h2").inner_text()
        assert page.locator(section).get_by_text(step.say[:40]).is_visible()
        assert title_of(page, shown)  # a drawn title names the frame
        page.screenshot(path=str(SHOTS / f"lesson_file_step{k}.png"))
    assert "diffusion (attention)" in title_of(page, "#step-2 .figure")
    assert "convection (FFN)" in title_of(page, "#step-3 .figure")
    lab = page.evaluate("() => Array.from(document.querySelectorAll('#step-4 .figure .gtitle, #step-4 .figure "
                        ".g-y2title')).map(e => e.textContent).join(' | ')")
    assert "RMS" in lab and "Strang–Marchuk" in lab  # the error chart beside the toy system
    said = page.evaluate("sel => Array.from(document.querySelectorAll(sel + ' .annotation-text'))"
                         ".map(e => e.textContent).join(' | ')", f"#step-{WHATIF} .figure")
    assert "What if: diffusion off in every layer" in said and "[MASK]: york" in said  # the altered run, its answer
    assert outside == []  # no request left the file


def test_play_changes_the_drawn_title(opened):
    page, outside = opened
    fig = "#step-1 .figure"
    page.locator(fig).scroll_into_view_if_needed()
    first = title_of(page, fig)
    assert "embedding" in first and "sub-step 0 of" in first
    page.locator(f"{fig} .updatemenu-button").first.click()
    seen = set()
    for _ in range(40):
        page.wait_for_timeout(150)
        seen.add(title_of(page, fig))
    assert len(seen) >= 4, seen
    assert any("diffusion (attention)" in t for t in seen) and any("convection (FFN)" in t for t in seen)
    page.wait_for_function(f"() => document.querySelector('{fig} .gtitle').textContent"
                           f".includes('layer 6 · convection')",
                           timeout=20_000)  # it plays to the last sub-step and stops there
    page.screenshot(path=str(SHOTS / "lesson_file_step1_played.png"))
    assert outside == []


def lens_row(page) -> list[str]:
    """The guesses drawn in the last row of the visible stage's logit lens (its model's own top 5)."""
    return page.evaluate("""() => {
        const t = Array.from(document.querySelectorAll('#step-6 .stage.shown .lens .heatmaplayer text'));
        return t.slice(-5).map(e => e.textContent); }""")


def test_the_stage_buttons_of_step_6_change_the_drawn_guesses(opened):
    page, outside = opened
    page.goto(page.url.split("#")[0] + "#step-6")
    page.wait_for_timeout(400)
    stages = [s.name for s in macaron.milestones(lesson_learner())]
    assert stages == ["random start", "plateau", "rise", "final"]
    plot = page.locator("#step-6 .stage.shown .figure .js-plotly-plot")
    seen = {}
    for name in ("plateau", "rise", "final", "random start"):
        page.locator("#step-6 .stages").get_by_role("button", name=name, exact=True).click()
        page.wait_for_timeout(300)
        heading = page.locator("#step-6 .stage.shown .guesses").inner_text()
        row = lens_row(page)
        assert len(row) == 5 and all(row), row
        seen[name] = (row, heading, page.locator("#step-6 .stage.shown .figure .js-plotly-plot").screenshot())
        assert page.locator("#step-6 .stage.shown").count() == 1
    assert len({tuple(r) for r, _, _ in seen.values()}) == 4  # every stage guesses differently
    assert seen["plateau"][0] != seen["final"][0] and "school" in seen["final"][0][:2]  # README: final guesses school
    assert all(row[0] in heading for row, heading, _ in seen.values())  # the sentence under the plot agrees
    assert seen["plateau"][2] != seen["final"][2]  # the particles drawn differ too
    page.locator("#step-6 .stages").get_by_role("button", name="final", exact=True).click()
    page.wait_for_timeout(300)
    page.screenshot(path=str(SHOTS / "lesson_file_step6_final.png"))
    assert plot.count() == 1 and outside == []


def lesson_learner() -> str:
    from macaron.plot.lesson import choose_models

    return str(choose_models().learner)


def test_the_file_prints_one_step_a_page(opened, tmp_path):
    page, outside = opened
    pdf = tmp_path / "lesson.pdf"
    page.emulate_media(media="print")
    page.pdf(path=str(pdf), prefer_css_page_size=True)
    subprocess.run(["pdftoppm", "-r", "60", "-png", str(pdf), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == len(lesson.LESSON) + 1  # a page a step; step 6 at the plateau and at its final weights
    text = [subprocess.run(["pdftotext", "-f", str(i), "-l", str(i), "-layout", str(pdf), "-"], check=True,
                           capture_output=True, text=True).stdout for i in range(1, len(pages) + 1)]
    for k, step in enumerate(lesson.LESSON, start=1):
        i = k - 1 + (k > lesson.STAGED)  # after the staged step's two pages
        assert f"{k} · {step.title}" in " ".join(text[i].split()), (k, text[i][:300])
        assert "For the teacher." in text[i] and "Printed at" in text[i]
    assert "plateau" in text[5] and "final" in text[6] and "Guesses for [MASK]" in text[5] + text[6]
    page8 = " ".join(text[WHATIF - 1 + (WHATIF > lesson.STAGED)].split())
    assert "What if: diffusion off in every layer" in page8  # the still of the altered run, drawn on its page
    assert "▶ Play" not in text[1] and "Pause" not in " ".join(text)  # the controls stay on screen
    shots = [p.read_bytes() for p in pages]
    for i, png in enumerate(shots):
        shutil.copy(pages[i], SHOTS / f"lesson_file_print_page{i + 1}.png")
    # page 2 (a diffusion step) is blue where page 3 (a convection step) is vermillion
    assert count_pixels(shots[1], BLUE) > 2 * count_pixels(shots[2], BLUE) + 100
    assert count_pixels(shots[2], VERMILLION) > 2 * count_pixels(shots[1], VERMILLION) + 100
    assert outside == []


def test_the_apps_download_button_gives_the_same_lesson(models_dir, browser, tmp_path):
    """The real app (`streamlit run`, the suite's tiny models): the lesson's sidebar section offers the file for
    the models its steps open, and clicking it downloads a complete lesson that opens offline."""
    import os

    from playwright.sync_api import expect

    from served import server as app_server
    from test_browser import QUIET, settle

    env = {k: v for k, v in os.environ.items() if k != "MACARON_MODELS"}
    env["MACARON_MODELS_DIR"] = str(models_dir)
    with app_server(env, tmp_path / "streamlit.log") as (url, _):
        page = browser.new_page(viewport={"width": 1280, "height": 720}, accept_downloads=True)
        try:
            page.goto(f"{url}/")
            settle(page)
            page.get_by_text(f"Guided lesson ({len(lesson.LESSON)} steps)").click()
            button = page.get_by_role("button", name="Download this lesson")
            button.wait_for()
            # clicked once the page is quiet and the button enabled: a click on a button that a rerun is replacing
            # is lost, and no download would ever come
            page.wait_for_function(QUIET, timeout=120_000)
            expect(button).to_be_enabled(timeout=120_000)
            try:  # the file is built when asked for: every step's models traced on the server
                with page.expect_download(timeout=300_000) as got:
                    # the click goes to the button itself: a click at its coordinates can land on the step links
                    # above it when the sidebar scrolls under the pointer (seen in a full run: no download, the
                    # pointer over step 6's link)
                    button.dispatch_event("click")
                download = got.value
            except PlaywrightTimeout:  # say what the page and the server said instead of a bare timeout
                shoot(page, "lesson-download-missing")
                shown = page.locator("[data-testid='stToast'], [data-testid='stAlert']").all_inner_texts()
                pytest.fail(f"no download within 300 s; the page shows {shown}; the server's log ends: "
                            f"{(tmp_path / 'streamlit.log').read_text()[-2000:]}")
            saved = tmp_path / download.suggested_filename
            download.save_as(saved)
        finally:
            page.close()
    assert saved.name == "macaron-lesson.html" and saved.stat().st_size < 15e6
    text = saved.read_text(encoding="utf-8")
    assert "tiny-transformer" in text and "tiny-macaron" in text
    assert all(f"id='step-{k}'" in text for k in range(1, len(lesson.LESSON) + 1))
    context = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)
    try:
        page = context.new_page()
        page.goto(saved.as_uri())
        page.wait_for_function("() => document.querySelectorAll('.figure .js-plotly-plot .main-svg').length >= 5")
        assert "diffusion (attention)" in title_of(page, "#step-2 .figure")
    finally:
        context.close()
    assert "Traceback" not in (tmp_path / "streamlit.log").read_text()


def test_presenter_mode_folds_the_notes_on_screen_and_prints_them(browser, tmp_path):
    """--present: larger type, the teacher's notes folded on the projector (so ▶ Play stays on a 1280×720
    screen) and printed open, still one step a page."""
    out = tmp_path / "present.html"
    assert main(["lesson", "--present", "--out", str(out)]) == 0
    context = browser.new_context(viewport={"width": 1280, "height": 720}, offline=True)
    try:
        page = context.new_page()
        page.goto(out.as_uri() + "#step-1")
        page.wait_for_function("() => document.querySelectorAll('.figure .js-plotly-plot .main-svg').length >= 5")
        page.wait_for_timeout(500)
        note = lesson.LESSON[0].note[:50]
        assert not page.get_by_text(note).is_visible()  # folded
        play = page.locator("#step-1 .figure .updatemenu-button").first.bounding_box()
        assert play["y"] + play["height"] <= 720  # ▶ Play on the first screen of the step
        page.screenshot(path=str(SHOTS / "lesson_file_presenter_step1.png"))
        page.emulate_media(media="print")
        page.pdf(path=str(tmp_path / "present.pdf"), prefer_css_page_size=True)
    finally:
        context.close()
    text = subprocess.run(["pdftotext", str(tmp_path / "present.pdf"), "-"], check=True, capture_output=True,
                          text=True).stdout
    assert text.count("\f") == len(lesson.LESSON) + 1  # a page a step, step 6 two: form feeds end pages
    for step in lesson.LESSON:
        assert " ".join(step.note.split()[:8]) in " ".join(text.split()), step.title  # each note printed open
