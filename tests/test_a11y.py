"""Accessibility: axe-core's WCAG 2.1 A and AA rules, run in Debian's Chromium on the served app (the suite's
tiny models) on every page, the guided lesson and presenter mode at 1280×720 (and Particles on a 1024×768
projector, where formulas are wider than their columns), once the page has drawn: on the first screen, then
screenful by screenful down the page and the sidebar, since axe-core judges the colours of text in view only;
on Particles also while its animation plays. axe-core comes with the PyPI package axe-playwright-python (its
bundled axe.min.js, injected into the page: nothing fetched). A failure lists each violation's rule, impact, the
failing elements' selectors, for colour contrast the colours and the ratio against the one required, and for a
region that scrolls how far it scrolls."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from served import CHROMIUM
from test_browser import server, settle  # noqa: F401  (server: the module's served app, a fixture)

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists() and not shutil.which("chromium"), reason="no Chromium"),
]
playwright_api = pytest.importorskip("playwright.sync_api")
axe_base = pytest.importorskip("axe_playwright_python.base")

SCREEN, PROJECTOR = (1280, 720), (1024, 768)
CASES = {  # name: the address opened, the window
    "particles": ("/", SCREEN),
    "compare": ("/compare", SCREEN),
    "lab": ("/lab", SCREEN),
    "dynamics": ("/dynamics", SCREEN),
    "lesson": ("/?lesson=2", SCREEN),  # a middle step: its text, Back and Next with their keys' names, the menu open
    "presenter": ("/?present=1", SCREEN),
    "presenter-lesson": ("/?present=1&lesson=2", SCREEN),
    "particles-projector": ("/", PROJECTOR),
}
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# axe-core judges the colours of text in view only, and Streamlit scrolls inside its own panes: the rules that
# depend on what is seen run again at each screenful of each pane.
PANES = ('[data-testid="stMain"]', '[data-testid="stSidebarContent"]')
IN_VIEW = ["color-contrast", "link-in-text-block"]

AXE = "options => axe.run(document, options)"
SCROLL = """([pane, y]) => { const e = document.querySelector(pane);
    if (!e) return null;
    e.scrollTop = y;
    return e.scrollTop; }"""
OVERFLOW = """sel => { const e = document.querySelector(sel);
    return e && `${e.scrollWidth}×${e.scrollHeight} px of content in ${e.clientWidth}×${e.clientHeight} px: `
        + JSON.stringify(e.textContent.slice(0, 60)); }"""


def axe_violations(page, rules: list[str] | None = None) -> list[dict]:
    """axe-core's violations of the WCAG 2.0 / 2.1 A and AA rules (or of `rules` only) on the page as it is now."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_base.AXE_FILE_PATH))
    only = {"type": "rule", "values": rules} if rules else {"type": "tag", "values": TAGS}
    violations = page.evaluate(AXE, {"runOnly": only, "resultTypes": ["violations"]})["violations"]
    for v in violations:
        if v["id"] == "scrollable-region-focusable":  # what overflows, and by how much
            for node in v["nodes"]:
                last = node["target"][-1]
                node["scrolls"] = page.evaluate(OVERFLOW, last) if isinstance(last, str) else None
    return violations


def report(violations: list[dict]) -> str:
    """What a developer needs to act: rule, impact, each failing element and, for contrast, the figures."""
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}): {v['help']} [{len(v['nodes'])} element(s)] {v['helpUrl']}")
        for node in v["nodes"]:
            lines.append("  - " + " >> ".join(" ".join(t) if isinstance(t, list) else t for t in node["target"]))
            lines.append(f"    {node['html'][:160]}")
            if node.get("scrolls"):
                lines.append(f"    scrolls: {node['scrolls']}")
            for check in node.get("any", []) + node.get("all", []) + node.get("none", []):
                d = check.get("data")
                if isinstance(d, dict) and "contrastRatio" in d:
                    lines.append(f"    text {d.get('fgColor')} on {d.get('bgColor')}: {d.get('contrastRatio')} : 1, "
                                 f"needs {d.get('expectedContrastRatio')} ({d.get('fontSize')}, "
                                 f"{d.get('fontWeight')})")
                else:
                    lines.append(f"    {check['message']}")
    return "\n".join(lines)


def ready(page) -> None:
    """The figure drawn, Streamlit's run over and the fonts loaded (KaTeX's set the formulas' widths)."""
    settle(page)
    page.evaluate("() => document.fonts.ready.then(() => true)")


def scrolled(page, step: int = 560) -> list[tuple[str, list[dict]]]:
    """(where, violations of the IN_VIEW rules) at each screenful of each pane, less than a screen apart (a fixed
    header hides the top of each)."""
    found = []
    for pane in PANES:
        y, last = 0, None
        while True:
            y += step
            at = page.evaluate(SCROLL, [pane, y])
            if at is None or at == last:  # no such pane, or its end
                break
            last = at
            page.wait_for_timeout(150)
            found.append((f"{pane} scrolled to {at} px", axe_violations(page, IN_VIEW)))
        page.evaluate(SCROLL, [pane, 0])
    return found


