"""The vector writer builds its file inside a private folder and leaves nothing else behind."""

import os
import stat

import pytest
import shapely

from polytopo.models.writer import VectorWriter


def test_the_file_is_written_inside_a_private_folder_then_moved(tmp_path):
    out = tmp_path / "polygons.gpkg"
    with VectorWriter(out, "") as writer:
        writer.write(shapely.box(0, 0, 1, 1), 1, "building", 0.9)
        folder = os.path.dirname(writer._tmp)
        assert os.path.dirname(folder) == str(tmp_path) and os.path.basename(folder).startswith(".polytopo-partial-")
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["polygons.gpkg"]


def test_a_failure_leaves_neither_output_nor_temporary_folder(tmp_path):
    with pytest.raises(RuntimeError, match="stop"):
        with VectorWriter(tmp_path / "polygons.gpkg", "") as writer:
            writer.write(shapely.box(0, 0, 1, 1), 1, "building", 0.9)
            raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
