"""The dock in a real window: an analyst's session under Xvfb, driven by QTest clicks (see tests/support/dock_window_session.py).

The session runs in a child process on its own X server (``xvfb-run -a``), because
the rest of the suite runs Qt offscreen. A machine without Xvfb fails this test
with the install hint: it is never counted as passed.
"""

import os
import shutil
import subprocess
import sys

from dock_window_session import SHOTS

SESSION_TIMEOUT_S = 240


def distinct_colours(path):
    """Number of distinct colours on a 16 x 16 grid of the image (1 for a blank shot)."""
    from qgis.PyQt.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), path
    return len({image.pixel(image.width() * i // 16, image.height() * j // 16)
                for i in range(16) for j in range(16)})


def test_an_analyst_session_in_a_real_window(qgis_app, repo_root, tmp_path):
    """Bundled model → vectorize a real crop → evaluate → Next error → Open report, with screenshots."""
    xvfb_run = shutil.which("xvfb-run")
    assert xvfb_run is not None, "xvfb-run is missing: run scripts/setup --dev (it installs the apt package xvfb)"
    env = {**os.environ, "QT_QPA_PLATFORM": "xcb", "QGIS_CUSTOM_CONFIG_PATH": str(tmp_path / "qgis-config"),
           "XDG_RUNTIME_DIR": str(tmp_path / "xdg")}
    env.pop("DISPLAY", None)
    (tmp_path / "xdg").mkdir(mode=0o700)
    out = tmp_path / "shots"
    script = repo_root / "tests" / "support" / "dock_window_session.py"
    done = subprocess.run([xvfb_run, "-a", "-s", "-screen 0 1280x900x24", sys.executable, str(script), str(out)],
                          env=env, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "report: " + str(out / "evaluation_report" / "report.html") in done.stdout
    shots = set(SHOTS) | {path.name for path in out.glob("class-*.png")}
    assert len(shots) > len(SHOTS), "Expected a screenshot per error class"
    for name in shots:
        assert distinct_colours(out / name) > 4, f"{name} looks blank"
