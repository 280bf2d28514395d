"""What a model in library.py is built from: the base class Model, the
two kinds of parameter, Table and Dense, and IndexedTable, what a Table is
inside a loss (p.<name>).  runtime/trainer.py runs such a model (the
contract: runtime/contract.py); importing this module does no work.

A Table is indexed by word ids: a step gathers the rows its batch touches,
and only those rows get a gradient, an optimizer step and optimizer state.
A Dense parameter is used whole, like any torch parameter.  Both are views of
the flat weight buffer that C++ averages, checkpoints and exports, so a model
may declare any number of them.
"""

import math


class Model:
    """Base class of the models in library.py.

    A subclass declares its parameters (``params``), writes its loss with
    autograd (``loss``) and picks an optimizer from torch.optim
    (``optimizer``).  Class attributes are its settings; cfg.json's ``lr``
    sets ``lr``, and ``model_args`` may set any of them for one run (e.g.
    ``{"negatives": 10}``).
    """

    lr = 0.1            # learning rate (cfg.json "lr" overrides it)
    negatives = 0       # noise words per window handed to loss (0: none)
    noise_power = 0.75  # noise distribution: word count ** noise_power

    def __init__(self, cfg):
        # vocab_size, dim, window, bs, seed, ... (docs/python_interface.md)
        self.cfg = cfg

    def params(self):
        """{name: Table | Dense} in flat-buffer order; must hold
        "embedding" [vocab_size, *], the matrix that is exported."""
        raise NotImplementedError

    def loss(self, p, context, target, noise):
        """The batch's mean loss (a scalar tensor).  ``p.<name>`` is a
        parameter: index a Table with word ids (``p.embedding[context]``,
        any shape of ids), use a Dense one as a tensor.  context: int64
        [n, 2*window]; target: int64 [n]; noise: int64 [n, negatives]."""
        raise NotImplementedError

    def optimizer(self, params):
        """A torch.optim optimizer over ``params`` ({name: tensor})."""
        raise NotImplementedError

    def sgd_groups(self, params):
        """torch.optim.SGD's parameter groups over ``params`` at word2vec's
        rates, for a loss that is the batch's mean.  A parameter with a row
        per word (a Table, or a Dense [vocab_size, ...]) is in a few windows
        of a batch: its rate is lr * bs, lr per window.  "embedding", the
        context rows, gets 2 * window times that: word2vec gives each of
        them the whole gradient of h, not its 1/(2 * window) share.  Any
        other parameter (a layer, a weight per position) is in every
        window: its gradient is already the batch's mean, and its rate is
        lr (lr * bs would grow with the batch and diverge)."""
        lr, v = self.lr * self.cfg["bs"], self.cfg["vocab_size"]
        shared = {name for name, kind in self.params().items()
                  if isinstance(kind, Dense) and kind.shape[0] != v}
        rows = [t for name, t in params.items()
                if name != "embedding" and name not in shared]
        groups = [{"params": [params["embedding"]],
                   "lr": lr * 2 * self.cfg["window"]},
                  {"params": rows, "lr": lr}]
        if shared:  # a model without one keeps the two groups it always had
            groups.append({"params": [params[name] for name in shared],
                           "lr": self.lr})
        return groups


class _Param:
    def __init__(self, shape, init):
        if not shape or not all(isinstance(s, int) and not isinstance(s, bool)
                                and s >= 1 for s in shape):
            raise ValueError(f"shape must be integers >= 1, got "
                             f"{tuple(shape)!r}")
        if not callable(init):
            raise ValueError(f"init must be a function of the parameter "
                             f"tensor (e.g. torch.nn.init.zeros_), got "
                             f"{init!r}")
        self.shape = tuple(shape)
        self.init = init

    @property
    def size(self):
        return math.prod(self.shape)


class Table(_Param):
    """A [rows, cols] matrix indexed by word ids (an embedding table).

    ``init(tensor)`` fills it in place (torch.nn.init functions do; it is
    seeded from cfg seed, so every rank starts identical).  ``duplicates``
    says what a row that occurs c times in one batch gets: "sum" (plain
    autograd: the sum of its c gradients), "sqrt" (that sum scaled by
    1/sqrt(c)) or "mean" (scaled by 1/c).  A frequent word fills many
    windows of a batch, and with SGD at word2vec's rates the sum of its many
    gradients, all taken at the same stale weights, can overshoot.
    """

    def __init__(self, rows, cols, init, duplicates="sum"):
        super().__init__((rows, cols), init)
        if duplicates not in ("sum", "sqrt", "mean"):
            raise ValueError(f"duplicates must be 'sum', 'sqrt' or 'mean', "
                             f"got {duplicates!r}")
        self.duplicates = duplicates


class Dense(_Param):
    """A parameter of any shape, used whole (a layer's weight, a bias).
    ``init(tensor)`` fills it in place, as for Table."""

    def __init__(self, *shape, init):
        super().__init__(shape, init)


class IndexedTable:
    """What ``p.<name>`` of a Table is inside ``loss``: ``p.<name>[ids]``
    gives the rows of word ids ``ids`` (int64 or int32, any shape: the
    result is [*ids.shape, cols]).  The runtime implements it
    (runtime/trainer.py); the building blocks of blocks.py ask it where
    their kernels may run (kernel_rows)."""

    def __getitem__(self, ids):
        raise NotImplementedError

    def kernel_rows(self):
        """(rows, training): the table's rows, on which a building block
        may run its C++ kernels in place, and whether it is training (its
        backward then hands its gradient to rows.add_grad); (None, False)
        where it may not: the block runs as torch ops."""
        return None, False
