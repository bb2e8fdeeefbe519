"""The decoder family table: each row's example card is valid, and the table is the one list of families."""

import pytest

from polytopo.models import SessionParams, load_model
from polytopo.models import model as model_module
from polytopo.models.card.model_card import card_to_props, parse_card
from polytopo.models.card.validation import GraphSignature, TensorSpec, check_card
from polytopo.models.decoders import DECODERS, FAMILY_TABLE
from polytopo.models.errors import ModelCardError

CPU = SessionParams(provider="cpu")


def _signature_for(row):
    """A graph with one RGB image input and the outputs the row's example card names (dynamic shapes)."""
    outputs = []
    for role, name in row.example["polytopo.outputs"].items():
        channels = 4 if role == "frame_field" else None
        outputs.append(TensorSpec(name, (None, channels, None, None), "float32"))
    return GraphSignature(inputs=(TensorSpec("image", (None, 3, None, None), "float32"),), outputs=tuple(outputs))


@pytest.mark.parametrize("row", FAMILY_TABLE, ids=lambda row: row.name)
def test_each_rows_example_card_parses_and_checks_against_a_graph(row):
    card = parse_card(card_to_props(row.example))
    io = check_card(card, _signature_for(row))
    assert card.family == row.name
    assert set(dict(io.outputs)) >= set(row.required)
    assert set(dict(io.outputs)) <= set(row.roles)
    assert [other.name for other in FAMILY_TABLE if other.decoder is row.decoder] == [row.name]
    assert DECODERS[row.name] is row.decoder
    assert (row.companion is not None) == (row.name in ("promptable", "vertex-sequence"))
    if row.companion is not None:
        assert getattr(card, row.companion.key.removeprefix("polytopo.")) == row.example[row.companion.key]


def test_an_unknown_family_lists_every_family_of_the_table():
    with pytest.raises(ModelCardError) as error:
        parse_card(card_to_props({"polytopo.family": "polyline"}))
    message = str(error.value)
    assert "'polyline'" in message
    assert all(repr(row.name) in message for row in FAMILY_TABLE)


def _counting_parse(monkeypatch):
    calls = []

    def counted(props):
        calls.append(dict(props))
        return parse_card(props)

    monkeypatch.setattr(model_module, "parse_card", counted)
    return calls


def test_load_model_parses_the_card_once(tmp_path, tiny, monkeypatch):
    path = tiny.deepness_model(tmp_path / "seg.onnx", tile=32)
    calls = _counting_parse(monkeypatch)
    model = load_model(path, CPU)
    assert len(calls) == 1
    assert model.card == parse_card(calls[0])


def test_load_model_with_a_prompt_decoder_parses_the_card_once(tmp_path, tiny, monkeypatch):
    path = tiny.promptable_models(tmp_path, tile=32)
    calls = _counting_parse(monkeypatch)
    model = load_model(path, CPU)
    assert len(calls) == 1
    assert model.card.family == "promptable" and model.prompt_io is not None
