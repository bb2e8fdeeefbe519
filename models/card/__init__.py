"""Model cards: what an ONNX file's ``metadata_props`` tell the engine.

The card's entries and defaults, reading and writing them in the file, and checking them
against the graph.
"""

__all__ = []
