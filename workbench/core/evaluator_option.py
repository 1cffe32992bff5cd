"""A command-line option of a kind's evaluator. It lives here, below everything, because both the
kind's contract (kinds/base.py) and a release's standalone evaluate.py (which copies the modules
it imports and must not carry the contract's) use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class EvaluatorOption:
    """A command-line option a kind's evaluator declares. `workbench evaluate` accepts it when
    that kind is evaluated (and lists it in --help); the value reaches the evaluator as
    `request.options[dest]`."""

    flag: str  # e.g. "--lexicon"
    help: str
    type: Callable[[str], Any] = str  # converts the text given on the command line
    default: Any = None
    choices: tuple[str, ...] = ()
    metavar: str = ""  # the placeholder --help and the release card show
    required: bool = False  # the evaluator cannot run without it (cards show it)

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")
