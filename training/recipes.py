"""The recipes of the bundled models: data, network, training schedule and card values.

A recipe is all that :mod:`.train` needs to retrain one model from scratch and
:mod:`.export` to write its ONNX file and card; nothing else changes between
models. Lengths in grid pixels (``_px``) are pixels of the model grid, at
``resolution_cm`` centimetres per pixel.
"""

from dataclasses import dataclass, replace

from .augment import BASIC, MULTISCALE, MULTISCALE_COLOUR, MULTISCALE_LARGE, Augmentation
from .encoder_variants import LITE_VARIANTS
from .errors import TrainingError
from .rendered import CITIES

__all__ = ["HEADS", "LITE0_BUILDINGS", "LITE0_HOLES", "RECIPES", "Recipe", "recipe"]

TEST_TIME_FLIPS = {1: ((),), 2: ((), (3,)), 4: ((), (3,), (2,), (2, 3))}
"""Views the exported graph averages (:class:`~.nets.ExportWrapper`), by their count: the (N, C, H, W) tensor
dimensions each view mirrors (3: left-right, 2: upside down; none: the tile itself)."""

HEADS = ("binary", "boundary3", "courtyard4", "vertex")
"""Network heads: one foreground logit; background/building/boundary logits; the same and a courtyard logit;
mask and vertex logits."""


