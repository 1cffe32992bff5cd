"""Data-parallel model scoring under `torchrun` / `accelerate launch`, on torch.distributed.

A launcher starts N copies of the same `workbench` command with RANK / WORLD_SIZE / LOCAL_RANK
(and MASTER_ADDR / MASTER_PORT) in their environment. Every copy runs the same pipeline, so all
of them agree on what to compute; only the model forward passes are split, in
`models/batching.run_batched`, which every model call goes through:

- the uncached inputs are cut into the same length-sorted batches a single process would
  make, and in each round of N batches rank r computes batch r (neighbouring batches have
  similar lengths, so the split is length-balanced and deterministic);
- `all_gather(results)` brings the round's results to every rank, which hands all of them to
  the caller in batch order: outputs are identical to a single-process run;
- `is_main()`: rank 0 alone writes the cache, the stage tables and manifests, and prints;
- `barrier()`: around cache reads and after table writes, so every rank sees what rank 0 wrote.

Without a launcher (WORLD_SIZE unset or 1) every function is a no-op and nothing from
torch.distributed is imported: single-process runs are unchanged.
"""
from __future__ import annotations

import os
from datetime import timedelta

from .errors import WorkbenchError

TIMEOUT_ENV = "WORKBENCH_DIST_TIMEOUT"     # seconds a collective waits for the other ranks
DEFAULT_TIMEOUT = 600

_state = {"initialised": False}


def world_size() -> int:
    try:
        return max(1, int(os.environ.get("WORLD_SIZE", "1")))
    except ValueError:
        return 1


def rank() -> int:
    try:
        return int(os.environ.get("RANK", "0")) if world_size() > 1 else 0
    except ValueError:
        return 0


def active() -> bool:
    return world_size() > 1


def is_main() -> bool:
    return rank() == 0


def _group():
    """The default process group, created on first use: NCCL when this rank has a GPU, else gloo."""
    import torch
    import torch.distributed as dist

    if not _state["initialised"]:
        if not dist.is_initialized():
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            if backend == "nccl":
                torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
            seconds = int(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT))
            dist.init_process_group(backend, timeout=timedelta(seconds=seconds))
        _state["initialised"] = True
    return dist


def all_gather(obj) -> list:
    """Every rank's `obj`, in rank order (the same list on every rank)."""
    if not active():
        return [obj]
    dist = _group()
    parts: list = [None] * world_size()
    try:
        dist.all_gather_object(parts, obj)
    except Exception as exc:  # noqa: BLE001 -- a rank died or timed out: say so instead of a backend trace
        raise DistributedError(exc) from None
    return parts


def barrier() -> None:
    if not active():
        return
    dist = _group()
    try:
        dist.barrier()
    except Exception as exc:  # noqa: BLE001
        raise DistributedError(exc) from None


def close() -> None:
    if _state["initialised"]:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
        _state["initialised"] = False


class DistributedError(WorkbenchError):
    """Another rank stopped (crashed, killed, or timed out); this rank stops too."""

    def __init__(self, cause: Exception):
        first = (str(cause).splitlines() or [type(cause).__name__])[0][:200]
        super().__init__(f"rank {rank()} of {world_size()}: another rank stopped or did not answer within "
                         f"{os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)} s ({first}); what was committed to the "
                         "cache is kept, so rerunning the same command resumes from there")
