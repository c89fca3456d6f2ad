"""Splitting lab: the schemes behind Transformer and Macaron layers, on toy particle systems whose
exact flow is known, and the same question asked of trained networks."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import streamlit as st

import explorer_cache as cache
import explorer_state as state
import lab_cache
import lab_race
from macaron import lab, plot
from macaron.formats.folder import CheckpointError
from macaron.plot.lab import model_colors, slope_text
from macaron.plot.style import SchemeStyle, scheme_name, scheme_style
from macaron.schemes import F_AND_G, PHI_SAID, SCHEMES
from macaron.studies import bridge, orders

SYSTEMS = {
    "linear": "linear (graph diffusion + rotation)",
    "attention": "attention (softmax + tanh MLP)",
    "commuting": "commuting (F and G commute)",
}
SOLVERS = {"exact": "exact sub-flows", "euler": "one Euler step each (a residual sub-layer's move)"}
DEFAULT_SCHEMES = ["lie-trotter", "strang", "unsplit"]
MAGNIFY = [1, 2, 5, 10, 20]


# ---- page -------------------------------------------------------------------------------------------
state.header(
    "Splitting lab: when do Macaron's half steps help?",
    "Particles move by $\\dot x_i = F(x_i, [x_1..x_n]) + G(x_i)$, **F = diffusion** (attention), **G = convection** "
    "(the FFN), one after the other in a step **h**. Toy systems whose **exact** motion is known measure the "
    f"errors; trained models answer in [section 4](#{lab_race.ANCHOR}).")  # one line: ▶ Play stays on screen
ANIMATION_HEIGHT = 530  # with the title, intro and heading, the plane and its ▶ Play fit a 1280×720 screen


def sidebar() -> dict:
    with st.sidebar:
        st.subheader("Toy system")
        st.caption(F_AND_G)
        state.init_widget("l_sys", "sys", "linear", valid=lambda v: v in SYSTEMS)
        kind = st.radio("System", list(SYSTEMS), key="l_sys", format_func=SYSTEMS.get,
                        help="linear: F = −β(L⊗V) pulls particles together along a random graph, anisotropically; "
                             "G rotates and slightly contracts. attention: F = softmax(β⟨Qxᵢ, Kxⱼ⟩)·Vxⱼ, "
                             "G = a small tanh MLP. commuting: the linear F with G = c·x, which commutes with F.")
        state.init_widget("l_sub", "sub", "exact", valid=lambda v: v in SOLVERS)
        solver = st.radio("Each sub-step F, G is solved by", list(SOLVERS), key="l_sub", format_func=SOLVERS.get,
                          help="exact: the sub-flow itself (Theorem 1 of the paper is about this). Euler: "
                               "x + h·F(x), the move a residual sub-layer makes (pre-LN: F reads LN(x); post-LN: a "
                               "LayerNorm follows).")
        state.init_widget("l_beta", "beta", 1.0, parse=float, valid=lambda v: 0.0 <= v <= 3.0)
        beta = st.slider("Interaction strength β", 0.0, 3.0, step=0.1, key="l_beta",
                         help="Scales F (linear: diffusion rate; attention: sharpness of the softmax). "
                              "β = 0 switches the linear diffusion off.")
        state.init_widget("l_n", "np", 24, parse=int, valid=lambda v: 2 <= v <= 96)
        n = st.slider("Particles", 2, 96, key="l_n")
        state.init_widget("l_T", "T", 1.0, parse=float, valid=lambda v: 0.5 <= v <= 4.0)
        horizon = st.slider("Time horizon T (animation)", 0.5, 4.0, step=0.5, key="l_T")
        state.init_widget("l_steps", "steps", 8, parse=int, valid=lambda v: 1 <= v <= 40)
        n_steps = st.slider("Steps (layers)", 1, 40, key="l_steps",
                            help="The animation takes this many steps of size h = T / steps.")
        st.caption(f"Step size **h = T / steps = {horizon / n_steps:.3g}**. Dimension d = 2: the plane is the "
                   "whole state, nothing is projected.")
        state.init_widget("l_show", "show", ",".join(DEFAULT_SCHEMES),
                          valid=lambda v: all(s in SCHEMES for s in v.split(",") if s))
        if "l_show_ms" not in st.session_state:  # the URL holds 'a,b,c'; the widget holds a list
            st.session_state["l_show_ms"] = [s for s in st.session_state["l_show"].split(",")
                                             if s in SCHEMES]
        shown = st.multiselect("Schemes", list(SCHEMES), key="l_show_ms",
                               format_func=lambda s: SCHEMES[s].short,
                               help="Lie–Trotter = the Transformer layer, Strang–Marchuk = the Macaron layer, "
                                    "Control = Macaron's sub-layers in the Transformer's order (F, ½G, ½G; "
                                    "section 4 races it), unsplit Euler = one step of F + G together (Euler "
                                    "sub-steps only).")
        state.init_widget("l_mag", "mag", 10, parse=int, valid=lambda v: v in MAGNIFY)
        magnify = st.select_slider("Magnify errors in the plane", MAGNIFY, key="l_mag",
                                   format_func=lambda m: f"×{m}",
                                   help="Draw each scheme's particle at exact + m·(scheme − exact): the "
                                        "direction of the error stays, its length grows. The error chart "
                                        "beside the plane always shows the true size.")
    return dict(kind=kind, solver=solver, beta=float(beta), n=int(n), horizon=float(horizon),
                n_steps=int(n_steps), shown=shown, magnify=int(magnify))


def section_particles(o: dict) -> None:
    st.header("1 · Particles: the exact flow and the schemes")
    shown = [s for s in SCHEMES if s in o["shown"]]
    if not shown:
        st.info("Pick at least one scheme in the sidebar to compare with the exact flow.", icon=":material/info:")
    # On a projector the room the screen leaves; else a height that fits 1280 × 720, 40 px less under a lesson step's
    # words (two lines more above it)
    height = (state.figure_size(False, "room_lab")["height"] if state.presenting() else
              ANIMATION_HEIGHT - 40 * bool(state.lesson_step()))
    fig, visible = cache.toy_animation(o["kind"], o["n"], o["beta"], o["horizon"], o["n_steps"], o["solver"],
                                       tuple(shown), o["magnify"], height)
    st.plotly_chart(fig, key="l_anim", **state.CHART)
    if "unsplit" in shown and o["solver"] == "exact":
        st.caption("Unsplit Euler appears with Euler sub-steps only: with exact sub-flows, the unsplit step "
                   "*is* the exact flow.")
    final = visible.final_errors()
    msg = (F_AND_G + " " if state.lesson_step() or state.presenting() else "") + (  # the intro is not on the page
        "Black dots: the exact flow; grey curves: the paths the particles really take. Each scheme's particle "
        "is joined to its exact position by a line of its colour. **▶ Play** steps through the layers; the "
        "chart on the right is the RMS distance to the exact particles over time.")
    if final and all(lab.is_roundoff(e) for e in final.values()):
        msg += (" Every scheme shown is exact here, up to round-off (F and G commute, or β = 0 switches F off): the "
                "scheme particles sit on the black dots.")
    elif "lie-trotter" in final and "strang" in final and final["strang"] > 0 and final["lie-trotter"] > 0:
        ratio = final["lie-trotter"] / final["strang"]
        better = (f"Strang–Marchuk's particles end **{_times(ratio)} closer** to the exact ones than Lie–Trotter's"
                  if ratio >= 1 else
                  f"here Lie–Trotter's particles end **{_times(1 / ratio)} closer** than Strang–Marchuk's")
        how = ("each sub-step solved exactly, the same G in both halves" if o["solver"] == "exact" else
               "one Euler step per sub-step, as a network layer takes")
        msg += f" At t = {o['horizon']:g}, on this toy system ({how}), {better}."
    state.explain(msg)
    st.markdown("**The steps in the picture.** With Euler sub-steps they are the paper's Eqs. (6–7), a Transformer "
                "layer (Eqs. 12–13), and Eqs. (14–16), a Macaron layer (Eqs. 17–19):")
    headings = {"lie-trotter": "Transformer layer = Lie–Trotter", "strang": "Macaron layer = Strang–Marchuk",
                "unsplit": "No splitting: unsplit Euler"}
    for column, (name, heading) in zip(st.columns(3), headings.items()):
        with column:
            st.markdown(f"**{heading}** {_swatch(name)}", unsafe_allow_html=True)
            st.latex(SCHEMES[name].latex)
    state.explain(PHI_SAID)


def _swatch(scheme: str) -> str:
    return f"<span style='color:{scheme_style(scheme).color};font-size:1.3em'>■</span>"


def section_orders(o: dict) -> None:
    st.header("2 · How fast the error shrinks")
    left, right = st.columns(2)
    with left:
        st.markdown("**Local error**: one step from the same state, against the exact flow, when each sub-flow is "
                    "**solved exactly** and both half steps run **the same G** (Theorem 1 of the paper, Bobylev & "
                    "Ohwada 2001):")
        # two lines: on one it is wider than its column at 1280 px and scrolls, a region keys cannot reach
        st.latex(r"\begin{aligned}&\underbrace{\Phi_{F+G}(h)x - \Phi_G(h)\Phi_F(h)x}"
                 r"_{\text{Lie–Trotter}} \\ &\quad= \tfrac{h^2}{2}\bigl(F'G - G'F\bigr)(x) + O(h^3)"
                 r"\end{aligned}")
        st.latex(r"\underbrace{\Phi_{F+G}(h)x - \Phi_G(\tfrac{h}{2})\Phi_F(h)"
                 r"\Phi_G(\tfrac{h}{2})x}_{\text{Strang–Marchuk}} = O(h^3)")
        st.markdown("**Global error** after T/h steps: the local errors add up, one order is lost: $O(h)$ for "
                    "Lie–Trotter, $O(h^2)$ for Strang–Marchuk. With **one Euler step per sub-step**, the move a "
                    "residual sub-layer makes, both are $O(h^2)$ locally and $O(h)$ globally (choose that solver in "
                    + ("the sidebar, outside presenter mode" if state.presenting() else "the sidebar")
                    + "); with **untied halves**, see 2b.")
    with right:
        st.markdown("**Why** (linear case, F = Ax, G = Bx): the Baker–Campbell–Hausdorff formula")
        st.latex(r"e^{h B} e^{h A} = e^{h(A+B) + \frac{h^2}{2}[B,A] + O(h^3)}")
        st.latex(r"e^{h B/2}\, e^{h A}\, e^{h B/2} = e^{h(A+B) + O(h^3)}")
        st.markdown("The commutator $[B, A] = BA - AB$ is Lie–Trotter's bias: it vanishes when F and G commute (try "
                    "the *commuting* system). The symmetric Strang step is its own reverse, so every even power, the "
                    "h² term included, cancels.")

    s = cache.study(o["kind"], o["n"], o["beta"])
    shown = [x for x in SCHEMES if x in o["shown"]]
    if o["solver"] == "exact":
        shown_here = [x for x in shown if x != "unsplit"]
    else:
        shown_here = shown
    if not shown_here:
        st.info("Pick a scheme in the sidebar (unsplit Euler exists only with Euler sub-steps).",
                icon=":material/info:")
    else:
        st.plotly_chart(plot.convergence(s, o["solver"], shown_here), key="l_orders", **state.CHART)
    system = SYSTEMS[o["kind"]]
    state.explain(f"{system[0].upper() + system[1:]}, {o['n']} particles, β = {o['beta']:g}, "
                  f"{SOLVERS[o['solver']]}. Each point is an RMS distance to the exact solution; the slope of a line "
                  "on these log-log axes is the order. Thin grey lines: reference slopes, each labelled ∝ hᵖ. The "
                  "fitted slopes are in the legend; 'exact' means the error is at round-off level.")
    st.info(_verdict(s, o), icon=":material/insights:")

    st.markdown("**Measured orders, both kinds of sub-step** (a row per scheme and solver)")
    st.dataframe(plot.slope_rows(s, shown or None), hide_index=True, width="stretch")

    with st.expander("With Euler sub-steps, what a network layer does: still first order, usually a smaller "
                     "error", expanded=o["solver"] == "euler"):
        euler_explanation()
    with st.expander("The Taylor-expansion argument (the paper's appendix proof)"):
        taylor_argument()
    section_untied(o)
    section_random()


def _verdict(s: lab.ConvergenceStudy, o: dict) -> str:
    """One sentence on what the log-log plot shows for the current settings (measured, not assumed)."""
    solver = o["solver"]
    lt, sm = s.local_error["lie-trotter"][solver], s.local_error["strang"][solver]
    if lab.is_roundoff(lt) and lab.is_roundoff(sm):
        return ("Both splittings are exact here (F and G commute, or β = 0 switches F off): the errors are "
                "round-off, and their 'slopes' mean nothing.")
    slope_lt = slope_text(s.local_slope["lie-trotter"][solver], lt)
    slope_sm = slope_text(s.local_slope["strang"][solver], sm)
    gl, gs = s.global_error["lie-trotter"][solver][-1], s.global_error["strang"][solver][-1]
    r = gl / gs if gs > 0 else np.inf
    times = "far" if not np.isfinite(r) else _times(r if r >= 1 else 1 / r)
    if r >= 1:
        compare = f"at the finest step Strang–Marchuk's global error is {times} smaller than Lie–Trotter's"
    else:
        compare = f"at the finest step Strang–Marchuk's global error is {times} *larger* than Lie–Trotter's"
    if solver == "exact":
        return (f"Exact sub-flows: Lie–Trotter's local slope is {slope_lt} (theory 2), Strang–Marchuk's "
                f"{slope_sm} (theory 3), and {compare}. This is Theorem 1.")
    if o["kind"] == "commuting":
        why = ("F and G commute here, so there is no commutator term to remove: what is left is the sub-solvers' "
               "own Euler error (see below)")
    elif r >= 1:
        why = "because it removes the commutator term (see below)"
    else:
        why = "in this system the sub-solvers' own Euler errors outweigh the commutator term it removes (see below)"
    return (f"Euler sub-steps: every scheme has local slope ≈ 2 and global slope ≈ 1 (Lie–Trotter {slope_lt}, "
            f"Strang–Marchuk {slope_sm}): Macaron's arrangement does **not** raise the order of a layer. The lines "
            f"differ in height, not in slope: {compare}, {why}.")


def _times(r: float) -> str:
    return f"{r:.0f}×" if r >= 10 else f"{r:.1f}×"


def euler_explanation() -> None:
    st.markdown("Write F, G for the fields at x and F′, G′ for their Jacobians. The exact flow is")
    st.latex(r"x + h(F+G) + \tfrac{h^2}{2}\bigl(F'F + F'G + G'F + G'G\bigr) + O(h^3).")
    st.markdown("Euler sub-steps in the Macaron order ½G, F, ½G give")
    st.latex(r"""\begin{aligned}