@dataclass(frozen=True)
class Recipe:
    """How one bundled model is trained and described.

    Attributes
    ----------
    name : str
        File stem in ``models/zoo``.
    family : str
        Decoder family of the card (``semantic`` or ``vertex-mask``).
    head : str
        One of :data:`HEADS`.
    source : str
        ``kampala_rgb`` (8-bit RGB) or ``atlanta_pan`` (16-bit panchromatic).
    resolution_cm : float
        Model ground sampling distance, cm per pixel (card ``resolution``).
    input_range : tuple of 2 float
        Raw values mapped to [0, 1] before standardization.
    base_channels : int
        Channels of the first U-Net level (doubled at each of 4 levels).
    crop_px : int
        Edge of the square training crops, grid pixels.
    batch_size : int
    steps : int
        Optimizer steps (fixed, so a run is repeatable).
    learning_rate : float
        Peak AdamW learning rate (cosine decay after a short warm-up).
    encoder_learning_rate_scale : float
        The pretrained encoder's learning rate as a share of :attr:`learning_rate`
        (0 < scale ≤ 1; the decoder and head always get the whole rate), so fine-tuning
        moves the ImageNet features less than the new layers.
    seed : int
    augmentation : Augmentation
        Random changes of the training crops (:data:`.augment.AUGMENTATIONS`).
    courtyards : bool
        Cut synthetic courtyards into training buildings (:func:`.targets.carve_courtyards`).
    rendered_share : float
        Share of the crops drawn from rendered OSM courtyard geometry of the training
        cities (:mod:`.rendered`); the rest come from the real imagery (0: real only).
    rendered_frames : int
        Rendered squares per training city: the ones with the most courtyard buildings
        (every square that holds one where a city has fewer).
    rendered_split_share : float
        Above 0, each rendered square is drawn a second time with each building of at
        least 60 m² cut into touching parts with this probability
        (:func:`.rendered.split_buildings`).
    rendered_cities : tuple of str
        The rendered cities trained on (keys of :data:`.rendered.CITIES`).
    rendered_held_out : str
        The rendered city held out: never trained on, scored as ``CITY-rendered``.
    rendered_keep_out : bool
        Leave each training city's evaluation square and the main job's scene out of the
        training frames (:func:`.rendered.kept_out`) and score those squares too (split
        ``unseen square``).
    boundary_width_px : int
        Width of the boundary class of the ``boundary3`` head.
    boundary_weight : float
        Cross-entropy weight of the boundary class.
    courtyard_weight : float
        Cross-entropy weight of the courtyard class (``courtyard4`` head).
    courtyard_reach_px : int
        ``courtyard4`` head: how far from a likely courtyard the exported output keeps the
        whole building foreground (so the ring around a courtyard stays closed) instead of
        the grown interior, grid pixels (see :class:`~.nets.ExportWrapper`); 0: no such
        gate, the grown interior everywhere.
    courtyard_reaches_px : tuple of int
        ``courtyard4`` head: candidate reaches that ``calibrate`` chooses among on the
        validation ground (:func:`~.calibrate.calibrate_courtyard_reach`); empty: the
        model keeps ``courtyard_reach_px``.
    vertex_sigma_px : float
        Standard deviation of the Gaussian vertex targets of the ``vertex`` head.
    tile_size_px, tiles_overlap_percent : int, float
        Card tiling defaults.
    seg_threshold : float
        Foreground probability threshold (the paper's U-Net + Poly. uses 0.5).
    simplify_tolerance_px : float
        Douglas–Peucker tolerance of the card (1 px, as the paper's U-Net + Poly.).
    min_area_m2, min_hole_area_m2 : float
        Smallest building and courtyard kept, square metres on the ground
        (stored in the card in model-grid px², see :attr:`min_area_px2`).
    vertex_snap_radius_px : float
        Card ``polytopo.vertex_snap_radius_px`` (vertex-mask family).
    encoder : str or None
        None: the from-scratch :class:`~.nets.UNet`; a name of
        :data:`.encoder_variants.LITE_VARIANTS` (``"efficientnet-lite0"``, ...): the
        :class:`~.nets.LiteUNet` on that ImageNet-pretrained EfficientNet-Lite.
    standardization : tuple of 2 tuple or None
        Fixed per-band (mean, std) after scaling to [0, 1] (a pretrained encoder's own);
        None: measured on the training crops.
    train_places : tuple of str
        fAIr places of :data:`.data.UNSEEN_PLACES` also trained on (every zoom level, both
        patches); the others stay unseen. Empty: Kampala only.
    validation_places : tuple of str
        fAIr places of :data:`.data.UNSEEN_PLACES` held out of training as validation
        ground: :mod:`.calibrate` chooses the threshold and outline offset on them (zoom 19
        and 20) together with the Kampala validation patch. Never in :attr:`train_places`.
    joplin : bool
        Also train on the four xView2 Joplin tiles (0.6 m), with the loss restricted to
        :attr:`label_reach_m` around the labelled buildings (many houses have no footprint).
    label_reach_m : float
        Around noisily labelled ground, only pixels this close to a label count in the loss.
    noisy_places : tuple of str
        Places of :attr:`train_places` whose labels miss visible buildings: like Joplin's,
        only their pixels within :attr:`label_reach_m` of a label count in the loss, so an
        unlabelled roof there is never taught as background. Empty: every pixel counts.
    place_shares : tuple of (str, float) pairs
        Share of the crops per source (``kampala``, each of :attr:`train_places`,
        ``joplin``); empty: Kampala alone.
    separate_touching : bool
        ``boundary3`` head: export the grown building interior as one probability
        (N, 1, H, W), so touching buildings come apart (:class:`~.nets.ExportWrapper`).
    test_time_flips : int
        Views of each tile the exported graph averages, a key of :data:`TEST_TIME_FLIPS`
        (1: the tile alone; 2: also mirrored left-right; 4: also upside down and both).
    soup_of : tuple of str
        Names of recipes of the same network whose exported models this one averages
        weight by weight (:mod:`.soup`, made with ``python -m polytopo.training soup``);
        empty: a model trained by :mod:`.train` (or an ensemble).
    ensemble_of : tuple of str
        Names of recipes whose exported models this one runs side by side, their outputs
        averaged (:mod:`.ensemble`, made with ``python -m polytopo.training ensemble``);
        empty: a model trained by :mod:`.train` (or a soup).
    small_building_m2 : float
        ``boundary3`` and ``courtyard4`` heads: a building smaller than this (m² at the
        model grid, as the crop shows it) has its pixels' cross-entropy weighted by
        ``sqrt(small_building_m2 / area)``, at most :attr:`small_building_max_weight`
        (:func:`.targets.instance_weights`); 0: no such weights.
    small_building_max_weight : float
        The largest weight of a small building's pixels.
    gap_weight : float
        ``boundary3`` and ``courtyard4`` heads: the weight of background pixels within
        :attr:`gap_reach_px` (model px) of two different buildings; 1: not raised.
    gap_reach_px : int
        See :attr:`gap_weight`; also how near another building a building pixel lies to count
        as a wall (:attr:`wall_weight`).
    wall_weight : float
        ``boundary3`` and ``courtyard4`` heads: the least weight of building pixels within
        :attr:`gap_reach_px` of another building (both sides of a shared wall); 1: not raised.
    member_grids_cm : tuple of float
        Ground size (cm) of the pixel each member of :attr:`ensemble_of` reads, in the same
        order: the graph resizes the tile from the card's grid (:attr:`resolution_cm`) to the
        member's and the member's outputs back (:func:`.ensemble.ensembled_model`); empty:
        every member reads the card's grid.
    half_stored : bool
        An ensemble's float weights stored as float16 in the file and cast back to float32
        when it loads (:func:`.ensemble.half_stored`): half the size, float32 arithmetic.
    fine_tune_from : str or None
        Name of another recipe (same encoder and head) whose final checkpoint in the
        same work folder gives the starting weights; None: the pretrained encoder.
    baseline : str
        Card ``polytopo.baseline``.
    summary : str
        One sentence for the zoo README.
    """

    name: str
    family: str
    head: str
    source: str
    resolution_cm: float
    input_range: tuple
    baseline: str
    summary: str
    base_channels: int = 16
    crop_px: int = 128
    batch_size: int = 8
    steps: int = 2000
    learning_rate: float = 3e-3
    encoder_learning_rate_scale: float = 1.0
    seed: int = 20240611
    augmentation: Augmentation = BASIC
    courtyards: bool = False
    rendered_share: float = 0.0
    rendered_frames: int = 8
    rendered_split_share: float = 0.0
    rendered_cities: tuple = ("monaco", "bangalore")
    rendered_held_out: str = "helsinki"
    rendered_keep_out: bool = False
    boundary_width_px: int = 2
    boundary_weight: float = 3.0
    courtyard_weight: float = 2.0
    small_building_m2: float = 0.0
    small_building_max_weight: float = 3.0
    gap_weight: float = 1.0
    gap_reach_px: int = 3
    wall_weight: float = 1.0
    courtyard_reach_px: int = 48
    courtyard_reaches_px: tuple = ()
    vertex_sigma_px: float = 1.5
    tile_size_px: int = 256
    tiles_overlap_percent: float = 15.0
    seg_threshold: float = 0.5
    simplify_tolerance_px: float = 1.0
    min_area_m2: float = 2.0
    min_hole_area_m2: float = 1.0
    vertex_snap_radius_px: float = 3.0
    encoder: object = None
    standardization: object = None
    train_places: tuple = ()
    validation_places: tuple = ()
    joplin: bool = False
    label_reach_m: float = 4.0
    noisy_places: tuple = ()
    place_shares: tuple = ()
    separate_touching: bool = False
    test_time_flips: int = 1
    soup_of: tuple = ()
    ensemble_of: tuple = ()
    member_grids_cm: tuple = ()
    half_stored: bool = False
    fine_tune_from: object = None

    def __post_init__(self):
        if self.head not in HEADS:
            raise TrainingError(f"Expected head to be one of {list(HEADS)} but got {self.head!r}.")
        if self.family not in ("semantic", "vertex-mask"):
            raise TrainingError(f"Expected family 'semantic' or 'vertex-mask' but got {self.family!r}.")
        if (self.head == "vertex") != (self.family == "vertex-mask"):
            raise TrainingError(f"Expected head 'vertex' exactly for family 'vertex-mask' but got {self.head!r}.")
        if self.source not in ("kampala_rgb", "atlanta_pan"):
            raise TrainingError(f"Expected source 'kampala_rgb' or 'atlanta_pan' but got {self.source!r}.")
        if not 0.0 <= self.rendered_share < 1.0:
            raise TrainingError(f"Expected rendered_share in [0, 1) but got {self.rendered_share!r}.")
        if self.head == "courtyard4" and not (self.courtyards and self.separate_touching):
            raise TrainingError("Expected courtyards and separate_touching for the 'courtyard4' head (it learns "
                                "courtyards and exports the courtyard-gated grown interior).")
        if self.courtyard_reach_px < 0 or (self.courtyard_reaches_px and (self.head != "courtyard4"
                                                                          or min(self.courtyard_reaches_px) < 0)):
            raise TrainingError(f"Expected courtyard_reach_px >= 0 and courtyard_reaches_px (pixels >= 0; 0: no "
                                f"courtyard gate) only for the 'courtyard4' head but got {self.courtyard_reach_px!r} "
                                f"and {self.courtyard_reaches_px!r} for the {self.head!r} head.")
        if not 0.0 <= self.rendered_split_share <= 1.0 or (self.rendered_split_share and not self.rendered_share):
            raise TrainingError(f"Expected rendered_split_share in [0, 1], and 0 without rendered crops, but got "
                                f"{self.rendered_split_share!r} with rendered_share {self.rendered_share!r}.")
        cities = (*self.rendered_cities, self.rendered_held_out)
        if not set(cities) <= set(CITIES) or len(set(cities)) != len(cities) or not self.rendered_cities:
            raise TrainingError(f"Expected rendered_cities (one or more) and rendered_held_out, all different, among "
                                f"{sorted(CITIES)} but got {self.rendered_cities!r} and {self.rendered_held_out!r}.")
        if self.rendered_share > 0 and not self.courtyards:
            raise TrainingError("Expected rendered_share 0 for a recipe without courtyards (its target has no holes).")
        if self.crop_px % self.reduction or self.tile_size_px % self.reduction:
            raise TrainingError(
                f"Expected crop_px and tile_size_px divisible by {self.reduction} (the net's stride) but got "
                f"{self.crop_px}, {self.tile_size_px}."
            )
        if self.test_time_flips not in TEST_TIME_FLIPS:
            raise TrainingError(f"Expected test_time_flips to be one of {sorted(TEST_TIME_FLIPS)} but got "
                                f"{self.test_time_flips!r}.")
        if not 0.0 < self.encoder_learning_rate_scale <= 1.0:
            raise TrainingError(f"Expected encoder_learning_rate_scale in (0, 1] but got "
                                f"{self.encoder_learning_rate_scale!r}.")
        if self.encoder is None and self.encoder_learning_rate_scale != 1.0:
            raise TrainingError("Expected encoder_learning_rate_scale 1 for the from-scratch U-Net (it has no "
                                "pretrained encoder).")
        for kind, members in (("soup_of", self.soup_of), ("ensemble_of", self.ensemble_of)):
            if len(members) == 1:
                raise TrainingError(f"Expected {kind} to name no recipe or at least two but got {list(members)}.")
        if self.soup_of and self.ensemble_of:
            raise TrainingError("Expected soup_of or ensemble_of, not both: a model is averaged by weights or by "
                                "outputs.")
        if self.small_building_m2 < 0 or (self.loss_weighted and self.head not in ("boundary3", "courtyard4")):
            raise TrainingError(f"Expected small_building_m2 >= 0, and no loss weights (small_building_m2 0, "
                                f"gap_weight and wall_weight 1) unless the head is 'boundary3' or 'courtyard4', but got "
                                f"{self.small_building_m2!r}, {self.gap_weight!r} and {self.wall_weight!r} with the "
                                f"{self.head!r} head.")
        if (self.small_building_max_weight < 1 or self.gap_weight <= 0 or self.wall_weight <= 0
                or self.gap_reach_px < 0):
            raise TrainingError(f"Expected small_building_max_weight >= 1, gap_weight and wall_weight > 0 and "
                                f"gap_reach_px >= 0 but got {self.small_building_max_weight!r}, {self.gap_weight!r}, "
                                f"{self.wall_weight!r}, {self.gap_reach_px!r}.")
        if self.member_grids_cm and (len(self.member_grids_cm) != len(self.ensemble_of)
                                     or not all(grid > 0 for grid in self.member_grids_cm)):
            raise TrainingError(f"Expected member_grids_cm to give one positive ground size per member of "
                                f"ensemble_of {list(self.ensemble_of)} but got {list(self.member_grids_cm)}.")
        if self.half_stored and not self.ensemble_of:
            raise TrainingError("Expected half_stored only with ensemble_of (a trained model is exported as trained).")
        if set(self.validation_places) & set(self.train_places):
            raise TrainingError(f"Expected validation_places apart from train_places but both name "
                                f"{sorted(set(self.validation_places) & set(self.train_places))}.")
        if not set(self.noisy_places) <= set(self.train_places):
            raise TrainingError(f"Expected noisy_places among train_places {list(self.train_places)} but got "
                                f"{sorted(set(self.noisy_places) - set(self.train_places))}.")
        if self.encoder is not None and self.encoder not in LITE_VARIANTS:
            raise TrainingError(f"Expected encoder None or one of {sorted(LITE_VARIANTS)} but got {self.encoder!r}.")

    @property
    def noisy_sources(self):
        """Training sources whose labels miss buildings (:attr:`noisy_places`, and ``"joplin"`` when trained on)."""
        return (*self.noisy_places, "joplin") if self.joplin else tuple(self.noisy_places)

    @property
    def loss_weighted(self):
        """Whether the crops carry per-pixel loss weights (small buildings, gap or wall weight set)."""
        return self.small_building_m2 > 0 or self.gap_weight != 1.0 or self.wall_weight != 1.0

    @property
    def members(self):
        """The recipes this one combines (:attr:`soup_of` or :attr:`ensemble_of`); empty for a trained model."""
        return self.soup_of or self.ensemble_of

    @property
    def combination(self):
        """``"soup"`` or ``"ensemble"`` for a combined model (:mod:`.combined`), None for a trained one."""
        return "soup" if self.soup_of else "ensemble" if self.ensemble_of else None

    @property
    def reduction(self):
        """Multiple of pixels the net needs: 16 for the U-Net, 32 for the EfficientNet encoder."""
        return 16 if self.encoder is None else 32

    @property
    def min_area_px2(self):
        """Card ``polytopo.min_area_px``: :attr:`min_area_m2` in model-grid px²."""
        return round(self.min_area_m2 / (self.resolution_cm / 100.0) ** 2, 1)

    @property
    def min_hole_area_px2(self):
        """Card ``polytopo.min_hole_area_px``: :attr:`min_hole_area_m2` in model-grid px²."""
        return round(self.min_hole_area_m2 / (self.resolution_cm / 100.0) ** 2, 1)

    @property
    def bands(self):
        """1-based raster bands in model-channel order."""
        return (1, 2, 3) if self.source == "kampala_rgb" else (1,)

    @property
    def output_names(self):
        """Graph output names, which are also the family's output roles."""
        return ("mask", "vertices") if self.head == "vertex" else ("probabilities",)

    @property
    def output_channels(self):
        """Channels of the exported ``probabilities`` (semantic family)."""
        if self.head in ("boundary3", "courtyard4") and not self.separate_touching:
            return 2
        return 1

    @property
    def out_channels(self):
        """Channels of the raw network output."""
        return {"binary": 1, "boundary3": 3, "courtyard4": 4, "vertex": 2}[self.head]


