"""Splitting lab: exact flows, measured orders, and the h² error coefficients."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import expm

from macaron import lab, schemes
from macaron.lab import splitting
from macaron.schemes import CONVECTION, DIFFUSION, FULL, LIE_TROTTER, STRANG, Sub

SLOPE_TOL = 0.25
J = np.array([[0.0, -1.0], [1.0, 0.0]])  # rotation generator


@pytest.fixture(scope="module")
def linear():
    return lab.linear_system()


@pytest.fixture(scope="module")
def attention():
    return lab.attention_system()


@pytest.fixture(scope="module")
def x0():
    return lab.initial_positions()


@pytest.fixture(scope="module")
def linear_study(linear, x0):
    return lab.convergence_study(linear, x0)


@pytest.fixture(scope="module")
def attention_study(attention, x0):
    return lab.convergence_study(attention, x0)


def rotation_growth(omega=1.0):
    """F = ωJ x (rotation), G = ω x (growth): commuting, and Lie–Trotter-Euler's h² term cancels."""
    return lab.LinearSystem(np.eye(1), -omega * J, omega * np.eye(2), beta=1.0, name="rotation+growth")


# --- the schemes are the shared ones -------------------------------------------------------

def test_toy_schemes_are_the_registered_ones():
    assert lab.registered() == {name: s.substeps for name, s in schemes.SCHEMES.items()}
    assert schemes.get_scheme("transformer").substeps is schemes.LIE_TROTTER  # the layer a model builds
    assert schemes.get_scheme("macaron").substeps is schemes.STRANG
    assert schemes.get_scheme("att-ffn-att").name == "strang-fgf"
    with pytest.raises(ValueError, match="unknown scheme"):
        schemes.get_scheme("euler")


def test_step_walks_any_scheme_tuple(linear, x0):
    h = 0.1
    by_hand = x0 + 0.3 * h * linear.field(CONVECTION, x0)
    by_hand = by_hand + 0.7 * h * linear.field(DIFFUSION, by_hand)
    custom = (Sub(CONVECTION, 0.3), Sub(DIFFUSION, 0.7))
    np.testing.assert_allclose(lab.step(linear, custom, h, x0, "euler"), by_hand)
    np.testing.assert_allclose(lab.step(linear, schemes.UNSPLIT, h, x0, "euler"),
                               x0 + h * linear.field(FULL, x0))
    with pytest.raises(ValueError):
        lab.step(linear, LIE_TROTTER, h, x0, "rk4")


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(list(lab.registered().values())), st.integers(1, 6))
def test_merging_exact_substeps_keeps_each_operators_total_time(scheme, n_steps):
    merged = splitting._merged(scheme, n_steps)
    for kind in (DIFFUSION, CONVECTION, FULL):
        assert sum(s.fraction for s in merged if s.kind == kind) == pytest.approx(
            n_steps * sum(s.fraction for s in scheme if s.kind == kind))
    assert all(a.kind != b.kind for a, b in zip(merged, merged[1:]))


# --- exact flows ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [DIFFUSION, CONVECTION, FULL])
def test_linear_flows_are_the_matrix_exponential_of_the_whole_system(kind):
    system = lab.linear_system(n=6, d=3, beta=1.3, seed=2)
    x = lab.initial_positions(6, 3, seed=2)
    for t in (0.05, 0.7):
        expected = (expm(t * system.matrix(kind)) @ x.ravel()).reshape(x.shape)
        np.testing.assert_allclose(system.flow(kind, t, x), expected, atol=1e-13)


def test_nearly_defective_generators_fall_back_to_scipy_expm():
    jordan = np.array([[[0.5, 1.0], [0.0, 0.5]], [[0.0, -2.0], [2.0, 0.0]]])
    exponential = lab.Exponential(jordan)
    assert exponential.direct.tolist() == [True, False]
    np.testing.assert_allclose(exponential(0.8), [expm(0.8 * m) for m in jordan], atol=1e-14)


