"""Length-sorted batches with dynamic padding, and a batch size that halves on out-of-memory.

Both the masked LM and the NLI classifier go through `run_batched`: sorting by length keeps
padding small, and one function per batch (`step`) is all a distributed engine would need.
"""
from __future__ import annotations

from typing import Callable, Iterator, Sequence, TypeVar

T = TypeVar("T")


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> Iterator[list[int]]:
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    for start in range(0, len(order), batch_size):
        yield order[start:start + batch_size]


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

    Returns the batch size that finally worked.
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    pos = 0
    while pos < len(order):
        indices = order[pos:pos + batch_size]
        try:
            result = step(indices)
        except RuntimeError as exc:
            if not _is_oom(exc) or batch_size == 1:
                raise
            import torch

            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            batch_size = max(1, batch_size // 2)
            continue
        on_batch(indices, result)
        if progress:
            progress(len(indices))
        pos += len(indices)
    return batch_size
