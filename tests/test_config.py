"""The typed configuration: profiles, overrides and errors that name the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tasks.config import EQ_RELATIONS
from tasks.params_loading import ParamsError, load_params, resolve_params

PROJECT_ROOT = Path(__file__).resolve().parents[1]

PARAMS = PROJECT_ROOT / "params.yaml"


def test_project_params_validate_for_every_profile():
    for profile in ("smoke", "demo", "demo-large", "real"):
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


def test_demo_large_is_the_demo_with_a_larger_world():
    demo = load_params(PARAMS, profile="demo").model_dump()
    large = load_params(PARAMS, profile="demo-large").model_dump()
    differ = {section for section in demo if demo[section] != large[section]}
    assert differ == {"profile", "demo_world"}
    sizes = ("n_people", "n_organisations", "n_works", "n_places")
    assert all(large["demo_world"][k] >= 5 * demo["demo_world"][k] for k in sizes)


def test_a_profile_extends_another_profile_recursively():
    raw = {"retrieval": {"bm25": {"k1": 0.9, "b": 0.4}},
           "profiles": {"demo": {"retrieval": {"bm25": {"k1": 1.0}, "headline_k": 5}},
                        "demo-large": {"extends": "real", "retrieval": {"bm25": {"b": 0.7}}},
                        "real": {"extends": "demo", "retrieval": {"headline_k": 100}}}}
    params = resolve_params(raw, profile="demo-large")
    # own value > the parent's (real) > the grandparent's (demo) > the base
    assert (params.retrieval.bm25.k1, params.retrieval.bm25.b) == (1.0, 0.7)
    assert params.retrieval.headline_k == 100


@pytest.mark.parametrize(("profiles", "message"), [
    ({"demo-large": {"extends": "huge"}}, r"profiles\.demo-large\.extends names 'huge'"),
    ({"demo-large": {"extends": "demo"}, "demo": {"extends": "demo-large"}},
     "in a circle: demo-large -> demo -> demo-large"),
    ({"demo-large": ["not", "sections"]}, r"profiles\.demo-large must be a mapping"),
])
def test_a_bad_extends_is_named(profiles, message):
    with pytest.raises(ParamsError, match=message):
        resolve_params({"profiles": profiles}, profile="demo-large")


def test_unknown_key_is_named():
    raw = yaml.safe_load(PARAMS.read_text())
    raw["retrieval"]["bm25"]["k_1"] = 1.0
    with pytest.raises(ParamsError, match=r"retrieval\.bm25\.k_1: Extra inputs"):
        resolve_params(raw, profile="demo")


def test_wrong_type_is_named():
    with pytest.raises(ParamsError, match=r"entity_questions\.facts_per_relation \(set to "
                       r"'many' by an override\): Input should be a valid integer"):
        resolve_params({}, overrides={"entity_questions.facts_per_relation": "many"})
    raw = yaml.safe_load(PARAMS.read_text())
    raw["retrieval"]["bm25"]["k1"] = "high"  # from the file, not an override: no such note
    with pytest.raises(ParamsError, match=r"retrieval\.bm25\.k1: Input should be a valid"):
        resolve_params(raw, profile="demo", overrides={"retrieval.bm25.b": 0.5})


@pytest.mark.parametrize(("key", "value", "message"), [
    ("retrieval.bm25.k1", -1, "greater than or equal to 0"),
    ("retrieval.bm25.k1", float("inf"), "finite number"),
    ("retrieval.bm25.b", 1.5, "less than or equal to 1"),
])
def test_bm25_parameters_out_of_range_are_refused(key, value, message):
    with pytest.raises(ParamsError, match=rf"{re.escape(key)} .*: Input should be .*{message}"):
        resolve_params({}, overrides={key: value})


@pytest.mark.parametrize(("key", "value", "message"), [
    ("retrieval.retrievers", "bm25", "expected a list of names, e.g. [bm25]"),
    ("retrieval.hybrids.h", ["bm25"], "hybrid 'h' fuses two retrievers, e.g. [bm25, dense]"),
    ("retrieval.hybrids.h", "bm25", "hybrid 'h' fuses two retrievers"),
])
def test_a_name_where_a_list_is_expected_says_so(key, value, message):
    with pytest.raises(ParamsError, match=re.escape(message)):
        resolve_params({}, overrides={key: value})


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
    bad.write_text("retrieval: " + "[" * 50_000 + "]" * 50_000 + "\n")
    with pytest.raises(ParamsError, match=r"params\.yaml: nested deeper than the YAML parser"):
        load_params(bad)


def test_params_file_missing_or_not_utf8_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("QASTRESS_PARAMS", str(tmp_path / "gone.yaml"))
    with pytest.raises(ParamsError, match=r"gone\.yaml: no such params file$"):
        load_params()
    latin1 = tmp_path / "params.yaml"
    latin1.write_bytes("retrieval: {bm25: {k1: 0.9}}  # Sch\u00e4tzung\n".encode("latin-1"))
    with pytest.raises(ParamsError, match=r"params\.yaml: not UTF-8 text \(byte 35\)"):
        load_params(latin1)


def test_dotted_overrides_and_env_profile(monkeypatch):
    monkeypatch.setenv("QASTRESS_PROFILE", "smoke")
    params = load_params(PARAMS, overrides={"retrieval.bm25.k1": 1.2})
    assert params.profile == "smoke"
    assert params.retrieval.bm25.k1 == 1.2


def _leaves(tree, prefix=""):
    """``{dotted.key: value}`` of every leaf of a nested mapping (lists become tuples)."""
    out = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out |= _leaves(value, dotted + ".")
        else:
            out[dotted] = tuple(value) if isinstance(value, list) else value
    return out


def _base_vs_defaults(base: dict) -> tuple[list[str], dict]:
    """Keys of ``base`` without a pydantic field; ``{key: (yaml, code default)}`` that differ."""
    from tasks.config import Params

    yaml_values = _leaves(base)
    defaults = _leaves(Params().model_dump(mode="json"))
    missing = sorted(set(yaml_values) - set(defaults))
    differing = {key: (value, defaults[key]) for key, value in yaml_values.items()
                 if key in defaults and defaults[key] != value}
    return missing, differing


def _params_base() -> dict:
    base = yaml.safe_load(PARAMS.read_text())
    base.pop("profiles")
    return base


def test_code_defaults_equal_params_yaml_base():
    """Every key of params.yaml's base section equals the pydantic default, key by key."""
    base = _params_base()
    missing, differing = _base_vs_defaults(base)
    assert not missing, f"params.yaml keys without a pydantic field: {missing}"
    assert not differing, "params.yaml base vs code default, (yaml, code): " + "; ".join(
        f"{key}: {pair}" for key, pair in sorted(differing.items()))
    assert len(_leaves(base)) > 100  # the comparison really walked the sections


