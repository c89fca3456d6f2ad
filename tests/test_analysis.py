"""macaron.studies.analysis: projections, alignments, similarities and attribution (synthetic trajectories,
and the tiny models of conftest.py for attribution)."""
from __future__ import annotations

import numpy as np
import pytest

import macaron
from macaron.studies import analysis


# ---- analysis -----------------------------------------------------------------------------------
def test_pca_signs_are_deterministic_and_largest_loading_positive(synthetic):
    traj = synthetic()
    p1 = analysis.pca_project(traj.states, 3)
    p2 = analysis.pca_project(traj.states[:, ::-1].copy(), 3)  # same points, another order
    for c in p1.components:
        assert c[np.argmax(np.abs(c))] > 0
    np.testing.assert_allclose(p1.components, p2.components, atol=1e-6)
    assert p1.coords.shape == (traj.states.shape[0], len(traj.tokens), 3)
    assert np.all(np.diff(p1.explained) <= 1e-12) and 0 < p1.explained.sum() <= 1


def test_randomized_pca_matches_full_svd():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((600, 128)) @ np.diag(np.linspace(3, 0.1, 128))
    comps, ratio, _ = analysis.pca_fit(x, 3)
    xc = x - x.mean(0)
    _, s, vt = np.linalg.svd(xc, full_matrices=False)
    np.testing.assert_allclose(np.abs(comps), np.abs(vt[:3]), atol=1e-6)
    np.testing.assert_allclose(ratio, (s ** 2 / (s ** 2).sum())[:3], rtol=1e-6)


def test_pca_on_tiny_inputs_keeps_shapes():
    one = np.ones((1, 1, 4), np.float32)
    p = analysis.pca_project(one, 3)
    assert p.coords.shape == (1, 1, 3) and np.all(np.isfinite(p.coords))
    two = np.random.default_rng(0).standard_normal((2, 1, 4))
    assert analysis.pca_project(two, 3).coords.shape == (2, 1, 3)


def test_standardise_and_keep_mask():
    x = np.random.default_rng(0).standard_normal((3, 5, 32)) * 7 + 2
    z = analysis.standardise(x)
    np.testing.assert_allclose(z.mean(-1), 0, atol=1e-5)
    np.testing.assert_allclose(z.std(-1), 1, atol=1e-3)
    assert analysis.keep_mask(["[CLS]", "a", "[SEP]"], True).tolist() == [False, True, False]
    assert analysis.keep_mask(["[CLS]", "[SEP]"], True).all()  # never an empty plot


def test_procrustes_recovers_rotation_scale_and_shift():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((50, 8))
    q, _ = np.linalg.qr(rng.standard_normal((8, 8)))
    b = 3.0 * a @ q + 5.0
    al = analysis.procrustes_align(a, b)
    assert al.residual < 1e-10
    np.testing.assert_allclose(al.apply(b), a, atol=1e-8)
    noise = analysis.procrustes_align(a, rng.standard_normal((50, 8)))
    assert noise.residual > 0.3


def test_procrustes_with_different_widths_pads():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((40, 6))
    b = np.concatenate([a, np.zeros((40, 2))], axis=1)  # wider copy of a
    al = analysis.procrustes_align(a, b)
    assert al.residual < 1e-10
    with pytest.raises(ValueError, match="matched"):
        analysis.procrustes_align(a, b[:10])


def test_linear_cka_invariances():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((20, 10))
    q, _ = np.linalg.qr(rng.standard_normal((10, 10)))
    assert analysis.linear_cka(x, 2.5 * x @ q + 1.0) == pytest.approx(1.0, abs=1e-9)
    assert analysis.linear_cka(x, rng.standard_normal((20, 7))) < 0.8
    sa, sb = rng.standard_normal((4, 20, 10)), rng.standard_normal((6, 20, 5))
    m = analysis.linear_cka_matrix(sa, sb)
    assert m.shape == (4, 6) and np.all((m >= 0) & (m <= 1))
    np.testing.assert_allclose(analysis.linear_cka_matrix(sb, sa), m.T, atol=1e-12)
    with pytest.raises(ValueError, match="same tokens"):
        analysis.linear_cka_matrix(sa, sb[:, :3])


