"""Find, report and install the Python packages PolyTopo needs inside QGIS.

QGIS runs plugins on its own Python interpreter, which may lack shapely 2,
onnxruntime or SciPy. The plugin must still load then: :func:`check_dependencies`
imports each requirement and reports what is missing, the plugin shows that
report (message bar in QGIS desktop, message log in ``qgis_process``), and
:func:`install_missing` pip-installs the pinned versions, checked against the SHA-256 of
their published wheels (:mod:`polytopo.plugin.setup.wheel_hashes`), into a folder of the plugin's own, keyed by
Python version and platform (``.deps/py311-linux-x86_64``), which :func:`activate_folder`
appends to ``sys.path``: it only supplies what QGIS's Python lacks and never shadows the
standard library or QGIS's own packages, so a package of the wrong version elsewhere on
the path has to be fixed there.

Dask and distributed, which the *Workers* and *Scheduler* fields (``WORKERS`` in
Processing) need, form the optional group :data:`SCALE_OUT`: the report names them when
they are missing but the plugin loads and runs in process without them, and
:func:`install_missing` with ``groups=(SCALE_OUT,)`` installs them, with every package they
need, the same way (the plugin menu's :data:`SCALE_OUT` ``action`` entry).

Nothing here imports the packages it checks at module level, so importing this
module never fails. Every function takes its import, subprocess and platform
look-ups as arguments, so tests run without a network or a broken interpreter.
"""

import importlib
import importlib.metadata
import importlib.util
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path

from .wheel_hashes import WHEEL_HASHES

__all__ = [
    "DEPS_FOLDER_NAME",
    "PLUGIN_DIR",
    "REQUIREMENTS",
    "DependencyReport",
    "DependencyStatus",
    "InstallOutcome",
    "OptionalGroup",
    "PYPI_INDEX",
    "Requirement",
    "SCALE_OUT",
    "activate_folder",
    "check_dependencies",
    "deps_folder",
    "find_python",
    "find_without_importing",
    "install_command",
    "install_missing",
    "pip_environment",
    "platform_key",
    "require_for_processing",
    "write_requirements",
]

#: The plugin folder (the folder holding ``metadata.txt``).
PLUGIN_DIR = Path(__file__).resolve().parents[2]

#: Folder under :data:`PLUGIN_DIR` that holds the installed packages.
DEPS_FOLDER_NAME = ".deps"

#: The only index the installer asks (the hashes are those of its wheels).
PYPI_INDEX = "https://pypi.org/simple"

_PIP_TIMEOUT_S = 1800
_PROBE_TIMEOUT_S = 30
_OUTPUT_TAIL_CHARS = 2000


@dataclass(frozen=True)
class Requirement:
    """One Python package the plugin imports.

    Attributes
    ----------
    name : str
        Distribution name shown to the user (``shapely``).
    module : str
        Module to import (``shapely``).
    minimum : tuple of int
        Lowest accepted version, inclusive.
    below : tuple of int or None
        First rejected version; None for no upper bound.
    pin : str
        What :func:`install_missing` asks pip for (``shapely==2.1.2``).
    alternatives : tuple of str
        Other distributions that provide the same module (``onnxruntime-gpu``).
    """

    name: str
    module: str
    minimum: tuple
    below: object
    pin: str
    alternatives: tuple = ()

    def describe(self):
        """Return the accepted range as text, e.g. ``'shapely>=2.0,<3'``."""
        text = f"{self.name}>={_dotted(self.minimum)}"
        if self.below is not None:
            text += f",<{_dotted(self.below)}"
        return text


#: What the plugin imports, with the versions tested with PolyTopo (keep the
#: pins equal to requirements.txt; SciPy comes from the distribution there).
REQUIREMENTS = (
    Requirement("numpy", "numpy", (1, 24), (2,), "numpy==1.24.2"),
    Requirement("shapely", "shapely", (2, 0), (3,), "shapely==2.1.2"),
    Requirement("scipy", "scipy", (1, 10), None, "scipy==1.10.1"),
    Requirement("onnxruntime", "onnxruntime", (1, 16), None, "onnxruntime==1.20.1",
                alternatives=("onnxruntime-gpu",)),
)


