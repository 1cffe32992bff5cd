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

Elastic restarts (`torchrun --max-restarts N`): torchrun hands its workers one TCP store that
outlives a restart (TORCHELASTIC_USE_AGENT_STORE=True, the default in recent torch), so the
gloo / NCCL addresses the crashed attempt's ranks published are still in it when the restarted
ranks connect, and a restarted rank could read its peer's old, dead address (gloo:
"connectFullMesh failed ... Connection refused"). `_group()` therefore builds the process group
on a store of its own: rank 0 opens a fresh one and publishes where it is (with a random token)
in torchrun's store; the other ranks take an address only once it answers and holds that
token, so a stale address left by a previous attempt is never used.
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from datetime import timedelta

from .errors import WorkbenchError

TIMEOUT_ENV = "WORKBENCH_DIST_TIMEOUT"  # seconds a collective waits for the other ranks
DEFAULT_TIMEOUT = 600
STORE_KEY = "workbench/process-group-store"  # in torchrun's store: "<port> <token> <host>" of rank 0's own store
TOKEN_KEY = "workbench/token"  # in rank 0's own store

_state: dict = {"initialised": False, "store": None}


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


def _timeout() -> int:
    try:
        return max(1, int(os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)))
    except ValueError:
        return DEFAULT_TIMEOUT


def _group():
    """The default process group, created on first use: NCCL when this rank has a GPU, else gloo."""
    import torch
    import torch.distributed as dist

    if not _state["initialised"]:
        if not dist.is_initialized():
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            if backend == "nccl":
                torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
            timeout = timedelta(seconds=_timeout())
            store = _fresh_store(timeout)
            if store is None:  # not under torchrun's shared store: the launcher's env:// as it is
                dist.init_process_group(backend, timeout=timeout)
            else:
                _state["store"] = store
                dist.init_process_group(backend, store=store, rank=rank(), world_size=world_size(), timeout=timeout)
        _state["initialised"] = True
    return dist


def _fresh_store(timeout: timedelta):
    """Under torchrun's shared store, a store that no previous attempt of this run has written
    to (see the module docstring); None elsewhere (accelerate, a plain env:// launch, or
    TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1, where the store is already new on every attempt)."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
        return None
    try:
        host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    except (KeyError, ValueError):
        return None
    import torch.distributed as dist

    agent = dist.TCPStore(host, port, world_size(), is_master=False, timeout=timeout)
    if rank() == 0:
        own = dist.TCPStore(host, 0, world_size(), is_master=True, timeout=timeout, wait_for_workers=False)
        token = secrets.token_hex(8)
        own.set(TOKEN_KEY, token)
        # Where the others find it: MASTER_ADDR (torchrun's store is normally on rank 0's node),
        # else this host's name, for launches where rank 0 runs elsewhere.
        agent.set(STORE_KEY, f"{own.port} {token} {socket.gethostname()}")
        return own
    deadline = time.monotonic() + timeout.total_seconds()
    while True:
        # Blocks until rank 0 of some attempt has published; may be a dead attempt's address.
        own_port, token, rank0_host = agent.get(STORE_KEY).decode().split()
        for candidate in dict.fromkeys((host, rank0_host)):
            own = _connect(dist, candidate, int(own_port), token, timeout)
            if own is not None:
                return own
        if time.monotonic() > deadline:
            raise DistributedError(TimeoutError(f"rank 0's store at {host} did not answer"))
        time.sleep(0.2)


def _connect(dist, host: str, port: int, token: str, timeout: timedelta):
    """A client of rank 0's store at `port` if it is up and holds `token`, else None."""
    try:  # a plain connect first: a dead attempt's port refuses at once, and quietly
        socket.create_connection((host, port), timeout=2).close()
    except OSError:
        return None
    try:
        own = dist.TCPStore(host, port, world_size(), is_master=False, timeout=timedelta(seconds=5))
        if own.get(TOKEN_KEY).decode() != token:
            return None
    except RuntimeError:  # DistError: not a store, or not this attempt's
        return None
    own.set_timeout(timeout)
    return own


def all_gather(obj) -> list:
    """Every rank's `obj`, in rank order (the same list on every rank)."""
    if not active():
        return [obj]
    parts: list = [None] * world_size()
    try:
        _group().all_gather_object(parts, obj)
    except DistributedError:
        raise
    except Exception as exc:  # noqa: BLE001 -- a rank died or timed out: say so instead of a backend trace
        raise DistributedError(exc) from None
    return parts


def barrier() -> None:
    if not active():
        return
    try:
        _group().barrier()
    except DistributedError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DistributedError(exc) from None


def close() -> None:
    if _state["initialised"]:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
        _state["initialised"] = False
    _state["store"] = None


class DistributedError(WorkbenchError):
    """Another rank stopped (crashed, killed, or timed out); this rank stops too."""

    def __init__(self, cause: Exception):
        first = (str(cause).splitlines() or [type(cause).__name__])[0][:200]
        super().__init__(
            f"rank {rank()} of {world_size()}: another rank stopped or did not answer within "
            f"{os.environ.get(TIMEOUT_ENV, DEFAULT_TIMEOUT)} s ({first}); what was committed to the "
            "cache is kept, so rerunning the same command resumes from there"
        )
