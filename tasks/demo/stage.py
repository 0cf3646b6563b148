"""The demo world as a pipeline step: generate it, then record a manifest of what was written."""

from __future__ import annotations

from pathlib import Path

from tasks.config import DemoWorldConfig
from tasks.io.atomic import file_fingerprint, write_json
from tasks.orchestration import artifact_task


def write_demo_world(config: DemoWorldConfig, raw_root: Path) -> dict[str, int]:
    """Write the seeded synthetic world under ``raw_root`` plus ``manifest.json``.

    The manifest lists each file's sha256 and record count, and the config that produced it.
    """
    from tasks.demo import generate_demo_world

    counts = generate_demo_world(config, raw_root)
    files = sorted(p for p in Path(raw_root).rglob("*") if p.is_file()
                   and p.name != "manifest.json" and not p.name.startswith("."))
    write_json(Path(raw_root) / "manifest.json", {
        "kind": "demo-world",
        "config": config.model_dump(mode="json"),
        "records": counts,
        "files": {p.relative_to(raw_root).as_posix(): file_fingerprint(p) for p in files},
    }, indent=2)
    return counts


write_demo_world_task = artifact_task(write_demo_world, outputs=("raw_root",),
                                      name="write demo world")
