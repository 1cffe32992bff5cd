"""How a model is run: one set of options for every evaluator, the weight-memory estimate and
the device plan printed before a long run, and loading the weights that way.

`workbench evaluate` (typer) and every release's evaluate.py (argparse) declare the options
of `MODEL_OPTIONS` (`add_model_options` for argparse) and turn the values into a `LoadSpec` with
`load_spec`, so a flag means the same everywhere. `plan_load` reads a checkpoint's config, never
its weights, and decides the dtype, the device (or, with `--device-map auto`, which device gets
which layers) and the estimate; `load_weights` then loads the weights that way.

The precision a score was computed in is part of its identity: `Runtime.tag` (dtype and device
type) goes into every cached score's key, and `runtime_record` into every JSON document, so a
float32 run never reads numbers a bfloat16 run wrote and a reader can tell them apart.

Pure code (the standard library at the top; torch and transformers inside the functions that
need them, accelerate and bitsandbytes only when asked for), so a release's evaluate.py
carries it verbatim.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from dataclasses import dataclass

from ..core.distributed import active, is_main
from ..core.errors import InputError, ModelError

DTYPES = ("auto", "float32", "bfloat16", "float16")
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
QUANT_BYTES = {"8bit": 1.0, "4bit": 0.5}
DEFAULT_BATCH = 32  # what `--batch-size auto` starts from (halved on out-of-memory)
FREE_SHARE = 0.9  # of a device's free memory that `--device-map auto` plans to fill
BIG_EXTRA = "pip install 'bias-workbench[big]'"  # accelerate; bitsandbytes is `pip install bitsandbytes`


@dataclass(frozen=True)
class ModelOption:
    """One command-line option: how workbench's typer command and an evaluate.py's argparse
    parser both declare it."""

    flag: str
    help: str
    default: object = None
    choices: tuple[str, ...] | None = None
    switch: bool = False
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")


LOGPROB_DTYPES = ("float32", "model")  # --logprob-dtype: see MODEL_OPTIONS
MODEL_OPTIONS = (
    ModelOption(
        "--device",
        "where the model runs: auto (a CUDA GPU when there is one, else the CPU), cpu, cuda or cuda:N",
        "auto",
        metavar="DEVICE",
    ),
    ModelOption(
        "--batch-size",
        "inputs per forward pass: auto (32) or a number; halved on out-of-memory either way",
        "auto",
        metavar="N",
    ),
    ModelOption(
        "--dtype",
        "precision of the weights: auto (the checkpoint's own, float32 when it names none), float32, "
        "bfloat16 or float16",
        "auto",
        DTYPES,
    ),
    ModelOption(
        "--device-map",
        "auto: spread the layers over the GPUs, then the CPU, when the model does not fit on one "
        "device (accelerate's big-model inference; needs accelerate)",
        None,
        ("auto",),
    ),
    ModelOption(
        "--max-memory",
        "with --device-map auto: what each device may hold of the weights, e.g. "
        "0=20GiB,1=20GiB,cpu=64GiB (default: 90%% of each device's free memory)",
        None,
        metavar="DEV=SIZE,...",
    ),
    ModelOption("--load-in-8bit", "quantize the weights to 8 bits as they load (bitsandbytes, CUDA GPU)", switch=True),
    ModelOption(
        "--load-in-4bit", "quantize the weights to 4 bits (NF4) as they load (bitsandbytes, CUDA GPU)", switch=True
    ),
    ModelOption(
        "--logprob-dtype",
        "causal LMs: float32 (default) takes log-softmax and sums of log-probabilities in "
        "float32 whatever --dtype is; model takes both in the model's own dtype, as lm-evaluation-harness's hf "
        "backend does (in bfloat16 its sums round to a few bits, and many sentence pairs tie)",
        "float32",
        LOGPROB_DTYPES,
    ),
)
# How a causal LM is asked, beside how it runs: only kinds whose models answer multiple-choice
# requests (those with an lm-evaluation-harness task) take them (see `add_model_options`).
CHAT_OPTIONS = (
    ModelOption(
        "--apply-chat-template",
        "causal LMs: put each multiple-choice context in a user turn of the tokenizer's own chat template, "
        "with the prompt that opens the assistant's answer, and score each choice after it, as "
        "lm-evaluation-harness's --apply_chat_template does (a model without a chat template is refused)",
        switch=True,
    ),
    ModelOption(
        "--system-instruction",
        "with --apply-chat-template: a system turn before the user turn, as lm-evaluation-harness's "
        "--system_instruction places it",
        None,
        metavar="TEXT",
    ),
)
MODEL_OPTION_HELP = {
    o.dest: o.help.replace("%%", "%") for o in (*MODEL_OPTIONS, *CHAT_OPTIONS)
}  # what typer shows (argparse needs the %%)


@dataclass(frozen=True)
class LoadSpec:
    """What the user asked for; `prepare` turns it into a `Runtime` per checkpoint."""

    device: str = "auto"  # auto | cpu | cuda | cuda:N
    dtype: str = "auto"  # auto: the checkpoint's own (float32 where it names none)
    batch_size: int | None = None  # None: auto
    device_map: str | None = None  # "auto": layers spread over the devices
    max_memory: tuple = ()  # ((device, bytes), ...) for device_map auto; () = free memory
    quantization: str | None = None  # "8bit" | "4bit"
    default_batch: int = DEFAULT_BATCH  # what auto starts from ([evaluate] batch_size in workbench)
    announce: bool = False  # print the estimate and plan before loading (the evaluators)
    logprob_dtype: str = "float32"  # "model": log-softmax and sums in the model's dtype (lm-eval's hf backend)
    chat_template: bool = False  # --apply-chat-template: multiple-choice contexts in the chat template
    system_instruction: str | None = None  # --system-instruction: its system turn

    @property
    def start_batch(self) -> int:
        return self.batch_size or self.default_batch

    def describe(self) -> dict:
        """The options as the user gave them, for the JSON documents."""
        return {
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size if self.batch_size is not None else "auto",
            "device_map": self.device_map,
            "max_memory": dict(self.max_memory) or None,
            "quantization": self.quantization,
            "logprob_dtype": self.logprob_dtype,
            "apply_chat_template": self.chat_template,
            "system_instruction": self.system_instruction,
        }


def section_spec(section) -> LoadSpec:
    """The model options of a loop stage's settings ([generate], [filter], [fluency]: device, dtype,
    device_map, batch size) as the spec its model loads with, the evaluators' machinery."""
    return LoadSpec(
        device=section.device,
        dtype=getattr(section, "dtype", None) or "auto",
        batch_size=section.batch_size,
        device_map=getattr(section, "device_map", None),
    )