@dataclass(frozen=True)
class OptionalGroup:
    """Packages only some features need: reported when missing, installed on request.

    Attributes
    ----------
    name : str
        Short name of the group (``"scale-out"``).
    purpose : str
        The features that need it, for messages.
    requirements : tuple of Requirement
        What is imported to check that the group is present.
    pins : tuple of str
        Everything pip installs for the group, its dependencies included: the installer
        runs pip with ``--no-deps``, so each package it needs is listed, and each pin has
        the hashes of its wheels in :data:`polytopo.plugin.setup.wheel_hashes.WHEEL_HASHES`.
    action : str
        Text of the plugin-menu entry that installs the group.
    """

    name: str
    purpose: str
    requirements: tuple
    pins: tuple
    action: str

    def names(self):
        """Return the names of the group's requirements, for short messages."""
        return [requirement.name for requirement in self.requirements]

    def how_to_install(self):
        """Return how a QGIS user installs the group, for messages."""
        return (f"install them for PolyTopo with Plugins ▸ PolyTopo ▸ {self.action} (pip, hash-checked, "
                "into the plugin's own folder) and run again")


#: Dask and distributed for the *Workers* and *Scheduler* fields and Processing's
#: ``WORKERS``, with the versions tested with PolyTopo (the pins of dask and distributed are
#: those of requirements.txt; the other pins are the versions of their dependencies the
#: project tests with, for Python 3.11).
SCALE_OUT = OptionalGroup(
    "scale-out", "local Dask workers or a Dask scheduler (Workers, Scheduler; WORKERS in Processing)",
    (Requirement("dask", "dask", (2026, 8), None, "dask==2026.8.0"),
     Requirement("distributed", "distributed", (2026, 8), None, "distributed==2026.8.0")),
    ("dask==2026.8.0", "distributed==2026.8.0", "click==8.5.1", "cloudpickle==3.1.3", "fsspec==2026.9.0",
     "importlib-metadata==10.2.0", "lazy-importer==0.1.0", "zipp==4.1.2", "jinja2==3.1.2", "markupsafe==2.1.2",
     "locket==1.0.0", "msgpack==1.2.4", "packaging==23.0", "partd==1.4.2", "psutil==7.2.2", "pyyaml==6.0",
     "sortedcontainers==2.4.0", "tblib==3.2.2", "toolz==1.2.0", "tornado==6.6.1", "zict==3.0.0"),
    "Install Dask for workers")


@dataclass(frozen=True)
class DependencyStatus:
    """Whether one requirement is met.

    Attributes
    ----------
    requirement : Requirement
    version : str or None
        The version found; None when the module does not import.
    problem : str or None
        Why it is not usable (not installed, too old, import error); None when it is.
    absent : bool
        The module is not on the path at all, so the plugin-local folder (after every
        other entry of the path) can supply it.
    """

    requirement: Requirement
    version: object
    problem: object
    absent: bool = False

    @property
    def ok(self):
        """True when the requirement is met."""
        return self.problem is None


