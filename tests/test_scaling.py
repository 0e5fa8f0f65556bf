"""A demonstração de por que dividir por sqrt(d_k) (Aula 2, 02-codigo) mede o que promete."""

import numpy as np
import pytest

from atencao.scaling import plot_softmax_saturation, softmax_saturation


def test_sem_escala_satura_e_com_escala_fica_estavel():
    r = softmax_saturation(n_queries=500)
    assert np.all(np.diff(r["max_weight_unscaled"]) > 0)       # cresce com d_k
    assert r["max_weight_unscaled"][-1] > 0.9                    # quase um-quente em d_k = 1024
    assert np.ptp(r["max_weight_scaled"]) < 0.05                 # estável
    assert np.all(np.diff(r["grad_unscaled"]) < 0) and r["grad_unscaled"][-1] < 0.1  # gradiente some
    assert np.ptp(r["grad_scaled"]) < 0.05
    np.testing.assert_allclose(r["score_std_unscaled"], np.sqrt(r["d_k"]), rtol=0.1)
    np.testing.assert_allclose(r["score_std_scaled"], 1.0, rtol=0.1)
    assert np.all(r["entropy_scaled"] <= np.log(16) + 1e-12)


def test_norma_do_jacobiano_confere_com_a_formula_explicita():
    r = softmax_saturation(d_ks=[8], n_keys=5, n_queries=1, seed=3)
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((1, 1, 8)), rng.standard_normal((1, 5, 8))
    z = (q @ k.transpose(0, 2, 1))[0, 0]
    p = np.exp(z - z.max())
    p /= p.sum()
    J = np.diag(p) - np.outer(p, p)
    assert r["grad_unscaled"][0] == pytest.approx(np.linalg.norm(J))


def test_grafico_tem_tres_paineis_com_duas_curvas():
    fig, axes = plot_softmax_saturation(softmax_saturation(d_ks=[4, 16], n_queries=50))
    assert len(axes) == 3 and all(len(ax.lines) >= 2 for ax in axes)


def test_entrada_ruim():
    with pytest.raises(ValueError, match="d_ks"):
        softmax_saturation(d_ks=[0])
