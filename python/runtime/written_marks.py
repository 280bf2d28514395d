"""Which rows of a table training steps wrote, for engine.written_rows.
Importing this module does no work."""

import torch


class WrittenMarks:
    """Marks the rows steps write into a table of ``rows`` rows (marks on
    ``device``, the table's).  Nothing
    is marked until the first take(), so a run that never asks (the dense
    exchange) pays nothing."""

    def __init__(self, rows, device="cpu"):
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
        return None if self._written is None else self._written.numpy()

    def take(self):
        """The rows written since the last call, ascending (int64), and
        forgets them; None on the first call, which starts the count."""
        if self._written is None:
            self._written = torch.zeros(self.rows, dtype=torch.bool,
                                        device=self.device)
            return None
        rows = self._written.nonzero().view(-1)
        self._written[rows] = False
        return rows