def keyed_revision(ref, runtime: Runtime) -> str:
    """The revision a stage files a model's cached outputs under: the weights' revision, with the
    precision added when it is not float32 (a bfloat16 run's fills are other numbers; float32 keys
    stay as they were, so caches of earlier runs are still read)."""
    precision = runtime.quantization or runtime.dtype
    return ref.revision if precision == "float32" else f"{ref.revision}@{precision}"


def add_model_options(parser, chat: bool = False) -> None:
    """Declare the model options on an argparse parser (a release's evaluate.py); `chat`: the
    chat options too (a kind whose models answer multiple-choice requests)."""
    group = parser.add_argument_group("model options (the same in `workbench evaluate`)")
    for o in (*MODEL_OPTIONS, *(CHAT_OPTIONS if chat else ())):
        if o.switch:
            group.add_argument(o.flag, action="store_true", help=o.help)
        else:
            group.add_argument(o.flag, default=o.default, choices=o.choices, metavar=o.metavar, help=o.help)


def spec_from_args(args, default_batch: int = DEFAULT_BATCH) -> LoadSpec:
    """`load_spec` over an argparse namespace with the options of `MODEL_OPTIONS`."""
    options = (*MODEL_OPTIONS, *CHAT_OPTIONS)
    return load_spec(**{o.dest: getattr(args, o.dest, o.default) for o in options}, default_batch=default_batch)


