"""The study's DAG as edges: which stages each stage waits for.

A stage waits for every earlier stage that writes what it reads: one of its ``deps`` is one of
the other's ``outs`` or ``metrics``, lies inside one, or holds one (a dependency on
``${paths.data}/raw`` waits for the stage that writes ``${paths.data}/raw/squad``). That is the
rule by which DVC connects the stages of the ``dvc.yaml`` generated from the same registry, so
``dvc repro`` and a concurrent study see one graph. Paths are compared as written, in DVC's
``${paths.*}`` templating, which every stage uses alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from tasks.pipeline.stages import Stage


def _overlap(a: str, b: str) -> bool:
    """Whether one path is the other or lies inside it."""
    a, b = a.rstrip("/"), b.rstrip("/")
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _reads_from(stage: Stage, other: Stage) -> bool:
    """Whether ``stage`` reads something that ``other`` writes."""
    writes = (*other.outs, *other.metrics, *other.plots)
    return any(_overlap(dep, out) for dep in stage.deps for out in writes)


def upstream_stages(stages: Sequence[Stage]) -> dict[str, tuple[str, ...]]:
    """``{stage name: names of the earlier stages it waits for}``, in ``stages`` order.

    Only the stages given count (pass those a configuration runs: a stage that is switched off
    writes nothing to wait for). A stage that reads what a *later* stage writes is an error: the
    registry's order is the order of the serial study and must be a topological order.
    """
    edges: dict[str, tuple[str, ...]] = {}
    for position, stage in enumerate(stages):
        edges[stage.name] = tuple(earlier.name for earlier in stages[:position]
                                  if _reads_from(stage, earlier))
        later = [other.name for other in stages[position + 1:] if _reads_from(stage, other)]
        if later:
            raise ValueError(f"stage {stage.name!r} reads what the later stage(s) {later} "
                             "write: order the registry so that every stage follows its inputs")
    return edges


def remaining_path_s(stages: Sequence[Stage]) -> dict[str, float]:
    """``{stage name: typical seconds from its start to the end of the study}``: its own
    :attr:`~tasks.pipeline.stages.Stage.typical_s` plus the longest such path among the stages
    that wait for it (the "bottom level" of list scheduling)."""
    edges = upstream_stages(stages)
    downstream: dict[str, list[str]] = {stage.name: [] for stage in stages}
    for name, upstream in edges.items():
        for earlier in upstream:
            downstream[earlier].append(name)
    remaining: dict[str, float] = {}
    for stage in reversed(stages):  # the registry is a topological order
        remaining[stage.name] = stage.typical_s + max(
            (remaining[later] for later in downstream[stage.name]), default=0.0)
    return {stage.name: remaining[stage.name] for stage in stages}


def stage_priorities(stages: Sequence[Stage]) -> dict[str, int]:
    """``{stage name: Dask priority}`` (higher runs first): the longer a stage's remaining path
    (:func:`remaining_path_s`, to a tenth of a second), the higher; ties go to the earlier stage
    in the registry. Every priority is distinct, so the order in which a worker starts the
    stages waiting for it never depends on Dask's task keys (random per run)."""
    remaining = remaining_path_s(stages)
    return {stage.name: round(remaining[stage.name] * 10) * len(stages) + len(stages) - position
            for position, stage in enumerate(stages)}


def with_upstream(stages: Sequence[Stage], targets: Sequence[str]) -> list[Stage]:
    """The ``targets`` and every stage they wait for, directly or not, in ``stages`` order:
    what ``dvc repro TARGET ...`` runs of the ``dvc.yaml`` generated from the same registry.

    ``stages`` are those the configuration runs; a target outside them is an error that names
    them (an unknown stage, or one the configuration switches off)."""
    names = [stage.name for stage in stages]
    unknown = [target for target in targets if target not in names]
    if unknown:
        raise ValueError(f"no stage {unknown[0]!r} in this configuration's study; expected one "
                         f"of {names}")
    edges = upstream_stages(stages)
    wanted: set[str] = set()
    todo = list(targets)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(edges[name])
    return [stage for stage in stages if stage.name in wanted]
