"""Smoke-world params for reader flow tests: outputs under a test directory, a tiny reader."""

from __future__ import annotations


def smoke_params_at(smoke_world, root, reader_model, **sections):
    """The smoke world's params with every output under ``root`` (its raw data linked in), the
    reader ``reader_model`` and the given sections replaced (``name=section``)."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "data" / "raw").symlink_to(smoke_world.paths.raw.resolve())
    readers = sections.pop("readers", smoke_world.readers)
    return smoke_world.model_copy(update={
        "paths": smoke_world.paths.model_copy(update={
            name: root / name for name in ("data", "results", "metrics", "reports", "state")}),
        "readers": readers.model_copy(update={
            "model": readers.model.model_copy(update={"model": str(reader_model)})}),
        **sections})
