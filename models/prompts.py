"""Box and point prompts for promptable models, from a vector file or from another model's output."""

from dataclasses import dataclass

from .errors import RasterError
from .vector_input import read_geometries

__all__ = ["Prompt", "prompts_from_geometries", "prompts_from_vector"]


@dataclass(frozen=True)
class Prompt:
    """One prompt in the raster's CRS.

    Attributes
    ----------
    kind : str
        ``box`` or ``point``.
    coords : tuple of float
        (xmin, ymin, xmax, ymax) for a box, (x, y) for a point, map units.
    class_id : int
        Class written to the polygon the prompt yields.
    """

    kind: str
    coords: tuple
    class_id: int = 0

    def __post_init__(self):
        sizes = {"box": 4, "point": 2}
        if self.kind not in sizes or len(self.coords) != sizes[self.kind]:
            raise RasterError(f"Expected a box (4 numbers) or point (2 numbers) prompt but got {self.kind!r} {self.coords!r}.")


def prompts_from_geometries(geometries, class_id=0):
    """Prompts from shapely geometries: points become point prompts, anything else its bounding box.

    Use it to prompt with another model's output, e.g. the polygons of an
    instance model (their boxes, as the paper's SAM2 + Poly. baseline does).

    Examples
    --------
    >>> import shapely
    >>> [p.kind for p in prompts_from_geometries([shapely.box(0, 0, 2, 2), shapely.Point(1, 1)])]
    ['box', 'point']
    """
    prompts = []
    for geometry in geometries:
        if geometry is None or geometry.is_empty:
            continue
        if geometry.geom_type == "Point":
            prompts.append(Prompt("point", (geometry.x, geometry.y), class_id))
        else:
            prompts.append(Prompt("box", tuple(float(v) for v in geometry.bounds), class_id))
    return tuple(prompts)


def prompts_from_vector(path, crs_wkt=""):
    """Read prompts from every feature of the first layer of a vector file.

    Parameters
    ----------
    path : str or os.PathLike
        Any vector format OGR reads.
    crs_wkt : str
        The raster's CRS; features are reprojected into it when their layer
        has another CRS.

    Returns
    -------
    tuple of Prompt
    """
    return prompts_from_geometries(read_geometries(path, crs_wkt, "prompts"))
