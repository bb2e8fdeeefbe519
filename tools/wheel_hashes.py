"""Regenerate entries of the plugin installer's hash table from PyPI's simple index.

Usage::

    .venv/bin/python tools/wheel_hashes.py PIN [PIN ...]          # print the entries
    .venv/bin/python tools/wheel_hashes.py --write PIN [PIN ...]  # and put them into the table
    .venv/bin/python tools/wheel_hashes.py --write --scale-out    # every pin of the scale-out group

For each pin (``NAME==VERSION``) it reads PyPI's simple index of ``NAME`` (the JSON form of
PEP 691), keeps the wheels of exactly ``VERSION`` and writes one ``sha256`` a wheel, commented
with the wheel's Python tag and first platform tag, in file-name order. ``--write`` replaces
the entries of those pins in ``plugin/setup/wheel_hashes.py`` (or appends them) and leaves every
other entry as it is. A pin without any wheel on PyPI is an error: the installer accepts
binary wheels only.
"""

import argparse
import json
import re
import sys
import urllib.request
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

#: The table this script edits.
TABLE = Path(__file__).resolve().parents[1] / "plugin" / "setup" / "wheel_hashes.py"
#: PyPI's simple index; the installer asks the same one.
SIMPLE_INDEX = "https://pypi.org/simple"
#: Seconds to wait for PyPI.
TIMEOUT_S = 60


def index_files(name, opener=urllib.request.urlopen):
    """Return the files PyPI's simple index lists for ``name``: dicts with ``filename`` and ``hashes``."""
    request = urllib.request.Request(f"{SIMPLE_INDEX}/{canonicalize_name(name)}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with opener(request, timeout=TIMEOUT_S) as response:  # nosec B310 - a fixed https address
        return json.load(response)["files"]


def wheel_digests(pin, files):
    """Return ``[(sha256, comment), ...]`` of the wheels of ``pin`` among ``files``, in file-name order.

    Raises
    ------
    ValueError
        ``pin`` is not ``NAME==VERSION``, or no wheel of that version is listed.
    """
    match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.!+_-]+)", pin)
    if match is None:
        raise ValueError(f"Expected a pin NAME==VERSION but got {pin!r}.")
    name, version = canonicalize_name(match.group(1)), Version(match.group(2))
    found = []
    for entry in sorted(files, key=lambda entry: entry["filename"]):
        if not entry["filename"].endswith(".whl"):
            continue
        wheel_name, wheel_version, _, tags = parse_wheel_filename(entry["filename"])
        if wheel_name != name or wheel_version != version:
            continue
        python_tag, _, platform_tag = entry["filename"][:-len(".whl")].split("-")[-3:]
        found.append((entry["hashes"]["sha256"], f"{python_tag} {platform_tag.split('.')[0]}"))
    if not found:
        raise ValueError(f"Expected PyPI to list wheels of {pin} but it lists none; the installer takes binary "
                         "wheels only, so pin a version that has them.")
    return found


def format_entry(pin, digests):
    """Return the table entry of ``pin`` as Python source (ends with a newline)."""
    lines = [f'    "{pin}": (\n']
    lines += [f'        "{digest}",  # {comment}\n' for digest, comment in digests]
    return "".join(lines) + "    ),\n"


def write_entries(entries, table=TABLE):
    """Replace (or append) the entries of ``entries`` ({pin: source}) in ``table``; other entries stay."""
    text = table.read_text(encoding="utf-8")
    for pin, source in entries.items():
        existing = re.search(rf'^    "{re.escape(pin)}": \(\n.*?^    \),\n', text, re.MULTILINE | re.DOTALL)
        if existing:
            text = text[:existing.start()] + source + text[existing.end():]
        else:
            end = text.rindex("\n}\n")
            text = text[:end + 1] + source + text[end + 1:]
    table.write_text(text, encoding="utf-8")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pins", nargs="*", help="NAME==VERSION")
    parser.add_argument("--scale-out", action="store_true", help="add every pin of the scale-out group")
    parser.add_argument("--write", action="store_true", help=f"put the entries into {TABLE.name}")
    args = parser.parse_args(argv)
    pins = list(args.pins)
    if args.scale_out:
        from polytopo.plugin.setup.dependencies import SCALE_OUT

        pins += [pin for pin in SCALE_OUT.pins if pin not in pins]
    if not pins:
        parser.error("give at least one pin or --scale-out")
    entries = {pin: format_entry(pin, wheel_digests(pin, index_files(pin.split("==")[0]))) for pin in pins}
    if args.write:
        write_entries(entries)
    sys.stdout.write("".join(entries.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