x_1 &= x + \tfrac{h}{2}G \\
x_2 &= x_1 + h F(x_1) = x + \tfrac{h}{2}G + h F + \tfrac{h^2}{2}F'G + O(h^3) \\
x_3 &= x_2 + \tfrac{h}{2}G(x_2) = x + h(F+G) + \tfrac{h^2}{2}\bigl(F'G + G'F + \tfrac12 G'G\bigr)
+ O(h^3).
\end{aligned}""")
    st.markdown(
        "The cross terms F′G + G′F now match the exact flow: the symmetric arrangement removes the splitting error "
        "(Lie–Trotter's commutator term ½(F′G − G′F)) just as Theorem 1 says. What it cannot remove is the error of "
        "the sub-solvers: a single Euler step of length τ for a field K misses τ²/2·K′K. So the local error is")
    st.latex(r"\text{exact} - \text{Strang}_{\text{Euler}} = \tfrac{h^2}{2}\bigl(F'F + \tfrac12 G'G\bigr)"
             r" + O(h^3),")
    st.markdown("and Strang with Euler sub-steps is first order globally, like the Transformer's layer. The h² "
                "coefficients side by side (exact − scheme, divided by h²/2):")
    st.latex(r"""\begin{array}{ll}
\text{unsplit Euler} & F'F + G'G + F'G + G'F \\
\text{Lie–Trotter, F then G (Transformer)} & F'F + G'G + F'G - G'F \\
\text{Lie–Trotter, G then F} & F'F + G'G - F'G + G'F \\
\text{Strang, } \tfrac12 G, F, \tfrac12 G \text{ (Macaron)} & F'F + \tfrac12 G'G \\
\text{Strang, } \tfrac12 F, G, \tfrac12 F & \tfrac12 F'F + G'G
\end{array}""")
    st.markdown(
        "Macaron's coefficient is Lie–Trotter's minus the commutator term and minus ¼·G′G: no splitting bias, "
        "and half of G's Euler error. In the linear and attention systems here that makes its error smaller (compare "
        "the lines above), but not in every system (2c below measures how often): the terms are vectors, and "
        "Lie–Trotter's can cancel. With F = ωJ (a rotation) and G = ω·x (growth), which commute, Lie–Trotter's "
        "coefficient ½(F′F + G′G)x = ½(−ω² + ω²)x vanishes and Macaron's −ω²/4·x makes it the worse scheme. A "
        "third-order layer would need second-order sub-steps (e.g. midpoint or Heun residual blocks), not only the "
        "symmetric arrangement.")


def taylor_argument() -> None:
    st.markdown("Write $S_K^h(y)$ for the exact flow of $\\dot x = K(x)$ for time h from y. Each flow is "
                "expanded to second order:")
    st.latex(r"S_K^h(y) = y + h K(y) + \tfrac{h^2}{2}K'(y)K(y) + O(h^3).")
    st.markdown("Composing, with $G(y + h F + O(h^2)) = G + h G'F + O(h^2)$:")
    st.latex(r"S_G^h\bigl[S_F^h(y)\bigr] = y + h(F+G) + \tfrac{h^2}{2}\bigl(F'F + G'G + 2G'F"
             r"\bigr) + O(h^3),")
    st.latex(r"S_{F+G}^h(y) = y + h(F+G) + \tfrac{h^2}{2}\bigl(F'F + G'G + F'G + G'F\bigr)"
             r" + O(h^3),")
    st.markdown("so the Lie–Trotter local error is")
    st.latex(r"S_{F+G}^h(y) - S_G^h\bigl[S_F^h(y)\bigr] = \tfrac{h^2}{2}\bigl(F'G - G'F\bigr)(y)"
             r" + O(h^3).")
    st.markdown("In the Strang–Marchuk step $S_G^{h/2}\\{S_F^h[S_G^{h/2}(y)]\\}$ the half steps of "
                "G meet F from both sides: the cross terms become $\\tfrac{h^2}{2}(F'G + G'F)$, exactly "
                "those of the exact flow, and the local error is $O(h^3)$.")


def section_untied(o: dict) -> None:
    st.subheader("2b · Untied halves: is a trained Macaron layer a Strang step?")
    st.markdown(
        "Theorem 1 needs both half-steps to run **the same** G. The two half-FFNs of a Macaron layer are two "
        "different networks G₁ ≠ G₂ (section 3 measures how different). Here the first half-step runs "
        "G₁ = G + εΔ and the second G₂ = G − εΔ, with Δ another field of G's kind and size; their mean is still G, "
        "so the exact solution is the same for every ε. Exact sub-flows, so only the untying is tested. The "
        "expansion gives the local error")
    st.latex(r"\Phi_{F+G}(h)x - \Phi_{G_2}(\tfrac{h}{2})\Phi_F(h)\Phi_{G_1}(\tfrac{h}{2})x"
             r" = h^2\Bigl[\tfrac12\bigl(D'F - F'D\bigr) + \tfrac14\bigl(D'G - G'D\bigr)\Bigr] + O(h^3),"
             r"\qquad D = \varepsilon\Delta")
    state.init_widget("l_eps", "eps", 0.2, parse=float, valid=lambda v: v in lab_cache.EPSILONS)
    eps = st.select_slider("How far apart the halves are: ε", lab_cache.EPSILONS[1:], key="l_eps",
                           format_func=lambda v: f"{v:g}")
    tied, untied = (lab_cache.untied_study(o["kind"], o["n"], o["beta"], e) for e in (0.0, eps))
    merged = lab.combined({"lie-trotter": (tied, "lie-trotter"), "tied": (tied, "strang"),
                           "untied": (untied, "strang")})
    strang = scheme_style("strang")
    looks = {"tied": ("Strang–Marchuk, tied halves (ε = 0)", strang),
             "untied": (f"Strang–Marchuk, untied halves (ε = {eps:g})",
                        SchemeStyle(strang.color, "circle-open", "dash"))}
    st.plotly_chart(plot.convergence(merged, "exact", ["lie-trotter", "tied", "untied"], looks=looks),
                    key="l_untied", **state.CHART)
    studies = {e: lab_cache.untied_study(o["kind"], o["n"], o["beta"], e) for e in lab_cache.EPSILONS}
    st.dataframe(plot.untied_rows(studies), hide_index=True, width="stretch")
    state.explain(f"{SYSTEMS[o['kind']]}, {o['n']} particles, β = {o['beta']:g}. Measured: tied halves give local/"
                  "global slopes 3/2 (Theorem 1); any untying that does not vanish with h gives 2/1, the order of "
                  "Lie–Trotter. What stays is a smaller constant while ε is small; in the trained models of section 3 "
                  "with two half-FFNs they are more than their own size apart (3c measures them), so ε is not small; "
                  "macaron-ode's halves are one FFN (ε = 0).")


def section_random() -> None:
    st.subheader("2c · Is Strang with Euler sub-steps always the more accurate?")
    st.markdown(
        "With one Euler step per sub-step both schemes are first order, and Macaron's advantage is its error "
        "constant, h²/2·(F′F + ½G′G) against Lie–Trotter's h²/2·(F′F + G′G + F′G − G′F). These are vectors: "
        "one can be the shorter in one system and the longer in another. Below, 200 random linear systems "
        "(a random graph diffusion F and a random drift G that do not commute, 8 particles in the plane), "
        "each solved to t = 1 in 16 steps by both schemes, against the exact solution.")
    c1, c2 = st.columns(2)
    state.init_widget("l_fs", "fs", 1.0, parse=float, valid=lambda v: v in lab_cache.SIZES)
    state.init_widget("l_gs", "gs", 0.3, parse=float, valid=lambda v: v in lab_cache.SIZES)
    f_scale = c1.select_slider("Size of F (diffusion strength β)", lab_cache.SIZES, key="l_fs")
    g_scale = c2.select_slider("Size of G (drift scale)", lab_cache.SIZES, key="l_gs")
    st.plotly_chart(plot.ratio_histogram(lab_cache.random_ratios(f_scale, g_scale)), key="l_random", **state.CHART)
    grid = []
    for f in lab_cache.SIZES:
        row = {"size of F ↓ · of G →": f"{f:g}"}
        for g in lab_cache.SIZES:
            worse, median = lab.ratio_summary(lab_cache.random_ratios(f, g))
            row[f"G {g:g}"] = f"{worse:.0%} worse · median {median:.2f}"
        grid.append(row)
    st.dataframe(grid, hide_index=True, width="stretch")
    state.explain("Each cell: the share of the 200 systems in which Strang–Marchuk's global error is the larger, and "
                  "the median ratio of the two errors. The smaller error constant is typical, not general; with exact "
                  "sub-flows and the same G in both halves, Strang's higher order wins at small enough steps.")


def section_networks() -> tuple[dict, tuple]:
    """3a–3d on one sentence; returns the URL's parameters and the two picks (3e reads their folders)."""
    st.header("3 · Trained networks: how far do the conditions hold?")
    st.markdown(
        "Strang's O(h³) needs a **small step**, **the same G in both halves** and **exact sub-flows**; Lie–Trotter's "
        "error comes from the **commutator** of F and G. A trained layer has its own F (attention) and G (FFN): "
        "measured here on the states a real sentence visits, layer by layer.")
    names, default_a, default_b = state.models_on_offer()
    text, _ = state.sentence_input("l_text", "l_preset")
    pa, pb = state.model_pair(("Transformer model", "Macaron model"), ("l_a", "l_b"), names, (default_a, default_b))
    url = dict(s=text, a=state.url_model(pa, names), b=state.url_model(pb, names))
    if not (text or "").strip():
        st.info("Type a sentence (or pick a preset) to measure the layers on it.", icon=":material/edit_note:")
        return url, (pa, pb)
    measured = []
    for slot, pick in enumerate((pa, pb)):
        if pick is None or cache.try_load(pick[1]) is None or cache.trace(pick[1], text, pick[0]) is None:
            continue
        try:
            report = lab_cache.layer_report(pick[1], text)
        except ValueError as e:  # a model without both an attention and an FFN to swap
            st.warning(f"{pick[0]}: {e}", icon=":material/info:")
            continue
        measured.append((slot, pick[0], cache.load_model(pick[1]).config, report))
    if len(measured) == 2 and measured[0][1] == measured[1][1]:  # one model in both pickers: say which is which
        measured = [(slot, f"{name} ({'AB'[slot]})", config, r) for slot, name, config, r in measured]
    if not measured:
        st.info("Nothing to measure yet: pick a model that loads and a sentence it can read.", icon=":material/info:")
        return url, (pa, pb)
    colors = dict(zip([m[0] for m in measured], model_colors([m[2].scheme for m in measured])))  # slot -> colour
    st.caption("Measured: " + "; ".join(f"**{name}**, {scheme_name(c.scheme)}" + (", causal (a decoder)" * c.causal)
                                        for _, name, c, _ in measured) + ".")

    post_ln = any(r["norm"] is not None for *_, r in measured)
    st.subheader("3a · Is the step small?")
    steps = [(f"{name}: ‖Δx‖ / ‖x‖", r["step_ratio"], colors[slot]) for slot, name, _, r in measured]
    steps += [(f"{name}: its LayerNorms' own move", r["norm"], colors[slot], "/")
              for slot, name, _, r in measured if r["norm"] is not None]
    st.plotly_chart(plot.layer_bars(steps, "length ÷ state norm", log=True, line=(1.0, "step = state")),
                    key="l_stepratio", **state.CHART)
    big = [f"{name} (layer {', '.join(str(i + 1) for i in np.flatnonzero(r['step_ratio'] > 1))})"
           for _, name, _, r in measured if (r["step_ratio"] > 1).any()]
    state.explain("How far each layer moves a token, relative to where the token is (mean over tokens). A Taylor "
                  "expansion in the step, and with it every order of accuracy, needs this well below 1"
                  + (f"; it is above 1 in {' and '.join(big)}." if big else ".")
                  + (" Hatched, for a post-LN model (x ← LN(x + h·op(x))): ‖LN(x) − x‖ / ‖x‖ at the state entering "
                     "each sub-step, mean over the layer's sub-steps. That part of a sub-step does not shrink with "
                     "the step (LN's gain and bias differ from sub-step to sub-step): it is what is left of a sub-step "
                     "as its step shrinks to nothing, so a post-LN layer is a step of one ODE only where the hatched "
                     "bar is near zero." if post_ln else ""))

    st.subheader("3b · Do attention and FFN commute, compared with two FFNs?")
    bars, unsettled = [], set()
    for slot, name, _, r in measured:
        for pair, limit in r["limit"].items():
            bars.append((f"{name}: {pair}", limit, colors[slot], "/" if "control" in pair else ""))
            unsettled |= set(np.flatnonzero(bridge.unsettled(r["curves"][pair])) + 1)
    st.plotly_chart(plot.layer_bars(bars, "κ (small-step limit)"), key="l_kappa", **state.CHART)
    st.latex(r"\kappa = \lim_{s\to0}\frac{\bigl\|\Phi_Q(s)\Phi_P(s)x - \Phi_P(s)\Phi_Q(s)x\bigr\|\;\|x\|}"
             r"{s^2\,\|h_P P(x)\|\,\|h_Q Q(x)\|}")
    state.explain("P and Q are the two sub-layers compared (attention and FFN; the control's, two FFNs), h_P and "
                  "h_Q their fractions of the step, and Φ_K(s) runs sub-step K with s times its fraction. The "
                  "difference of the two orders is s²·h_P h_Q (Q′P − P′Q) + O(s³), so dividing by s² makes κ a "
                  "property of the two maps, not of the "
                  "step, and by the sizes of the two moves over ‖x‖ makes it a pure number: 0 when they commute. "
                  + ("For a post-LN model Φ_K is the move x + s·h_K·K(x) without the LayerNorm after it: with "
                     "it Φ_K(s) would not tend to the identity as s → 0 (3a's hatched bars), and no limit would "
                     "exist. " if post_ln else "")
                  + "Hatched bars: a control of two maps that both move each particle on its own (Macaron: its two "
                  "half-FFNs; Transformer: its FFN and the next layer's). Where the control is as large, the "
                  "commutator says little about particles acting on each other."
                  + (f" Layer {', '.join(map(str, sorted(unsettled)))}: κ(s) has not settled at the smallest s, so "
                     "the bar is an extrapolation, not a limit (see below)." if unsettled else ""))
    with st.expander("κ against the step scale s (is the limit reached?)"):
        for (slot, name, _, r) in measured:
            st.plotly_chart(plot.kappa_curves(r["curves"]["attention∘FFN"], bridge.SCALES,
                                              f"{name}: attention∘FFN"), key=f"l_kcurve_{slot}", **state.CHART)
        state.explain("Flat lines: the small-step limit holds down to the layer's own step (s = 1). A line still "
                      "changing as s shrinks means the real step is far from that regime.")

    st.subheader("3c · Are Macaron's two half-FFNs one operator?")
    ties = [(slot, name, r["tie"]) for slot, name, _, r in measured if r["tie"] is not None]
    if not ties:
        st.info("Neither model has two half-FFNs per layer (pick a Macaron model).", icon=":material/info:")
    else:
        series = []
        for slot, name, tie in ties:
            series += [(f"{name}: cos(G₁x, G₂x)", tie.cosine, colors[slot]),
                       (f"{name}: ‖G₂x − G₁x‖ / ‖G₁x‖", tie.relative_difference, colors[slot], "/")]
        st.plotly_chart(plot.layer_bars(series, "at the state entering the layer", line=(1.0, "one operator: cos 1")),
                        key="l_tie", **state.CHART)
        state.explain("Both half-FFNs evaluated at the same state as the network evaluates them (pre-LN: each through "
                      "its own LayerNorm), mean over tokens. One operator would give cosine 1 and difference 0 (the "
                      "tied Strang step of 2b, ε = 0); a difference near 1 is an ε of the order of 1 there.")

    st.subheader("3d · What each kind of sub-step does to the spread of the particles")
    st.dataframe(plot.spread_rows({name: r["spread"] for _, name, _, r in measured}), hide_index=True, width="stretch")
    state.explain("Spread = RMS distance of the particles to their centre; raw = the residual stream, normalised = "
                  "each token standardised (what the next operator reads). Whether diffusion gathers the particles "
                  "and convection spreads them is measured here, not assumed: it depends on the view and the model.")
    return url, (pa, pb)


def _with_orders(picks: list) -> list:
    """(name, orders record, config) of each (name, folder) whose folder holds measured orders for its weights."""
    found = []
    for name, path in picks:
        model = cache.try_load(path)
        if model is None:
            continue
        try:
            record = lab_cache.measured_orders(path)
        except CheckpointError as e:
            st.warning(f"{name}: {e}", icon=":material/info:")
            continue
        if record is not None:
            found.append((name, record, model.config))
    return found


def section_trained_orders(picks: tuple) -> None:
    st.subheader("3e · The splitting order on a trained flow")
    named = [(pick[0] if picks[0] != picks[1] else f"{pick[0]} ({'AB'[slot]})", pick[1])
             for slot, pick in enumerate(picks) if pick is not None]
    found = _with_orders(named)
    if not found:
        why = ("They are measured (`python -m macaron.studies.orders FOLDER --save`) where a layer is a step of a flow "
               "that can be solved: pre-LN, or post-LN without gain or bias, as the ODE pair (transformer-ode, "
               "macaron-ode); a LayerNorm gain and bias, as in the other shipped models, move the state by an amount "
               "that does not shrink with the step (3a).")
        picked = {path for _, path in named}
        found = _with_orders([(n, p) for n, p in state.model_paths().items()  # the ODE pair, as shipped
                              if p not in picked and (Path(p) / orders.FILE).is_file()])
        if not found:
            st.info(f"Neither model has measured orders. {why}", icon=":material/info:")
            return
        st.info(f"Neither model picked above has measured orders; shown instead: "
                f"{', '.join(name for name, *_ in found)}, on this server's list. {why}", icon=":material/info:")
    st.markdown(
        "A layer's attention F and FFN G make one vector field V, the sum of the sub-steps' fields, whose exact flow "
        "can be solved (torchdiffeq, float64): each scheme's step, built from the network's own F and G, is held "
        "against it, at the model's own step h and at h/2, h/4, h/8; over its whole time T, with n steps per layer.")
    solver = st.radio("Sub-flows", list(SOLVERS), format_func=SOLVERS.get, key="l_sub3", horizontal=True)
    for k, (name, record, _) in enumerate(found):
        st.markdown(f"**{name}**")
        st.plotly_chart(plot.convergence(orders.as_study(record), solver, ["lie-trotter", "strang"],
                                         error=orders.ERROR), key=f"l_trained_{k}", **state.CHART)
        st.caption(f"{name}: {record['states']} states entering a layer, from {_count(record['sentences'])} "
                   f"(local); {_count(record['global_sentences'])} run to T = {record['horizon']:g} (global); "
                   f"measured {record['measured']} on these weights.")
    rows = [{"model": name, **{k: v for k, v in row.items() if k != "network layer"}} for name, record, _ in found
            for row in plot.slope_rows(orders.as_study(record), ["lie-trotter", "strang"], record=record)]
    st.dataframe(rows, hide_index=True, width="stretch")
    sphere = any(c.norm == "post" for *_, c in found)
    state.explain(
        "Slopes fitted to the mean error; in square brackets a 95 % bootstrap interval over the sentences (wide "
        "when they are few), in parentheses the theorem's order for this model: Strang's exact step is third order "
        "only with the same G in both halves. Each model runs one of the two orders as it was trained "
        "(Transformer: Lie–Trotter; Macaron: Strang); the other order is built from the same F and G."
        + (" The post-LN states live on the sphere of radius √d that a norm without gain or bias projects onto, so "
           "every field is the projected one and the Euler sub-step is the network's own x ← N(x + h·op(x))."
           if sphere else ""))


def _count(n: int) -> str:
    return f"{n} sentence{'s' if n != 1 else ''}"


def caveats() -> None:
    with st.expander("What these measures show, and what they do not"):
        st.markdown(
            "- **They are properties of real layers on real states**, with the conditions of the splitting "
            "theorems checked one by one: step size, commutator (with a control), tied halves.\n"
            "- **3a–3d do not give an order of accuracy.** A post-LN model's LayerNorm gain and bias move the state "
            "by an amount that does not shrink with the step, so no flow is there to compare with. 3e measures "
            "the order where a flow is (the ODE pair: post-LN without gain or bias, one shared layer).\n"
            "- **The two models are trained separately**: their F and G are different functions. Which model "
            "models language better is a question for held-out loss (the manual's page on the shipped models).\n"
            "- **One sentence** (3a–3d): try several; [CLS] and [SEP] are included.")


def render() -> None:
    o = sidebar()
    url = dict(sys=o["kind"], sub=o["solver"], beta=f"{o['beta']:g}", np=o["n"], T=f"{o['horizon']:g}",
               steps=o["n_steps"], show=",".join(s for s in SCHEMES if s in o["shown"]), mag=o["magnify"])
    st.session_state["l_show"] = url["show"]
    section_particles(o)
    section_orders(o)
    network_url, picks = section_networks()
    url.update(network_url)
    section_trained_orders(picks)
    lab_race.section_race()
    lab_race.section_translators()
    caveats()
    state.sync_url(url)


render()
