"""Macaron Explorer: the Streamlit entry point.

    streamlit run app/main.py

Tokens are particles, layers are time steps: a Transformer layer is a Lie–Trotter splitting
step, a Macaron layer a Strang–Marchuk step. One file per page in app/pages/.
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # `streamlit run app/main.py` puts app/ first, not the repository
    sys.path.insert(0, str(HERE.parent))

import streamlit as st  # noqa: E402

from app import common  # noqa: E402

common.leave_legacy_pages_mode()
common.configure_threads()
common.initial_query()  # remember the shared link before any page rewrites the address bar

st.set_page_config(page_title="Macaron Explorer", page_icon=":material/scatter_plot:", layout="wide",
                   initial_sidebar_state="expanded")

# Compact for a 1280×720 laptop and a projector: less empty space above the title.
st.html("""<style>
[data-testid="stMainBlockContainer"] {padding-top: 2.5rem; padding-bottom: 3rem;}
[data-testid="stMainBlockContainer"] h1 {font-size: 2.0rem; padding-top: 0; padding-bottom: 0.4rem;}
[data-testid="stMainBlockContainer"] h3 {padding-top: 1.2rem;}
</style>""")

pages = [
    st.Page(HERE / "pages" / "particles.py", title="Particles", icon=":material/bubble_chart:", url_path="start",
            default=True),
    st.Page(HERE / "pages" / "compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    # the default page lives at "/"; this alias keeps links to /particles working
    st.Page(HERE / "pages" / "particles.py", title="Particles", url_path="particles", visibility="hidden"),
]
if (HERE / "pages" / "lab.py").is_file():  # written separately; the app works without it
    pages.append(st.Page(HERE / "pages" / "lab.py", title="Splitting lab", icon=":material/science:",
                         url_path="lab"))

with st.sidebar:
    st.markdown("### Macaron Explorer\nTransformers as multi-particle dynamics")
page = st.navigation(pages)
page.run()
common.sidebar_status()
