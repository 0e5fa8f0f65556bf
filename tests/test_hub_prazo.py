"""O prazo de ``turma liberar --prazo`` e o horário das entregas do exchange (:mod:`correcao.hub`): cada formato
que um professor digita vira o mesmo instante em UTC, o que o gradebook do nbgrader guarda. O
``nbgrader.utils.parse_utc`` lia ``-0300`` como -300 segundos (``23:59 -0300`` virava 00:04 UTC)."""

from datetime import datetime, timezone

import pytest

from correcao import hub

PRAZO_UTC = datetime(2026, 3, 11, 2, 59, tzinfo=timezone.utc)


@pytest.mark.parametrize("texto", [
    "2026-03-10 23:59:00 -0300",
    "2026-03-10 23:59 -0300",
    "2026-03-10 23:59 -03:00",
    "2026-03-10 23:59 -03",
    "2026-03-10 23:59 -3",
    "2026-03-10T23:59-03:00",
    "2026-03-10 23:59 America/Sao_Paulo",
    "2026-03-11 02:59 UTC",
    "2026-03-11 02:59 utc",
    "2026-03-11T02:59Z",
    "2026-03-11 02:59 Z",
    "2026-03-11 02:59 GMT",
    "10/03/2026 23:59 -0300",
    "  2026-03-10 23:59:00 America/Sao_Paulo  ",
])
def test_cada_formato_do_prazo_e_o_mesmo_instante(texto):
    quando = hub.parse_deadline(texto)
    assert quando.utcoffset() is not None
    assert quando.astimezone(timezone.utc) == PRAZO_UTC


def test_o_prazo_e_mostrado_no_fuso_digitado_e_em_utc():
    assert (hub.describe_deadline(hub.parse_deadline("2026-03-10 23:59 America/Sao_Paulo"))
            == "2026-03-10 23:59 (-03:00, America/Sao_Paulo) = 2026-03-11 02:59 UTC")
    assert hub.describe_deadline(hub.parse_deadline("2026-03-10 23:59 -0300")) == (
        "2026-03-10 23:59 (-03:00) = 2026-03-11 02:59 UTC")
    assert hub.describe_deadline(hub.parse_deadline("2026-03-11T02:59Z")) == (
        "2026-03-11 02:59 (UTC) = 2026-03-11 02:59 UTC")


def test_fuso_com_horario_de_verao_usa_o_deslocamento_daquela_data():
    assert hub.parse_deadline("2026-07-01 12:00 Europe/Lisbon").astimezone(timezone.utc).hour == 11  # WEST, +01
    assert hub.parse_deadline("2026-01-01 12:00 Europe/Lisbon").astimezone(timezone.utc).hour == 12  # WET, +00


@pytest.mark.parametrize("texto, motivo", [
    ("2026-03-10 23:59", "falta o fuso"),  # sem fuso: recusado (o relógio do servidor costuma ser UTC)
    ("2026-03-10 23:59 BRT", "fuso desconhecido 'BRT'"),
    ("2026-03-10 23:59 America/Recife_", "fuso desconhecido"),
    ("2026-03-10 23:59 -2500", "fora de -14:00 a +14:00"),
    ("2026-02-30 23:59 -0300", "não existe"),
    ("2026-03-08 02:30 America/New_York", "horário de verão"),
    ("amanhã às 23:59", "esperada uma data e hora com fuso"),
    ("2026-03-10", "esperada uma data e hora com fuso"),
    ("", "esperada uma data e hora com fuso"),
])
def test_prazo_invalido_nomeia_a_opcao_o_valor_e_os_formatos(texto, motivo):
    with pytest.raises(ValueError) as exc:
        hub.parse_deadline(texto)
    mensagem = str(exc.value)
    assert mensagem.startswith("--prazo: ") and motivo in mensagem
    assert f"recebido {texto!r}" in mensagem and hub.PRAZO_EXEMPLOS in mensagem


def test_release_recusa_datetime_sem_fuso(tmp_path):
    with pytest.raises(ValueError, match="prazo: esperado um datetime com fuso"):
        hub.release(hub.HubCourse(tmp_path / "curso"), "aula-01-self-attention", prazo=datetime(2026, 3, 10, 23, 59))
    assert not (tmp_path / "curso").exists()


@pytest.mark.parametrize("texto, esperado", [
    ("2026-03-11 01:59:00.000000 UTC", datetime(2026, 3, 11, 1, 59)),  # o padrão do exchange
    ("2026-03-11 01:59:00.123456 UTC", datetime(2026, 3, 11, 1, 59, 0, 123456)),
    ("2026-03-10 22:59:00.000000 -03", datetime(2026, 3, 11, 1, 59)),  # Exchange.timezone America/Sao_Paulo
    ("2026-03-10 22:59:00 -0300", datetime(2026, 3, 11, 1, 59)),  # timestamp_format com %z
    ("2026-03-10 20:59:00.000000 EST", datetime(2026, 3, 11, 1, 59)),
    ("2026-03-11 01:59:00.000000", datetime(2026, 3, 11, 1, 59)),  # sem fuso: UTC, como no nbgrader
])
def test_horario_da_entrega_em_utc(texto, esperado):
    assert hub.parse_submission_timestamp(texto) == esperado


def test_horario_da_entrega_igual_ao_do_nbgrader_no_formato_padrao():
    """No formato padrão do exchange, o mesmo valor que o nbgrader calcula (o Formgrader compara os dois para
    saber se a entrega foi corrigida)."""
    from nbgrader.utils import parse_utc

    texto = datetime(2026, 3, 11, 1, 59, 7, 250000, tzinfo=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f %Z")
    assert hub.parse_submission_timestamp(texto) == parse_utc(texto)


@pytest.mark.parametrize("texto", ["ontem", "2026-03-11 01:59:00 XYZT"])
def test_horario_da_entrega_invalido(texto):
    with pytest.raises(ValueError, match="timestamp.txt: .*recebido"):
        hub.parse_submission_timestamp(texto)
