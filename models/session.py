"""onnxruntime sessions with an explicit provider choice and an honest report.

``provider="auto"`` takes TensorRT, then CUDA, when the installed onnxruntime
offers them (the ``onnxruntime-gpu`` package) and the CPU otherwise;
``"cuda"`` insists on CUDA and fails naming the providers that exist;
``"cpu"`` never touches a GPU. The provider actually used, and on a fallback
the reason, is always in :attr:`ModelSession.report`.

onnxruntime is imported lazily so that importing :mod:`polytopo.models`
works without it; a missing package raises with the install command.
"""

import os
from dataclasses import dataclass

from .card.validation import signature_from_session
from .confinement import inside_model_folder
from .errors import ModelFileError, ProviderError
from .card.onnx_metadata import external_data_locations

__all__ = [
    "PROVIDER_CHOICES",
    "ModelSession",
    "ProviderReport",
    "SessionParams",
    "check_external_data",
    "choose_providers",
    "import_onnxruntime",
    "open_session",
    "preload_gpu_libraries",
]

PROVIDER_CHOICES = ("auto", "cuda", "cpu")
_TENSORRT = "TensorrtExecutionProvider"
_CUDA = "CUDAExecutionProvider"
_CPU = "CPUExecutionProvider"


def import_onnxruntime():
    """Import and return :mod:`onnxruntime`, or raise with the install command.

    Raises
    ------
    ProviderError
        onnxruntime is not installed.
    """
    try:
        import onnxruntime
    except ImportError as exc:
        raise ProviderError(
            "Expected the onnxruntime package but it is not installed; install it with "
            "`python -m pip install onnxruntime` (or `onnxruntime-gpu` on a machine with an NVIDIA GPU)."
        ) from exc
    return onnxruntime


@dataclass(frozen=True)
class SessionParams:
    """How to create a session.

    Attributes
    ----------
    provider : str
        ``auto``, ``cuda`` or ``cpu``.
    intra_op_threads : int
        Threads used inside one operator; 0 lets onnxruntime decide.
    use_tensorrt : bool
        Whether ``auto`` may pick TensorRT when it is offered.
    """

    provider: str = "auto"
    intra_op_threads: int = 0
    use_tensorrt: bool = True

    def __post_init__(self):
        if self.provider not in PROVIDER_CHOICES:
            raise ProviderError(
                f"Expected provider to be one of {list(PROVIDER_CHOICES)} but got {self.provider!r}; "
                "use --provider auto, cuda or cpu."
            )
        if not isinstance(self.intra_op_threads, int) or self.intra_op_threads < 0:
            raise ProviderError(
                f"Expected intra_op_threads to be an integer >= 0 but got {self.intra_op_threads!r}; "
                "use 0 to let onnxruntime decide."
            )


@dataclass(frozen=True)
class ProviderReport:
    """Which execution providers a session uses, and why.

    Attributes
    ----------
    requested : str
        The choice made (``auto``, ``cuda`` or ``cpu``).
    used : tuple of str
        The providers of the created session, the first one running the graph.
    fallback_reason : str or None
        Why ``auto`` did not get a GPU provider; None when nothing fell back.
    intra_op_threads : int
        Threads asked for inside one operator (0: onnxruntime's default, one
        per physical core).
    """

    requested: str
    used: tuple
    fallback_reason: object = None
    intra_op_threads: int = 0

    @property
    def on_cpu(self):
        """Whether the CPU provider runs the graph."""
        return self.primary == _CPU

    @property
    def primary(self):
        """The provider that runs the graph (first of :attr:`used`)."""
        return self.used[0]

    def describe(self):
        """One line for logs and the command line.

        Examples
        --------
        >>> ProviderReport("auto", ("CPUExecutionProvider",), "no GPU provider").describe()
        'CPUExecutionProvider (requested auto; fell back: no GPU provider)'
        """
        text = f"{self.primary} (requested {self.requested}"
        if self.fallback_reason:
            text += f"; fell back: {self.fallback_reason}"
        return text + ")"


def choose_providers(requested, available, use_tensorrt=True):
    """Pick the provider list to ask onnxruntime for.

    Parameters
    ----------
    requested : str
        ``auto``, ``cuda`` or ``cpu``.
    available : sequence of str
        ``onnxruntime.get_available_providers()``.
    use_tensorrt : bool
        Whether ``auto`` may put TensorRT first.

    Returns
    -------
    providers : list of str
    reason : str or None
        Why ``auto`` settles for the CPU, when it does.

    Raises
    ------
    ProviderError
        ``cuda`` was requested and the installed onnxruntime has no CUDA provider.

    Examples
    --------
    >>> choose_providers("auto", ["CPUExecutionProvider"])[0]
    ['CPUExecutionProvider']
    >>> choose_providers("auto", ["TensorrtExecutionProvider", "CUDAExecutionProvider", "CPUExecutionProvider"])[0]
    ['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']
    """
    available = list(available)
    if requested == "cpu":
        return [_CPU], None
    if requested == "cuda":
        if _CUDA not in available:
            raise ProviderError(
                f"Expected CUDAExecutionProvider for --provider cuda but this onnxruntime offers only "
                f"{', '.join(available)}; "
                "install onnxruntime-gpu with a matching CUDA and cuDNN, or use --provider auto or cpu."
            )
        return [_CUDA, _CPU], None
    chosen = [name for name in (_TENSORRT, _CUDA) if name in available and (use_tensorrt or name != _TENSORRT)]
    if not chosen:
        return [_CPU], f"this onnxruntime offers no GPU provider (available: {', '.join(available)})"
    return chosen + [_CPU], None


