"""Standalone evaluators: the `evaluate.py` a release carries, runnable without workbench.

A kind that has one names its standalone module (`Kind.standalone`): a real module of the kind
(what it defines: `release/runtime/cli.py`) that imports, like any other, the code `workbench
evaluate` runs. At build time `write(kind, dataset, folder)` (the `Kind` itself, handed by the build) puts into the release

    evaluator/    every module of that module's import closure (closure.py), copied byte for
                  byte to its package path (evaluator/workbench/..., a plugin's own package
                  likewise), and an empty `__init__.py` for each package above them that none
                  of them imports from
    evaluate.py   a short launcher: its docstring says what it scores and how to run it; its
                  code puts evaluator/ first on sys.path, imports the kind's module from there
                  and runs `release.runtime.cli.main` with the pinned release and the
                  evaluator's version (workbench's version + a hash of evaluator/)

so the script runs the very files `workbench evaluate` runs, and has no copy of its own to
drift. The closure is checked as it is built: every import must be the standard library, a
package the kind's card tells users to install (torch, transformers, numpy; pyarrow where a
kind reads Parquet), one transformers brings with it (safetensors, huggingface_hub), or
another copied module.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ... import __version__
from ...contract.kind import Kind
from ...contract.loader import import_module
from ..runtime.cli import SCORES, headline
from .closure import EvaluatorError, Module, closure, packages

# What a script's users may be asked to install, besides the standard library ...
ALLOWED = ("numpy", "torch", "transformers", "pyarrow")
# ... and what transformers installs with it.
BROUGHT = ("safetensors", "huggingface_hub")
REQUIREMENTS = "torch transformers numpy"
COMMAND = "python evaluate.py --model MODEL --json scores.json"
MODEL_NOTE = (
    "MODEL is a masked LM (BERT, RoBERTa, ...) or a causal LM (GPT-2, ...): a Hub name or a local\ncheckpoint folder."
)
FOLDER = "evaluator"
CONTRACT = ("TITLE", "MEASURES", "DATA", "evaluate")  # what every standalone module defines (runtime/cli.py)


def _module_of(kind: Kind) -> str | None:
    """The module of `kind`'s standalone evaluator, as the kind names it (`Kind.standalone`, by
    default its declared evaluator: `Kind.standalone_module`); None for a kind without one."""
    return kind.standalone_module()


def _load(kind: Kind):
    """The kind's standalone module, imported through the contract's guarded loader: a broken one
    stops the build with one line naming the kind, the module and the error. A module that
    declares its evaluator (`DECLARED`) is given as the standalone module made from it."""
    from ..runtime.declared import standalone_of

    return standalone_of(import_module(kind, _module_of(kind), "standalone"))


def _declared(module) -> bool:
    from ..runtime.declared import DeclaredStandalone

    return isinstance(module, DeclaredStandalone)


# What the launcher of a declared kind runs besides the kind's module: the standalone made from it.
DECLARED_RUNNER = "workbench.release.runtime.declared"


def has_standalone(kind: Kind) -> bool:
    return _module_of(kind) is not None


def requirements(module) -> str:
    """What the card's pip line installs for a kind's standalone module."""
    return getattr(module, "REQUIREMENTS", REQUIREMENTS)


def allowed_imports(module) -> set[str]:
    """The top-level packages its copied modules may import besides the standard library."""
    wanted = requirements(module).split()
    unknown = [w for w in wanted if w not in ALLOWED]
    if unknown:
        raise EvaluatorError(
            f"{module.__name__}: REQUIREMENTS names {', '.join(unknown)}; a release's evaluate.py "
            f"may ask for {', '.join(ALLOWED)} only"
        )
    return set(wanted) | set(BROUGHT)


def card_lines(kind: Kind) -> list[str]:
    """What a release card says about running its evaluate.py without workbench (nothing for a
    kind without a standalone evaluator): what to install, then the command. A kind's module
    may set REQUIREMENTS and COMMAND; the command is run word for word by the tests."""
    if not has_standalone(kind):
        return []
    module = _load(kind)
    command = getattr(module, "COMMAND", COMMAND)
    return [
        f"# or, without workbench, from a download of this repository (pip install {requirements(module)}):",
        command,
    ]


def card_options(kind: Kind) -> str:
    """What a card's `workbench evaluate` command needs besides the model for this kind: the
    options its evaluator declares as required, each with its placeholder (" --lexicon LEXICON.tsv")."""
    return "".join(f" {o.flag} {o.metavar or o.dest.upper()}" for o in kind.options() if o.required)


def evaluator_files(kind: Kind) -> tuple[dict[str, Module], list[str]]:
    """(the modules evaluator/ holds, by name; the packages that get an empty marker) for a
    kind's standalone module; an EvaluatorError names any import a script's user lacks."""
    name = _module_of(kind)
    if name is None:
        raise EvaluatorError(f"kind {kind.name!r} has no standalone evaluator")
    module = _load(kind)
    missing = [n for n in CONTRACT if not hasattr(module, n)]
    if missing:
        raise EvaluatorError(
            f"{name}, the standalone evaluator of kind {kind.name!r}, lacks {', '.join(missing)} "
            "(see workbench/release/runtime/cli.py)"
        )
    found = closure(name, allowed_imports(module))
    if _declared(module):  # the launcher runs it through these, which the kind's module never imports
        for runner in (DECLARED_RUNNER, "workbench.release.runtime.cli"):
            found.update(closure(runner, allowed_imports(module)))
    return found, packages(found)


def write(kind: Kind, dataset: str | None, folder: Path, kind_code: dict | None = None) -> str | None:
    """Write the standalone evaluator of a `kind` release pinned to `dataset` (ORG/NAME@vX.Y.Z,
    None when unpublished) into `folder`: evaluator/ and evaluate.py, which records `kind_code`
    (the kind's package, version and code hash) in its JSON. Returns the evaluator's version, or
    None (nothing written) when the kind has none."""
    if not has_standalone(kind):
        return None
    found, markers = evaluator_files(kind)
    files = {f"{FOLDER}/{m.relative}": m.path.read_bytes() for m in found.values()}
    files.update({f"{FOLDER}/{p.replace('.', '/')}/__init__.py": b"" for p in markers})
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path}\0{len(files[path])}\0".encode())
        digest.update(files[path])
    version = f"{__version__}+{digest.hexdigest()[:12]}"
    for path, data in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (folder / "evaluate.py").write_text(launcher(kind, dataset, version, kind_code), encoding="utf-8")
    return version


def _doc(text: str) -> str:
    """Text safe inside the launcher's docstring."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def launcher(kind: Kind, dataset: str | None, version: str, kind_code: dict | None = None) -> str:
    """The release's evaluate.py: a docstring saying what it scores and how to run it, and the
    few lines that run the kind's standalone module from evaluator/."""
    name = _module_of(kind)
    module = _load(kind)
    package, _, leaf = name.rpartition(".")
    pinned = (
        f"{dataset} (the Hub tag of this release)"
        if dataset
        else "nothing on the Hub (the release had no repository when it was built)"
    )
    doc = (
        headline(kind.name, module.TITLE, dataset)
        + f"""

It scores {getattr(module, "SCORES", SCORES)} on this release with exactly the measures of `workbench evaluate`:
{module.MEASURES}
It runs workbench's own code: the modules `workbench evaluate` uses for this were copied, file
for file, from workbench {__version__} into evaluator/ beside this script when the release was
built, so workbench itself is not needed (evaluator/ is; keep the two together).

Pinned to: {pinned}
Data: the files beside this script ({module.DATA}, checked against manifest.json's sha256
first; a changed or cut file is refused, not scored). Without manifest.json beside it, the
script downloads the pinned revision from the Hub (needs `huggingface_hub`).

How to run:

    pip install {requirements(module)}
    {getattr(module, "COMMAND", COMMAND)}
    python evaluate.py --model MODEL_A --model ./local-checkpoint --device cpu{getattr(module, "EXAMPLE", "")}
    python evaluate.py --model BIG-MODEL --dtype bfloat16 --device-map auto --max-memory 0=20GiB,cpu=64GiB

{getattr(module, "MODEL_NOTE", MODEL_NOTE)} The JSON is the one `workbench evaluate RELEASE --model MODEL
--json OUT` writes, plus `provenance`: the dataset's commit (or folder), each model's revision,
this evaluator's version and the kind's package, version and code hash (`kind_code`). Exit codes: 0 scored, 2 refused (data not matching the manifest,
a model that cannot be used, a bad option)."""
    )
    tops = sorted({"workbench", name.split(".")[0]})
    declared = _declared(module)
    declared_import = f"\n        from {DECLARED_RUNNER} import standalone_of" if declared else ""
    runs = "standalone_of(kind_module)" if declared else "kind_module"
    text = f'''#!/usr/bin/env python3
"""{_doc(doc)}
"""
import sys
from pathlib import Path

KIND = {kind.name!r}
DATASET = {dataset!r}  # ORG/NAME@vX.Y.Z on the Hub, or None when the release was not published
EVALUATOR_VERSION = {version!r}  # workbench's version + a hash of the files in evaluator/
KIND_CODE = {kind_code!r}  # the kind's package, version and code hash when the release was built
HERE = Path(__file__).resolve().parent
CODE = HERE / "{FOLDER}"  # the modules of `workbench evaluate` this script runs, copied by the build


def fail(message: str) -> None:
    print(f"evaluate.py: error: {{message}}", file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    if not (CODE / {name.replace(".", "/") + ".py"!r}).is_file():
        fail(f"{{CODE}} is missing: it holds the code this script runs; download it with evaluate.py")
    if any(name in sys.modules for name in {tuple(tops)!r}):
        fail("workbench is already imported in this Python process; run the script on its own: python evaluate.py ...")
    sys.dont_write_bytecode = True  # the release's files stay as manifest.json lists them
    sys.path.insert(0, str(CODE))
    try:
        from {package} import {leaf} as kind_module
        from workbench.release.runtime.cli import main{declared_import}
    except ImportError as exc:  # a package the card's pip line installs is missing
        fail(f"{{exc}}; this script needs: pip install {requirements(module)}")

    sys.exit(main({runs}, kind=KIND, dataset=DATASET, here=HERE, version=EVALUATOR_VERSION, kind_code=KIND_CODE))
'''
    compile(text, "evaluate.py", "exec")
    return text