def test_cosine_measures_and_clusters():
    same = np.ones((1, 5, 4))
    assert analysis.mean_pairwise_cosine(same)[0] == pytest.approx(1.0)
    ortho = np.eye(4)[None]
    assert analysis.mean_pairwise_cosine(ortho)[0] == pytest.approx(0.0)
    two_groups = np.array([[1, 0, 0], [0.99, 0.05, 0], [0, 1, 0], [0.02, 1, 0.01]], float)
    labels = analysis.cosine_clusters(two_groups, 0.2)
    assert labels[0] == labels[1] != labels[2] == labels[3]
    assert analysis.clusters_over_depth(np.stack([two_groups, same[0, :4, :3]]), 0.2).tolist() == [2, 1]


def test_time_helpers_line_up_layer_boundaries(synthetic):
    t, m = synthetic("transformer"), synthetic("macaron")
    assert analysis.state_at(t.times, 0.75) == 1 and analysis.state_at(m.times, 0.75) == 2
    assert analysis.state_at(t.times, 0.0) == 0 and analysis.state_at(t.times, 99) == len(t.times) - 1
    ia, ib = analysis.common_boundaries(t.times, m.times)
    assert [t.times[i] for i in ia] == [m.times[j] for j in ib] == [0, 1, 2, 3]


# ---- trajectories in ------------------------------------------------------------------------------
def test_project_keeps_the_words_and_fixes_one_frame(synthetic):
    traj = synthetic("macaron")
    proj = analysis.project(traj, 3)
    assert proj.keep.tolist() == [False, True, True, True, True, True, False]
    assert proj.coords.shape == (len(traj.states), 5, 3)
    normalised = analysis.project(traj, 2, normalised=True, hide_special=False)
    assert normalised.keep.all() and normalised.coords.shape[1] == len(traj.tokens)
    np.testing.assert_allclose(normalised.mean, analysis.standardise(traj.states).reshape(-1, 16).mean(0),
                               atol=1e-5)


def test_project_together_shares_one_frame(synthetic):
    a, b = synthetic(seed=1), synthetic(tokens=["[CLS]", "a", "bank", "[SEP]"], seed=2)
    c = synthetic(seed=3)
    pa, pb, pc = analysis.project_together(a, b, c)
    np.testing.assert_array_equal(pa.components, pb.components)
    np.testing.assert_array_equal(pa.components, pc.components)
    assert pa.coords.shape[1] == 5 and pb.coords.shape[1] == 2 and pc.coords.shape[1] == 5
    # the shared frame is the PCA of all kept states together (scikit-learn, fitted here directly)
    from sklearn.decomposition import PCA
    kept = [analysis.kept_states(t, False, p.keep).reshape(-1, 16) for t, p in ((a, pa), (b, pb), (c, pc))]
    pca = PCA(2).fit(np.concatenate(kept))
    np.testing.assert_allclose(np.abs(pc.components @ pca.components_.T), np.eye(2), atol=1e-6)
    np.testing.assert_allclose(np.abs(pc.coords.reshape(-1, 2)), np.abs(pca.transform(kept[2])), atol=1e-5)


def test_procrustes_of_a_rotated_copy_is_exact(synthetic):
    a = synthetic("transformer")
    b = synthetic("macaron")
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((16, 16)))
    bounds_a, bounds_b = a.layer_boundaries(), b.layer_boundaries()
    b.states[bounds_b] = 2.0 * a.states[bounds_a] @ q  # B passes through A's layer states, rotated
    result = analysis.procrustes(a, b)
    assert result.residual < 1e-10 and np.all(result.layer_residuals < 1e-10)
    np.testing.assert_allclose(result.b[bounds_b], result.a[bounds_a], atol=1e-6)  # float32 states
    assert result.layer_times.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="different tokens"):
        analysis.procrustes(a, synthetic(tokens=["[CLS]", "x", "[SEP]"]))


def test_cka_and_procrustes_refuse_other_tokens_and_show_both(synthetic):
    """As many particles, other words (another sentence, or another tokenizer's split): no number, a message."""
    a = synthetic("transformer")
    b = synthetic("macaron", tokens=["other" if t == a.tokens[1] else t for t in a.tokens])
    assert len(a.tokens) == len(b.tokens) and a.tokens != b.tokens
    for compare, what in ((analysis.cka, "CKA"), (analysis.procrustes, "Procrustes")):
        with pytest.raises(macaron.InputError, match=what) as refused:
            compare(a, b)
        said = str(refused.value)
        assert " ".join(a.tokens) in said and " ".join(b.tokens) in said and "split alike" in said
    assert analysis.cka(a, synthetic("transformer", tokens=a.tokens, seed=1)).shape == (len(a.states), len(a.states))


