"""Photometric and geometric changes of training crops, declared once per strength.

A crop is cut from a sample through one affine map (scale and rotation about the
crop centre), and the label polygons go through the same map, so the targets drawn
from them afterwards agree with the image. The photometric changes (gain and shift
per channel, saturation, Gaussian blur, JPEG re-encoding, pixel noise) change the
image only.

:data:`BASIC` is what the bundled models were first trained with (dihedral flips,
gain and shift); :data:`STRONG` adds scale, rotation, colour, blur, JPEG and noise.
"""

import io
from dataclasses import dataclass, replace

import numpy as np
import shapely
from PIL import Image
from scipy import ndimage

__all__ = ["AUGMENTATIONS", "BASIC", "MULTISCALE", "MULTISCALE_COLOUR", "MULTISCALE_LARGE", "STRONG", "Augmentation", "CropWindow",
           "photometric", "warp", "window_polygons"]


@dataclass(frozen=True)
class Augmentation:
    """Ranges of the random changes of one training crop.

    Attributes
    ----------
    name : str
        Key in :data:`AUGMENTATIONS` (and the card's description of training).
    scale : tuple of 2 float
        Ground extent of a crop relative to the model grid, drawn log-uniformly:
        1.25 shows 1.25 times the ground in the same pixels (objects 0.8 times as
        large). ``(1, 1)``: no scaling.
    rotate : bool
        Rotate by an angle drawn uniformly in [0°, 360°) (on top of the dihedral flips).
    gain, shift : float
        Per-channel contrast factor in ``[1 - gain, 1 + gain]`` and offset in
        ``[-shift, shift]`` times the input range.
    saturation : float
        Colour saturation factor in ``[1 - saturation, 1 + saturation]`` (3-band crops).
    blur_probability : float
    blur_sigma_px : tuple of 2 float
        Gaussian blur of that standard deviation (model-grid pixels).
    jpeg_probability : float
    jpeg_quality : tuple of 2 int
        Re-encode as JPEG of a quality in this range (8-bit 1- or 3-band crops).
    noise : float
        Standard deviation of Gaussian pixel noise, times the input range (drawn
        per crop in ``[0, noise]``).
    coarsen_probability : float
    coarsen_factor : tuple of 2 float
        Shrink the crop by a factor in this range (antialiased bilinear) and enlarge it
        back: imagery whose own ground size was that much coarser than the model grid
        (at 30 cm: 0.6 m for a factor 2), as the engine's resampling delivers it.
    gamma : float
        Brightness curve: values scaled to [0, 1] are raised to a power drawn
        log-uniformly in ``[1 / (1 + gamma), 1 + gamma]`` (0: off).
    grey_probability : float
        Share of 3-band crops turned grey (each band the mean of the three).
    """

    name: str
    scale: tuple = (1.0, 1.0)
    rotate: bool = False
    gain: float = 0.15
    shift: float = 0.06
    saturation: float = 0.0
    blur_probability: float = 0.0
    blur_sigma_px: tuple = (0.5, 1.5)
    jpeg_probability: float = 0.0
    jpeg_quality: tuple = (30, 90)
    noise: float = 0.0
    coarsen_probability: float = 0.0
    coarsen_factor: tuple = (1.0, 2.0)
    gamma: float = 0.0
    grey_probability: float = 0.0

    @property
    def changes_colour(self):
        """True when saturation, gamma, grey, blur, JPEG, noise or coarsening is on."""
        return bool(self.saturation or self.blur_probability or self.jpeg_probability or self.noise
                    or self.coarsen_probability or self.gamma or self.grey_probability)

    def describe(self):
        """One phrase naming the changes, for cards and READMEs."""
        parts = ["dihedral flips", f"gain ±{self.gain:g}", f"shift ±{self.shift:g} of the range"]
        if self.scale != (1.0, 1.0):
            parts.append(f"scale {self.scale[0]:g}–{self.scale[1]:g}")
        if self.rotate:
            parts.append("rotation by any angle")
        if self.saturation:
            parts.append(f"saturation ±{self.saturation:g}")
        if self.gamma:
            parts.append(f"gamma {1 / (1 + self.gamma):.2g}–{1 + self.gamma:g}")
        if self.grey_probability:
            parts.append(f"grey ({self.grey_probability:.0%} of crops)")
        if self.blur_probability:
            parts.append(f"Gaussian blur σ {self.blur_sigma_px[0]:g}–{self.blur_sigma_px[1]:g} px "
                         f"({self.blur_probability:.0%} of crops)")
        if self.jpeg_probability:
            parts.append(f"JPEG quality {self.jpeg_quality[0]}–{self.jpeg_quality[1]} "
                         f"({self.jpeg_probability:.0%} of crops)")
        if self.noise:
            parts.append(f"pixel noise σ ≤ {self.noise:g} of the range")
        if self.coarsen_probability:
            parts.append(f"coarser source imagery by {self.coarsen_factor[0]:g}–{self.coarsen_factor[1]:g}× "
                         f"({self.coarsen_probability:.0%} of crops)")
        return ", ".join(parts)