def load_spec(
    device: str | None = "auto",
    batch_size: str | int | None = "auto",
    dtype: str | None = "auto",
    device_map: str | None = None,
    max_memory: str | None = None,
    load_in_8bit: bool = False,
    load_in_4bit: bool = False,
    default_batch: int = DEFAULT_BATCH,
    logprob_dtype: str | None = "float32",
    apply_chat_template: bool = False,
    system_instruction: str | None = None,
) -> LoadSpec:
    """Check the option values (an InputError naming the option otherwise) and make the spec of
    an evaluator's command line (which prints the estimate and plan before each load)."""
    device = (device or "auto").strip().lower()
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
        raise InputError(f"--device {device!r}: expected auto, cpu, cuda or cuda:N")
    size = None
    text = str(batch_size if batch_size is not None else "auto").strip().lower()
    if text != "auto":
        if not text.isdigit() or int(text) < 1:
            raise InputError(f"--batch-size {text!r}: expected auto or a whole number of at least 1")
        size = int(text)
    dtype = (dtype or "auto").strip().lower()
    if dtype not in DTYPES:
        raise InputError(f"--dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    if device_map not in (None, "auto"):
        raise InputError(f"--device-map {device_map!r}: the only plan is auto")
    if load_in_8bit and load_in_4bit:
        raise InputError("--load-in-8bit and --load-in-4bit: choose one")
    if device_map and device not in ("auto", "cuda"):
        raise InputError(f"--device {device} and --device-map auto: the plan chooses the devices; give one of them")
    budgets = parse_max_memory(max_memory) if max_memory else ()
    if budgets and not device_map:
        raise InputError("--max-memory is the budget of --device-map auto: give --device-map auto too")
    quantization = "8bit" if load_in_8bit else "4bit" if load_in_4bit else None
    if quantization and dtype == "float32":
        raise InputError(f"--load-in-{quantization} computes in 16 bits: --dtype float32 does not go with it")
    logprob_dtype = (logprob_dtype or "float32").strip().lower()
    if logprob_dtype not in LOGPROB_DTYPES:
        raise InputError(f"--logprob-dtype {logprob_dtype!r}: expected one of {', '.join(LOGPROB_DTYPES)}")
    if system_instruction is not None and not apply_chat_template:
        raise InputError("--system-instruction is the system turn of the chat template: give --apply-chat-template too")
    return LoadSpec(
        device,
        dtype,
        size,
        device_map,
        budgets,
        quantization,
        default_batch,
        announce=True,
        logprob_dtype=logprob_dtype,
        chat_template=bool(apply_chat_template),
        system_instruction=system_instruction,
    )


SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}