@dataclass(frozen=True)
class DependencyReport:
    """The outcome of :func:`check_dependencies`.

    Attributes
    ----------
    statuses : tuple of DependencyStatus
        One per requirement, in :data:`REQUIREMENTS` order.
    folder : pathlib.Path
        The plugin-local folder that :func:`install_missing` installs into.
    optional : tuple of (OptionalGroup, tuple of DependencyStatus)
        Each optional group checked, with the statuses of its requirements; they never
        make the report fail (:attr:`ok`).
    """

    statuses: tuple
    folder: Path
    optional: tuple = ()

    @property
    def ok(self):
        """True when every requirement is met."""
        return all(status.ok for status in self.statuses)

    @property
    def missing(self):
        """The statuses of the requirements that are not met."""
        return tuple(status for status in self.statuses if not status.ok)

    @property
    def installable(self):
        """The requirements a plugin-local install can fix: those absent from the path.

        The plugin-local folder comes after every other entry of ``sys.path``, so a
        package of the wrong version, or one that fails to import, is found first and
        must be fixed in QGIS's Python (for NumPy also because QGIS's GDAL loads it).
        """
        return tuple(status.requirement for status in self.missing if status.absent)

    def missing_names(self):
        """Return the names of the unmet requirements, for short messages."""
        return [status.requirement.name for status in self.missing]

    @property
    def missing_groups(self):
        """The optional groups with an unmet requirement."""
        return tuple(group for group, statuses in self.optional if not all(status.ok for status in statuses))

    @property
    def installable_groups(self):
        """The missing optional groups a plugin-local install can fix: every unmet requirement absent."""
        return tuple(group for group, statuses in self.optional
                     if group in self.missing_groups and all(status.ok or status.absent for status in statuses))

    def optional_message(self):
        """Return one line per missing optional group: what it is for, what is wrong, how to fix it; or ''."""
        lines = []
        for group, statuses in self.optional:
            if group not in self.missing_groups:
                continue
            problems = "; ".join(f"{status.requirement.describe()}: {status.problem}"
                                 for status in statuses if not status.ok)
            fix = (group.how_to_install() if group in self.installable_groups else
                   "install them into QGIS's Python (it has other versions on its path, which come first)")
            lines.append(f"Optional, for {group.purpose}: {problems}. PolyTopo runs in the QGIS process "
                         f"without them; {fix}.")
        return "\n".join(lines)

    def message(self):
        """Return a multi-line explanation of what is missing and how to fix it."""
        if self.ok:
            return "All Python packages PolyTopo needs are available."
        lines = [f"PolyTopo needs Python packages that QGIS's Python ({_dotted(sys.version_info[:3])}) "
                 "does not provide:"]
        lines += [f"- {status.requirement.describe()}: {status.problem}" for status in self.missing]
        if self.installable:
            pins = " ".join(requirement.pin for requirement in self.installable)
            lines.append(f"Install them for PolyTopo only with the Install button, which runs "
                         f"'pip install --target {self.folder} {pins}'.")
        fixed_elsewhere = [status for status in self.missing if status.requirement not in self.installable]
        for status in fixed_elsewhere:
            found = status.version if status.version is not None else "that fails to import"
            lines.append(f"{status.requirement.name} {found} is on QGIS's Python path, where PolyTopo's own "
                         "folder cannot take precedence (it comes last, so it never shadows the standard library "
                         f"or QGIS's packages); install {status.requirement.describe()} into QGIS's Python "
                         "(OSGeo4W setup on Windows, the distribution's package or pip elsewhere) and restart QGIS.")
        return "\n".join(lines)


@dataclass(frozen=True)
class InstallOutcome:
    """What :func:`install_missing` did.

    Attributes
    ----------
    ok : bool
        pip exited with status 0.
    command : tuple of str
        The command run; empty when nothing was run.
    folder : pathlib.Path
        The folder installed into.
    output_tail : str
        The last characters of pip's output, or why pip was not run.
    """

    ok: bool
    command: tuple
    folder: Path
    output_tail: str


def _dotted(version):
    return ".".join(str(part) for part in version)


def _version_tuple(text):
    """Return the leading numbers of a version string: ``'2.1.0rc1'`` → ``(2, 1, 0)``.

    Examples
    --------
    >>> _version_tuple("2.1.0rc1")
    (2, 1, 0)
    >>> _version_tuple("1.24.2")
    (1, 24, 2)
    """
    numbers = []
    for part in str(text).split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)


