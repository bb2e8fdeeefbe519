"""The dock in a real window under Xvfb: an analyst's session driven by QTest clicks, and the dock at three widths.

Each session runs in a child process on its own X server (``xvfb-run -a``), because
the rest of the suite runs Qt offscreen (see tests/support/dock_window_session.py and
tests/support/dock_width_session.py). A machine without Xvfb fails these tests with
the install hint: they are never counted as passed.
"""

import os
import shutil
import subprocess
import sys

from dock_width_session import WIDTHS, shot_name
from dock_window_session import SHOTS

SESSION_TIMEOUT_S = 240


def distinct_colours(path):
    """Number of distinct colours on a 16 x 16 grid of the image (1 for a blank shot)."""
    from qgis.PyQt.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), path
    return len({image.pixel(image.width() * i // 16, image.height() * j // 16)
                for i in range(16) for j in range(16)})


def run_session(repo_root, tmp_path, script_name, out):
    """Run ``tests/support/<script_name> OUT`` on its own X server; return the finished process."""
    xvfb_run = shutil.which("xvfb-run")
    assert xvfb_run is not None, "xvfb-run is missing: run scripts/setup --dev (it installs the apt package xvfb)"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QGIS_CUSTOM_CONFIG_PATH": str(tmp_path / "qgis-config"),
           "XDG_RUNTIME_DIR": str(tmp_path / "xdg")}
    env.pop("DISPLAY", None)
    (tmp_path / "xdg").mkdir(mode=0o700, exist_ok=True)
    script = repo_root / "tests" / "support" / script_name
    return subprocess.run([xvfb_run, "-a", "-s", "-screen 0 1280x900x24", sys.executable, str(script), str(out)],
                          env=env, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False)


def test_an_analyst_session_in_a_real_window(qgis_app, repo_root, tmp_path):
    """Bundled model → vectorize a real crop → evaluate → Next error → Open report, with screenshots."""
    out = tmp_path / "shots"
    done = run_session(repo_root, tmp_path, "dock_window_session.py", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "report: " + str(out / "evaluation_report" / "report.html") in done.stdout
    shots = set(SHOTS) | {path.name for path in out.glob("class-*.png")}
    assert len(shots) > len(SHOTS), "Expected a screenshot per error class"
    for name in shots:
        assert distinct_colours(out / name) > 4, f"{name} looks blank"


def test_nothing_is_clipped_at_280_320_and_500_px(qgis_app, repo_root, tmp_path):
    """Every widget inside the viewport, none squashed, no sideways shift on focus, Advanced closed and open."""
    out = tmp_path / "widths"
    done = run_session(repo_root, tmp_path, "dock_width_session.py", out)
    assert done.returncode == 0, done.stdout + done.stderr
    for width in WIDTHS:
        assert distinct_colours(out / shot_name(width)) > 4, f"{shot_name(width)} looks blank"