@pytest.mark.parametrize("kind", [DIFFUSION, CONVECTION, FULL])
def test_attention_reference_is_a_flow(attention, x0, kind):
    # Semigroup: Φ(0.2) = Φ(0.1)Φ(0.1); one dense solve agrees with separate solves.
    twice = attention.flow(kind, 0.1, attention.flow(kind, 0.1, x0))
    np.testing.assert_allclose(attention.flow(kind, 0.2, x0), twice, atol=1e-10)
    dense = attention.flows(kind, [0.2, 0.05], x0)
    np.testing.assert_allclose(dense[1], attention.flow(kind, 0.05, x0), atol=1e-10)
    # Its velocity at t = 0 is the field.
    h = 1e-5
    velocity = (attention.flow(kind, h, x0) - x0) / h
    np.testing.assert_allclose(velocity, attention.field(kind, x0), atol=1e-4)


def test_attention_weights_are_row_stochastic(attention, x0):
    a = attention.attention(x0)
    assert a.shape == (64, 64) and np.all(a > 0)
    np.testing.assert_allclose(a.sum(1), 1.0)


# --- measured orders -----------------------------------------------------------------------

def assert_slopes(study):
    for (name, solver), (local, global_) in lab.EXPECTED_ORDER.items():
        measured = study.local_slope[name][solver], study.global_slope[name][solver]
        assert abs(measured[0] - local) < SLOPE_TOL, (name, solver, "local", measured)
        assert abs(measured[1] - global_) < SLOPE_TOL, (name, solver, "global", measured)


def test_linear_slopes(linear_study):
    assert_slopes(linear_study)


def test_attention_slopes(attention_study):
    assert_slopes(attention_study)


@pytest.mark.parametrize("study", ["linear_study", "attention_study"])
def test_strang_needs_exact_subflows_for_third_order(study, request):
    s = request.getfixturevalue(study)
    assert s.local_slope["strang"]["exact"] > 2.75
    assert s.local_slope["strang"]["euler"] < 2.25  # Euler sub-steps: back to second order
    assert s.global_slope["strang"]["euler"] < 1.25


def test_commuting_operators_make_lie_trotter_exact(x0):
    system = lab.commuting_system()
    study = lab.convergence_study(system, x0, solvers=("exact",))
    for name in ("lie-trotter", "lie-trotter-gf", "strang", "strang-fgf", "lie-trotter-halves"):
        assert study.local_error[name]["exact"].max() < 1e-14
        assert study.global_error[name]["exact"].max() < 1e-12


@pytest.mark.parametrize("study", ["linear_study", "attention_study"])
def test_the_control_is_lie_trotter_with_exact_subflows_not_with_euler(study, request):
    """F, ½G, ½G: two exact half-flows of G are one flow of G, so the control's errors are Lie–Trotter's to round-off
    (the lab says its line lies on Lie–Trotter's); two half Euler steps of G are not one Euler step, and they differ."""
    s = request.getfixturevalue(study)
    for part in (s.local_error, s.global_error):
        assert lab.is_roundoff(part["lie-trotter-halves"]["exact"] - part["lie-trotter"]["exact"])
        assert not lab.is_roundoff(part["lie-trotter-halves"]["euler"] - part["lie-trotter"]["euler"])


def test_study_is_plain_arrays(linear_study):
    s = linear_study
    assert s.h.shape == s.n_steps.shape == (8,)
    np.testing.assert_allclose(s.global_h, s.horizon / s.n_steps)
    assert "exact" not in s.local_error["unsplit"]
    assert s.local_error["strang"]["euler"].shape == (8,)
    d = s.to_dict()
    assert set(d) >= {"h", "n_steps", "local_error", "global_error", "local_slope", "global_slope"}


# --- the h² coefficient ----------------------------------------------------------------------