_RGB = {"source": "kampala_rgb", "resolution_cm": 30.0, "input_range": (0.0, 255.0)}

LITE0_BUILDINGS = Recipe(
    name="unet_buildings_rgb",
    family="semantic",
    head="boundary3",
    encoder="efficientnet-lite0",
    standardization=((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    train_places=("zanzibar", "nepal", "philippines"),
    joplin=True,
    place_shares=(("kampala", 0.25), ("zanzibar", 0.15), ("nepal", 0.15), ("philippines", 0.15), ("joplin", 0.30)),
    separate_touching=True,
    augmentation=MULTISCALE,
    crop_px=256,
    batch_size=8,
    steps=1800,
    learning_rate=1e-3,
    baseline="U-Net + Poly.",
    summary=(
        "U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder, trained on background / building "
        "interior / building boundary; the graph outputs the building interior grown by one pixel within the "
        "foreground, so touching buildings come apart; Douglas-Peucker 1 px."
    ),
    **_RGB,
)
"""The default RGB building model (issue 31)."""

LITE2_BUILDINGS = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_lite2",
    encoder="efficientnet-lite2",
    summary=(
        "U-Net decoder on an ImageNet-pretrained EfficientNet-Lite2 encoder, trained on background / building "
        "interior / building boundary; the graph outputs the building interior grown by one pixel within the "
        "foreground, so touching buildings come apart; Douglas-Peucker 1 px."
    ),
)
"""A trial: the default model's data, target and schedule on the larger EfficientNet-Lite2 encoder (issue 31)."""

LITE0_SLOW_ENCODER = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_slow_encoder",
    encoder_learning_rate_scale=0.1,
    summary=(
        "U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder fine-tuned at a tenth of the "
        "decoder's learning rate, trained on background / building interior / building boundary; the graph "
        "outputs the building interior grown by one pixel within the foreground, so touching buildings come "
        "apart; Douglas-Peucker 1 px."
    ),
)
"""A trial: the default model with its pretrained encoder moved at a tenth of the learning rate (issue 31)."""