def check(page, where: str) -> None:
    """No violation on the first screen (every rule), nor further down either pane (the IN_VIEW rules)."""
    ready(page)
    found = [("the first screen", axe_violations(page))] + scrolled(page)
    seen, text = set(), []
    size = "×".join(map(str, page.viewport_size.values()))
    for view, violations in found:
        for v in violations:  # an element still in view one screenful down is told once
            v["nodes"] = [n for n in v["nodes"] if (v["id"], str(n["target"])) not in seen]
            seen.update((v["id"], str(n["target"])) for n in v["nodes"])
        violations = [v for v in violations if v["nodes"]]
        if violations:
            text.append(f"axe-core on {where} at {size}, {view}:\n{report(violations)}")
    assert not text, "\n".join(text)


@pytest.fixture()
def page(browser):
    pg = browser.new_page(viewport=dict(zip(("width", "height"), SCREEN)))
    yield pg
    pg.close()


@pytest.mark.parametrize("name", list(CASES))
def test_no_wcag21_violation(server, page, name):  # noqa: F811
    url, _ = server
    path, (width, height) = CASES[name]
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{url}{path}")
    check(page, path)


def test_no_wcag21_violation_while_the_animation_plays(server, page):  # noqa: F811
    url, _ = server
    page.goto(f"{url}/")
    ready(page)
    page.locator(".js-plotly-plot .updatemenu-button").first.click()  # ▶ Play
    page.wait_for_function("() => document.querySelector('.js-plotly-plot').layout.sliders[0].active > 0",
                           timeout=10_000)
    violations = axe_violations(page)
    assert not violations, f"axe-core on / while ▶ Play runs:\n{report(violations)}"


# ---- the figures' own text: SVG, which axe-core does not judge -------------------------------------------------
SVG_TEXT = """() => Array.from(document.querySelectorAll('.js-plotly-plot svg text, .js-plotly-plot svg tspan'))
    .map(t => {
        const own = Array.from(t.childNodes).filter(n => n.nodeType === 3).map(n => n.textContent).join('').trim();
        const box = t.getBoundingClientRect(), s = getComputedStyle(t);
        let alpha = parseFloat(s.fillOpacity || '1');
        for (let e = t; e && e.tagName !== 'svg'; e = e.parentElement) alpha *= parseFloat(getComputedStyle(e).opacity);
        const bar = t.closest('.point')?.querySelector('path'), b = bar?.getBoundingClientRect();
        const on = b && box.left >= b.left - 1 && box.right <= b.right + 1 && box.top >= b.top - 1
            && box.bottom <= b.bottom + 1;  // a bar's text written inside it sits on the bar, else on the white
        return {text: own, fill: s.fill, alpha, px: parseFloat(s.fontSize), weight: parseInt(s.fontWeight),
                ground: on ? getComputedStyle(bar).fill : 'rgb(255, 255, 255)',
                drawn: box.width > 0 && box.height > 0};
    }).filter(t => t.text && t.drawn)"""


def _channels(color: str) -> list[float]:
    """'rgb(r, g, b)' or 'rgba(r, g, b, a)' as [r, g, b, a]."""
    values = [float(v) for v in color[color.index("(") + 1:-1].split(",")]
    return values + [1.0] * (4 - len(values))


def contrast(fill: str, alpha: float, ground: str) -> float:
    """WCAG 2.1's contrast ratio of text in `fill` at opacity `alpha` on an opaque `ground`."""
    *text, a = _channels(fill)
    under = _channels(ground)[:3]

    def luminance(rgb):
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (v / 255 for v in rgb)]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    a *= alpha
    lighter, darker = sorted([luminance([a * t + (1 - a) * u for t, u in zip(text, under)]), luminance(under)])[::-1]
    return (lighter + 0.05) / (darker + 0.05)


def low_contrast(texts: list[dict]) -> set:
    """The texts under WCAG 2.1 AA's contrast: 4.5 : 1, 3 : 1 where large (24 px, or 18.66 px bold)."""
    return {(t["text"][:40], t["fill"], t["ground"], round(contrast(t["fill"], t["alpha"], t["ground"]), 2))
            for t in texts if contrast(t["fill"], t["alpha"], t["ground"]) <
            (3.0 if t["px"] >= 24 or (t["px"] >= 18.66 and t["weight"] >= 700) else 4.5)}


@pytest.mark.parametrize("path, play", [("/", True), ("/compare", True), ("/lab", True), ("/dynamics", False)])
def test_the_figures_text_has_wcag_aa_contrast(server, page, path, play):  # noqa: F811
    """Every word and number a figure draws (titles in a sub-step's colour, the toy lab's readout in each scheme's,
    axes, legends, labels) has 4.5 : 1 on the figure's white (or on its bar), 3 : 1 where large (24 px, or 18.66 px
    bold): WCAG 2.1 AA, sampled while ▶ Play runs, where each frame's title takes its sub-step's colour."""
    url, _ = server
    page.goto(f"{url}{path}")
    ready(page)
    texts = page.evaluate(SVG_TEXT)
    if play:
        page.locator(".js-plotly-plot .updatemenu-button").first.click()
        for _ in range(16):
            page.wait_for_timeout(200)
            texts += page.evaluate(SVG_TEXT)
    assert len(texts) > 20
    assert not low_contrast(texts), sorted(low_contrast(texts))