@pytest.mark.parametrize("system", ["linear", "attention"])
@pytest.mark.parametrize("solver", ["exact", "euler"])
def test_leading_error_predicts_the_measured_one(system, solver, request, x0):
    s = request.getfixturevalue(system)
    h = 1e-3
    for name, scheme in lab.registered().items():
        if solver == "exact" and lab.unsplit(scheme):
            continue
        predicted = lab.leading_error(s, scheme, x0, solver)
        measured = (s.flow(FULL, h, x0) - lab.step(s, scheme, h, x0, solver)) / h**2
        scale = max(lab.distance(predicted, 0), lab.distance(measured, 0))
        if name.startswith("strang") and solver == "exact":
            assert scale < 2e-3  # no h² term at all: what is left is O(h)
        else:
            assert lab.distance(predicted, measured) < 5e-3 * scale, name


def test_euler_substep_coefficients_match_the_derivation(attention, x0):
    s, x = attention, x0
    F, G = s.field(DIFFUSION, x), s.field(CONVECTION, x)
    FF, GG = s.jvp(DIFFUSION, x, F), s.jvp(CONVECTION, x, G)
    FG, GF = s.jvp(DIFFUSION, x, G), s.jvp(CONVECTION, x, F)  # F'G, G'F
    expected = {
        "unsplit": FF + GG + FG + GF,
        "lie-trotter": FF + GG + FG - GF,
        "lie-trotter-gf": FF + GG - FG + GF,
        "strang": FF + 0.5 * GG,  # the commutator is gone; the Euler errors of F and ½G stay
        "strang-fgf": 0.5 * FF + GG,
        "lie-trotter-halves": FF + 0.5 * GG + FG - GF,  # Lie–Trotter's, but G in two Euler moves: half its error
    }
    for name, c in expected.items():
        got = lab.leading_error(s, lab.registered()[name], x, "euler")
        np.testing.assert_allclose(got, 0.5 * c, atol=1e-7, err_msg=name)
    # Exact sub-flows: Lie–Trotter's h² term is the commutator alone (the paper's appendix).
    np.testing.assert_allclose(lab.leading_error(s, LIE_TROTTER, x, "exact"), 0.5 * (FG - GF), atol=1e-7)


def test_macaron_with_euler_substeps_beats_transformer_in_the_default_systems(linear_study, attention_study):
    for study in (linear_study, attention_study):
        ratio = study.global_error["lie-trotter"]["euler"] / study.global_error["strang"]["euler"]
        assert np.all(ratio > 1.5)


def test_but_not_in_every_system():
    # F = ωJ, G = ω·I: Lie–Trotter-Euler's h² coefficient ½(F'F + G'G)x = ½(−ω² + ω²)x = 0.
    system = rotation_growth()
    x = np.array([[1.0, 0.5]])
    np.testing.assert_allclose(lab.leading_error(system, LIE_TROTTER, x, "euler"), 0.0, atol=1e-15)
    np.testing.assert_allclose(lab.leading_error(system, STRANG, x, "euler"), -0.25 * x, atol=1e-15)
    study = lab.convergence_study(system, x, solvers=("euler",))
    assert abs(study.local_slope["lie-trotter"]["euler"] - 3) < SLOPE_TOL
    assert abs(study.global_slope["lie-trotter"]["euler"] - 2) < SLOPE_TOL
    assert abs(study.global_slope["strang"]["euler"] - 1) < SLOPE_TOL
    assert np.all(study.global_error["strang"]["euler"] > study.global_error["lie-trotter"]["euler"])


# --- paths for the animation ------------------------------------------------------------------

@pytest.mark.parametrize("system", ["linear", "attention"])
def test_particle_paths(system, request, x0):
    s = request.getfixturevalue(system)
    paths = lab.particle_paths(s, x0, horizon=1.0, n_steps=10)
    np.testing.assert_allclose(paths.times, np.linspace(0, 1, 11))
    assert paths.exact.shape == (11, 64, 2)
    np.testing.assert_allclose(paths.exact[-1], s.flow(FULL, 1.0, x0), atol=1e-9)
    assert set(paths.schemes) == set(schemes.SCHEMES)
    for name, path in paths.schemes.items():
        assert path.shape == (11, 64, 2)
        np.testing.assert_array_equal(path[0], x0)
        final = lab.integrate(s, lab.registered()[name], 0.1, 10, x0, "euler")
        np.testing.assert_allclose(path[-1], final)
    exact_paths = lab.particle_paths(s, x0, 1.0, 10, solver="exact")
    assert "unsplit" not in exact_paths.schemes
    np.testing.assert_allclose(exact_paths.schemes["strang"][-1],
                               lab.integrate(s, STRANG, 0.1, 10, x0, "exact"), atol=1e-9)


