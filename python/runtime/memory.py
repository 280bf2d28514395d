"""The machine's physical memory, against which the sizes a cfg asks of a
model are bounded (engine.param_shapes): a size whose allocation alone
cannot fit in it is refused before anything is allocated, with its key
named, rather than ending in a MemoryError or the out-of-memory killer."""

import os

# The windows of a test-loss chunk at most (fused_neg, trainer): the noise
# words a chunk draws are counted as if it were full.
EVAL_WINDOWS = 4096


def physical_memory():
    """The machine's memory in bytes; 0 where it cannot be told."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0


def show_bytes(n):
    """``n`` bytes for messages: "512 B", "23.5 GiB"."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def too_big(need):
    """"N of memory, more than this machine has (M)" if ``need`` bytes
    exceed the machine's memory, else None (also where it cannot be told)."""
    memory = physical_memory()
    if memory <= 0 or need <= memory:
        return None
    return (f"{show_bytes(need)} of memory, more than this machine has "
            f"({show_bytes(memory)})")
