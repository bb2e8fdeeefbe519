"""Small widgets and layout helpers of the dock's forms (:mod:`polytopo.plugin.gui.dock_forms`).

A form layout whose long rows wrap, combo boxes that shrink below their longest item so
the dock fits 280 px, spin boxes whose lowest value stands for "the model card's value",
a progress bar that carries text, collapsible groups that lay their form out again after
opening, and :class:`DiagnosisBox`, the text box of the ring diagnosis that grows with
its wrapped text.
"""

import math

from qgis.PyQt.QtCore import QSize, QTimer
from qgis.PyQt.QtGui import QTextLayout
from qgis.PyQt.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QProgressBar,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QWidget,
)

__all__ = [
    "DiagnosisBox",
    "form_layout",
    "narrow",
    "optional_spin",
    "progress_bar",
    "relayout_when_toggled",
    "row",
    "spin_value",
]

#: Characters a narrowed combo box keeps room for (it shrinks to about this width).
_NARROW_CHARACTERS = 6
#: The diagnosis box's fewest and most text lines.
_DIAGNOSIS_LINES = (10, 24)


def form_layout(group):
    """A form on ``group`` whose long rows put the field below its label, fields growing to the width."""
    form = QFormLayout(group)
    form.setRowWrapPolicy(QFormLayout.WrapLongRows)
    form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
    return form


def narrow(combo):
    """Let a combo box shrink below its longest item, so the dock fits 280 px; returns ``combo``."""
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(_NARROW_CHARACTERS)
    return combo


def optional_spin(low, high, default_text, minimum_is_default=True):
    """A spin box from ``low`` to ``high`` whose extra lowest value, ``low - 1``, reads ``default_text``.

    :func:`spin_value` reads that lowest value as None (the default applies). The tool
    tip names the default, with "Lowest value:" before it when ``minimum_is_default``.
    """
    spin = QSpinBox()
    spin.setRange(low - 1, high)
    spin.setSpecialValueText(default_text)
    spin.setValue(low - 1)
    spin.setToolTip(f"Lowest value: {default_text}" if minimum_is_default else default_text)
    return spin


def spin_value(spin):
    """The value of a spin box, None at its lowest value (the one that stands for the default)."""
    return None if spin.value() == spin.minimum() else spin.value()


def row(*widgets):
    """The widgets side by side in one borderless widget, for one field of a form."""
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return holder


def progress_bar():
    """An empty 0–100 % bar whose text the dock sets (elapsed time, time left, the outcome)."""
    bar = QProgressBar()
    bar.setRange(0, 100)
    bar.setValue(0)
    bar.setTextVisible(True)
    bar.setFormat("")
    return bar


def relayout_when_toggled(group):
    """Lay the form around a collapsible group out again once it has opened or closed; returns ``group``.

    The group opens by lifting its maximum height after showing its fields, and the form
    around it is laid out in between: without a second layout, the first expand in a
    narrow dock (where rows wrap) squashes the group's fields and the word-wrapped labels
    of the form to a few pixels.
    """
    group.collapsedStateChanged.connect(lambda *_: QTimer.singleShot(0, group.updateGeometry))
    return group


class DiagnosisBox(QPlainTextEdit):
    """The ring diagnosis: as tall as its wrapped text at the width it has, between 10 and 24 lines.

    A typical diagnosis (6–10 lines, more once wrapped in a narrow dock) shows without
    scrolling; a long one (many holes) scrolls inside the box, so the table above it stays
    in view. Heights are in pixels.
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        policy = self.sizePolicy()
        policy.setVerticalPolicy(QSizePolicy.Minimum)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.textChanged.connect(self.updateGeometry)

    def _lines_height(self, lines):
        return lines * self.fontMetrics().lineSpacing() + self._chrome()

    def _chrome(self):
        return 2 * int(math.ceil(self.document().documentMargin())) + 2 * self.frameWidth()

    def heightForWidth(self, width):  # noqa: N802 - Qt method name.
        fewest, most = (self._lines_height(lines) for lines in _DIAGNOSIS_LINES)
        # wrapped beside a scroll bar: the box never needs one it would then keep, narrowing the text
        scroll_bar = self.style().pixelMetric(QStyle.PM_ScrollBarExtent, None, self)
        text = self._text_height(width - 2 * self.frameWidth() - scroll_bar) + 2 * self.frameWidth()
        return max(fewest, min(text, most))  # text taller than the most scrolls inside

    def _text_height(self, viewport_width):
        """Height of the text wrapped as this box wraps it (line by line, as its document layout does)."""
        margin = self.document().documentMargin()
        available = max(1.0, viewport_width - 2 * margin)
        height = 2 * margin + 1  # the box keeps one pixel below the last line
        for text in self.toPlainText().split("\n"):
            layout = QTextLayout(text, self.font())
            layout.setTextOption(self.document().defaultTextOption())
            layout.beginLayout()
            line = layout.createLine()
            while line.isValid():
                line.setLineWidth(available)
                height += line.height()
                line = layout.createLine()
            layout.endLayout()
        return int(math.ceil(height))

    def sizeHint(self):  # noqa: N802 - Qt method name.
        hint = super().sizeHint()
        return QSize(hint.width(), self.heightForWidth(hint.width()))

    def minimumSizeHint(self):  # noqa: N802 - Qt method name.
        return QSize(super().minimumSizeHint().width(), self._lines_height(_DIAGNOSIS_LINES[0]))
