"""Building blocks for the loss of a library.py model: functions of the
parameters (p.<name>) with autograd, each equal to a few torch ops it
names, and fast.  Importing this module does no work.

    rows_mean(table, ids)                               table[ids].mean(1)
    negative_sampling(h, out_vectors, target, noise)    word2vec's loss

Where the weights are float32 on a CPU and the module fedavg_kernels is
built (src/kernels/table_blocks.cpp), a block given a Table runs as a C++
kernel on the table's rows in place, without gathered copies; while
training with plain SGD its backward hands the trainer the gradient of the
rows as (row ids, values), which the SGD step adds into the buffer
(runtime/table_rows.py), honouring the Table's ``duplicates``.  Anywhere else (a
GPU, the module not built, another optimizer, a Dense parameter or a plain
tensor) a block runs as the torch ops it names: the same values and
gradients, to float rounding.  Anything a block returns is an ordinary
tensor with autograd: use it with any torch op.
"""

import torch
import torch.nn.functional as F

from modeling import IndexedTable


def rows_mean(table, ids):
    """Row i is the mean of the rows ids[i, :] of ``table`` (p.<name> of a
    Table, or a tensor): ids int64 [n, m] -> [n, cols].  The same as
    ``table[ids].mean(1)``."""
    rows, training = _kernel_rows(table)
    if rows is None or not _ids_ok(ids, 2):
        return table[ids].mean(1)
    ids = ids.contiguous()
    if training and torch.is_grad_enabled():
        return _RowsMean.apply(rows.token, rows, ids)
    return _rows_mean(rows, ids)


def negative_sampling(h, out_vectors, target, noise):
    """word2vec's loss, averaged over the windows: -log sigmoid(u_t . h)
    for the target's output vector u_t and -log sigmoid(-u_n . h) for each
    noise word's u_n, a noise word equal to the target skipped (as word2vec
    does).  h: float [n, D]; out_vectors: p.<name> of a Table [V, D] (or a
    tensor); target: int64 [n]; noise: int64 [n, K].  A scalar tensor."""
    rows, training = _kernel_rows(out_vectors)
    if rows is None or not _ids_ok(target, 1) or not _ids_ok(noise, 2) \
            or h.dtype != torch.float32 or h.device.type != "cpu" \
            or h.dim() != 2:
        return _negative_sampling_ops(h, out_vectors, target, noise)
    target, noise = target.contiguous(), noise.contiguous()
    if training and torch.is_grad_enabled():
        return _NegativeSampling.apply(h, rows.token, rows, target, noise)
    h = h.detach().contiguous()
    loss = rows.kernels.negative_sampling(rows.array, h.numpy(),
                                          target.numpy(), noise.numpy(),
                                          1.0, None, None, None)
    return torch.tensor(loss / h.shape[0], dtype=h.dtype)


def _negative_sampling_ops(h, out_vectors, target, noise):
    """negative_sampling as torch ops."""
    words = torch.cat([target[:, None], noise], 1)              # [n, 1+K]
    scores = (out_vectors[words] * h[:, None]).sum(-1)          # [n, 1+K]
    real = (noise != target[:, None]).float()
    per_window = F.softplus(-scores[:, 0]) \
        + (F.softplus(scores[:, 1:]) * real).sum(1)
    return per_window.mean()


def _kernel_rows(param):
    """(rows, training) where a block may run its kernels on ``param`` (a
    p.<name> of a Table: IndexedTable.kernel_rows); (None, False) for a
    tensor: the block runs as torch ops."""
    if isinstance(param, IndexedTable):
        return param.kernel_rows()
    return None, False


def _ids_ok(ids, dims):
    """Word ids a kernel takes as they are (int64 on a CPU, ``dims``
    dimensions, not empty)."""
    return torch.is_tensor(ids) and ids.dtype == torch.int64 \
        and ids.device.type == "cpu" and ids.dim() == dims \
        and ids.numel() > 0


def _rows_mean(rows, ids):
    out = torch.empty(ids.shape[0], rows.cols)
    rows.kernels.rows_sum(rows.array, ids.numpy(), 1.0 / ids.shape[1],
                          out.numpy())
    return out


class _RowsMean(torch.autograd.Function):
    """rows_mean on a Table trained with plain SGD: the gradient of row
    ids[i, j] is grad[i] / m, handed to the table (TableRows.add_grad)."""

    @staticmethod
    def forward(ctx, token, rows, ids):
        ctx.rows, ctx.ids = rows, ids
        return _rows_mean(rows, ids)

    @staticmethod
    def backward(ctx, grad):
        ctx.rows.add_grad(ctx.ids, None, grad, 1.0 / ctx.ids.shape[1])
        return None, None, None


class _NegativeSampling(torch.autograd.Function):
    """negative_sampling on a Table trained with plain SGD.  The forward
    kernel also gives the derivatives of the mean loss by the scores (g)
    and by h; the gradient of the output row of word w in window i is
    g[i, w] * h[i], handed to the table (TableRows.add_grad)."""

    @staticmethod
    def forward(ctx, h, token, rows, target, noise):
        h = h.detach().contiguous()
        n, k = noise.shape
        g_target, g_noise = torch.empty(n), torch.empty(n, k)
        grad_h = torch.empty(n, rows.cols)
        loss = rows.kernels.negative_sampling(
            rows.array, h.numpy(), target.numpy(), noise.numpy(), 1.0 / n,
            g_target.numpy(), g_noise.numpy(), grad_h.numpy())
        ctx.rows, ctx.h, ctx.target, ctx.noise = rows, h, target, noise
        ctx.g_target, ctx.g_noise, ctx.grad_h = g_target, g_noise, grad_h
        return torch.tensor(loss / n, dtype=h.dtype)

    @staticmethod
    def backward(ctx, grad):
        scale = float(grad)     # 1.0 where the loss is the block's output
        ctx.rows.add_grad(ctx.target, ctx.g_target, ctx.h, scale)
        if ctx.noise.shape[1]:
            ctx.rows.add_grad(ctx.noise, ctx.g_noise, ctx.h, scale)
        grad_h = None
        if ctx.needs_input_grad[0]:
            grad_h = ctx.grad_h if scale == 1.0 else ctx.grad_h.mul_(scale)
        return grad_h, None, None, None, None
