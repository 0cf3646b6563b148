"""The study's timeline (Gantt chart): one bar per stage, coloured by the process that ran it."""

from __future__ import annotations

import numpy as np
import pytest

from tasks.reporting.timeline import write_stage_timeline

ORANGE = (255, 127, 14)  # tab:orange, the second process's colour
BLUE = (31, 119, 180)  # tab:blue, the first's


def _has_colour(png, rgb) -> bool:
    from matplotlib.image import imread

    pixels = (imread(png)[..., :3] * 255).round().astype(int)
    return bool(np.any(np.all(pixels == np.array(rgb), axis=-1)))


def _summary(workers):
    return {"stages": [
        {"stage": "a", "start_s": 0.0, "wall_s": 10.0, "cpu_s": 9.0, "worker": workers[0]},
        {"stage": "b", "start_s": 1.0, "wall_s": 6.0, "cpu_s": 5.0, "worker": workers[1]},
        {"stage": "c", "start_s": 11.0, "wall_s": 3.0, "cpu_s": 3.0, "worker": workers[0]}]}


def test_each_process_gets_its_colour(tmp_path):
    two = write_stage_timeline(_summary(["pid 1", "pid 2"]), tmp_path / "two.png")
    assert two.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert _has_colour(two, BLUE) and _has_colour(two, ORANGE)
    one = write_stage_timeline(_summary(["pid 1", "pid 1"]), tmp_path / "one.png")
    assert _has_colour(one, BLUE) and not _has_colour(one, ORANGE)


def test_timings_without_processes_or_stages(tmp_path):
    old = {"stages": [{"stage": "a", "start_s": 0.0, "wall_s": 1.0, "cpu_s": 1.0}]}
    assert write_stage_timeline(old, tmp_path / "old.png").is_file()  # written before workers
    with pytest.raises(ValueError, match="no stages"):
        write_stage_timeline({"stages": []}, tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()