class ModelSession:
    """An onnxruntime session plus its graph signature and provider report.

    Use :func:`open_session` to create one. It satisfies the predictor
    interface the pipeline expects: ``signature``, ``metadata``, ``report``
    and ``run(output_names, feeds)``.
    """

    def __init__(self, path, session, report):
        self.path = os.fspath(path)
        self._session = session
        self.report = report
        self.signature = signature_from_session(session)
        self.metadata = dict(session.get_modelmeta().custom_metadata_map)

    @property
    def onnx_session(self):
        """The ``onnxruntime.InferenceSession`` itself, e.g. for IO binding in benchmarks."""
        return self._session

    def run(self, output_names, feeds):
        """Run the graph.

        Parameters
        ----------
        output_names : list of str
        feeds : dict of str to numpy.ndarray

        Returns
        -------
        list of numpy.ndarray
            In the order of ``output_names``.
        """
        return self._session.run(list(output_names), feeds)


def check_external_data(path):
    """Refuse a model whose tensors read data from outside the model's folder.

    Parameters
    ----------
    path : str or os.PathLike
        ONNX model file.

    Raises
    ------
    ModelFileError
        A tensor's external-data location is not UTF-8, is absolute, climbs out of the
        folder with ``..`` or resolves (symbolic links followed on its real bytes) to a file
        outside it (see :mod:`.confinement`).
    """
    for name, location in external_data_locations(path):
        if not _is_utf8(location):
            raise ModelFileError(
                f"Expected the external data location of tensor {name!r} in {os.fspath(path)} to be UTF-8 text "
                f"(as ONNX requires) but it is the bytes {os.fsencode(location)!r}; a model may only read weights "
                "stored beside it under a plain name. Re-export the model with the weights embedded or with a "
                "UTF-8 file name."
            )
        if inside_model_folder(path, location) is None:
            folder = os.path.dirname(os.path.abspath(os.fspath(path)))
            raise ModelFileError(
                f"Expected the external data of tensor {name!r} in {os.fspath(path)} to be a file inside the "
                f"model's folder {folder} but its location is {location!r}; a model may only read weights stored "
                "beside it. Move the data file into that folder and give its location relative to the model "
                "(or embed the weights in the ONNX file)."
            )


def _is_utf8(location):
    """False when ``location`` carries bytes that were not UTF-8 (lone surrogates from the file)."""
    try:
        location.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def preload_gpu_libraries(ort, providers):
    """Load the CUDA and cuDNN libraries of the ``nvidia-*`` wheels before a GPU session starts.

    ``onnxruntime-gpu`` 1.21 and later find CUDA and cuDNN installed from PyPI (the
    ``cuda`` and ``cudnn`` extras, ``requirements-gpu.txt``) only after
    ``onnxruntime.preload_dlls()``; libraries of the system (``LD_LIBRARY_PATH``) work
    either way. Nothing is loaded for a CPU session or an onnxruntime without the call.

    Parameters
    ----------
    ort : module
        :mod:`onnxruntime`.
    providers : sequence of str
        The providers the session will be asked for, the first one running the graph.

    Returns
    -------
    bool
        Whether the libraries were preloaded.

    Examples
    --------
    >>> preload_gpu_libraries(object(), ["CPUExecutionProvider"])
    False
    """
    if providers[0] == _CPU or not hasattr(ort, "preload_dlls"):
        return False
    ort.preload_dlls()
    return True


def open_session(path, params=SessionParams()):
    """Create a :class:`ModelSession` for the ONNX file ``path``.

    Parameters
    ----------
    path : str or os.PathLike
    params : SessionParams

    Returns
    -------
    ModelSession

    Raises
    ------
    ModelFileError
        The file is missing, onnxruntime cannot load it, or its external data lies outside
        its folder (checked before onnxruntime reads anything, :func:`check_external_data`).
    ProviderError
        ``cuda`` was requested and cannot be used.
    """
    ort = import_onnxruntime()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ModelFileError(f"Expected an ONNX model file at {path} but there is no such file; check the path.")
    check_external_data(path)
    providers, reason = choose_providers(params.provider, ort.get_available_providers(), params.use_tensorrt)
    preload_gpu_libraries(ort, providers)
    options = ort.SessionOptions()
    options.intra_op_num_threads = params.intra_op_threads
    options.log_severity_level = 3
    try:
        session = ort.InferenceSession(path, sess_options=options, providers=providers)
    except Exception as exc:  # onnxruntime raises its own classes, none of them shared
        raise ModelFileError(
            f"Expected onnxruntime to load {path} but it failed: {exc}; check that the file is a complete "
            "ONNX model exported with an opset this onnxruntime supports."
        ) from exc
    used = tuple(session.get_providers())
    if params.provider == "cuda" and _CUDA not in used:
        raise ProviderError(
            f"Expected CUDAExecutionProvider to start for --provider cuda but the session uses {list(used)}; "
            "the CUDA or cuDNN libraries that onnxruntime-gpu needs are missing or do not match; use --provider auto "
            "to fall back to the CPU."
        )
    if params.provider == "auto" and reason is None and used[0] == _CPU:
        reason = f"{providers[0]} is offered but failed to start (missing CUDA/cuDNN/TensorRT libraries?)"
    return ModelSession(path, session, ProviderReport(params.provider, used, reason, params.intra_op_threads))
