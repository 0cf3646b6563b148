"""The typed configuration: profiles, overrides and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tasks.config import EQ_RELATIONS, ParamsError, load_params, resolve_params

PROJECT_ROOT = Path(__file__).resolve().parents[1]

PARAMS = PROJECT_ROOT / "params.yaml"


def test_project_params_validate_for_every_profile():
    for profile in ("smoke", "demo", "real"):
        params = load_params(PARAMS, profile=profile)
        assert params.profile == profile
    assert load_params(PARAMS, profile="demo").entity_questions.relations == EQ_RELATIONS
    assert len(EQ_RELATIONS) == 24


def test_profile_overlays_base_values():
    smoke = load_params(PARAMS, profile="smoke")
    demo = load_params(PARAMS, profile="demo")
    assert smoke.demo_world.n_people < demo.demo_world.n_people
    assert smoke.demo_world.seed == demo.demo_world.seed  # not overridden: inherited
    assert load_params(PARAMS, profile="real").sources.world == "real"


def test_unknown_key_is_named():
    raw = yaml.safe_load(PARAMS.read_text())
    raw["retrieval"]["bm25"]["k_1"] = 1.0
    with pytest.raises(ParamsError, match=r"retrieval\.bm25\.k_1: Extra inputs"):
        resolve_params(raw, profile="demo")


def test_wrong_type_is_named():
    with pytest.raises(ParamsError, match=r"entity_questions\.facts_per_relation"):
        resolve_params({}, overrides={"entity_questions.facts_per_relation": "many"})


def test_unknown_relation_is_named():
    with pytest.raises(ParamsError, match=r"unknown relation\(s\) \['P9999'\]"):
        resolve_params({}, overrides={"entity_questions.relations": ["P19", "P9999"]})


def test_unknown_profile():
    with pytest.raises(ParamsError, match="profile must be one of"):
        resolve_params({}, profile="huge")


def test_invalid_yaml_names_file(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("retrieval: [unclosed\n")
    with pytest.raises(ParamsError, match="params.yaml: not valid YAML"):
        load_params(bad)


def test_dotted_overrides_and_env_profile(monkeypatch):
    monkeypatch.setenv("QASTRESS_PROFILE", "smoke")
    params = load_params(PARAMS, overrides={"retrieval.bm25.k1": 1.2})
    assert params.profile == "smoke"
    assert params.retrieval.bm25.k1 == 1.2
