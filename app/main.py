"""Macaron Explorer: the Streamlit entry point.

    streamlit run app/main.py

Tokens are particles, layers are time steps: a Transformer layer is a Lie–Trotter splitting
step, a Macaron layer a Strang–Marchuk step. One file per page in app/views/ (not pages/, which
would switch Streamlit to its legacy multipage mode).
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

import boot
import browser

# A new server imports PyTorch and warms the models for several seconds before any page can draw:
# say so from the first moment instead of a blank page (later calls of set_page_config add to this one).
booting = not boot.READY
if booting:
    st.set_page_config(page_title="Macaron Explorer", page_icon=":material/scatter_plot:", layout="wide")
    starting = st.empty()
    starting.info("Starting the explorer (once per server; 10–20 s on an idle 2-core machine, longer on a busy one): "
                  "loading PyTorch and the models, "
                  "tracing a first sentence…", icon=":material/hourglass_top:")

import explorer_cache as cache  # noqa: E402  (after the message: this import is the slow part)
import explorer_state as state  # noqa: E402
import served_models  # noqa: E402

VIEWS = Path(__file__).resolve().parent / "views"

cache.warm(served_models.default_paths(), state.DEFAULT_SENTENCE)  # once per server
if booting:
    boot.READY = True
    starting.empty()
state.initial_query()  # remember the shared link before any page rewrites the address bar
state.follow_link()    # a lesson step (a link inside the app) opens its view

st.set_page_config(page_title="Macaron Explorer", page_icon=":material/scatter_plot:", layout="wide",
                   initial_sidebar_state="collapsed" if state.presenting() else "expanded")

# Compact, so that at 1280×720 the sentence box, the whole animation and its ▶ Play fit on the first screen.
st.html("""<style>
[data-testid="stMainBlockContainer"] {padding: 1.6rem 2rem 3rem 2rem;}
[data-testid="stMainBlockContainer"] h1 {font-size: 1.7rem; padding: 0 0 0.1rem 0;}
[data-testid="stMainBlockContainer"] h2 {font-size: 1.45rem; padding: 0.9rem 0 0.3rem 0;}
[data-testid="stMainBlockContainer"] h3 {padding-top: 1.2rem;}
[class*="st-key-room_"] {margin-bottom: -1rem;}  /* app/browser.py's measuring point: no gap of its own */
.katex-display {padding-right: 3px;}  /* KaTeX's last glyph overhangs its box by 2 px: no scroll for that alone */
</style>""")
browser.scrolling_formulas()  # a formula too wide for its column scrolls: Tab reaches it (WCAG 2.1.1)
if state.presenting():  # for a projector: no sidebar, everything larger
    st.html("""<style>
html {font-size: 19px;}
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stHeader"] {display: none;}
</style>""")

pages = {  # by file, as the lesson names its steps' pages
    "particles.py": st.Page(VIEWS / "particles.py", title="Particles", icon=":material/bubble_chart:",
                            url_path="start", default=True),
    "compare.py": st.Page(VIEWS / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    "lab.py": st.Page(VIEWS / "lab.py", title="Splitting lab", icon=":material/science:", url_path="lab"),
    "dynamics.py": st.Page(VIEWS / "dynamics.py", title="Dynamics", icon=":material/grain:", url_path="dynamics"),
    "translate.py": st.Page(VIEWS / "translate.py", title="Translate", icon=":material/translate:",
                            url_path="translate"),
    "patching.py": st.Page(VIEWS / "patching.py", title="Patching", icon=":material/swap_horiz:", url_path="patching"),
}

with st.sidebar:
    st.markdown("### Macaron Explorer\nTransformers as multi-particle dynamics")
page = st.navigation(list(pages.values()))
step = state.lesson_step()
if step:  # a step's link typed by hand (/?lesson=4) opens the step's own page, not the one in the address
    own = pages[Path(state.LESSON[step - 1].page).name]
    if own.url_path != page.url_path:
        st.switch_page(own, query_params=state.lesson_view(step))
state.lesson_menu()
with cache.turn():  # pages take turns on the server's cores
    page.run()
state.sidebar_status()
