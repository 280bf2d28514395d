"""The rows of one Table during training (see trainer.py): gathered from
the flat buffer for the loss, stepped, scattered back, with the Table's
per-row optimizer state.  Importing this module does no work.

The optimizer state of a Table (Adam's moments) is kept per row, in
full-size tensors that are gathered and scattered with the rows, so
torch.optim's own step code runs unchanged on the gathered rows; rows a
batch does not touch keep their state unchanged (torch.optim.SparseAdam's
"lazy" semantics).  The price is memory: one table-sized tensor per state
entry.

Plain SGD (no momentum, no weight decay) is linear and keeps no state, so
stepping the unique rows equals adding lr times each occurrence's gradient
into its row: for it a Table is gathered once per occurrence, without the
unique-row pass, and the steps are scatter-added (index_put_ with
accumulate, the fastest scatter-add of torch 1.13 on CPU); on a CPU with
float32 weights and fedavg_kernels built, one C++ kernel (sgd_rows) adds
them instead, together with the row-sparse gradients (row ids, values) that
blocks.py's building blocks hand over in place of gathered rows.
"""

import torch

from .written_marks import WrittenMarks

try:  # the kernels (src/kernels/), built with the program, which puts them on sys.path
    import fedavg_kernels
except ImportError:  # not built: the steps run as torch ops
    fedavg_kernels = None