def test_defaults_comparison_catches_a_difference():
    """The key-by-key comparison names a changed value and an unknown key (it can fail)."""
    base = _params_base()
    base["retrieval"]["result_ctxs"] = 99
    base["paraphrase"]["model"]["d_model"] = 64
    base["retrieval"]["bm25"]["k_1"] = 1.0
    missing, differing = _base_vs_defaults(base)
    assert missing == ["retrieval.bm25.k_1"]
    assert set(differing) == {"retrieval.result_ctxs", "paraphrase.model.d_model"}
    assert differing["retrieval.result_ctxs"] == (99, 20)


def test_config_layer_imports_no_domain_module():
    """tasks.config loads without importing models/ or a domain package (one-way layers)."""
    import subprocess
    import sys

    above = ("models", "flows", "tasks.io", "tasks.questions", "tasks.retrieval",
             "tasks.paraphrase", "tasks.evaluation", "tasks.demo", "tasks.reporting")
    code = (f"import sys, tasks.config; bad = sorted(m for m in sys.modules if any(m == p or "
            f"m.startswith(p + '.') for p in {above!r})); print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_empty_params_file_is_an_error_not_the_defaults(tmp_path):
    empty = tmp_path / "params.yaml"
    empty.write_text("# nothing yet\n")
    with pytest.raises(ParamsError, match=r"params\.yaml: the params file is empty"):
        load_params(empty, profile="smoke")


def test_a_profile_the_file_does_not_hold_is_an_error(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("retrieval: {bm25: {k1: 0.9}}\nprofiles:\n  demo: {}\n")
    with pytest.raises(ParamsError, match=r"profile 'smoke' is not in the file's profiles "
                                          r"\(demo\)"):
        load_params(path, profile="smoke")
    assert load_params(path, profile="demo").retrieval.bm25.k1 == 0.9
    bare = tmp_path / "bare.yaml"  # no profiles and none asked for: the file is the study
    bare.write_text("retrieval: {bm25: {k1: 0.7}}\n")
    assert load_params(bare).retrieval.bm25.k1 == 0.7
    with pytest.raises(ParamsError, match=r"profile 'smoke' is not in the file's profiles"):
        load_params(bare, profile="smoke")
    own = tmp_path / "real.yaml"  # a file that is its own profile needs no profiles section
    own.write_text("profile: real\nsources: {world: real}\n")
    assert load_params(own).profile == "real"
    with pytest.raises(ParamsError, match=r"profile 'smoke' is not in the file's profiles "
                                          r"\(none\)"):
        load_params(own, profile="smoke")


def test_a_yaml_error_is_one_line_with_its_place(tmp_path):
    bad = tmp_path / "params.yaml"
    bad.write_text("retrieval:\n  bm25: {k1: 0.9\n")
    with pytest.raises(ParamsError) as caught:
        load_params(bad)
    message = str(caught.value)
    assert "\n" not in message and "<unicode string>" not in message
    assert re.search(r"params\.yaml: not valid YAML at line \d+, column \d+: ", message), message


def test_a_profile_asked_for_by_name_says_so():
    with pytest.raises(ParamsError, match=r"not 'huge' \(asked for by --profile"):
        resolve_params({}, profile="huge")


@pytest.mark.parametrize("key, value", [("demo_world.n_people", 0),
                                        ("demo_world.n_squad_dev", -3),
                                        ("demo_world.zipf_exponent", 0.0)])
def test_demo_world_sizes_are_checked(key, value):
    with pytest.raises(ParamsError, match=re.escape(key)):
        resolve_params({}, overrides={key: value})
