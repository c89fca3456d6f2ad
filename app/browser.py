"""What only the viewer's browser knows: the room a figure has on their screen, and the keys a presenter's clicker
sends. Both are st.components.v2 components, mounted in the page itself (not an iframe).

The room. Streamlit cannot know the size of a browser window; a figure in presenter mode must (issue 49: the plane takes
the height the projector leaves, at true aspect, its labels placed for the pixels it gets). A component
reports the width of the column it sits in and the
height from its own top to the bottom of the window, and reports them again when the window is resized or
rotated; the page then lays the figure out for that room. Plotly's own `responsive` sizing would stretch the
drawing but not re-place its labels or keep its units equal, and a CSS height in `vh` cannot be read by the
Python that places them.
"""
from __future__ import annotations

import streamlit as st

# Reports {width, height, top} of the element in CSS pixels (top from the top of the page, scrolled or not),
# once the page has laid out and again after a resize, only when they change by a few pixels (no rerun loop).
JS = """
export default function ({ parentElement, setStateValue }) {
  const el = parentElement instanceof ShadowRoot ? parentElement.host : parentElement;
  let last = null, timer = null;
  const report = () => {
    const r = el.getBoundingClientRect();
    const now = { width: Math.round(r.width), height: window.innerHeight, top: Math.round(r.top + window.scrollY) };
    const moved = !last || ["width", "height", "top"].some((k) => Math.abs(now[k] - last[k]) > 3);
    if (moved && now.width > 0) { last = now; setStateValue("size", now); }
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(report, 200); };
  later();
  window.addEventListener("resize", later);
  return () => { clearTimeout(timer); window.removeEventListener("resize", later); };
}
"""


def room(key: str) -> tuple[int, int] | None:
    """(width, height) in CSS pixels that a full-width element placed here has: its column's width and the
    window's height below this point. None until the browser has reported them (the first run of a page)."""
    mount = st.components.v2.component("macaron_screen", js=JS, isolate_styles=False)  # same definition: no-op
    size = mount(key=key, on_size_change=lambda: None, height=0).get("size")
    if not size:
        return None
    return int(size["width"]), int(size["height"] - size["top"])


# A clicker sends PageDown / PageUp (Streamlit's own button shortcuts take those: explorer_state.header), some send
# → / ←; Space plays and pauses. Those three keys also move a focused slider or tick a focused radio, scroll a focused
# formula (scrolling_formulas) and type in a text box: here they act only when the focus is on none of those, and they
# press the step's own buttons.
KEYS_JS = """
export default function () {
  const owned = (t) => t && t.closest && t.closest(
    "input, textarea, select, [contenteditable=true], [role=slider], [role=radio], [role=tab], [role=option], " +
    "[role=combobox], [role=listbox], .slider-container, .js-plotly-plot .slider-group, .katex-display[tabindex]");
  const press = (which) => document.querySelector(`[class*="st-key-lesson${which}"] button`)?.click();
  const buttons = () => Array.from(document.querySelectorAll(".js-plotly-plot .updatemenu-button"));
  let playing = false;
  const onKey = (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey || owned(e.target)) return;
    if (e.key === "ArrowRight") press("next");
    else if (e.key === "ArrowLeft") press("back");
    else if (e.key === " " && buttons().length) {  // the first figure's Play, then its Pause
      e.preventDefault();
      const [play, pause] = buttons();
      const figure = play.closest(".js-plotly-plot");
      if (!figure.__keysWatched) {  // the figure says when an animation ends or is cut short
        figure.__keysWatched = true;
        figure.on("plotly_animated", () => { playing = false; });
        figure.on("plotly_animationinterrupted", () => { playing = false; });
      }
      (playing ? pause : play).dispatchEvent(new MouseEvent("click", { bubbles: true }));
      playing = !playing;
    } else return;
  };
  window.addEventListener("keydown", onKey);
  return () => window.removeEventListener("keydown", onKey);
}
"""


def lesson_keys() -> None:
    """→ / ← to the next and previous lesson step and Space to play and pause, while the focus is in no
    control that takes those keys itself."""
    st.components.v2.component("macaron_keys", js=KEYS_JS, isolate_styles=False)(key="room_keys", height="content")


# A formula wider than its column scrolls sideways (st.latex), and keys can scroll a region only once it can take the
# focus (WCAG 2.1.1; axe-core's scrollable-region-focusable): each formula that scrolls can take it, one that fits not,
# rechecked as pages draw and the window is resized (at most every 150 ms: an animation redraws all the time).
FORMULAS_JS = """
export default function () {
  let timer = null;
  const mark = () => {
    timer = null;
    for (const el of document.querySelectorAll(".katex-display")) {
      const scrolls = el.scrollWidth > el.clientWidth;
      if (scrolls && !el.hasAttribute("tabindex")) el.setAttribute("tabindex", "0");
      else if (!scrolls && el.hasAttribute("tabindex")) el.removeAttribute("tabindex");
    }
  };
  const soon = () => { if (!timer) timer = setTimeout(mark, 150); };
  const watch = new MutationObserver(soon);
  watch.observe(document.body, { childList: true, subtree: true });
  window.addEventListener("resize", soon);
  soon();
  return () => { clearTimeout(timer); watch.disconnect(); window.removeEventListener("resize", soon); };
}
"""


def scrolling_formulas() -> None:
    """Every formula that is wider than its column (and so scrolls) reachable by Tab, on every page."""
    st.components.v2.component("macaron_formulas", js=FORMULAS_JS, isolate_styles=False)(key="room_formulas", height=0)
