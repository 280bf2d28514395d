"""Where a model's weights live while it trains: the flat float32 buffer
that C++ owns, as NumPy views (InPlace, a model that steps on NumPy) or as
tensors (Placement, on a CPU); or one copy of the whole buffer on a GPU,
which load() and store() move between the two (Placement).  Importing this
module does no work; only Placement imports torch.
"""

import math


class InPlace:
    """The flat weights are the C++ buffer itself, as NumPy arrays: the
    placement of a model that steps on NumPy (FusedNegCBOW with
    fedavg_kernels, on a CPU).  Nothing moves."""

    def __init__(self, weights):
        self.host = self.flat = weights

    @property
    def where(self):
        """The device, as torch names it."""
        return "cpu"

    def views(self, shapes):
        """{name: array}: consecutive views of the buffer with the given
        [(name, shape)] layout."""
        return _split(self.flat, shapes)

    def load(self):
        """Nothing: the model's weights are the buffer."""

    def store(self):
        """Nothing: the model's weights are the buffer."""


class Placement:
    """The flat weights as the model uses them (``flat``, a 1-D tensor on
    ``device``) and as C++ owns them (``host``, a view of its buffer).  On
    a CPU they are one tensor, unless ``copy_on_cpu`` (for tests of the GPU
    path on a machine without one)."""

    def __init__(self, weights, device, copy_on_cpu=False):
        import torch  # a model that steps on NumPy is placed by InPlace
        self.device = torch.device(device)
        self.host = torch.from_numpy(weights)
        self.copies = self.device.type != "cpu" or copy_on_cpu
        self._pinned = None     # (cudart, address) once page-locked
        # Filled from the buffer once the caller has initialised it (place).
        self.flat = None

    def place(self):
        """The buffer as it is now becomes the model's weights: a copy on
        the device, or the buffer itself.  Returns ``flat``."""
        if self.flat is None:
            if self.device.type == "cuda":
                self._pin()
            self.flat = self.host.to(self.device, copy=True) \
                if self.copies else self.host
        return self.flat

    @property
    def where(self):
        """The device the model's weights are on, as torch names it."""
        return str(self.device if self.flat is None else self.flat.device)

    def _pin(self):
        """Page-locks the buffer (cudaHostRegister), so that the copies
        run at the bus's speed rather than through a staging buffer; left
        as it is where CUDA refuses."""
        import torch
        cudart = torch.cuda.cudart()
        nbytes = self.host.numel() * self.host.element_size()
        if int(cudart.cudaHostRegister(self.host.data_ptr(), nbytes, 0)) == 0:
            self._pinned = (cudart, self.host.data_ptr())

    def __del__(self):
        pinned = getattr(self, "_pinned", None)   # None if __init__ failed
        if pinned is not None:
            pinned[0].cudaHostUnregister(pinned[1])

    def views(self, shapes):
        """{name: tensor}: consecutive views of ``flat`` (placed now if it
        is not yet) with the given [(name, shape)] layout."""
        return _split(self.place(), shapes)

    def host_views(self, shapes):
        """The same views of the buffer, for filling it before place()."""
        return _split(self.host, shapes)

    def load(self):
        """The buffer's weights replace the model's (C++ changed them)."""
        if self.copies and self.flat is not None:
            self.flat.copy_(self.host)

    def store(self):
        """The model's weights replace the buffer's (C++ reads them next)."""
        if self.copies and self.flat is not None:
            self.host.copy_(self.flat)


def _split(flat, shapes):
    out, offset = {}, 0
    for name, shape in shapes:
        size = math.prod(shape)
        out[name] = flat[offset:offset + size].reshape(shape)
        offset += size
    return out