def test_procrustes_residuals_stay_in_zero_to_one_whatever_the_scale(synthetic):
    a, b = synthetic("transformer", seed=1), synthetic("macaron", seed=2)
    a.states[0] *= 1e-3  # an embedding ~100× smaller than the layers after it, as in trained models
    result = analysis.procrustes(a, b)
    assert 0 <= result.residual <= 1 and np.all((result.layer_residuals >= 0) & (result.layer_residuals <= 1))
    assert result.layer_residuals[1:].mean() > 0.3  # unrelated random paths look unrelated
    # B passes through A's shapes, rotated, each layer at another size: every residual ≈ 0, t = 0 too
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((16, 16)))
    ia, ib = a.layer_boundaries(), b.layer_boundaries()
    for layer, (i, j) in enumerate(zip(ia, ib)):
        b.states[j] = (5.0 + layer) * a.states[i] @ q
    same = analysis.procrustes(a, b)
    assert same.residual < 1e-9 and np.all(same.layer_residuals < 1e-9)
    # and B is drawn at A's size at every boundary, the small embedding too
    for i, j in zip(ia, ib):
        np.testing.assert_allclose(same.b[j], same.a[i], atol=1e-4 * np.abs(same.a[i]).max())


def test_share_in_view(synthetic):
    traj = synthetic()
    traj.states[..., 3:] = 0.0  # every state lies in the first three coordinates
    np.testing.assert_allclose(analysis.share_in_view(traj, analysis.project(traj, 3)), 1.0, atol=1e-6)
    assert np.all(analysis.share_in_view(traj, analysis.project(traj, 1)) < 1)


def test_mean_norms():
    x = np.zeros((2, 3, 4))
    x[1, :, 0] = [3, 4, 5]
    np.testing.assert_allclose(analysis.mean_norms(x), [0, 4])


def test_cka_of_a_trajectory_with_itself(synthetic):
    t = synthetic()
    m = analysis.cka(t, t)
    assert m.shape == (len(t.states),) * 2
    np.testing.assert_allclose(np.diag(m), 1.0, atol=1e-9)


def test_attribution_explains_the_mask_guess(models_dir):
    model = macaron.load(models_dir / "tiny-macaron", device="cpu")
    traj = model.trace("the capital of france is [MASK] .")
    att = analysis.attribute(model, traj)
    assert att.scores.shape == (len(traj.tokens),) and np.isfinite(att.scores).all()
    assert "log-probability" in att.target and f"position {traj.tokens.index('[MASK]')}" in att.target
    norm = analysis.attribute(model, traj, position=1, what="norm")
    assert "norm of the final state of token 1" in norm.target


def test_a_notebook_echo_says_what_a_result_holds_not_every_number(synthetic):
    traj = synthetic()
    said = repr(traj)
    assert len(said) < 500 and f"states=array{list(traj.states.shape)} float32" in said
    assert f"steps=[{len(traj.steps)} × Step]" in said and "'bank'" in said
    aligned = repr(analysis.procrustes(traj, synthetic(seed=2)))
    assert len(aligned) < 800 and "residual=" in aligned and "layer_residuals=[" in aligned


def test_listens_to_is_the_row_of_the_matrix_largest_first(synthetic):
    """Whom a particle listens to: the largest weights of its row (head mean, or one head), against a plain sort;
    nothing for a convection sub-step, nor for a row the sub-step does not move (the other system of two)."""
    traj = synthetic("transformer", seed=2)
    k = analysis.diffusion_steps(traj)[1]
    for head in (None, 0, 1):
        w = traj.mixing[k].mean(0) if head is None else traj.mixing[k][head]
        for i in range(len(traj.tokens)):
            got = analysis.listens_to(traj, k, i, head, top=3)
            want = sorted(range(len(traj.tokens)), key=lambda j: -w[i, j])[:3]
            assert [j for j, _ in got] == want
            np.testing.assert_allclose([v for _, v in got], w[i, want], rtol=1e-6)
    convection = next(s for s, step in enumerate(traj.steps) if step.kind == "convection")
    assert analysis.listens_to(traj, convection, 2) == []
    traj.mixing[k][:, 2] = 0.0  # a row that does not move
    assert analysis.listens_to(traj, k, 2) == []
