"""Finding any checkpoint (Hub name or local folder) with a revision, and loading it as
`runtime.py` decides (dtype, device or device plan).

A local folder's revision is a content hash of its files, so the prediction caches notice
when the weights change; a Hub checkpoint's revision is the commit it resolved to.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ModelError
from .runtime import LoadSpec, Runtime, check_tokenizer, load_weights, plan_load

FIXTURE_HINT = (
    "point the config at a local checkpoint folder (one with config.json), or build the tiny "
    "offline test models with `workbench models fixtures --out fixtures-models`"
)


@dataclass(frozen=True)
class ModelRef:
    name: str  # as the user wrote it
    location: str  # local path or Hub id passed to from_pretrained
    revision: str  # commit hash, content hash ("sha256:...") or the requested revision


BIG_FILE = 256 << 20


def is_path_like(name: str) -> bool:
    """A model name written as a path (not a Hub id): it must exist locally."""
    return name.startswith((".", "/", "~"))


def local_revision(folder: Path) -> str:
    """Content hash of a local checkpoint; files over 256 MiB count by name, size and mtime."""
    h = hashlib.sha256()
    for f in sorted(folder.iterdir()):
        if f.is_file() and not f.name.startswith("."):
            h.update(f.name.encode())
            stat = f.stat()
            if stat.st_size > BIG_FILE:
                h.update(f"{stat.st_size}:{stat.st_mtime_ns}".encode())
                continue
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
    return "sha256:" + h.hexdigest()[:16]


REVISION_INDEX = "local-revisions.json"  # in the user's cache folder: see indexed_revision


def indexed_revision(folder: Path) -> str:
    """`local_revision`, computed once per change of the folder's files: an index in the user's
    cache folder ($XDG_CACHE_HOME/workbench, else ~/.cache/workbench) maps the folder and each
    file's name, size and mtime to the revision, so a freshness check (`status`, `run`) of a large
    checkpoint costs a few stat calls, not a read of every file. A file changed in place gets a
    new mtime, hence a new hash."""
    import json
    import os

    folder = folder.resolve()
    listing = [
        (f.name, f.stat().st_size, f.stat().st_mtime_ns)
        for f in sorted(folder.iterdir())
        if f.is_file() and not f.name.startswith(".")
    ]
    key = hashlib.sha256(json.dumps([str(folder), listing]).encode()).hexdigest()
    index_file = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workbench" / REVISION_INDEX
    try:
        index = json.loads(index_file.read_text(encoding="utf-8"))
        index = index if isinstance(index, dict) else {}
    except (OSError, ValueError):
        index = {}
    if key in index:
        return index[key]
    revision = local_revision(folder)
    index[key] = revision
    try:
        from ..core.outputs import atomic_write_text

        atomic_write_text(index_file, json.dumps(index))
    except OSError:
        pass  # a read-only home: the revision is still right, computed again next time
    return revision


def fingerprint(name: str, revision: str | None = None, root: Path | None = None) -> str:
    """What identifies a model's weights without touching the network (for `status`)."""
    for folder in ([root / name] if root is not None else []) + [Path(name).expanduser()]:
        if (folder / "config.json").is_file():
            return indexed_revision(folder)
    return f"hub:{revision or 'main'}"


def resolve(name: str, revision: str | None = None, root: Path | None = None) -> ModelRef:
    """Find a model without loading its weights: a local folder, or a Hub id to fetch."""
    candidates = [Path(name).expanduser()]
    if root is not None and not Path(name).is_absolute():
        candidates.insert(0, root / name)
    for folder in candidates:
        if (folder / "config.json").is_file():
            return ModelRef(name, str(folder.resolve()), local_revision(folder))
        if folder.is_dir() and is_path_like(name):
            raise ModelError(not_a_checkpoint(name, folder))
        if folder.is_file():  # a file of the checkpoint (config.json, the weights) given for its folder
            raise ModelError(a_file_not_a_folder(name))
    if is_path_like(name):
        raise ModelError(f"model path {name!r} does not exist; {FIXTURE_HINT}")
    cached = cached_snapshot(name, revision)
    local = next((folder for folder in candidates if folder.is_dir()), None)
    if hub_offline():  # HF_HUB_OFFLINE: the cached copy, as transformers loads it; no Hub call
        if cached is not None:
            return ModelRef(name, str(cached), cached.name)
        if local is not None:  # a folder of that name exists here: it is the likelier intent
            raise ModelError(
                f"{not_a_checkpoint(name, local)} (nor is it in the local Hugging Face cache, and "
                "HF_HUB_OFFLINE is set)"
            )
        raise ModelError(
            f"model {name!r} is not a local folder, nor in the local Hugging Face cache, and "
            f"HF_HUB_OFFLINE is set; {FIXTURE_HINT}"
        )
    try:
        from huggingface_hub import model_info

        info = model_info(name, revision=revision)
        return ModelRef(name, name, info.sha or revision or "main")
    except Exception as exc:  # offline, unknown repo, gated: all end the same way for the user
        if cached is not None:  # the Hub cannot be reached, but the local Hugging Face cache has it
            return ModelRef(name, str(cached), cached.name)
        reason = type(exc).__name__
        if local is not None:  # a folder of that name exists here: it is the likelier intent
            raise ModelError(f"{not_a_checkpoint(name, local)} (nor is it a model on the Hub: {reason})") from None
        raise ModelError(
            f"model {name!r} is not a local folder and could not be found on the Hub ({reason}); {FIXTURE_HINT}"
        ) from None


