"""The modules a release's evaluator/ folder holds: the import closure of a kind's standalone
module, found from the source (nothing is imported), and checked.

Every import statement counts, at any depth (inside functions too), except those under
`if TYPE_CHECKING:` (they never run) and those in the body of a `try:` whose ImportError
handler carries on without the package (optional: it runs without it). An import of workbench, or of the kind's own top-level package (a plugin),
adds that module to the closure; `from package import name` adds the module `package.name`
when there is one, else the package's `__init__.py` (whose names are then used, so it is
copied too). Anything else must be the standard library or one of `allowed`; otherwise the
build stops with an error naming the module and the line of the import.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import WorkbenchError


class EvaluatorError(WorkbenchError):
    """A kind's standalone evaluator cannot be copied into a release (`workbench build` says why)."""


@dataclass(frozen=True)
class Module:
    name: str  # dotted, e.g. workbench.core.errors
    path: Path  # its source file
    package: bool  # the file is a package's __init__.py

    @property
    def relative(self) -> str:
        """Where it goes under evaluator/: its package path."""
        parts = self.name.split(".")
        return "/".join(parts) + ("/__init__.py" if self.package else ".py")


def locate(name: str) -> Module | None:
    """The source file of module `name`, found on disk under its top-level package (which is
    located without being imported); None when there is none."""
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        base = Path(root).joinpath(*rest)
        if (base / "__init__.py").is_file():
            return Module(name, base / "__init__.py", True)
        if rest and base.with_name(base.name + ".py").is_file():
            return Module(name, base.with_name(base.name + ".py"), False)
    return None


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def optional_import(node: ast.Try) -> bool:
    """A `try:` whose ImportError (or ModuleNotFoundError) handler carries on without raising: the
    imports of its body are optional. One that raises (a message saying what to install) marks
    a package the code needs, which counts as any import."""
    for handler in node.handlers:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        names = {getattr(k, "id", getattr(k, "attr", None)) for k in kinds}
        if {"ImportError", "ModuleNotFoundError"} & names and not any(isinstance(s, ast.Raise) for s in handler.body):
            return True
    return False


def import_nodes(tree: ast.AST):
    """Every import statement in `tree`, at any depth, but those under `if TYPE_CHECKING:` and
    the optional ones (`optional_import`)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _type_checking(child.test):
            for node in child.orelse:
                yield from import_nodes(ast.Module(body=[node], type_ignores=[]))
            continue
        if isinstance(child, ast.Try) and optional_import(child):
            for node in [*child.handlers, *child.orelse, *child.finalbody]:
                yield from import_nodes(ast.Module(body=[node], type_ignores=[]))
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        yield from import_nodes(child)


def targets(node: ast.Import | ast.ImportFrom, module: Module, local: set[str]) -> list[str]:
    """The absolute names of the modules an import statement reads (see the module docstring);
    a relative import that climbs out of the top-level package is returned as '..'."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module.name.split(".") if module.package else module.name.split(".")[:-1]
        if node.level - 1 >= len(package):
            return [".." * node.level + (node.module or "")]
        base = ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if base.split(".")[0] not in local:
        return [base]
    out = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        out.append(sub if alias.name != "*" and locate(sub) is not None else base)
    return out


def closure(start: str, allowed: set[str]) -> dict[str, Module]:
    """name -> Module for `start` and every module it imports from workbench or its own
    top-level package, transitively. An import of anything else but the standard library and
    `allowed` (top-level names) is an EvaluatorError naming each file and line."""
    local = {"workbench", start.split(".")[0]}
    found: dict[str, Module] = {}
    problems: list[str] = []
    todo = [(start, None)]
    while todo:
        name, where = todo.pop()
        if name in found:
            continue
        module = locate(name)
        if module is None:
            problems.append(
                f"{where}: imports {name}, which has no Python source file"
                if where
                else f"{name} has no Python source file"
            )
            continue
        found[name] = module
        try:
            tree = ast.parse(module.path.read_bytes(), str(module.path))
        except SyntaxError as exc:  # a module imported lazily, never run at build time: one line, not a traceback
            raise EvaluatorError(
                f"the standalone evaluator of {start} cannot be built: {module.path}:{exc.lineno}: "
                f"{exc.msg} (SyntaxError in {name})"
            ) from None
        for node in import_nodes(tree):
            at = f"{module.relative}:{node.lineno}"
            for target in targets(node, module, local):
                top = target.split(".")[0]
                if target.startswith(".."):
                    problems.append(f"{at}: a relative import above its top-level package")
                elif top in local:
                    todo.append((target, at))
                elif top != "__future__" and top not in sys.stdlib_module_names and top not in allowed:
                    problems.append(f"{at}: imports {target}")
    if problems:
        raise EvaluatorError(
            f"the standalone evaluator of {start} cannot be built: a release's evaluate.py may "
            f"import only the standard library, {', '.join(sorted(allowed))} and the modules copied "
            "with it; " + "; ".join(sorted(problems))
        )
    return dict(sorted(found.items()))


def packages(modules: dict[str, Module]) -> list[str]:
    """Every package above a module of the closure that the closure does not hold itself: each
    gets an empty `__init__.py` under evaluator/ (a marker: nothing imports from it)."""
    above = {".".join(name.split(".")[:i]) for name in modules for i in range(1, name.count(".") + 1)}
    return sorted(p for p in above if p not in modules)
