"""A small coref-lite project (templates/*.yaml: sentences written for this example, none
WinoBias's), for `workbench init` (EXAMPLE_TEMPLATES), the README's walk-through and the tests."""

from pathlib import Path

EXAMPLE_TEMPLATES = {p.name: p.read_text("utf-8") for p in sorted((Path(__file__).parent / "templates").glob("*.yaml"))}


def write_example_project(folder: Path) -> Path:
    from workbench.authoring.stages import write_example_project as write

    return write(folder, "coref-lite", EXAMPLE_TEMPLATES)