def parse_size(text: str) -> int:
    """'20GiB', '500MB', '1.5gb' or a number of bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in SIZE_UNITS:
        raise ValueError(text)
    return int(float(m.group(1)) * SIZE_UNITS[m.group(2).lower()])


def parse_max_memory(text: str) -> tuple:
    """'0=20GiB,1=20GiB,cpu=64GiB' -> (('cuda:0', bytes), ('cuda:1', bytes), ('cpu', bytes))."""
    out: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        device, _, size = part.partition("=")
        device = device.strip().lower()
        device = f"cuda:{device}" if device.isdigit() else device
        if not re.fullmatch(r"cpu|cuda:\d+", device) or not size:
            raise InputError(
                f"--max-memory {part!r}: expected DEVICE=SIZE with DEVICE a GPU number (0, 1, ...), "
                "cuda:N or cpu, e.g. 0=20GiB,cpu=64GiB"
            )
        try:
            out[device] = parse_size(size)
        except ValueError:
            raise InputError(f"--max-memory {part!r}: {size.strip()!r} is not a size (e.g. 20GiB, 512MB)") from None
    if not out:
        raise InputError("--max-memory is empty: expected DEVICE=SIZE,..., e.g. 0=20GiB,cpu=64GiB")
    # GPUs first, in order, then the CPU: the order in which the plan fills them
    return tuple(sorted(out.items(), key=lambda kv: (kv[0] == "cpu", int(kv[0][5:] or 0) if kv[0] != "cpu" else 0)))


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


# -- what a checkpoint needs, and where it goes ---------------------------------------------------
@dataclass(frozen=True)
class Runtime:
    """How one checkpoint runs: decided by `prepare` before any weight is read."""

    dtype: str  # compute dtype: float32 | bfloat16 | float16
    device: str  # cpu, cuda, cuda:N; with a plan, the device of its first layers
    batch_size: int  # the batch size scoring starts from
    quantization: str | None = None
    plan: tuple = ()  # ((device, (module, ...), bytes), ...) with --device-map auto
    n_params: int = 0
    weight_bytes: int = 0
    announce: bool = False  # print `describe_runtime` before the weights load
    revision: str | None = None  # the weights' commit (Hub) or content hash (local folder)

    @property
    def devices(self) -> list[str]:
        return [d for d, _, _ in self.plan] if self.plan else [self.device]

    @property
    def tag(self) -> str:
        """What a cached score's key adds to the model's revision: numbers differ by precision and device type."""
        types = sorted({d.split(":")[0] for d in self.devices})
        return f"{self.quantization or self.dtype}@{'+'.join(types)}"

    def record(self) -> dict:
        return {
            "revision": self.revision,
            "dtype": self.dtype,
            "device": "+".join(self.devices),
            "device_type": "+".join(sorted({d.split(":")[0] for d in self.devices})),
            "batch_size": self.batch_size,
            "quantization": self.quantization,
            "weight_bytes": self.weight_bytes,
            "plan": {d: list(names) for d, names, _ in self.plan} if self.plan else None,
        }


def versions() -> dict:
    """The versions of what computes a score: workbench (the evaluator's code), torch, transformers."""
    from importlib import metadata

    from .. import __version__

    out = {"workbench": __version__}
    for package in ("torch", "transformers"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    return out


def describe_versions() -> str:
    """One line for a report's header: 'workbench 0.1.0, torch 2.13.0, transformers 5.24.0'."""
    return ", ".join(f"{k} {v}" for k, v in versions().items())


def runtime_record(spec: LoadSpec, runtimes: dict) -> dict:
    """The JSON documents' `runtime`: the options as given, per model how it ran (revision,
    dtype, device, batch size), and the versions of workbench, torch and transformers."""
    return {
        "requested": spec.describe(),
        "models": {name: rt.record() for name, rt in runtimes.items()},
        "versions": versions(),
    }


def _config_dtype(config) -> str:
    """The dtype a checkpoint names in its config (float32 where it names none or another one)."""
    value = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    name = str(value).replace("torch.", "") if value is not None else "float32"
    return name if name in DTYPE_BYTES else "float32"


def _device(preference: str) -> str:
    import torch

    if preference == "cpu" or (preference == "auto" and not torch.cuda.is_available()):
        return "cpu"
    if not torch.cuda.is_available():
        raise ModelError(f"--device {preference} was asked for but no CUDA GPU is available")
    if preference.startswith("cuda:"):
        index = int(preference[5:])
        if index >= torch.cuda.device_count():
            raise ModelError(f"--device {preference}: there are {torch.cuda.device_count()} CUDA GPU(s)")
        return preference
    if active():  # one GPU per process under torchrun / accelerate launch
        return f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
    return "cuda"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _require(module: str, flag: str) -> None:
    if not _installed(module):
        install = f"pip install {module}" if module == "bitsandbytes" else f"pip install {module}, or {BIG_EXTRA}"
        raise ModelError(f"{flag} needs {module}, which is not installed ({install})")


def free_device_memory() -> dict[str, int]:
    """What each device could hold now: every CUDA GPU's free memory, and the CPU's available RAM."""
    import torch

    out: dict[str, int] = {}
    for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        out[f"cuda:{i}"] = int(torch.cuda.mem_get_info(i)[0] * FREE_SHARE)
    available = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
    except OSError:
        pass
    if not available and hasattr(os, "sysconf"):
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            available = 0
    out["cpu"] = int(available * FREE_SHARE)
    return out


def tensor_bytes(model, dtype: str, quantization: str | None) -> dict[int, int]:
    """Bytes of every parameter and buffer (by id; a tied weight once) when loaded as asked:
    floating-point weights in `dtype`, linear layers' weights in 8 or 4 bits when quantized."""
    import torch

    sizes: dict[int, int] = {}
    for module in model.modules():
        linear = isinstance(module, torch.nn.Linear)
        for pname, t in [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]:
            if id(t) in sizes or t is None:
                continue
            if quantization and linear and pname == "weight":
                sizes[id(t)] = int(t.numel() * QUANT_BYTES[quantization])
            elif t.is_floating_point():
                sizes[id(t)] = t.numel() * DTYPE_BYTES[dtype]
            else:
                sizes[id(t)] = t.numel() * t.element_size()
    return sizes


def placement_units(model, sizes: dict[int, int]) -> list[tuple[str, int, int]]:
    """The model cut into pieces the plan places whole, in the model's order: each module the
    model says must not be split (a transformer layer), each other leaf module, each parameter
    held directly by a larger module. (name, bytes not counted in an earlier piece, index of
    the first piece of its tie group): pieces that share a tied weight (an output head and the
    input embeddings) form one group, which goes to one device."""
    no_split = set(getattr(model, "_no_split_modules", None) or ())
    owner: dict[int, int] = {}  # tensor id -> the first piece that holds it
    leader: list[int] = []  # piece -> first piece of its group (union-find, smallest index wins)
    out: list[tuple[str, int]] = []

    def root(i: int) -> int:
        while leader[i] != i:
            i = leader[i]
        return i

    def add(name: str, tensors: list) -> None:
        ids = list(dict.fromkeys(id(t) for t in tensors if t is not None))
        if not ids:
            return
        me = len(out)
        leader.append(me)
        for r in sorted({root(owner[i]) for i in ids if i in owner}, reverse=True):
            leader[max(r, root(me))] = min(r, root(me))
        out.append((name, sum(sizes.get(i, 0) for i in ids if i not in owner)))
        for i in ids:
            owner.setdefault(i, me)

    def walk(module, prefix: str) -> None:
        children = list(module.named_children())
        if not children or type(module).__name__ in no_split:
            add(prefix, [*module.parameters(), *module.buffers()])
            return
        for n, t in [*module.named_parameters(recurse=False), *module.named_buffers(recurse=False)]:
            add(f"{prefix}.{n}" if prefix else n, [t])
        for n, child in children:
            walk(child, f"{prefix}.{n}" if prefix else n)

    walk(model, "")
    return [(name, size, root(i)) for i, (name, size) in enumerate(out)]


def place_units(pieces: list[tuple[str, int, int]], budgets: list[tuple[str, int]], what: str) -> tuple:
    """Fill the devices in order (GPUs, then the CPU) with consecutive pieces, each where it
    still fits; a tie group is placed with its first piece. ((device, names, bytes), ...)"""
    left = dict(budgets)
    order = [d for d, _ in budgets]
    group: dict[int, int] = {}
    for _, size, first in pieces:
        group[first] = group.get(first, 0) + size
    where: list[str] = []
    at = 0
    for i, (name, _, first) in enumerate(pieces):
        if first != i:
            where.append(where[first])
            continue
        need = group[i]
        while at < len(order) and need > left[order[at]]:
            at += 1
        if at == len(order):
            total = sum(s for _, s, _ in pieces)
            offered = ", ".join(f"{d} {human_bytes(b)}" for d, b in budgets)
            raise ModelError(
                f"{what} needs about {human_bytes(total)} for its weights, and its piece {name!r} "
                f"({human_bytes(need)}) fits on none of the devices left ({offered}); raise "
                "--max-memory, or load it smaller (--dtype bfloat16, --load-in-8bit)"
            )
        left[order[at]] -= need
        where.append(order[at])
    plan: dict[str, tuple[list[str], int]] = {}
    for (name, size, _), device in zip(pieces, where):
        names, total = plan.get(device, ([], 0))
        plan[device] = (names + [name], total + size)
    return tuple(
        (d, tuple(names), total) for d, (names, total) in sorted(plan.items(), key=lambda kv: order.index(kv[0]))
    )


def shown_modules(names) -> str:
    """'bert.encoder.layer.0', ... 'bert.encoder.layer.5' -> 'bert.encoder.layer.0-5'."""
    out: list[list] = []
    for name in names:
        m = re.fullmatch(r"(.*\.)(\d+)", name)
        if m and out and out[-1][0] == m.group(1) and out[-1][2] == int(m.group(2)) - 1:
            out[-1][2] = int(m.group(2))
            continue
        out.append([m.group(1), int(m.group(2)), int(m.group(2))] if m else [name, None, None])
    return ", ".join(p if a is None else f"{p}{a}" + (f"-{b}" if b != a else "") for p, a, b in out)


def describe_runtime(name: str, runtime: Runtime) -> str:
    """The lines printed before the weights load: size, precision, and where each part goes."""
    precision = f"{runtime.quantization} ({runtime.dtype} compute)" if runtime.quantization else runtime.dtype
    n = runtime.n_params
    count = f"{n / 1e9:.1f}B" if n >= 1e9 else f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n:,}"
    at = f" at revision {runtime.revision}" if runtime.revision else ""
    head = f"{name}{at}: {count} parameters, about {human_bytes(runtime.weight_bytes)} of weights in {precision}"
    if not runtime.plan:
        return f"{head}, on {runtime.device}, batches of {runtime.batch_size}"
    lines = [f"{head}, batches of {runtime.batch_size}; plan (--device-map auto):"]
    lines += [f"  {d}: {human_bytes(size)}: {shown_modules(names)}" for d, names, size in runtime.plan]
    return "\n".join(lines)


def say_runtime(text: str) -> None:
    if is_main():
        print(text, file=sys.stderr, flush=True)


def plan_load(
    cls,
    config,
    spec: LoadSpec,
    name: str,
    budgets: dict[str, int] | None = None,
    revision: str | None = None,
    location: str | None = None,
) -> Runtime:
    """Decide how checkpoint `name` (its transformers `config`, to load as `cls`) runs, from its
    config alone: nothing is downloaded or loaded but the config. `budgets` replaces the free
    memory `--device-map auto` plans with (tests). With `location` (a local folder), its weight
    files' headers are checked against the config first (`check_weight_files`)."""
    import torch

    dtype = _config_dtype(config) if spec.dtype == "auto" else spec.dtype
    if spec.quantization:
        # The GPU first: without one bitsandbytes cannot quantize, so "install it" would mislead.
        if not torch.cuda.is_available():
            raise ModelError(
                f"--load-in-{spec.quantization} needs a CUDA GPU (bitsandbytes quantizes on one), and "
                "there is none here; leave it out, or give --dtype bfloat16 to halve the weights' memory"
            )
        _require("bitsandbytes", f"--load-in-{spec.quantization}")
        if dtype == "float32":
            dtype = "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    if spec.device_map and active():
        raise ModelError(
            "--device-map auto spreads one model over this machine's devices; under torchrun / "
            "accelerate launch each process already has its own GPU: use one or the other"
        )
    device = _device("auto" if spec.device_map else spec.device)
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    absent = [d for d, _ in spec.max_memory if d.startswith("cuda:") and int(d[5:]) >= gpus]
    if absent:
        raise ModelError(f"--max-memory names {', '.join(absent)}, but this machine has {gpus} CUDA GPU(s)")
    with torch.device("meta"):
        skeleton = cls.from_config(config)
    if location is not None:
        check_weight_files(location, config, skeleton, name)
    sizes = tensor_bytes(skeleton, dtype, spec.quantization)
    n_params = sum(t.numel() for t in {id(p): p for p in skeleton.parameters()}.values())
    plan: tuple = ()
    if spec.device_map:
        offered = list(spec.max_memory) or list((budgets or free_device_memory()).items())
        plan = place_units(placement_units(skeleton, sizes), offered, repr(name))
        device = plan[0][0] if plan else device
    del skeleton
    return Runtime(
        dtype,
        device,
        spec.start_batch,
        spec.quantization,
        plan,
        n_params,
        sum(sizes.values()),
        spec.announce or bool(plan),
        revision,
    )


def load_weights(cls, location: str, runtime: Runtime, name: str, **kwargs):
    """`cls.from_pretrained(location, **kwargs)` as `runtime` says (dtype, quantization, the
    device or the plan: several devices need accelerate), after printing the estimate and the
    plan. Returns (what from_pretrained returned, the device inputs go to)."""
    import torch

    if runtime.announce:
        say_runtime(describe_runtime(name, runtime))

    kwargs["dtype"] = getattr(torch, runtime.dtype)
    devices = runtime.devices
    device_map = None
    if len(devices) > 1:
        _require("accelerate", "--device-map auto over several devices")
        device_map = {n: (int(d[5:]) if d.startswith("cuda:") else d) for d, names, _ in runtime.plan for n in names}
    if runtime.quantization:
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_8bit=runtime.quantization == "8bit",
            load_in_4bit=runtime.quantization == "4bit",
            bnb_4bit_compute_dtype=kwargs["dtype"],
            bnb_4bit_quant_type="nf4",
        )
        device_map = device_map or {"": torch.device(devices[0] if devices[0] != "cuda" else "cuda:0")}
    if device_map is not None:
        kwargs["device_map"] = device_map
    try:
        loaded = cls.from_pretrained(location, **kwargs)
    except Exception as exc:  # only the damaged-weights errors below become messages
        problem = _weights_problem(exc)
        if problem is None:
            raise
        raise ModelError(f"cannot load the weights of {name!r}: {problem}") from None
    model = loaded[0] if isinstance(loaded, tuple) else loaded
    if device_map is None:
        model.to(torch.device(devices[0]))
    model.eval()
    embeddings = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    device = embeddings.weight.device if embeddings is not None and device_map is not None else torch.device(devices[0])
    return loaded, device