# ---- untied halves: a trained Macaron layer runs two different half-FFNs ----------------------------
def _untied(system, eps):
    return lab.Untied(system, lab.drift_for(system), eps)


@pytest.mark.parametrize("system", ["linear", "attention"])
def test_tied_halves_are_strang_and_untied_ones_lose_an_order(system, request, x0):
    base = request.getfixturevalue(system)
    x = x0 if system == "linear" else x0[:16]  # fewer particles keep the attention solves quick
    schemes_ = {"strang": lab.untie(STRANG), "lie-trotter": LIE_TROTTER}
    tied = lab.convergence_study(_untied(base, 0.0), x, schemes=schemes_, solvers=("exact",))
    untied = lab.convergence_study(_untied(base, 0.5), x, schemes=schemes_, solvers=("exact",))
    assert tied.local_slope["strang"]["exact"] == pytest.approx(3, abs=SLOPE_TOL)
    assert tied.global_slope["strang"]["exact"] == pytest.approx(2, abs=SLOPE_TOL)
    assert untied.local_slope["strang"]["exact"] == pytest.approx(2, abs=SLOPE_TOL)
    assert untied.global_slope["strang"]["exact"] == pytest.approx(1, abs=SLOPE_TOL)
    # the reference (the flow of F + G) is the same for every ε: Lie–Trotter does not see ε at all
    assert np.allclose(tied.local_error["lie-trotter"]["exact"], untied.local_error["lie-trotter"]["exact"])
    # ε = 0 is exactly the registered (tied) Strang step
    plain = lab.convergence_study(base, x, schemes={"strang": STRANG}, solvers=("exact",))
    assert np.allclose(tied.local_error["strang"]["exact"], plain.local_error["strang"]["exact"], rtol=1e-6)


@pytest.mark.parametrize("system", ["linear", "attention"])
def test_untied_leading_error_formula_matches_the_generic_expansion_and_the_measurement(system, request, x0):
    """h²[½(D'F − F'D) + ¼(D'G − G'D)], D = εΔ: the hand-derived coefficient, the generic Taylor
    coefficient of the scheme, and the measured error at a small step agree."""
    u = _untied(request.getfixturevalue(system), 0.3)
    x = x0 if system == "linear" else x0[:16]
    by_hand = lab.untied_leading_error(u, x)
    generic = lab.leading_error(u, lab.untie(STRANG), x)
    assert np.allclose(by_hand, generic, rtol=1e-4, atol=1e-7)
    h = 1e-3
    measured = (u.flow(FULL, h, x) - lab.step(u, lab.untie(STRANG), h, x)) / h ** 2
    assert lab.distance(measured, by_hand) < 0.02 * lab.distance(by_hand, 0 * by_hand)


def test_strang_with_euler_substeps_is_usually_but_not_always_the_more_accurate():
    """Across random non-commuting linear systems the ratio of global errors is mostly below 1, yet
    in some draws Strang–Euler is the worse scheme: its smaller error constant is typical, not a law."""
    ratios = lab.strang_over_lie_trotter(n_draws=200, f_scale=1.0, g_scale=0.3)
    assert np.all(np.isfinite(ratios)) and np.all(ratios > 0)
    assert np.median(ratios) < 1 and 0.02 < np.mean(ratios > 1) < 0.5
    # with exact sub-flows (tied halves) the order decides: Strang wins in every draw, and its lead grows
    # as the step shrinks (global errors O(h²) against O(h): the ratio falls like h, 4× for 4× the steps)
    coarse, fine = (lab.strang_over_lie_trotter(n_draws=50, f_scale=1.0, g_scale=0.3, n_steps=n, solver="exact")
                    for n in (16, 64))
    assert np.all(coarse < 1) and np.all(fine < 1)
    assert 2.5 < np.median(coarse / fine) < 6
