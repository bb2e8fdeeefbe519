"""A grid that wraps: as many equal columns as the width allows, so a row of widgets never clips a narrow dock.

The dock puts its button pairs (*Run* / *Cancel*, *Previous* / *Next*) and the band
box of each model channel in a :class:`WrapGrid`: side by side when the dock is wide
enough for all of them at their preferred widths, in two or more rows when it is not,
and one column at the narrowest. The layout answers ``heightForWidth``, so the form
around it and the scroll area give it the rows it needs at the width it has.
"""

from qgis.PyQt.QtCore import QRect, QSize, Qt
from qgis.PyQt.QtWidgets import QFormLayout, QLayout, QStyle, QWidget

__all__ = ["WrapGrid", "gap_in_labels", "wrap_row"]


class WrapGrid(QLayout):
    """Equal columns, as many as fit the widest item's preferred width; items fill their column.

    Parameters
    ----------
    parent : QWidget, optional
    spacing : int, optional
        Gap between columns and rows; defaults to the style's layout spacing.
    min_columns : int, optional
        Columns the minimum width makes room for (fewer when there are fewer items): in
        a form with ``WrapLongRows`` a grid of 2 moves below its label, at the full
        width, before it drops to one column.
    """

    def __init__(self, parent=None, spacing=-1, min_columns=1):
        super().__init__(parent)
        self._items = []
        self._spacing = spacing
        self._min_columns = max(1, min_columns)
        self.setContentsMargins(0, 0, 0, 0)

    # ----- QLayout -----------------------------------------------------------------------------

    def addItem(self, item):  # noqa: N802 - Qt method name.
        self._items.append(item)
        self.invalidate()

    def count(self):
        return len(self._items)

    def itemAt(self, index):  # noqa: N802 - Qt method name.
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index):  # noqa: N802 - Qt method name.
        if not 0 <= index < len(self._items):
            return None
        item = self._items.pop(index)
        self.invalidate()
        return item

    def expandingDirections(self):  # noqa: N802 - Qt method name.
        return Qt.Orientations(Qt.Horizontal)

    def hasHeightForWidth(self):  # noqa: N802 - Qt method name.
        return True

    def heightForWidth(self, width):  # noqa: N802 - Qt method name.
        return self._arrange(QRect(0, 0, width, 0), place=False)

    def sizeHint(self):  # noqa: N802 - Qt method name.
        shown = self._shown()
        margins = self.contentsMargins()
        if not shown:
            return QSize(0, 0)
        spacing = self.spacing_px()
        width = sum(item.sizeHint().width() for item in shown) + spacing * (len(shown) - 1)
        height = max(item.sizeHint().height() for item in shown)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def minimumSize(self):  # noqa: N802 - Qt method name.
        shown = self._shown()
        margins = self.contentsMargins()
        if not shown:
            return QSize(0, 0)
        columns = min(self._min_columns, len(shown))
        width = max(item.minimumSize().width() for item in shown) * columns + self.spacing_px() * (columns - 1)
        height = max(item.minimumSize().height() for item in shown)
        return QSize(width + margins.left() + margins.right(), height + margins.top() + margins.bottom())

    def setGeometry(self, rect):  # noqa: N802 - Qt method name.
        super().setGeometry(rect)
        self._arrange(rect, place=True)

    # ----- Placement ---------------------------------------------------------------------------

    def spacing_px(self):
        """The gap between items in pixels (the style's when none was given)."""
        if self._spacing >= 0:
            return self._spacing
        parent = self.parentWidget()
        style = parent.style() if parent is not None else None
        if style is None:
            return 6
        return max(0, style.pixelMetric(QStyle.PM_LayoutHorizontalSpacing, None, parent))

    def columns(self, width):
        """How many columns fit ``width`` pixels (margins included): at least 1, at most one per item."""
        shown = self._shown()
        if not shown:
            return 1
        margins = self.contentsMargins()
        inner = width - margins.left() - margins.right()
        spacing = self.spacing_px()
        widest = max(item.sizeHint().width() for item in shown)
        return max(1, min(len(shown), (inner + spacing) // (widest + spacing)))

    def _shown(self):
        return [item for item in self._items if not item.isEmpty()]

    def _arrange(self, rect, place):
        shown = self._shown()
        margins = self.contentsMargins()
        if not shown:
            return margins.top() + margins.bottom()
        spacing = self.spacing_px()
        columns = self.columns(rect.width())
        inner = rect.width() - margins.left() - margins.right()
        column_width = max(1, (inner - spacing * (columns - 1)) // columns)
        y = rect.y() + margins.top()
        for start in range(0, len(shown), columns):
            row = shown[start:start + columns]
            height = max(item.sizeHint().height() for item in row)
            if place:
                for position, item in enumerate(row):
                    x = rect.x() + margins.left() + position * (column_width + spacing)
                    item.setGeometry(QRect(x, y, column_width, height))
            y += height + spacing
        return y - spacing - rect.y() + margins.bottom()


def wrap_row(*widgets, spacing=-1):
    """A widget holding ``widgets`` in a :class:`WrapGrid` (side by side when they fit, else in rows)."""
    row = QWidget()
    grid = WrapGrid(row, spacing)
    for widget in widgets:
        grid.addWidget(widget)
    return row


def gap_in_labels(form):
    """Put the gap between each label and its field into the label, so a row wraps before its field is squeezed.

    With ``WrapLongRows`` a QFormLayout keeps a label and its field side by side while
    the label and the field's minimum width fit, forgetting the gap between them: a
    field then gets a few pixels less than its minimum and its text is cut. Call this
    once the rows are added.
    """
    gap = form.horizontalSpacing()
    gap = 6 if gap < 0 else gap
    form.setHorizontalSpacing(0)
    for row in range(form.rowCount()):
        item = form.itemAt(row, QFormLayout.LabelRole)
        if item is not None and item.widget() is not None:
            margins = item.widget().contentsMargins()
            item.widget().setContentsMargins(margins.left(), margins.top(), margins.right() + gap, margins.bottom())
