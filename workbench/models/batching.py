"""Length-sorted batches with dynamic padding, and a batch size that halves on out-of-memory.

Masked LMs, causal LMs and classifiers all go through `run_batched`: sorting by length keeps
padding small, and one function per batch (`step`) is all a distributed engine would need.
"""

from __future__ import annotations

from typing import Callable, Iterator, Sequence, TypeVar

from ..core.distributed import active, all_gather, rank, world_size

T = TypeVar("T")


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int, device, type_ids: Sequence[Sequence[int]] | None = None):
    """input_ids and attention_mask (and token_type_ids) padded to this batch's longest sequence."""
    import torch

    width = max(len(s) for s in sequences)
    # One tensor per field from padded lists: far cheaper than a small tensor per row.
    ids = torch.tensor([[*s, *[pad_id] * (width - len(s))] for s in sequences], dtype=torch.long)
    mask = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in sequences], dtype=torch.long)
    if type_ids is None:
        return ids.to(device), mask.to(device)
    types = torch.tensor([[*t, *[0] * (width - len(t))] for t in type_ids], dtype=torch.long)
    return ids.to(device), mask.to(device), types.to(device)


def _is_oom(exc: BaseException) -> bool:
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"


def run_batched(
    lengths: Sequence[int],
    batch_size: int,
    step: Callable[[list[int]], T],
    on_batch: Callable[[list[int], T], None],
    progress: Callable[[int], None] | None = None,
) -> int:
    """Call `step(indices)` over length-sorted batches; halve the batch size on OOM and go on.

    Returns the batch size that finally worked. Under torchrun / accelerate the batches are
    shared among the processes (`_run_shared`); `on_batch` still sees every batch, in order.
    """
    if active():
        return _run_shared(lengths, batch_size, step, on_batch, progress)
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))

    def sink(indices, result):
        on_batch(indices, result)
        if progress:
            progress(len(indices))

    return _halving(order, batch_size, step, sink)


def _halving(order: list[int], size: int, step, sink) -> int:
    """`step` over consecutive slices of `order` of `size`, each result to `sink`; on out-of-memory
    the size halves and the same slice is tried again. Returns the size that finally worked."""
    pos = 0
    while pos < len(order):
        indices = order[pos : pos + size]
        try:
            result = step(indices)
        except RuntimeError as exc:
            if not _is_oom(exc) or size == 1:
                raise
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            size = max(1, size // 2)
            continue
        sink(indices, result)
        pos += len(indices)
    return size


def _on_cpu(result):
    """A batch result another process can unpickle: tensors moved to the CPU."""
    if hasattr(result, "detach") and hasattr(result, "cpu"):
        return result.detach().cpu()
    if isinstance(result, (list, tuple)):
        return type(result)(_on_cpu(r) for r in result)
    if isinstance(result, dict):
        return {k: _on_cpu(v) for k, v in result.items()}
    return result


def _run_shared(lengths, batch_size, step, on_batch, progress) -> int:
    """The same batches as one process makes; in each round of N batches, rank r computes
    batch r, then every rank receives the round's results and passes them to `on_batch` in
    batch order. Memory holds one round. On out-of-memory a rank cuts its own batches in
    halves (the others go on as they are)."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    n, me, size = world_size(), rank(), batch_size
    for start in range(0, len(batches), n):
        round_ = batches[start : start + n]
        mine: list = []
        if me < len(round_):
            size = _halving(round_[me], size, step, lambda part, result: mine.append((part, _on_cpu(result))))
        for parts in all_gather(mine):
            for indices, result in parts:
                on_batch(indices, result)
                if progress:
                    progress(len(indices))
    return size
