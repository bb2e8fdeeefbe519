"""The dock's ring-by-ring diagnosis says what the table row it explains says, for every error class."""

import re

from polytopo.plugin.runs.evaluation import evaluate_layers


def test_every_class_gets_the_diagnosis_of_its_own_row(scene):
    """Scores are not in input order, so table rows (input order) and evaluated instances (by score) differ."""
    from polytopo.plugin.gui.evaluation_text import ring_diagnosis

    prediction, reference = scene.layers()
    evaluation = evaluate_layers(prediction, reference, pixel_size=scene.pixel_size, score_field="score").evaluation
    records = evaluation.records["predictions"]
    assert {r["error_class"] for r in records} == set(scene.expected_classes.values())
    for index, record in enumerate(records):
        lines = ring_diagnosis(evaluation, index).splitlines()
        assert lines[0] == f"Prediction {record['pred_id']}: {record['error_class']}", lines
        text = "\n".join(lines)
        if record["matched_ref_id"] is None:
            assert "Matched no reference polygon" in text and record["error_class"] in ("unmatched",), text
            continue
        assert f"Matched reference {record['matched_ref_id']} with IoU {record['iou']:.3f}." in text, text
        assert "Matched no reference" not in text
        holes = [line for line in lines if re.match(r"Hole \d+: ", line)]
        assert len(holes) == record["pred_holes"]
        assert sum("extra" in line for line in holes) == record["hole_fp"]
        assert sum(line.startswith("Reference hole") for line in lines) == record["hole_fn"]
        matched_exterior = "(matched, γ" in text
        assert matched_exterior == (record["error_class"] != "exterior mismatch") or record["error_class"] == "invalid"