BASIC = Augmentation("basic")
STRONG = Augmentation("strong", scale=(0.7, 1.4), rotate=True, saturation=0.3, blur_probability=0.3,
                      jpeg_probability=0.3, noise=0.02)
MULTISCALE = Augmentation(
    "multiscale", scale=(0.75, 1.33), rotate=True, saturation=0.25, blur_probability=0.2, blur_sigma_px=(0.4, 1.0),
    jpeg_probability=0.2, jpeg_quality=(40, 90), noise=0.01, coarsen_probability=0.35, coarsen_factor=(1.3, 2.0),
)
"""Ground sizes and colour, for the pretrained-encoder model: imagery from 0.075 m (read on the 0.3 m grid) to
0.6 m (coarsened 1.3-2x, and the 0.6 m Joplin tiles), buildings 0.75-1.33x as large, any rotation, saturation,
blur, JPEG and noise."""
MULTISCALE_COLOUR = Augmentation(
    "multiscale-colour", scale=(0.75, 1.33), rotate=True, gain=0.25, shift=0.1, saturation=0.5, gamma=0.3,
    grey_probability=0.1, blur_probability=0.2, blur_sigma_px=(0.4, 1.0), jpeg_probability=0.2, jpeg_quality=(40, 90),
    noise=0.01, coarsen_probability=0.35, coarsen_factor=(1.3, 2.0),
)
""":data:`MULTISCALE` with wider colour changes, for imagery of other sensors and light: per-channel gain ±0.25 and
shift ±0.1 (colour casts), saturation ±0.5, a gamma of 0.77-1.3 and a tenth of the crops grey."""
MULTISCALE_LARGE = replace(MULTISCALE, name="multiscale-large", scale=(0.5, 1.33))
""":data:`MULTISCALE` with buildings up to twice as large (0.75-2x instead of 0.75-1.33x): the training places are
mostly small houses, and cities at 0.3 m hold apartment blocks, halls and palace wings whose roofs the default
returns in pieces."""
AUGMENTATIONS = {a.name: a for a in (BASIC, STRONG, MULTISCALE, MULTISCALE_COLOUR, MULTISCALE_LARGE)}
"""Every augmentation strength by name."""