class TableRows:
    """One Table during training: its rows in the buffer, the rows a step
    gathered (``calls``), the optimizer's stand-in parameter and the
    per-row optimizer state."""

    def __init__(self, tensor, decl):
        self.tensor = tensor
        self.device = dev = tensor.device
        self.rows, self.cols = decl.shape
        self.duplicates = decl.duplicates
        # The optimizer's parameter: one row while the optimizer is built
        # (adopt_state), between steps an empty [0, cols] tensor, during a
        # step the unique rows the batch touched.
        self.param = torch.nn.Parameter(torch.zeros(1, self.cols,
                                                    device=dev))
        self.calls = []           # (row ids, leaf) per indexing in the loss
        # Row-sparse gradients from blocks.py (add_grad), for plain SGD.
        self.grads = []
        self.row_state = {}       # optimizer state key -> [rows, ...] tensor
        self.scalar_state = {}    # optimizer state that is not per row
        self.plain_sgd = False
        self.group: dict = {}     # its optimizer's param group (set by Trainer)
        self._uniq = None
        # Scratch for unique rows and row counts, reset after use: O(batch)
        # per step instead of a sort or an O(rows) pass.
        self._mark = torch.zeros(self.rows, dtype=torch.bool, device=dev)
        self._slot = torch.zeros(self.rows, dtype=torch.int64, device=dev)
        self._count = torch.zeros(self.rows, device=dev)
        self._one = torch.ones((), device=dev)
        self.written = WrittenMarks(self.rows, dev)  # for engine.written_rows
        # The kernels of blocks.py and of the SGD step run on the rows in
        # place (a NumPy view of the table), for float32 on a CPU.
        self.kernels = fedavg_kernels if dev.type == "cpu" \
            and tensor.dtype == torch.float32 and tensor.is_contiguous() \
            else None
        self.array = tensor.detach().numpy() if self.kernels else None
        # What blocks.py's autograd functions take as the table's input, so
        # that their backward runs (its gradient is never set).
        self.token = torch.zeros((), device=dev, requires_grad=True)

    def adopt_state(self, optimizer):
        """Once the optimizer is built: state it made for the stand-in
        right away (Adagrad's sums, one row of them) becomes every row's;
        the stand-in is emptied."""
        for key, value in optimizer.state.pop(self.param, {}).items():
            if torch.is_tensor(value) and value.dim() >= 1 \
                    and value.shape == self.param.shape:
                self.row_state[key] = value.expand(self.rows,
                                                   self.cols).clone()
            else:
                self.scalar_state[key] = value
        self.param.data = torch.empty(0, self.cols, device=self.device)

    def clear(self):
        """Before a step's loss: forget the last step's rows."""
        self.calls.clear()
        self.grads.clear()

    def used(self):
        """After backward: whether the loss gave this table a gradient."""
        return bool(self.grads) or any(c[1].grad is not None
                                       for c in self.calls)

    def add_grad(self, ids, coef, vecs, alpha):
        """A row-sparse gradient (blocks.py, plain SGD with the kernels
        only): row ids[i, j] gets alpha * coef[i, j] * vecs[i] (coef None:
        1); ids int64 [n, m] or [n], coef float32 of ids' shape, vecs
        float32 [n, cols], all on the CPU.  Added to the table at prepare;
        the tensors must not change until then."""
        self.grads.append((ids.numpy(), None if coef is None
                           else coef.numpy(), vecs.contiguous().numpy(),
                           float(alpha)))

    def gather(self, ids):
        """The rows of ``ids`` (any shape) as [*ids.shape, cols], with
        autograd: the loss differentiates only these rows."""
        if self.plain_sgd:
            flat = ids.reshape(-1)
            leaf = torch.index_select(self.tensor, 0, flat) \
                .view(*ids.shape, self.cols).requires_grad_()
            self.calls.append((flat, leaf, None))
            return leaf
        uniq, inverse = self._unique(ids)
        leaf = torch.index_select(self.tensor, 0, uniq).requires_grad_()
        counts = None
        if self.duplicates != "sum":
            counts = torch.bincount(inverse.view(-1),
                                    minlength=uniq.shape[0])
        self.calls.append((uniq, leaf, counts))
        return leaf[inverse]

    def _unique(self, ids):
        """(unique ids, ascending; position of each id among them), in
        O(len(ids)) with the scratch vectors."""
        flat = ids.reshape(-1)
        self._mark[flat] = True
        uniq = self._mark.nonzero().view(-1)
        self._mark[uniq] = False
        self._slot[uniq] = torch.arange(uniq.shape[0], device=self.device)
        return uniq, self._slot[ids]

    def _factor(self, counts):
        """What ``duplicates`` scales a row's summed gradient by, from the
        number of times it occurs in the batch (float tensor, in place)."""
        return counts.rsqrt_() if self.duplicates == "sqrt" \
            else counts.reciprocal_()

    def prepare(self, optimizer):
        """After backward: SGD steps go straight into the buffer; otherwise
        the stand-in parameter gets the unique rows, their gradient and
        their optimizer state for optimizer.step()."""
        calls = [c for c in self.calls if c[1].grad is not None]
        self.calls.clear()
        self._uniq = None
        if self.plain_sgd and self.kernels is not None:
            self._sgd_rows(calls)
            return
        if not calls:
            return
        if self.plain_sgd:
            self._sgd(calls)
            return
        if len(calls) == 1:
            uniq, leaf, counts = calls[0]
            rows, grad = leaf.detach(), leaf.grad
        else:   # the table was indexed more than once: merge the rows
            uniq, inverse = self._unique(torch.cat([c[0] for c in calls]))
            grad = torch.zeros(uniq.shape[0], self.cols,
                               device=self.device)
            grad.index_put_((inverse,), torch.cat([c[1].grad for c in calls]),
                            accumulate=True)
            counts = None
            if self.duplicates != "sum":
                counts = torch.zeros(uniq.shape[0], dtype=torch.int64,
                                     device=self.device)
                counts.index_put_((inverse,),
                                  torch.cat([c[2] for c in calls]),
                                  accumulate=True)
            rows = torch.index_select(self.tensor, 0, uniq)
        if counts is not None:
            grad.mul_(self._factor(counts.float()).unsqueeze(1))
        self.param.data = rows
        self.param.grad = grad
        if self.row_state or self.scalar_state:
            state = dict(self.scalar_state)
            for key, full in self.row_state.items():
                state[key] = full.index_select(0, uniq)
            optimizer.state[self.param] = state
        self._uniq = uniq

    def _sgd_rows(self, calls):
        """SGD as one kernel over the blocks' row-sparse gradients and each
        gathered occurrence's gradient (the same step as _sgd)."""
        grads = self.grads + [(ids.contiguous().numpy(), None,
                               leaf.grad.reshape(-1, self.cols)
                               .contiguous().numpy(), 1.0)
                              for ids, leaf, _ in calls]
        self.grads = []
        if not grads:
            return
        group = self.group
        step = group["lr"] if group.get("maximize", False) else -group["lr"]
        self.kernels.sgd_rows(self.array, grads, step, self.duplicates,
                              self.written.flags())

    def _sgd(self, calls):
        """lr times each occurrence's gradient, scatter-added into its row
        (what SGD's step on the unique rows amounts to)."""
        group = self.group
        lr = group["lr"] if group.get("maximize", False) else -group["lr"]
        if self.duplicates != "sum":
            ids = torch.cat([c[0] for c in calls]) if len(calls) > 1 \
                else calls[0][0]
            counts = self._count
            counts.index_put_((ids,), self._one, accumulate=True)
            factor = self._factor(counts.index_select(0, ids))
            counts.index_fill_(0, ids, 0.0)
            factor = factor.mul_(lr).unsqueeze(1)
        start = 0
        for ids, leaf, _ in calls:
            grad = leaf.grad.view(-1, self.cols)
            if self.duplicates == "sum":
                grad.mul_(lr)
            else:
                grad.mul_(factor[start:start + ids.shape[0]])
                start += ids.shape[0]
            self.tensor.index_put_((ids,), grad, accumulate=True)
            self.written.mark(ids)

    def finish(self, optimizer):
        """After optimizer.step(): the stepped rows go back to the buffer,
        their optimizer state to the full-size state."""
        uniq = self._uniq
        if uniq is None:
            return
        self.tensor.index_copy_(0, uniq, self.param.data)
        self.written.mark(uniq)
        for key, value in optimizer.state.pop(self.param, {}).items():
            if torch.is_tensor(value) and value.dim() >= 1 \
                    and value.shape == self.param.shape:
                full = self.row_state.get(key)
                if full is None:
                    full = self.row_state[key] = torch.zeros(
                        self.rows, self.cols, dtype=value.dtype,
                        device=self.device)
                full.index_copy_(0, uniq, value)
            else:
                self.scalar_state[key] = value
        self.param.data = torch.empty(0, self.cols, device=self.device)
        self.param.grad = None
        self._uniq = None

    def state(self):
        return {"rows": self.row_state, "scalars": self.scalar_state}

    def load_state(self, state):
        self.row_state = {key: full.to(self.device)
                          for key, full in state["rows"].items()}
        self.scalar_state = dict(state["scalars"])