# -- a checkpoint that loads but cannot score: refused before any weight is read -----------------
TOKENIZER_SAMPLE = "The people here are 12 years old."
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer.model",
    "vocab.txt",
    "vocab.json",
    "spiece.model",
    "sentencepiece.bpe.model",
)
SAFE_WEIGHTS = "model.safetensors"
SAFE_INDEX = "model.safetensors.index.json"


def _folder_of(name: str, location: str) -> str | None:
    """How messages show a local checkpoint folder: as the user wrote it, else where it is."""
    if os.path.isdir(os.path.expanduser(name)):
        return name
    return location if os.path.isdir(location) else None


def check_tokenizer(tokenizer, name: str, location: str, vocab_size: int | None = None) -> None:
    """Refuse a tokenizer that cannot encode plain text, before any weight loads.

    transformers 5 does not fail on a folder without tokenizer files: it builds a tokenizer of
    the special tokens alone, which turns every word into the unknown token (or into nothing,
    byte-level BPE), so every sentence scores alike and a meaningless number comes out with exit
    code 0. A short plain sentence must encode to at least one known token, and its ids must lie
    inside the model's embeddings (`vocab_size`)."""
    try:
        ids = [int(i) for i in tokenizer.encode(TOKENIZER_SAMPLE, add_special_tokens=False)]
    except Exception:  # noqa: BLE001 -- a tokenizer that cannot encode is as broken as an empty one
        ids = []
    unknown = {tokenizer.unk_token_id, *(getattr(tokenizer, "all_special_ids", None) or ())} - {None}
    folder = _folder_of(name, location)
    if not [i for i in ids if i not in unknown]:
        got = "nothing" if not ids else f"unknown tokens only ({tokenizer.unk_token or 'unk'})"
        files = ""
        if folder is not None:
            present = [f for f in TOKENIZER_FILES if os.path.isfile(os.path.join(location, f))]
            files = (
                f"; it has {', '.join(present)}" if present else f"; it has none of {', '.join(TOKENIZER_FILES[:4])}"
            )
        what = f"model folder {folder!r}" if folder is not None else f"model {name!r}"
        raise ModelError(
            f"{what}: its tokenizer files are missing or broken (the test sentence {TOKENIZER_SAMPLE!r} "
            f"encodes to {got}{files}); copy the tokenizer files of the checkpoint into it"
        )
    if vocab_size and max(ids) >= vocab_size:
        raise ModelError(
            f"model {name!r}: its tokenizer gives token id {max(ids)}, but config.json's vocab_size is "
            f"{vocab_size}: the tokenizer and the weights are not of one checkpoint"
        )


