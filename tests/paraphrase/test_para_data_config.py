"""The ``paraphrase`` section of params.yaml: defaults of the paper, profiles, clear errors."""

from __future__ import annotations

import pytest
from para_data_world import PROJECT_ROOT

from tasks.params_loading import ParamsError, load_params

PARAMS = PROJECT_ROOT / "params.yaml"


def test_paper_defaults():
    cfg = load_params(PARAMS, profile="demo").paraphrase
    assert cfg.ppdb_min_score == 0.25 and cfg.max_ngram == 6 and cfg.vocab_size == 8000
    assert cfg.min_question_tokens == 7
    assert (cfg.similarity.test_set, cfg.similarity.augmentation,
            cfg.similarity.adversarial_augmentation) == (0.95, 0.9, 0.83)
    assert cfg.generator == "neural" and cfg.model.d_model % cfg.model.heads == 0


def test_smoke_is_tiny_and_real_names_pretrained_taggers():
    smoke = load_params(PARAMS, profile="smoke").paraphrase
    assert smoke.vocab_size < 8000 and smoke.model.max_steps <= 50 and smoke.model.d_model <= 64
    assert not smoke.adversarial
    real = load_params(PARAMS, profile="real").paraphrase
    assert real.ner_tagger and real.chunk_tagger and real.adversarial


@pytest.mark.parametrize("key, value, named", [
    ("paraphrase.ppdb_threshold", 0.3, "paraphrase.ppdb_threshold"),
    ("paraphrase.similarity.test_set", 1.5, "paraphrase.similarity.test_set"),
    ("paraphrase.ppdb_pack", "huge", "paraphrase.ppdb_pack"),
    ("paraphrase.model.heads", 3, "paraphrase.model"),
    ("paraphrase.generator", "gpt", "paraphrase.generator"),
])
def test_bad_values_name_their_key(key, value, named):
    with pytest.raises(ParamsError, match=named.replace(".", r"\.")):
        load_params(PARAMS, profile="smoke", overrides={key: value})
