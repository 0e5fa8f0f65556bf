"""A linha esperada em ``notas.csv`` para cada entrega da turma de exemplo (``gerar.py``).

Usada pela correção da turma (``tests/test_correcao.py``) e pelo ``validar`` (``tests/test_validar.py``),
que tem de concordar com ela.
"""

A1, A2, A3 = "aula-01-self-attention", "aula-02-auto-atencao-do-zero", "aula-03-atencao-num-transformer-real"
A4, A5, A6 = "aula-04-bloco-transformer", "aula-05-treinando-a-atencao", "aula-06-gpt-pequeno-em-portugues"
NB = "03-exercicios.ipynb"
# o máximo de cada notebook vem das soluções (correcao.catalogo), nunca escrito aqui: nas linhas abaixo, MAX é
# "o máximo desse notebook" e é trocado pelo número no fim deste arquivo
MAX = object()

# (aluno, arquivo na entrega) -> (aula, notebook, situação, total, máximo, trecho obrigatório do motivo);
# o total pode ser uma tupla com os valores aceitos, quando depende do momento em que a caixa para o kernel
EXPECTED = {
    ("ana-correta", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("ana-correta", "04-projeto.ipynb"): (A1, "04-projeto", "ok", MAX, MAX, ""),
    ("ana-correta", "04-exercicios.ipynb"): (A2, "04-exercicios", "ok", MAX, MAX, ""),
    ("bruno-parcial", NB): (A1, "03-exercicios", "parcial", "2", MAX, "aula01-ex4-verificacao: Exercício 4"),
    ("carla-vazia", NB): (A1, "03-exercicios", "zero", "0", MAX, "não resolvido"),
    ("carla-vazia", "04-projeto.ipynb"): (A1, "04-projeto", "zero", "0", MAX, "não resolvido"),
    ("davi-laco-infinito", NB): (A1, "03-exercicios", "tempo_esgotado", "2", MAX,
                                 "tempo esgotado em célula 9 (aula01-ex3-verificacao, em “Exercício 3 (prático)"),
    ("elisa-excecao", NB): (A1, "03-exercicios", "parcial", "2", MAX,
                            "erro em célula 14 (aula01-ex4-solucao, em “Exercício 4"),
    ("fabio-sintaxe", NB): (A1, "03-exercicios", "parcial", "2", MAX, "SyntaxError: sintaxe inválida"),
    ("gabi-celulas-apagadas", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                                    "apagadas voltaram, com o código original (aula01-ex4-verificacao)"),
    ("heitor-metadados", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                               "reconhecidas pelo código (aula01-ex3-verificacao): os metadados voltaram"),
    ("iris-tipo-trocado", NB): (A1, "03-exercicios", "ok", MAX, MAX, "mudado de tipo (código/texto) voltaram"),
    ("joao-arquivos-ruins", NB): (A1, "03-exercicios", "arquivo_invalido", "0", MAX, "arquivo vazio"),
    ("joao-arquivos-ruins", "04-projeto.ipynb"): (A1, "04-projeto", "arquivo_invalido", "0", MAX, "não é JSON"),
    # o nome é o da Aula 1, o conteúdo é o da Aula 2: corrigido como o que é, com a nota
    ("karla-outra-aula", NB): (A2, "04-exercicios", "ok", MAX, MAX, "reconhecido pelas células como 04-exercicios"),
    ("leo-saida-enorme", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    # a caixa não deixa escrever fora da pasta: o código do aluno falha no que tentou, e só nele
    ("marina-mexe-em-arquivos", NB): (A1, "03-exercicios", "parcial", "2", MAX, "sem permissão para gravar"),
    ("nina-sem-notebooks", ""): ("", "", "sem_notebooks", "0", "0",
                                 "nenhum notebook (.ipynb) na pasta (há: leia-me.txt)"),
    ("olga-aula-3", NB): (A3, "03-exercicios", "ok", MAX, MAX, ""),
    # feito com a versão anterior do curso (nomes antigos das funções): corrigido com os nomes atuais
    ("xande-versao-antiga", "04-exercicios.ipynb"): (A2, "04-exercicios", "ok", MAX, MAX,
                                                     "minha_softmax → my_softmax, mascara_causal → my_causal_mask"),
    # Aulas 4, 5 e 6: a honesta, um exercício errado e a que troca a verificação (os pontos do que está certo ficam
    # em pontos_em_revisao, EM_REVISAO)
    ("rui-aula-4", NB): (A4, "03-exercicios", "ok", MAX, MAX, ""),
    ("sara-aula-4-errada", NB): (A4, "03-exercicios", "parcial", "6", MAX, "aula04-ex2-verificacao: Exercício 2"),
    ("tito-aula-4-adultera", NB): (A4, "03-exercicios", "revisar", "0", MAX, "altera o módulo aula04"),
    ("ulla-aula-5", NB): (A5, "03-exercicios", "ok", MAX, MAX, ""),
    ("vini-aula-5-errado", NB): (A5, "03-exercicios", "parcial", "3", MAX, "aula05-ex1-verificacao: Exercício 1"),
    ("wilma-aula-5-adultera", NB): (A5, "03-exercicios", "revisar", "0", MAX, "altera o módulo aula05"),
    ("xuxa-aula-6", NB): (A6, "03-exercicios", "ok", MAX, MAX, ""),
    ("yago-aula-6-errado", NB): (A6, "03-exercicios", "parcial", "6", MAX, "aula06-ex2-verificacao: Exercício 2"),
    ("zoe-aula-6-adultera", NB): (A6, "03-exercicios", "revisar", "0", MAX, "altera o módulo aula06"),
    # trapaças (trabalho errado): nunca ganham ponto; quem mexe na correção vai para revisão
    ("trapaca-religa-verificacao", NB): (A1, "03-exercicios", "revisar", "0", MAX, "altera o módulo aula01"),
    ("trapaca-desliga-correcao", NB): (A1, "03-exercicios", "revisar", "0", MAX, "importa as verificações"),
    ("trapaca-apaga-variavel", NB): (A1, "03-exercicios", "revisar", "0", MAX, "os.environ"),
    ("trapaca-comparacao", NB): (A1, "03-exercicios", "revisar", "0", MAX, "altera o módulo Checker"),
    ("trapaca-engole-excecao", NB): (A1, "03-exercicios", "revisar", "0", MAX, "get_ipython().set_custom_exc"),
    ("trapaca-numpy", NB): (A1, "03-exercicios", "revisar", "0", MAX, "altera o módulo np"),
    ("trapaca-sys-modules", NB): (A1, "03-exercicios", "revisar", "0", MAX, "sys.modules"),
    ("trapaca-esconde-traceback", NB): (A1, "03-exercicios", "revisar", "0", MAX, "get_ipython().showtraceback"),
    ("trapaca-troca-o-nome", NB): (A1, "03-exercicios", "revisar", "0", MAX, "troca o nome aula01"),
    ("trapaca-imprime-aprovado", NB): (A1, "03-exercicios", "zero", "0", MAX, "Exercício 4"),
    ("trapaca-introspeccao", NB): (A1, "03-exercicios", "revisar", "0", MAX, "o código mexe na correção"),
    ("trapaca-troca-codigo", NB): (A1, "03-exercicios", "revisar", "0", MAX, "o código mexe na correção"),
    ("trapaca-tabela", NB): (A1, "03-exercicios", "revisar", "0", MAX, "falhou na conferência independente"),
    # danos: nada acontece fora da caixa; o trabalho certo continua valendo
    ("dano-le-respostas", NB): (A1, "03-exercicios", "zero", "0", MAX, "não resolvido"),
    ("dano-escreve-fora", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("dano-estraga-colega", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    # o código mexe na correção: os pontos ficam em pontos_em_revisao (EM_REVISAO), 0 no total
    ("dano-processo-fantasma", NB): (A1, "03-exercicios", "revisar", "0", MAX, "importa subprocess"),
    ("dano-memoria", NB): (A1, "03-exercicios", "memoria_esgotada", "2", MAX,
                           "memória esgotada em célula 8 (aula01-ex3-solucao"),
    # os processos ocupam o limite da caixa: se a verificação do ex. 4 ainda consegue rodar depende do momento em
    # que o kernel para; os 2 pontos do ex. 3 (verificado antes) valem sempre, e a linha vai para revisão
    ("dano-muitos-processos", NB): (A1, "03-exercicios", "revisar", "0", MAX, "os.fork"),
    # a turma bagunçada: ninguém some, nenhum ponto se perde
    ("paulo-zip-windows", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("joão-sem-marca-utf8", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("inês-macos", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("", NB): (A1, "03-exercicios", "fora_de_pasta", "0", MAX, "solto na raiz das entregas"),
    ("yara", "yara.zip/03-exercicios.ipynb"): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("quico-desconhecido", "rascunho.ipynb"): ("", "rascunho", "desconhecido", "0", "0", "“rascunho.ipynb” não é"),
    ('sérgio "o brabo" [A] *?$(whoami);\'', NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("'=1+1-xavier", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("rita-renomeados", "03-exercicios-Copy1.ipynb"): (A1, "03-exercicios", "ok", MAX, MAX, "arquivo renomeado"),
    ("rita-renomeados", "04-Projeto.IPYNB"): (A1, "04-projeto", "ok", MAX, MAX, "arquivo renomeado"),
    ("rita-renomeados", "exercicios (1).ipynb"): (A2, "04-exercicios", "ok", MAX, MAX, "arquivo renomeado"),
    ("sofia-duas-copias", NB): (A1, "03-exercicios", "parcial", "2", MAX,
                                "2 cópias deste notebook (esta: “03-exercicios.ipynb”; outras: “versao-final/"),
    ("sofia-duas-copias", "versao-final/03-exercicios.ipynb"): (A1, "03-exercicios", "ok", MAX, MAX, "2 cópias"),
    ("tiago-duas-aulas", "aula-01/03-exercicios.ipynb"): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("tiago-duas-aulas", "aula-03/03-exercicios.ipynb"): (A3, "03-exercicios", "ok", MAX, MAX, ""),
    ("ulisses-celula-colada", NB): (A1, "03-exercicios", "ok", MAX, MAX, "aula01-ex3-verificacao aparecia 2 vezes"),
    ("vera-celula-de-outro-nb", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                                      "células de outro notebook coladas aqui (aula02-ex1-solucao, "
                                      "aula02-ex1-verificacao, de 04-exercicios (aula-02-auto-atencao-do-zero))"),
    ("wagner-kernel-morre", NB): (A1, "03-exercicios", "kernel_morreu", "2", MAX,
                                  "o kernel parou em célula 14 (aula01-ex4-solucao"),
    ("renata-sem-metadados", NB): (A1, "03-exercicios", "ok", MAX, MAX, "os metadados voltaram"),
    ("pedro-sem-respostas-escritas", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                                           "3 resposta(s) escrita(s) ainda com o esboço ✍️"),
    ("otto-importa-mais", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                                "as linhas acrescentadas a aula01-03-exercicios-importacoes rodaram"),
    ("neto-resposta-embaixo", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                                    "3 resposta(s) escrita(s) ainda com o esboço ✍️"),
    # terceira rodada: a turma em dois zips (lote-1.zip com dois alunos, lote-2.zip com a reentrega de um deles)
    ("zilda-lote", NB): (A1, "03-exercicios", "ok", MAX, MAX, ""),
    ("zeca-dois-zips", NB): (A1, "03-exercicios", "parcial", "2", MAX, "2 cópias deste notebook (esta: "
                             "“03-exercicios.ipynb”; outras: “lote-2.zip/03-exercicios.ipynb”)"),
    ("zeca-dois-zips", "lote-2.zip/03-exercicios.ipynb"): (A1, "03-exercicios", "ok", MAX, MAX, "2 cópias"),
    # dentro da pasta da aula (aula-02-auto-atencao-do-zero/lara-pasta-da-aula/): a aula não é aluna
    ("lara-pasta-da-aula", "04-exercicios.ipynb"): (A2, "04-exercicios", "ok", MAX, MAX, ""),
    # a primeira versão publicada do notebook (ids ex3-solucao..., embeddings_pulou_alto_parecidos...)
    ("yuri-primeira-versao", NB): (A1, "03-exercicios", "ok", MAX, MAX,
                                   "notebook de uma versão anterior do curso (de 2026-11-29, commit 012b9fa2)"),
    # o notebook de solutions/ como está: revisão, sem os pontos (que ficam em pontos_em_revisao)
    ("caio-copia-da-solucao", NB): (A1, "03-exercicios", "revisar", "0", MAX, "respostas iguais às de solutions/"),
    # sys.exit() no fim da resposta do exercício 3: o resto do notebook roda, o erro aparece sem caminhos da máquina;
    # a varredura aponta o sys.exit (a linha vai para revisão, com os pontos em pontos_em_revisao)
    ("sil-systemexit", NB): (A1, "03-exercicios", "revisar", "0", MAX, "SystemExit: terminei o exercício 3"),
}

# (aluno, arquivo) -> a coluna pontos_em_revisao (pontos retidos de uma linha "revisar"); as outras linhas: ""
EM_REVISAO = {
    ("tito-aula-4-adultera", NB): "6",
    ("wilma-aula-5-adultera", NB): "3",
    ("zoe-aula-6-adultera", NB): "6",
    ("caio-copia-da-solucao", NB): "4",
    ("sil-systemexit", NB): "4",
    ("dano-processo-fantasma", NB): "4",
    # os processos sem fim esgotam o limite de processos do próprio aluno: a conferência pode não conseguir chamar
    # as funções dele (nenhum ponto), ou conseguir antes (os pontos esperam a revisão)
    ("dano-muitos-processos", NB): ("", "2", "4"),
}


def _com_maximos(esperado: dict) -> dict:
    from correcao import catalogo

    maximos = {(a.folder, nb): f"{pts:g}" for a in catalogo.lessons() for nb, pts in a.max_points.items()}
    return {chave: tuple(maximos[linha[0], linha[1]] if v is MAX else v for v in linha)
            for chave, linha in esperado.items()}


EXPECTED = _com_maximos(EXPECTED)