def safetensors_header(path: str, shown: str) -> dict:
    """The header of a safetensors file, after checking that the file holds every byte the
    header describes (a copy or download cut short otherwise loads as a traceback); a ModelError
    naming the file (`shown`) otherwise."""
    import json

    again = "download or copy the checkpoint again"
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        length = int.from_bytes(head, "little") if len(head) == 8 else -1
        if length < 0 or length > size - 8:
            raise ModelError(f"{shown} is cut short ({size:,} bytes, not even its header); {again}")
        raw = f.read(length)
    try:
        header = json.loads(raw)
        end = max((int(t["data_offsets"][1]) for k, t in header.items() if k != "__metadata__"), default=0)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        raise ModelError(f"{shown} is not a readable safetensors file (its header is damaged); {again}") from None
    expected = 8 + length + end
    if size < expected:
        raise ModelError(f"{shown} is cut short: {size:,} bytes where its header describes {expected:,}; {again}")
    if size > expected:
        raise ModelError(f"{shown} is damaged: {size - expected:,} bytes more than its header describes; {again}")
    return header


def weight_shapes(location: str, name: str) -> dict[str, tuple[list, str]]:
    """tensor name -> (shape, file) of a local checkpoint's safetensors weights (the files
    from_pretrained loads: model.safetensors, or those its index lists), each checked whole by
    `safetensors_header`; {} for a Hub name or a checkpoint without safetensors files."""
    import json

    if not os.path.isdir(location):
        return {}
    folder = _folder_of(name, location) or location
    index = os.path.join(location, SAFE_INDEX)
    if os.path.isfile(index):
        try:
            with open(index, encoding="utf-8") as f:
                files = sorted(set(json.load(f)["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise ModelError(
                f"{os.path.join(folder, SAFE_INDEX)} is not a readable index of the weight files "
                "(a JSON object with `weight_map`); download or copy the checkpoint again"
            ) from None
    elif os.path.isfile(os.path.join(location, SAFE_WEIGHTS)):
        files = [SAFE_WEIGHTS]
    else:
        return {}
    shapes: dict[str, tuple[list, str]] = {}
    for file in files:
        path = os.path.join(location, file)
        if not os.path.isfile(path):
            raise ModelError(
                f"{os.path.join(folder, SAFE_INDEX)} lists {file}, which is missing; download or copy the "
                "checkpoint again"
            )
        for key, tensor in safetensors_header(path, os.path.join(folder, file)).items():
            if key != "__metadata__" and isinstance(tensor, dict):
                shapes[key] = (list(tensor.get("shape") or []), file)
    return shapes


def check_weight_files(location: str, config, skeleton, name: str) -> None:
    """A local checkpoint's safetensors files, read as far as their headers: each whole (not cut
    short), and the rows of the word embeddings equal to what config.json says (`skeleton`: the
    model built from the config on the meta device). transformers would stop on either with a
    traceback, or with a report in the middle of the log; a .bin checkpoint is not checked here."""
    shapes = weight_shapes(location, name)
    if not shapes:
        return
    embeddings = skeleton.get_input_embeddings() if hasattr(skeleton, "get_input_embeddings") else None
    if embeddings is None or getattr(config, "quantization_config", None):
        return  # a pre-quantized checkpoint stores packed shapes
    pname = next((n for n, p in skeleton.named_parameters() if p is getattr(embeddings, "weight", None)), None)
    if pname is None:
        return
    prefix = f"{getattr(skeleton, 'base_model_prefix', '')}."
    for key in (pname, pname[len(prefix) :] if pname.startswith(prefix) else prefix + pname):
        if key in shapes and shapes[key][0]:
            rows, file = shapes[key][0][0], shapes[key][1]
            want = embeddings.weight.shape[0]
            if rows != want:
                said = (
                    f"config.json says vocab_size {want}"
                    if getattr(config, "vocab_size", None) == want
                    else f"config.json makes the embeddings {want:,} rows"
                )
                raise ModelError(
                    f"model {name!r}: {said}, but the word embeddings in {file} ({key}) have {rows:,} "
                    "rows: the config and the weights are not of one checkpoint (was config.json "
                    "edited?)"
                )
            return


def _weights_problem(exc: Exception) -> str | None:
    """What a from_pretrained failure says about damaged weights, in one line (None: another failure)."""
    text = str(exc)
    if type(exc).__name__ == "SafetensorError":
        return (
            f"a weight file is damaged ({text.splitlines()[0] if text else 'unreadable'}); download or copy the "
            "checkpoint again"
        )
    if isinstance(exc, RuntimeError) and ("mismatched_sizes" in text or "size mismatch" in text):
        return (
            "the shapes of its weights differ from what config.json describes (vocab_size, hidden_size, ...): "
            "the config and the weights are not of one checkpoint"
        )
    if isinstance(exc, RuntimeError) and "PytorchStreamReader" in text:
        return "its .bin weight file is damaged (cut short?); download or copy the checkpoint again"
    return None