LITE0_PLACE_VALIDATION = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_place_validation",
    train_places=("zanzibar", "philippines"),
    validation_places=("nepal",),
    place_shares=(("kampala", 0.30), ("zanzibar", 0.20), ("philippines", 0.20), ("joplin", 0.30)),
)
"""A trial: the default model with Nepal moved from training to validation, so its threshold and outline offset
are chosen on a second place as well as the Kampala patch (issue 31)."""

LITE0_COLOUR = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_colour",
    augmentation=MULTISCALE_COLOUR,
)
"""A trial: the default model trained with wider colour changes (other sensors and light) (issue 31)."""

LITE2_COLOUR = replace(
    LITE2_BUILDINGS,
    name="unet_buildings_rgb_lite2_colour",
    augmentation=MULTISCALE_COLOUR,
)
"""A trial: the EfficientNet-Lite2 model trained with the wider colour changes (the two trials that gained on the
held-out place, together) (issue 31)."""

LITE0_SOUP = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_soup",
    soup_of=("unet_buildings_rgb", "unet_buildings_rgb_slow_encoder"),
    summary=(
        "The weights of two U-Nets on an ImageNet-pretrained EfficientNet-Lite0 encoder averaged (a uniform model "
        "soup: the default model and the same recipe with the encoder fine-tuned at a tenth of the learning rate), "
        "trained on background / building interior / building boundary; the graph outputs the building interior "
        "grown by one pixel within the foreground, so touching buildings come apart; Douglas-Peucker 1 px."
    ),
)
"""A trial: the default model and the slow-encoder trial averaged weight by weight (issue 31)."""

