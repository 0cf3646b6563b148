"""retrieval.has_answer_mode in params.yaml: EntityQuestions' convention by default, old and
unknown names rejected with the valid ones listed."""

from pathlib import Path

import pytest
import yaml

from tasks.config import RetrievalConfig
from tasks.evaluation.has_answer import DEFAULT_MODE, MODES
from tasks.params_loading import ParamsError, resolve_params

PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"


def test_default_is_entityquestions_string_in_code_and_params_yaml():
    assert RetrievalConfig().has_answer_mode == DEFAULT_MODE == "eq-string"
    raw = yaml.safe_load(PARAMS.read_text(encoding="utf-8"))
    assert raw["retrieval"]["has_answer_mode"] == "eq-string"
    for profile in ("smoke", "demo", "real"):
        assert resolve_params(dict(raw), profile).retrieval.has_answer_mode == "eq-string"


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_is_accepted(mode):
    params = resolve_params({}, overrides={"retrieval.has_answer_mode": mode})
    assert params.retrieval.has_answer_mode == mode


@pytest.mark.parametrize(("mode", "hint"), [("string", "split in two: use 'eq-string'"),
                                            ("title_string", "'eq-string-title'"),
                                            ("fuzzy", "unknown has_answer mode 'fuzzy'")])
def test_old_and_unknown_modes_are_rejected(mode, hint):
    with pytest.raises(ParamsError) as err:
        resolve_params({}, overrides={"retrieval.has_answer_mode": mode})
    message = str(err.value)
    assert "retrieval.has_answer_mode" in message and hint in message
    assert "valid modes: eq-string, eq-string-title, dpr-string, dpr-string-title, title, " \
           "regex" in message