def platform_key(version_info=None, system=None, machine=None):
    """Return the name of the per-interpreter folder, e.g. ``'py311-linux-x86_64'``.

    Compiled packages (shapely, onnxruntime, SciPy) differ between Python
    versions and platforms, so each combination gets its own folder.

    Parameters
    ----------
    version_info : sequence of int, optional
        Defaults to ``sys.version_info``.
    system : str, optional
        Defaults to ``sys.platform`` (``linux``, ``win32``, ``darwin``).
    machine : str, optional
        Defaults to ``platform.machine()`` (``x86_64``, ``AMD64``, ``arm64``).

    Examples
    --------
    >>> platform_key((3, 11, 2), "linux", "x86_64")
    'py311-linux-x86_64'
    >>> platform_key((3, 9, 5), "win32", "AMD64")
    'py39-win32-amd64'
    """
    version_info = sys.version_info if version_info is None else version_info
    system = sys.platform if system is None else system
    machine = platform.machine() if machine is None else machine
    return f"py{version_info[0]}{version_info[1]}-{system}-{(machine or 'unknown').lower()}"


def deps_folder(plugin_dir=PLUGIN_DIR, key=None):
    """Return the folder that holds this interpreter's plugin-local packages.

    Parameters
    ----------
    plugin_dir : str or os.PathLike
        The plugin folder.
    key : str, optional
        Defaults to :func:`platform_key`.

    Returns
    -------
    pathlib.Path
        ``<plugin_dir>/.deps/<key>``; it may not exist yet.
    """
    return Path(plugin_dir) / DEPS_FOLDER_NAME / (key or platform_key())


def activate_folder(folder, path=None):
    """Append ``folder`` to the module search path, once, when it exists.

    Appended, not prepended: nothing in the folder can shadow the standard library or a
    package QGIS's Python already has.

    Parameters
    ----------
    folder : str or os.PathLike
    path : list of str, optional
        The search path to change; defaults to ``sys.path``.

    Returns
    -------
    bool
        True when the folder exists and is now on the path.
    """
    path = sys.path if path is None else path
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        return False
    if folder not in path:
        path.append(folder)
    importlib.invalidate_caches()
    return True


def _status(requirement, import_module):
    try:
        module = import_module(requirement.module)
    except ImportError as exc:
        provided_by = " or ".join((requirement.name, *requirement.alternatives))
        absent = isinstance(exc, ModuleNotFoundError) and exc.name == requirement.module
        detail = "not installed" if absent else f"fails to import ({exc})"
        return DependencyStatus(requirement, None, f"{detail}; provided by {provided_by}", absent)
    version = str(getattr(module, "__version__", "unknown"))
    found = _version_tuple(version)
    if not found:
        return DependencyStatus(requirement, version, f"its version {version!r} cannot be read")
    if found < requirement.minimum:
        return DependencyStatus(requirement, version, f"version {version} is older than {_dotted(requirement.minimum)}")
    if requirement.below is not None and found >= requirement.below:
        return DependencyStatus(requirement, version,
                                f"version {version} is not below {_dotted(requirement.below)}")
    return DependencyStatus(requirement, version, None)


def find_without_importing(name):
    """Stand in for ``importlib.import_module`` for a top-level package without running its code.

    The optional groups are checked at every plugin start, and importing Dask there would
    cost every session the time its import takes.

    Returns
    -------
    types.SimpleNamespace
        With ``__version__`` from the installed distribution's metadata (``"unknown"`` when
        it has none).

    Raises
    ------
    ModuleNotFoundError
        ``name`` is not on the module search path.
    """
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return types.SimpleNamespace(__version__=version)


def check_dependencies(requirements=REQUIREMENTS, import_module=importlib.import_module, folder=None,
                       groups=(SCALE_OUT,), find_module=find_without_importing):
    """Import every requirement and report which are missing or of the wrong version.

    Parameters
    ----------
    requirements : sequence of Requirement
    import_module : callable
        ``import_module(name) -> module``; raises ImportError for a missing module.
    folder : pathlib.Path, optional
        The plugin-local install folder named in the report; defaults to :func:`deps_folder`.
    groups : sequence of OptionalGroup
        Optional groups to report on (they never make the report fail).
    find_module : callable
        As ``import_module``, for the requirements of ``groups``; by default they are found
        without being imported (:func:`find_without_importing`).

    Returns
    -------
    DependencyReport
    """
    statuses = tuple(_status(requirement, import_module) for requirement in requirements)
    optional = tuple((group, tuple(_status(requirement, find_module) for requirement in group.requirements))
                     for group in groups)
    return DependencyReport(statuses, Path(folder) if folder is not None else deps_folder(), optional)