LITE0_LESS_JOPLIN = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_less_joplin",
    place_shares=(("kampala", 0.30), ("zanzibar", 0.20), ("nepal", 0.20), ("philippines", 0.20), ("joplin", 0.10)),
)
"""A trial: the default model with a tenth of its crops from Joplin instead of three tenths, the rest from the
fAIr places (issue 31)."""

LITE0_LESS_JOPLIN_SEED = replace(
    LITE0_LESS_JOPLIN,
    name="unet_buildings_rgb_less_joplin_seed",
    seed=20261208,
)
"""A trial: the fewer-Joplin recipe again with another seed (crops, augmentation and the decoder's first
weights), to see how far two runs of one recipe differ (issue 31)."""

LITE0_FIFTH_JOPLIN = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_fifth_joplin",
    place_shares=(("kampala", 0.29), ("zanzibar", 0.17), ("nepal", 0.17), ("philippines", 0.17), ("joplin", 0.20)),
)
"""A trial: the default model with a fifth of its crops from Joplin, between the default's three tenths and the
fewer-Joplin trial's tenth, the fAIr places in the default's proportions (issue 31)."""

_ENSEMBLE_SUMMARY = (
    "{count} U-Nets on an ImageNet-pretrained EfficientNet-Lite0 encoder, trained apart ({runs}), run side by side "
    "on each tile and their outputs averaged (an ensemble), each trained on background / building interior / "
    "building boundary; each graph outputs the building interior grown by one pixel within the foreground, so "
    "touching buildings come apart; Douglas-Peucker 1 px."
)

LITE0_PAIR = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_pair",
    half_stored=True,
    ensemble_of=("unet_buildings_rgb", "unet_buildings_rgb_fifth_joplin"),
    summary=_ENSEMBLE_SUMMARY.format(count="Two", runs="the default model and the fifth-Joplin trial"),
)
"""A trial: the default model and the Lite0 run of the default's split with the best validation score, their
outputs averaged (issue 31)."""