@dataclass(frozen=True)
class CropWindow:
    """Affine map from crop pixels to sample pixels: ``p_sample = centre + scale · R(angle) · (p_crop - size / 2)``.

    Coordinates are (x = column, y = row) with pixel corners at integers, as the label
    polygons use.
    """

    centre: tuple
    size: int
    scale: float
    angle: float

    @classmethod
    def draw(cls, rng, augmentation, shape, size):
        """A random window over a sample of ``shape`` (rows, cols).

        Without scaling or rotation the window is an integer pixel window inside the
        sample (or at its top left corner when the sample is smaller), drawn as the
        first bundled models were trained.
        """
        rows, cols = shape
        if augmentation.scale == (1.0, 1.0) and not augmentation.rotate:
            r0 = int(rng.integers(0, max(rows - size, 0) + 1))
            c0 = int(rng.integers(0, max(cols - size, 0) + 1))
            return cls((c0 + 0.5 * size, r0 + 0.5 * size), int(size), 1.0, 0.0)
        low, high = np.log(augmentation.scale)
        scale = float(np.exp(rng.uniform(low, high)))
        angle = float(rng.uniform(0.0, 2.0 * np.pi)) if augmentation.rotate else 0.0
        half = 0.5 * size * scale
        # centres keep an unrotated window inside the sample where the sample is large enough
        cx = rng.uniform(min(half, cols / 2), max(cols - half, cols / 2))
        cy = rng.uniform(min(half, rows / 2), max(rows - half, rows / 2))
        return cls((float(cx), float(cy)), int(size), scale, angle)

    @property
    def is_shift(self):
        """True for a plain integer pixel window (no resampling)."""
        return self.scale == 1.0 and self.angle == 0.0

    @property
    def origin(self):
        """Sample pixel (x, y) of the crop's top left corner when :attr:`is_shift`."""
        return (self.centre[0] - 0.5 * self.size, self.centre[1] - 0.5 * self.size)

    def _matrix(self):
        c, s = np.cos(self.angle), np.sin(self.angle)
        return self.scale * np.array([[c, -s], [s, c]])

    def reach(self):
        """Bounding box (x0, y0, x1, y1) of the window in sample pixels."""
        h = 0.5 * self.size
        corners = np.array([[-h, -h], [h, -h], [h, h], [-h, h]]) @ self._matrix().T + self.centre
        return (*corners.min(axis=0), *corners.max(axis=0))

    def to_crop(self, xy):
        """Sample coordinates (n, 2) to crop coordinates."""
        if self.is_shift:
            return np.asarray(xy) - self.origin
        return (np.asarray(xy) - self.centre) @ np.linalg.inv(self._matrix()).T + 0.5 * self.size


def warp(window, image, valid):
    """Resample ``image`` (bands, rows, cols) and ``valid`` (rows, cols) into the window.

    Bilinear for the image, nearest for ``valid``; outside the sample is invalid (0).

    Returns
    -------
    image : numpy.ndarray of float32, shape (bands, size, size)
    valid : numpy.ndarray of bool, shape (size, size)
    """
    size = window.size
    if window.is_shift:
        c0, r0 = (int(v) for v in window.origin)
        return _cut(image, valid, r0, c0, size)
    x0, y0, x1, y1 = window.reach()
    r0, c0 = max(int(np.floor(y0)) - 1, 0), max(int(np.floor(x0)) - 1, 0)
    r1, c1 = min(int(np.ceil(y1)) + 2, valid.shape[0]), min(int(np.ceil(x1)) + 2, valid.shape[1])
    part, part_valid = image[:, r0:r1, c0:c1], valid[r0:r1, c0:c1]
    # crop index (i, j) has its centre at x = j + 0.5, y = i + 0.5; sample index = coordinate - 0.5
    m = window._matrix()
    offset_xy = np.asarray(window.centre) - m @ np.array([0.5 * size, 0.5 * size]) + m @ np.array([0.5, 0.5]) - 0.5
    offset_xy -= (c0, r0)
    # ndimage works in (row, col): swap the axes of the map
    matrix_rc = m[::-1, ::-1]
    offset_rc = offset_xy[::-1]
    out = np.stack([ndimage.affine_transform(band.astype(np.float32), matrix_rc, offset_rc, output_shape=(size, size),
                                             order=1, mode="constant", cval=0.0) for band in part])
    out_valid = ndimage.affine_transform(part_valid.astype(np.uint8), matrix_rc, offset_rc, output_shape=(size, size),
                                         order=0, mode="constant", cval=0).astype(bool)
    return out, out_valid


