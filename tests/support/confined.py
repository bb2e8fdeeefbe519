"""Run a command with a read-only folder or a small disk, without privileges.

The command runs in new user and mount namespaces (``unshare -Urm``), where a folder can
be bind-mounted read-only or a small ``tmpfs`` mounted over it; nothing changes outside.
Where the kernel does not allow user namespaces, :data:`CONFINED` is False and the
tests that need it are skipped with that reason.
"""

import shlex
import shutil
import subprocess

import pytest

__all__ = ["CONFINED", "needs_confinement", "run_confined"]


def _available():
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-Urm", "true"], capture_output=True, check=False)
    return probe.returncode == 0


CONFINED = _available()
needs_confinement = pytest.mark.skipif(not CONFINED, reason="user namespaces (unshare -Urm) are not available")


def run_confined(argv, *, read_only=(), tmpfs=(), fill=(), cwd=None, env=None, timeout=300):
    """Run ``argv`` with ``read_only`` folders read-only and ``tmpfs`` ``(folder, size)`` small disks.

    ``fill`` lists ``(path, kibibytes)`` files written (zeros) once the disks are mounted,
    to leave a chosen amount of space free. Returns the ``subprocess.CompletedProcess``
    (text output).
    """
    steps = []
    for folder in read_only:
        quoted = shlex.quote(str(folder))
        steps.append(f"mount --bind {quoted} {quoted} && mount -o remount,ro,bind {quoted}")
    for folder, size in tmpfs:
        steps.append(f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(folder))}")
    for path, kibibytes in fill:
        steps.append(f"dd if=/dev/zero of={shlex.quote(str(path))} bs=1024 count={kibibytes} status=none")
    steps.append('exec "$@"')
    return subprocess.run(["unshare", "-Urm", "sh", "-c", " && ".join(steps), "sh", *map(str, argv)],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout, check=False)