LITE0_TRIO = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_trio",
    half_stored=True,
    ensemble_of=("unet_buildings_rgb", "unet_buildings_rgb_fifth_joplin", "unet_buildings_rgb_less_joplin"),
    summary=_ENSEMBLE_SUMMARY.format(count="Three", runs="the default model, the fifth-Joplin and the fewer-Joplin "
                                                        "trials"),
)
"""A trial: the default model and the two Lite0 runs of the default's split with the best validation scores,
their outputs averaged (issue 31)."""

LITE0_WEIGHTED = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_weighted",
    small_building_m2=40.0,
    small_building_max_weight=3.0,
    gap_weight=3.0,
    gap_reach_px=3,
)
"""A trial: the default recipe with the cross-entropy of small buildings' pixels (under 40 m²) raised by up to 3x
and the ground within 3 px of two buildings by 3x: on the validation patch most buildings without a matching
polygon are small (median 12 m²) or drawn together with a neighbour (issue 31)."""

LITE0_GAPS = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_gaps",
    gap_weight=3.0,
    gap_reach_px=3,
)
"""A trial: the weighted trial's weight on the ground within 3 px of two buildings alone (every building's pixels
weigh 1): the weighted trial drew fewer buildings together with a neighbour, missed no fewer small ones and drew
more roofs in pieces (issue 31)."""

LITE0_LARGE_ROOFS = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_large_roofs",
    augmentation=MULTISCALE_LARGE,
)
"""A trial: the default model trained with buildings shown up to twice as large (scale 0.5-1.33 instead of
0.75-1.33), for the large roofs that its training places lack (issue 31)."""

LITE2_GAPS = replace(
    LITE2_BUILDINGS,
    name="unet_buildings_rgb_lite2_gaps",
    gap_weight=LITE0_GAPS.gap_weight,
    gap_reach_px=LITE0_GAPS.gap_reach_px,
)
"""A trial: the EfficientNet-Lite2 model with the gaps trial's weight on the ground within 3 px of two buildings
(Lite2 gained on the held-out place, the gap weight on the held-out Kampala ground) (issue 31)."""

LITE2_GAPS_SEED = replace(LITE2_GAPS, name="unet_buildings_rgb_lite2_gaps_seed", seed=20261213)
"""A trial: the Lite2-gaps recipe again with another seed; it, the first run and the shorter run below compete
on validation alone, and only the winner is judged by the adoption rule (issue 31)."""

LITE2_GAPS_SHORT = replace(LITE2_GAPS, name="unet_buildings_rgb_lite2_gaps_short", steps=650)
"""A trial: the Lite2-gaps recipe on a schedule of 650 steps instead of 1,800 (the longer Lite2 run carried less to
new ground than the shorter one); it competes with the two full runs on validation alone (issue 31)."""

LITE2_GAPS_REACH = replace(LITE2_GAPS, name="unet_buildings_rgb_lite2_gaps_reach",
                           noisy_places=LITE2_GAPS.train_places)
"""A trial: the Lite2-gaps recipe with the fAIr training places' labels treated like Joplin's, whose footprints
miss visible buildings: only pixels within 4 m of a label count in the loss there, so an unlabelled roof is never
taught as background (the Kampala training ground, labelled in full, keeps every pixel) (issue 31)."""

LITE0_TWO_GRIDS = replace(
    LITE0_BUILDINGS,
    name="unet_buildings_rgb_two_grids",
    ensemble_of=("unet_buildings_rgb", "unet_buildings_rgb"),
    member_grids_cm=(30.0, 21.0),
    summary=(
        "U-Net on an ImageNet-pretrained EfficientNet-Lite0 encoder (the default model's weights, stored once), run "
        "twice on each tile: on the card's grid and on the tile resampled to a finer grid inside the graph "
        "(polytopo.training.ensemble_of gives each run's grid_cm), the two outputs averaged on the card's grid; "
        "trained on background / building interior / building boundary; each run outputs the building interior "
        "grown by one pixel within the foreground, so touching buildings come apart; Douglas-Peucker 1 px."
    ),
)
"""A trial: the default model read on its own 30 cm grid and on a finer one in the same graph, the outputs
averaged (the finer grid alone raised the Kampala ground and lost large roofs; issue 31)."""

LITE0_COLOUR_LATE = replace(
    LITE0_COLOUR,
    name="unet_buildings_rgb_colour_late",
    soup_of=("unet_buildings_rgb_colour",) * 3,
    summary=(
        "The wider-colour trial's U-Net on an ImageNet-pretrained EfficientNet-Lite0 encoder, its weights averaged "
        "over the last part of one training run (the exports of its step-900, step-1200 and final checkpoints), "
        "trained on background / building interior / building boundary; the graph outputs the building interior "
        "grown by one pixel within the foreground, so touching buildings come apart; Douglas-Peucker 1 px."
    ),
)
"""A trial: the wider-colour run's late checkpoints averaged (weights along one run, not of two runs) (issue 31)."""