def require_for_processing(names, import_module=importlib.import_module):
    """Fail a Processing algorithm with the install message when a package it needs is missing.

    Parameters
    ----------
    names : iterable of str
        Requirement names (``"shapely"``, ``"onnxruntime"``, ...) from :data:`REQUIREMENTS`.
    import_module : callable

    Raises
    ------
    qgis.core.QgsProcessingException
        One of the packages is missing; the message says which and how to install it.
    """
    wanted = set(names)
    unknown = wanted - {requirement.name for requirement in REQUIREMENTS}
    if unknown:
        raise ValueError(f"Expected requirement names from {[r.name for r in REQUIREMENTS]} "
                         f"but got {sorted(unknown)}; add the package to REQUIREMENTS first.")
    report = check_dependencies([r for r in REQUIREMENTS if r.name in wanted], import_module)
    if not report.ok:
        from qgis.core import QgsProcessingException

        raise QgsProcessingException(report.message())


def _looks_like_python(path):
    name = Path(path).name.lower()
    return re.fullmatch(r"python(\d+(\.\d+)?)?(\.exe)?", name) is not None


def _candidates(executable, prefixes, version_info, which):
    major, minor = version_info[0], version_info[1]
    names = (f"python{major}.{minor}", f"python{major}", "python")
    found = []
    if executable and _looks_like_python(executable):
        found.append(executable)
    for prefix in prefixes:
        if not prefix:
            continue
        for folder in (Path(prefix), Path(prefix) / "bin", Path(prefix) / "apps" / f"Python{major}{minor}"):
            for name in names:
                found += [str(folder / name), str(folder / f"{name}.exe")]
    for name in names:
        located = which(name)
        if located:
            found.append(located)
    unique = []
    for candidate in found:
        if candidate not in unique:
            unique.append(candidate)
    return unique


def _probe(candidate, version_info, run):
    """True when ``candidate`` runs and is the same Python version as this interpreter."""
    try:
        result = run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                     capture_output=True, text=True, timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0 and result.stdout.strip() == f"{version_info[0]}.{version_info[1]}"


def find_python(executable=None, prefixes=None, version_info=None, run=subprocess.run,
                which=shutil.which, is_file=os.path.isfile):
    """Find a Python interpreter of the running version that can run ``-m pip``.

    Inside QGIS ``sys.executable`` is often the QGIS program itself
    (``/usr/bin/qgis``, ``qgis-bin.exe``, ``QGIS.app/Contents/MacOS/QGIS``):
    running it with ``-m pip`` would start a second QGIS. So the candidates are
    ``sys.executable`` only when its name is ``python…``, then ``python3.X``,
    ``python3`` and ``python`` in the interpreter's prefixes (``sys.exec_prefix``,
    ``sys.base_exec_prefix``, ``sys.prefix`` and their ``bin`` folders, which
    cover Linux, macOS's QGIS.app and OSGeo4W's ``apps/PythonXY``), then on the
    ``PATH``. The first candidate that exists and reports the same major and
    minor version as this interpreter wins: packages built for another
    version would not import here.

    Parameters
    ----------
    executable : str, optional
        Defaults to ``sys.executable``.
    prefixes : sequence of str, optional
        Defaults to the interpreter's prefixes.
    version_info : sequence of int, optional
        Defaults to ``sys.version_info``.
    run, which, is_file : callable
        ``subprocess.run``, ``shutil.which`` and ``os.path.isfile`` stand-ins.

    Returns
    -------
    str or None
        The interpreter's path, or None when no candidate qualifies.
    """
    executable = sys.executable if executable is None else executable
    if prefixes is None:
        prefixes = (sys.exec_prefix, sys.base_exec_prefix, sys.prefix)
    version_info = sys.version_info if version_info is None else version_info
    for candidate in _candidates(executable, prefixes, version_info, which):
        if is_file(candidate) and _probe(candidate, version_info, run):
            return candidate
    return None