def hub_offline() -> bool:
    """Whether HF_HUB_OFFLINE asks for no Hub calls (read now, not when huggingface_hub was imported)."""
    import os

    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def cached_snapshot(name: str, revision: str | None = None) -> Path | None:
    """The snapshot folder of Hub model `name` at `revision` (branch, tag or commit; default
    main) in the local Hugging Face cache, when it holds the model's config; its name is the commit."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json", revision=revision)
    except Exception:  # noqa: BLE001 -- not a repo id, or an odd cache layout: not cached
        return None
    return Path(found).parent if isinstance(found, str) else None


def a_file_not_a_folder(name: str) -> str:
    """The message for a model path that names a file: a checkpoint is the folder holding it."""
    parent = str(Path(name).parent)
    hint = (
        f" (e.g. {parent!r}, the folder it is in)" if (Path(name).expanduser().parent / "config.json").is_file() else ""
    )
    return f"model path {name!r} is a file, not a model folder; give the folder that holds config.json and the weights{hint}"


def not_a_checkpoint(name: str, folder: Path) -> str:
    """A folder without config.json: name the checkpoints inside it, if there are any."""
    inside = sorted(f"{name.rstrip('/')}/{sub.name}" for sub in folder.iterdir() if (sub / "config.json").is_file())
    if inside:
        shown = ", ".join(inside[:6]) + (", ..." if len(inside) > 6 else "")
        return (
            f"model folder {name!r} has no config.json, so it is not a checkpoint; the folders in it that are: {shown}"
        )
    return f"model folder {name!r} has no config.json; {FIXTURE_HINT}"


def preflight(names: list[str], root: Path | None = None) -> None:
    """Check every local model named on the command line as far as it can be without loading
    weights, before any of them scores: a path that is a file and, for a checkpoint folder, its
    config, its safetensors files (whole, and the embeddings as config.json says:
    `runtime.check_weight_files`) and its tokenizer (`runtime.check_tokenizer`). A run of several
    models then never stops after hours on the last one's missing tokenizer. A Hub name, and a
    path that does not exist, are left to the load (no network call here; the data's problems,
    read first by every kind, are said before a missing model)."""
    import os

    for name in dict.fromkeys(names):
        places = [Path(name).expanduser()] + ([root / name] if root is not None else [])
        if not any((p / "config.json").is_file() or p.is_file() for p in places):
            continue
        ref = resolve(name, None, root)
        if not os.path.isdir(ref.location):
            continue
        import torch
        from transformers import AutoConfig, AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        from .runtime import check_weight_files, weight_shapes

        hf_logging.set_verbosity_error()
        try:
            config = AutoConfig.from_pretrained(ref.location)
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot read the config of {name!r}: {exc}") from None
        try:
            with torch.device("meta"):  # the base model, for the embeddings' name and size: no memory
                skeleton = AutoModel.from_config(config)
        except Exception:  # noqa: BLE001 -- an architecture AutoModel lacks: the headers alone, the rest at load
            weight_shapes(ref.location, name)
        else:
            check_weight_files(ref.location, config, skeleton, name)
        try:
            tokenizer = AutoTokenizer.from_pretrained(ref.location)
        except (OSError, ValueError, KeyError) as exc:
            raise ModelError(f"cannot load the tokenizer of {name!r}: {exc}") from None
        check_tokenizer(tokenizer, name, ref.location, getattr(config, "vocab_size", None))


def runtime_for(ref: ModelRef, kind: str, spec: LoadSpec | str = "auto", budgets: dict | None = None) -> Runtime:
    """How a 'mlm', 'causal' or 'classifier' checkpoint will run (dtype, device or plan), from its config alone:
    what its cached predictions are keyed by, before any weight is loaded."""
    from transformers import AutoConfig

    spec = spec if isinstance(spec, LoadSpec) else LoadSpec(device=spec)
    revision = None if ref.revision.startswith("sha256:") else ref.revision
    try:
        config = AutoConfig.from_pretrained(ref.location, revision=revision)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot read the config of {ref.name!r}: {exc}; {FIXTURE_HINT}") from None
    return plan_load(_model_class(kind), config, spec, ref.name, budgets, ref.revision, ref.location)


def _model_class(kind: str):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSequenceClassification

    return {"mlm": AutoModelForMaskedLM, "causal": AutoModelForCausalLM}.get(kind, AutoModelForSequenceClassification)


def load(ref: ModelRef, kind: str, spec: LoadSpec | str = "auto", runtime: Runtime | None = None):
    """(tokenizer, model, device) for kind 'mlm' (masked LM) or 'classifier' (sequence
    classification), in eval mode, as `spec` (or a device
    name) asks: see `runtime`. `runtime` (from `runtime_for`) saves reading the config again."""
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    runtime = runtime or runtime_for(ref, kind, spec)
    revision = None if ref.revision.startswith("sha256:") else ref.revision
    try:
        tokenizer = AutoTokenizer.from_pretrained(ref.location, revision=revision)
        check_tokenizer(tokenizer, ref.name, ref.location)  # before the weights
        model, device = load_weights(_model_class(kind), ref.location, runtime, ref.name, revision=revision)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot load {kind} model {ref.name!r}: {exc}; {FIXTURE_HINT}") from None
    if kind == "mlm" and tokenizer.mask_token is None:
        raise ModelError(f"model {ref.name!r} has no mask token: it is not a masked LM")
    return tokenizer, model, device