LITE0_HOLES = replace(
    LITE0_BUILDINGS,
    name="unet_holes_rgb_finetuned",
    courtyards=True,
    rendered_share=0.35,
    fine_tune_from="unet_buildings_rgb",
    steps=900,
    learning_rate=5e-4,
    seed=20261205,
    baseline="U-Net + Poly. (hole-aware variant)",
    summary=(
        "The default model's network (U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder, "
        "background / building interior / building boundary, the boundary drawn along exteriors and holes "
        "alike) fine-tuned from its weights with 35 % of the crops drawn from real OSM courtyard buildings of "
        "Monaco and Bangalore rendered into imagery and synthetic courtyards cut into the real imagery's "
        "buildings; the graph outputs the building interior grown by one pixel within the foreground."
    ),
)
"""A trial, not shipped: the default model fine-tuned on courtyard geometry (models/README.md says why)."""

LITE0_HOLES_ALL_FRAMES = replace(
    LITE0_HOLES,
    name="unet_holes_rgb_lite",
    rendered_share=0.5,
    rendered_frames=64,
    steps=2400,
    learning_rate=1e-3,
    summary=(
        "The default model's network (U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder, "
        "background / building interior / building boundary, the boundary drawn along exteriors and holes "
        "alike) fine-tuned from its weights with half of the crops drawn from every 240 m square of Monaco and "
        "Bangalore that holds a real OSM courtyard building, rendered into imagery, and synthetic courtyards cut "
        "into the real imagery's buildings; the graph outputs the building interior grown by one pixel within "
        "the foreground."
    ),
)
"""The second hole-aware trial on the pretrained encoder: every courtyard square, half the crops rendered."""

LITE0_HOLES_COURTYARD_HEAD = replace(
    LITE0_HOLES_ALL_FRAMES,
    name="unet_holes_rgb_courtyard",
    head="courtyard4",
    seed=20261207,
    summary=(
        "The default model's network (U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder) "
        "fine-tuned from its weights with a fourth class, courtyard (a building's hole), on half real imagery with "
        "synthetic courtyards and half every 240 m square of Monaco and Bangalore that holds a real OSM courtyard "
        "building, rendered into imagery; the graph outputs the building interior grown by one pixel within the "
        "foreground, and the whole foreground near a likely courtyard, so touching buildings come apart and "
        "courtyard rings stay closed."
    ),
)
"""The third hole-aware trial: a courtyard class that gates where the rings are kept closed (issue 31)."""

LITE0_HOLES_COURTYARD_REACH = replace(
    LITE0_HOLES_COURTYARD_HEAD,
    name="unet_holes_rgb_courtyard_reach",
    fine_tune_from="unet_buildings_rgb_fifth_joplin",
    seed=20261209,
    courtyard_reaches_px=(8, 16, 24, 48),
)
"""The fourth hole-aware trial: the third's courtyard class, fine-tuned from the Lite0 building run with the best
validation score (the fifth-Joplin trial), with how far the courtyard gate reaches chosen on the validation ground
with the threshold and the outline offset (issue 31)."""

LITE0_HOLES_TOUCHING = replace(
    LITE0_HOLES_COURTYARD_REACH,
    name="unet_holes_rgb_touching",
    fine_tune_from="unet_holes_rgb_courtyard_reach",
    rendered_split_share=0.6,
    learning_rate=5e-4,
    seed=20261210,
)
"""The fifth hole-aware trial: the fourth's weights fine-tuned with each rendered square drawn a second time with
its buildings cut into touching parts, blocks of touching buildings around yards (issue 31)."""

LITE0_HOLES_HELSINKI = replace(
    LITE0_HOLES_COURTYARD_REACH,
    name="unet_holes_rgb_helsinki_trained",
    fine_tune_from="unet_buildings_rgb_gaps",
    rendered_cities=("bangalore", "helsinki"),
    rendered_held_out="monaco",
    rendered_keep_out=True,
    gap_weight=3.0,
    gap_reach_px=3,
    seed=20261211,
    summary=(
        "U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder, fine-tuned from a building run with the "
        "ground between buildings weighted, with a fourth class, courtyard (a building's hole), on half real imagery "
        "with synthetic courtyards and half every 240 m square of Bangalore and Helsinki that holds a real OSM "
        "courtyard building, rendered into imagery (Monaco held out); the graph outputs the building interior grown "
        "by one pixel within the foreground, and the whole foreground near a likely courtyard."
    ),
)
"""The sixth hole-aware trial: the fourth's courtyard class and reach choice, trained on Helsinki's perimeter blocks
(touching buildings around yards, which the fourth and fifth trials drew as one polygon) with Monaco held out
instead; the evaluation squares of the training cities and the main job's Helsinki scene stay out of training
(issue 31)."""

LITE0_HOLES_WALLS = replace(
    LITE0_HOLES_HELSINKI,
    name="unet_holes_rgb_walls",
    fine_tune_from="unet_holes_rgb_helsinki_trained",
    wall_weight=3.0,
    learning_rate=5e-4,
    seed=20261212,
)
"""The seventh hole-aware trial: the sixth's weights fine-tuned with both sides of every wall shared by touching
buildings weighted 3 in the loss (the sixth drew the unseen Helsinki square's blocks whole, though 93 % of its
touching pairs show a colour border) (issue 31)."""

