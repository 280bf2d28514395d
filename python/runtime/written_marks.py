"""Which rows of a table training steps wrote, for engine.written_rows.
Importing this module does no work."""

import numpy as np


class WrittenMarks:
    """Marks the rows steps write into a table of ``rows`` rows: NumPy marks,
    or, given a torch ``device`` (the table's), a tensor there.  Nothing is
    marked until the first take(), so a run that never asks (the dense
    exchange) pays nothing."""

    def __init__(self, rows, device=None):
        self.rows = rows
        self.device = device
        self._written = None

    def mark(self, ids):
        """Steps wrote rows ``ids`` (any shape, duplicates allowed)."""
        if self._written is not None:
            self._written[ids] = True

    def flags(self):
        """The marks as a NumPy bool array that a kernel sets in place, or
        None while nothing is marked (CPU marks only)."""
        if self._written is None or self.device is None:
            return self._written
        return self._written.numpy()

    def take(self):
        """The rows written since the last call, ascending (int64, NumPy or
        a tensor as the marks are), and forgets them; None on the first
        call, which starts the count."""
        if self._written is None:
            if self.device is None:
                self._written = np.zeros(self.rows, dtype=np.bool_)
            else:
                import torch  # only tables that live in torch mark there
                self._written = torch.zeros(self.rows, dtype=torch.bool, device=self.device)
            return None
        if self.device is None:
            rows = np.flatnonzero(self._written)
        else:
            rows = self._written.nonzero().view(-1)
        self._written[rows] = False
        return rows
