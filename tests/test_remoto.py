"""A ponte entre o verificador e o processo do aluno (correcao._remoto): só dados simples passam, validados."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

from correcao import _remoto
from correcao._remoto import Channel, InvalidMessage, UnsupportedValue, decode_value, encode_return, encode_value


def _ida_e_volta(valor):
    return decode_value(json.loads(json.dumps(encode_value(valor))))


@pytest.mark.parametrize("valor", [
    None, True, 3, -2.5, "olá, 🐱", [1, 2.0, "x"], (1, (2, 3)), {"a": [1, 2], "b": {"c": None}},
    np.arange(6, dtype=np.float32).reshape(2, 3), np.array([[True, False]]), np.array(3.5), np.int64(7),
    np.array([1 + 2j]), np.zeros((0, 4)),
])
def test_dados_simples_vao_e_voltam_iguais(valor):
    volta = _ida_e_volta(valor)
    if isinstance(valor, (np.ndarray, np.generic)):
        assert np.asarray(volta).dtype == np.asarray(valor).dtype
        np.testing.assert_array_equal(volta, valor)
    else:
        assert volta == valor and type(volta) is type(valor)


def test_nan_e_infinito_viram_float_de_novo():
    volta = _ida_e_volta([float("nan"), float("inf"), float("-inf")])
    assert np.isnan(volta[0]) and volta[1] == np.inf and volta[2] == -np.inf


def test_retorno_que_nao_e_dado_simples_vira_valor_nao_suportado():
    class Qualquer:
        def __eq__(self, outro):
            return True

    for valor in (Qualquer(), {1, 2}, lambda x: x, np.array([object()], dtype=object)):
        volta = decode_value(json.loads(json.dumps(encode_return(valor))))
        assert isinstance(volta, UnsupportedValue)
        assert volta != np.zeros(3).tolist()


@pytest.mark.parametrize("dados", [
    {"__objeto__": "SelfAttention", "dados": {"__dict__": {}}},  # objetos não vêm do lado do aluno
    {"__nd__": "O8", "forma": [1], "dados": ""},  # array de objetos
    {"__nd__": "f8", "forma": [2], "dados": "AAAA"},  # bytes a menos
    {"__nd__": "f8", "forma": [-1], "dados": ""},
    {"__nd__": "f8", "forma": [2**31, 2**31], "dados": ""},  # grande demais
    {"__float__": "1e999999"},
    {"__pickle__": pickle.dumps(1).hex()},
    {"__nd__": "f8", "forma": [1], "dados": "!!!!"},
    {"__escalar__": [1, 2]},
    {"x": 1},
])
def test_o_que_vem_do_aluno_fora_do_formato_e_recusado(dados):
    with pytest.raises(InvalidMessage):
        decode_value(dados)


def test_aninhamento_e_quantidade_limitados():
    fundo = []
    for _ in range(_remoto.MAX_FUNDO + 3):
        fundo = [fundo]
    with pytest.raises(InvalidMessage):
        decode_value(fundo)
    with pytest.raises(InvalidMessage):
        decode_value([0] * (_remoto.MAX_ITENS + 1))


def test_objetos_da_biblioteca_so_refeitos_quando_permitido():
    from atencao import SelfAttention

    attn = SelfAttention(4, 2, seed=3)
    dados = json.loads(json.dumps(encode_value(attn)))
    with pytest.raises(InvalidMessage):
        decode_value(dados)
    refeitos = []
    obj = decode_value(dados, objetos=True, refazer=lambda nome, d: refeitos.append((nome, d)) or "refeito")
    assert obj == "refeito" and refeitos[0][0] == "SelfAttention"
    np.testing.assert_array_equal(refeitos[0][1]["W_q"], attn.W_q)


def test_canal_le_linhas_e_recusa_lixo_e_linhas_enormes(monkeypatch):
    ler, escrever = os.pipe()
    canal = Channel(ler, escrever)
    canal.send({"a": 1})
    assert canal.receive(1) == {"a": 1}
    os.write(escrever, b"[" * 5_000 + b"]" * 5_000 + b"\n")  # aninhada demais para o json
    with pytest.raises(InvalidMessage):
        canal.receive(1)
    os.write(escrever, b"isto nao e json\n")
    with pytest.raises(InvalidMessage):
        canal.receive(1)
    assert canal.receive(0.05) is None  # nada chegou: o prazo passa
    monkeypatch.setattr(_remoto, "MAX_LINHA", 10)
    os.write(escrever, b"x" * 50)
    with pytest.raises(InvalidMessage):
        canal.receive(1)
    os.close(escrever)
    os.close(ler)