LITE0_VERTEX = replace(
    LITE0_BUILDINGS,
    name="vertexmask_buildings_rgb",
    family="vertex-mask",
    head="vertex",
    separate_touching=False,
    fine_tune_from="unet_buildings_rgb",
    steps=2400,
    learning_rate=1e-3,
    seed=20261206,
    baseline="HiSup-style mask + vertex heatmap",
    summary=(
        "The default model's encoder and decoder (ImageNet-pretrained EfficientNet-Lite0, U-Net decoder) "
        "fine-tuned from its weights with a fresh two-channel head: a building-mask logit and a vertex heatmap "
        "(Gaussian targets at label vertices); polygon vertices are snapped to heatmap peaks."
    ),
)
"""The vertex-mask model on the pretrained encoder, fine-tuned from the default model (issue 31)."""

RECIPES = {
    recipe.name: recipe
    for recipe in (
        LITE0_BUILDINGS,
        LITE2_BUILDINGS,
        LITE0_SLOW_ENCODER,
        LITE0_PLACE_VALIDATION,
        LITE0_COLOUR,
        LITE2_COLOUR,
        LITE0_SOUP,
        LITE0_COLOUR_LATE,
        LITE0_LESS_JOPLIN,
        LITE0_FIFTH_JOPLIN,
        LITE0_LESS_JOPLIN_SEED,
        LITE0_PAIR,
        LITE0_TRIO,
        LITE0_TWO_GRIDS,
        LITE0_WEIGHTED,
        LITE0_GAPS,
        LITE0_LARGE_ROOFS,
        LITE2_GAPS,
        LITE2_GAPS_SEED,
        LITE2_GAPS_SHORT,
        LITE2_GAPS_REACH,
        Recipe(
            name="unet_buildings_rgb_scratch",
            family="semantic",
            head="binary",
            baseline="U-Net + Poly.",
            summary="U-Net, one building logit (sigmoid in the graph), threshold 0.5, Douglas-Peucker 1 px.",
            **_RGB,
        ),
        Recipe(
            name="unet_holes_rgb",
            family="semantic",
            head="boundary3",
            courtyards=True,
            rendered_share=0.5,
            steps=300,
            batch_size=4,
            crop_px=96,
            baseline="U-Net + Poly. (hole-aware variant)",
            summary=(
                "U-Net trained on background / building / building-boundary classes, the boundary "
                "band drawn along exteriors and holes alike; half the crops are real OSM courtyard "
                "buildings of Monaco and Bangalore rendered into imagery, half real Kampala imagery "
                "with synthetic courtyards cut into buildings; the graph sums building and boundary "
                "into one foreground."
            ),
            **_RGB,
        ),
        LITE0_HOLES,
        LITE0_HOLES_ALL_FRAMES,
        LITE0_HOLES_COURTYARD_HEAD,
        LITE0_HOLES_COURTYARD_REACH,
        LITE0_HOLES_TOUCHING,
        LITE0_HOLES_HELSINKI,
        LITE0_HOLES_WALLS,
        LITE0_VERTEX,
        Recipe(
            name="vertexmask_buildings_rgb_scratch",
            family="vertex-mask",
            head="vertex",
            baseline="HiSup-style mask + vertex heatmap",
            summary=(
                "U-Net with a mask logit and a vertex heatmap (Gaussian targets at label vertices); "
                "polygon vertices are snapped to heatmap peaks."
            ),
            **_RGB,
        ),
        Recipe(
            name="unet_buildings_pan_scratch",
            family="semantic",
            head="binary",
            source="atlanta_pan",
            resolution_cm=50.0,
            input_range=(0.0, 2047.0),
            steps=1000,
            baseline="U-Net + Poly.",
            summary="U-Net for single-band 16-bit panchromatic imagery at 0.5 m (Atlanta).",
        ),
        Recipe(
            name="unet_buildings_pan",
            family="semantic",
            head="boundary3",
            encoder="efficientnet-lite0",
            standardization=((0.5,), (0.5,)),
            separate_touching=True,
            augmentation=MULTISCALE,
            source="atlanta_pan",
            resolution_cm=50.0,
            input_range=(0.0, 2047.0),
            crop_px=256,
            batch_size=8,
            steps=800,
            learning_rate=1e-3,
            baseline="U-Net + Poly.",
            summary=(
                "U-Net decoder on an ImageNet-pretrained EfficientNet-Lite0 encoder for single-band 16-bit "
                "panchromatic imagery at 0.5 m (Atlanta; the band is repeated into the encoder's three channels "
                "in the graph), trained on background / building interior / building boundary; the graph "
                "outputs the building interior grown by one pixel within the foreground."
            ),
        ),
    )
}
"""Every bundled model by name."""


def recipe(name):
    """Return the recipe called ``name``.

    Raises
    ------
    TrainingError
        No such recipe; the message lists the names.
    """
    if name not in RECIPES:
        raise TrainingError(f"Expected a model name among {sorted(RECIPES)} but got {name!r}.")
    return RECIPES[name]
