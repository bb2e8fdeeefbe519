"""Regenerate the score and wall-time tables of models/README.md from the zoo index and cards.

Only the text between :data:`BEGIN` and :data:`END` is replaced; the rest of
the README is written by hand.
"""

import json
from pathlib import Path

from ..models.card.onnx_metadata import read_metadata_props
from .errors import TrainingError

__all__ = ["BEGIN", "END", "SCORED_METRICS", "checked_readme", "render_tables", "update_readme"]

BEGIN = "<!-- BEGIN GENERATED TABLES (python -m polytopo.training evaluate) -->"
END = "<!-- END GENERATED TABLES -->"
SCORED_METRICS = ("AP50", "AP", "E-BIoU", "O-BIoU", "Hole-F1", "Topo-EM")
"""The metrics each zoo model is scored with on every raster (cards, index, README tables)."""


def _number(value):
    return "undefined" if value is None else f"{value:.3f}"


def _seconds(value):
    return "–" if value is None else f"{value:.0f}"


def render_tables(zoo_dir):
    """Markdown tables of every indexed model's held-out scores, sizes and wall times.

    A model the index lists whose file is not in ``zoo_dir`` gets a line saying so
    instead of its scores.
    """
    zoo_dir = Path(zoo_dir)
    index = json.loads((zoo_dir / "index.json").read_text(encoding="utf-8"))
    lines = [
        "| model | family | file size | train | export | evaluate |",
        "|---|---|---|---|---|---|",
    ]
    for entry in index["models"]:
        wall = entry.get("wall_seconds", {})
        lines.append(
            f"| `{entry['name']}` | {entry['family']} | {entry['size_bytes'] / 1e6:.2f} MB | "
            f"{_seconds(wall.get('train'))} s | {_seconds(wall.get('export'))} s | {_seconds(wall.get('evaluate'))} s |"
        )
    for entry in index["models"]:
        if not (zoo_dir / entry["file"]).is_file():  # a model pack file not installed, a folder of one trial
            lines += ["", f"**`{entry['name']}`**: `{entry['file']}` is not in this folder; its card has its scores."]
            continue
        props = read_metadata_props(zoo_dir / entry["file"])
        if "polytopo.scores" not in props:
            continue
        scores = json.loads(props["polytopo.scores"])
        lines += [
            "",
            f"**`{entry['name']}`** ({entry['baseline']}; paper profile, pixel size = raster GSD)",
            "",
            "| raster | split | GSD | reference (holes) | predicted (holes) | " + " | ".join(SCORED_METRICS) + " |",
            "|---|---|---|---|---|" + "---|" * len(SCORED_METRICS),
        ]
        for row in scores["results"]:
            lines.append(
                f"| {row['key']}{' (synthetic)' if row['synthetic'] else ''} | {row['split']} | {row['gsd_cm']:.1f} cm | "
                f"{row['reference_instances']} ({row['reference_holes']}) | "
                f"{row['predicted_instances']} ({row['predicted_holes']}) | "
                + " | ".join(_number(row[m]) for m in SCORED_METRICS) + " |"
            )
    return "\n".join(lines)


def checked_readme(readme_path):
    """The text of ``readme_path`` and the positions of its BEGIN and END markers.

    Raises
    ------
    TrainingError
        The file is missing or lacks the markers (checked before a run, so that a long
        training does not end on it).
    """
    readme_path = Path(readme_path)
    if not readme_path.is_file():
        raise TrainingError(f"Expected a README at {readme_path} (--readme) for the generated tables but there is no "
                            "such file; copy models/README.md there or pass an existing one.")
    text = readme_path.read_text(encoding="utf-8")
    start, stop = text.find(BEGIN), text.find(END)
    if start < 0 or stop < start:
        raise TrainingError(f"Expected the markers {BEGIN!r} and {END!r} in {readme_path} but did not find them; add them.")
    return text, start, stop


def update_readme(readme_path, zoo_dir):
    """Replace the generated section of ``readme_path`` (see :func:`checked_readme`) with :func:`render_tables`."""
    text, start, stop = checked_readme(readme_path)
    text = text[: start + len(BEGIN)] + "\n" + render_tables(zoo_dir) + "\n" + text[stop:]
    Path(readme_path).write_text(text, encoding="utf-8")
