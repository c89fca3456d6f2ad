"""Process settings for interactive use (the app, a notebook, the benchmarks)."""
from __future__ import annotations

import os


def set_threads(n: int | None = None) -> int:
    """Threads for torch and BLAS (numpy, scipy, scikit-learn): n, else half the cores (1 to 4).

    On a small CPU that is also busy (two cores, a browser, other sessions), one thread per
    operation is several times faster than two fighting for the same cores; tracing one
    sentence is small work anyway."""
    import torch
    from threadpoolctl import threadpool_limits

    n = n or max(1, min(4, (os.cpu_count() or 1) // 2))
    torch.set_num_threads(n)
    threadpool_limits(n)
    return n