def install_command(python, folder, requirements_file):
    """Return the pip command that installs the pins of ``requirements_file`` into ``folder``.

    ``--isolated`` makes pip ignore the user's configuration and ``PIP_*`` variables
    (:func:`pip_environment` also points ``PIP_CONFIG_FILE`` at the null device), so the
    index is PyPI's; ``--require-hashes`` accepts only the published wheels
    (:func:`write_requirements`). ``--no-deps`` keeps pip from copying NumPy (a
    dependency of every pin) into the folder; shapely, SciPy and onnxruntime import with
    NumPy alone. ``--only-binary`` avoids compiling anything on the user's machine.

    Examples
    --------
    >>> install_command("python3", "/x", "/t/requirements.txt")[:5]
    ['python3', '-m', 'pip', 'install', '--isolated']
    """
    return [python, "-m", "pip", "install", "--isolated", "--disable-pip-version-check", "--no-input",
            "--index-url", PYPI_INDEX, "--upgrade", "--no-deps", "--only-binary=:all:", "--require-hashes",
            "--target", os.fspath(folder), "-r", os.fspath(requirements_file)]


def write_requirements(folder, pins):
    """Write ``pins`` with the hashes of their wheels as ``folder/requirements.txt``; returns its path.

    Raises
    ------
    KeyError
        A pin has no entry in :data:`polytopo.plugin.setup.wheel_hashes.WHEEL_HASHES`.
    """
    lines = [" ".join([pin, *(f"--hash=sha256:{digest}" for digest in WHEEL_HASHES[pin])]) for pin in pins]
    path = Path(folder) / "requirements.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def pip_environment(environ=None):
    """The environment pip runs in: ours without ``PIP_*`` variables, configuration files off."""
    environ = os.environ if environ is None else environ
    clean = {key: value for key, value in environ.items() if not key.upper().startswith("PIP_")}
    clean["PIP_CONFIG_FILE"] = os.devnull
    return clean


def install_missing(report, python=None, run=subprocess.run, find=find_python, groups=()):
    """pip-install the installable missing requirements of ``report`` into its folder.

    Parameters
    ----------
    report : DependencyReport
    python : str, optional
        Interpreter that runs pip; defaults to :func:`find_python`.
    run : callable
        ``subprocess.run`` stand-in.
    find : callable
        :func:`find_python` stand-in.
    groups : sequence of OptionalGroup
        Optional groups to install too, each with all of its pins, when the report has it
        among :attr:`DependencyReport.installable_groups`.

    Returns
    -------
    InstallOutcome
        ``ok`` is False, with the reason in ``output_tail``, when nothing is to
        be installed, no interpreter was found or pip failed. On success call
        :func:`activate_folder` and check again.
    """
    pins = [requirement.pin for requirement in report.installable]
    pins += [pin for group in groups if group in report.installable_groups for pin in group.pins if pin not in pins]
    if not pins:
        return InstallOutcome(False, (), report.folder,
                              "\n".join(filter(None, ["Nothing to install: " + report.message(),
                                                       report.optional_message()])))
    python = python or find()
    if python is None:
        return InstallOutcome(False, (), report.folder, (
            f"Expected a Python {sys.version_info[0]}.{sys.version_info[1]} interpreter next to QGIS "
            f"(sys.executable is {sys.executable!r}) but found none; install the packages by hand with "
            f"'python -m pip install --target {report.folder} {' '.join(pins)}'."))
    report.folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="polytopo-pip-") as private:
        command = install_command(python, report.folder, write_requirements(private, pins))
        try:
            result = run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False,
                         env=pip_environment())
        except (OSError, subprocess.SubprocessError) as exc:
            return InstallOutcome(False, tuple(command), report.folder, f"pip could not run: {exc}")
    output = (result.stdout or "") + (result.stderr or "")
    return InstallOutcome(result.returncode == 0, tuple(command), report.folder, output[-_OUTPUT_TAIL_CHARS:])
