"""The fused "neg" model's step and test loss as torch ops, where
fedavg_kernels cannot run them: on a GPU, or in a build without the module.
The same arithmetic as the kernel (src/kernels/neg_cbow.cpp), to float
rounding.  fused_neg.py builds a TorchSteps only for weights it is given
as tensors; a CPU run with the kernel never imports this module, nor torch.
Importing this module does no work beyond importing torch.
"""

import functools

import numpy as np
import torch
import torch.nn.functional as F

from .written_marks import WrittenMarks


class TorchSteps:
    """The step of FusedNegCBOW over ``embedding`` and ``out_vectors``
    (tensors on one device, back to back in the weight buffer), in three
    parts: forward (rows, context mean, scores), loss_sum, update."""

    def __init__(self, embedding, out_vectors, window, negatives, duplicates):
        # Plain tensors sharing the Parameters' storage: the updates are
        # hand-written, so autograd stays out of the way.
        emb = embedding.detach()
        self.embedding = emb
        self.window, self.negatives, self.duplicates = window, negatives, duplicates
        self.vocab_size, self.dim = emb.shape
        self.device = dev = emb.device
        self._numpy = dev.type == "cpu"
        # E and U lie back to back in the flat weights (param_shapes order):
        # one [2V, D] view of both lets a step gather and scatter all its
        # rows in one call each (U's row i is stacked row V + i).
        if out_vectors.data_ptr() != emb.data_ptr() + emb.numel() * emb.element_size() \
                or not emb.is_contiguous():
            raise ValueError("neg: embedding and out_vectors must be adjacent in the weight buffer")
        self.stacked = emb.as_strided((2 * self.vocab_size, self.dim), emb.stride())
        w = window
        self.ctx_cols = torch.tensor([j for j in range(2 * w + 1) if j != w], device=dev)
        self._sign = torch.full((negatives + 1,), -1.0, device=dev)
        self._sign[0] = 1.0
        self._workspaces = {}
        self._row_counts = torch.zeros(2 * self.vocab_size, device=dev)
        self._one = torch.ones((), device=dev)
        self.written = WrittenMarks(2 * self.vocab_size, dev)  # stacked rows steps wrote

    def _workspace(self, n):
        """Buffers for a batch of n windows, reused from step to step: fresh
        multi-100 KB tensors cost page faults on every step, a large share of
        the step time, so every large result goes into one of these."""
        ws = self._workspaces.pop(n, None)
        if ws is None:
            w2, k1, d = 2 * self.window, self.negatives + 1, self.dim
            ws = _Workspace()
            empty = functools.partial(torch.empty, device=self.device)
            ws.ids = empty((n, w2 + 1), dtype=torch.int64)
            # Rows of the stacked [E; U] matrix this batch touches: the
            # context words, then target and noise words (offset by V).
            ws.rows = empty(n * (w2 + k1), dtype=torch.int64)
            ws.ctx = ws.rows[:n * w2].view(n, w2)
            ws.out = ws.rows[n * w2:].view(n, k1)
            ws.gathered = empty((n * (w2 + k1), d))
            ws.ctx_rows = ws.gathered[:n * w2].view(n, w2, d)
            ws.u_rows = ws.gathered[n * w2:].view(n, k1, d)
            ws.steps = empty((n * (w2 + k1), d))
            ws.e_step = ws.steps[:n * w2].view(n, w2, d)
            ws.u_step = ws.steps[n * w2:].view(n, k1, d)
            ws.scale = empty(n * (w2 + k1))
            ws.e_scale = ws.scale[:n * w2].view(n, w2, 1)
            ws.u_scale = ws.scale[n * w2:].view(n, k1)
            ws.h = empty((n, d))
            ws.grad_h = empty((n, d))
            ws.z = empty((n, k1))
            ws.g = empty((n, k1))
            ws.keep = empty((n, k1))
            ws.neq = empty((n, k1), dtype=torch.bool)
            if self._numpy:
                # NumPy views of the same memory: on a CPU np.einsum and
                # np.matmul do the two small batched products faster than
                # torch's mul+sum/bmm.
                ws.u_rows_np, ws.h_np = ws.u_rows.numpy(), ws.h.numpy()
                ws.z_np, ws.g_np = ws.z.numpy(), ws.g.numpy()
                ws.grad_h_np = ws.grad_h.numpy()
        self._workspaces[n] = ws               # most recent last
        while len(self._workspaces) > 3:
            self._workspaces.pop(next(iter(self._workspaces)))
        return ws

    def forward(self, ids, noise):
        """Shared part of a step and of the test loss, for a batch ``ids``
        (a tensor) and its noise words (NumPy int64, K per window); fills
        and returns the workspace with rows/ctx/out (out[:, 0] the target,
        then the noise words, both offset by V), gathered rows, h [n, D],
        z [n, K+1] and keep [n, K+1], where z = (-U[t].h, U[n_1].h, ...,
        U[n_K].h), so the loss of a window is sum_k keep_k * softplus(z_k)
        and its gradient factor is sigmoid(z_k) * (+1 for the target, -1 for
        noise words)."""
        n, k = ids.shape[0], self.negatives
        ws = self._workspace(n)
        ws.ids.copy_(ids)
        torch.index_select(ws.ids, 1, self.ctx_cols, out=ws.ctx)
        ws.out[:, 0] = ws.ids[:, self.window]
        ws.out[:, 1:].copy_(torch.from_numpy(noise.reshape(n, k)))
        ws.out.add_(self.vocab_size)
        # Windows cut short (edge_windows, reduced_windows): a -1 slot is no
        # word; it gathers row 0, which its mask then leaves out.
        ws.mask = (ws.ctx >= 0) if bool((ws.ctx < 0).any()) else None
        if ws.mask is not None:
            ws.ctx.clamp_(min=0)
            if not bool(ws.mask.any(1).all()):
                raise ValueError("windows: a window has no context word")
        torch.index_select(self.stacked, 0, ws.rows, out=ws.gathered)
        if ws.mask is not None:
            ws.ctx_rows.mul_(ws.mask.unsqueeze(2))
        # h = mean of the context rows (adds: faster than sum over dim 1).
        torch.add(ws.ctx_rows[:, 0], ws.ctx_rows[:, 1], out=ws.h)
        for j in range(2, 2 * self.window):
            ws.h.add_(ws.ctx_rows[:, j])
        if ws.mask is None:
            ws.h.mul_(1.0 / (2 * self.window))
        else:
            ws.h.div_(ws.mask.sum(1, keepdim=True))
        if self._numpy:
            np.einsum("nkd,nd->nk", ws.u_rows_np, ws.h_np, out=ws.z_np)
        else:
            torch.bmm(ws.u_rows, ws.h.unsqueeze(2), out=ws.z.unsqueeze(2))
        ws.z[:, 0].neg_()
        torch.ne(ws.out, ws.out[:, :1], out=ws.neq)           # noise != t
        ws.keep.copy_(ws.neq)
        ws.keep[:, 0] = 1.0
        return ws

    @staticmethod
    def loss_sum(ws):
        """The summed loss of the windows forward filled ``ws`` with."""
        return torch.dot(F.softplus(ws.z).view(-1), ws.keep.view(-1)).item()

    def update(self, ws, lr):
        """The SGD step at rate ``lr`` for the batch forward filled ``ws``
        with, written into the rows in place, the rows marked."""
        # g = lr * (label - sigmoid(score)), 0 for skipped noise words.
        g = torch.sigmoid(ws.z, out=ws.g)
        g.mul_(ws.keep.mul_(self._sign)).mul_(lr)
        if self._numpy:
            np.matmul(ws.g_np[:, None, :], ws.u_rows_np, out=ws.grad_h_np[:, None, :])
        else:
            torch.bmm(g.unsqueeze(1), ws.u_rows, out=ws.grad_h.unsqueeze(1))
        grad_h = ws.grad_h                                     # [n, D]
        if self.duplicates == "sum":
            ws.e_step.copy_(grad_h.unsqueeze(1).expand_as(ws.e_step))
        else:
            self._row_scales(ws)
            g.mul_(ws.u_scale)
            torch.mul(grad_h.unsqueeze(1), ws.e_scale, out=ws.e_step)
        if ws.mask is not None:             # an empty slot's row 0 moves not
            ws.e_step.mul_(ws.mask.unsqueeze(2))
        torch.mul(g.unsqueeze(2), ws.h.unsqueeze(1), out=ws.u_step)
        # One scatter-add of every step into the stacked [E; U] rows.
        self.stacked.index_put_((ws.rows,), ws.steps, accumulate=True)
        self.written.mark(ws.rows if ws.mask is None else
                          ws.rows[torch.cat((ws.mask.view(-1),
                                             ws.keep.new_ones(ws.out.numel(), dtype=torch.bool)))])

    def _row_scales(self, ws):
        """ws.scale = 1/sqrt(c) ("sqrt") or 1/c ("mean") per touched row,
        c the number of times that row occurs in the batch.  Counting uses
        a [2V] scratch vector, reset after use: O(batch), not O(V)."""
        counts = self._row_counts
        if ws.mask is None:
            counts.index_put_((ws.rows,), self._one, accumulate=True)
        else:                               # empty slots count no row
            ones = torch.ones_like(ws.scale)
            ones[:ws.ctx.numel()] = ws.mask.view(-1)
            counts.index_put_((ws.rows,), ones, accumulate=True)
        torch.index_select(counts, 0, ws.rows, out=ws.scale)
        if ws.mask is not None:             # empty slots: a scale of 1, unused
            ws.scale[:ws.ctx.numel()].masked_fill_(~ws.mask.view(-1), 1.0)
        counts.index_fill_(0, ws.rows, 0.0)
        if self.duplicates == "sqrt":
            ws.scale.rsqrt_()
        else:
            ws.scale.reciprocal_()

    def embeddings(self):
        """A copy of the input embeddings, NumPy on the CPU."""
        return self.embedding.cpu().numpy().copy()


class _Workspace:
    """Attribute bag of preallocated tensors (see TorchSteps._workspace)."""
