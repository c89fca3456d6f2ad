"""The room a figure has on the viewer's screen, as their browser reports it.

Streamlit cannot know the size of a browser window; a figure in presenter mode must (issue 49: the plane takes
the height the projector leaves, at true aspect, its labels placed for the pixels it gets). A component
(st.components.v2, mounted in the page itself, not an iframe) reports the width of the column it sits in and the
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