def _cut(image, valid, r0, c0, size):
    out = np.zeros((image.shape[0], size, size), np.float32)
    out_valid = np.zeros((size, size), bool)
    rs, cs = max(r0, 0), max(c0, 0)
    re, ce = min(r0 + size, valid.shape[0]), min(c0 + size, valid.shape[1])
    if re > rs and ce > cs:
        out[:, rs - r0:re - r0, cs - c0:ce - c0] = image[:, rs:re, cs:ce]
        out_valid[rs - r0:re - r0, cs - c0:ce - c0] = valid[rs:re, cs:ce]
    return out, out_valid


def window_polygons(window, polygons):
    """Label polygons (sample pixels) in crop pixels."""
    if not len(polygons):
        return np.empty(0, object)
    return shapely.transform(polygons, window.to_crop)


def photometric(rng, augmentation, image, input_range):
    """The photometric changes of ``augmentation`` applied to ``image`` (bands, size, size), raw values.

    Gain and shift keep values at or above the range's low end (as the first bundled
    models were trained); the later changes also clip to its high end. Float32 result.
    """
    low, high = (float(v) for v in input_range)
    span = high - low
    bands = image.shape[0]
    gain = rng.uniform(1 - augmentation.gain, 1 + augmentation.gain, size=(bands, 1, 1)).astype(np.float32)
    shift = rng.uniform(-augmentation.shift, augmentation.shift, size=(bands, 1, 1)).astype(np.float32) * span
    out = np.maximum(image * gain + shift, low)
    if not augmentation.changes_colour:
        return out.astype(np.float32)
    if augmentation.saturation and bands == 3:
        grey = out.mean(axis=0, keepdims=True)
        factor = np.float32(rng.uniform(1 - augmentation.saturation, 1 + augmentation.saturation))
        out = grey + factor * (out - grey)
    if augmentation.gamma:
        bound = np.log1p(augmentation.gamma)
        power = np.float32(np.exp(rng.uniform(-bound, bound)))
        out = low + span * np.clip((out - low) / span, 0.0, 1.0) ** power
    if augmentation.grey_probability and bands == 3 and rng.random() < augmentation.grey_probability:
        out = np.repeat(out.mean(axis=0, keepdims=True), 3, axis=0)
    if augmentation.coarsen_probability and rng.random() < augmentation.coarsen_probability:
        out = _coarsen(out, float(rng.uniform(*augmentation.coarsen_factor)))
    if augmentation.blur_probability and rng.random() < augmentation.blur_probability:
        sigma = float(rng.uniform(*augmentation.blur_sigma_px))
        out = np.stack([ndimage.gaussian_filter(band, sigma) for band in out])
    out = np.clip(out, low, high)
    if (augmentation.jpeg_probability and bands in (1, 3) and span == 255.0
            and rng.random() < augmentation.jpeg_probability):
        out = _jpeg(out - low, int(rng.integers(augmentation.jpeg_quality[0], augmentation.jpeg_quality[1] + 1))) + low
    if augmentation.noise:
        sigma = rng.uniform(0.0, augmentation.noise) * span
        out = np.clip(out + rng.normal(0.0, sigma, size=out.shape).astype(np.float32), low, high)
    return out.astype(np.float32)


def _coarsen(image, factor):
    """Shrink (bands, rows, cols) by ``factor`` with antialiased bilinear resampling and enlarge it back."""
    rows, cols = image.shape[1:]
    small = (max(1, round(cols / factor)), max(1, round(rows / factor)))
    out = []
    for band in image:
        picture = Image.fromarray(np.ascontiguousarray(band, np.float32))
        out.append(np.asarray(picture.resize(small, Image.BILINEAR).resize((cols, rows), Image.BILINEAR), np.float32))
    return np.stack(out)


def _jpeg(image, quality):
    pixels = np.round(np.moveaxis(image, 0, -1)).astype(np.uint8)
    picture = Image.fromarray(pixels[..., 0] if pixels.shape[-1] == 1 else pixels)
    buffer = io.BytesIO()
    picture.save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    decoded = np.asarray(Image.open(buffer), dtype=np.float32)
    return decoded[None] if decoded.ndim == 2 else np.moveaxis(decoded, -1, 0)
