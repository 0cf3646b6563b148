"""The demo world as two pipeline steps: generate one half, then record a manifest of what it
wrote. The halves are the two studies' sources (``tasks.demo.generate``): the retrieval
study's (T-REx, labels, hyperlink counts, passages, NQ) and the reading study's (SQuAD, PPDB,
Quora, WikiAnswers). Two stages write them into the same raw directory side by side."""

from __future__ import annotations

from pathlib import Path

from tasks.config import DemoWorldConfig
from tasks.io.atomic import file_fingerprint, write_json
from tasks.orchestration import artifact_task
from tasks.pipeline.demo_world_parts import MANIFESTS, WorldPart


def write_demo_world(config: DemoWorldConfig, raw_root: Path,
                     part: WorldPart) -> dict[str, int]:
    """Write one half of the seeded synthetic world under ``raw_root`` plus its manifest
    (:data:`MANIFESTS`): each file's sha256 and record count, and the config that produced
    it. Returns the records per file."""
    from tasks.demo.generate import generate_reading_world, generate_retrieval_world

    generate = {"retrieval": generate_retrieval_world, "reading": generate_reading_world}
    if part not in generate:
        raise ValueError(f"part must be one of {sorted(generate)}, not {part!r}")
    counts = generate[part](config, raw_root)
    write_json(Path(raw_root) / MANIFESTS[part], {
        "kind": "demo-world",
        "part": part,
        "config": config.model_dump(mode="json"),
        "records": counts,
        "files": {name: file_fingerprint(Path(raw_root) / name) for name in sorted(counts)},
    }, indent=2)
    return counts


write_demo_world_task = artifact_task(write_demo_world, outputs=("raw_root",), parts=("part",),
                                      name="write demo world")
