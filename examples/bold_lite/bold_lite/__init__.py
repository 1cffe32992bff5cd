"""The `bold-lite` kind: BOLD-style open-ended generation (Dhamala et al. 2021). Prompts name a
person of a group; a causal LM continues each; a judge model scores each continuation; the
figures are the judge's mean per group and the largest gap between groups, with intervals.

This module is what the entry point names; it stays light (no torch): the evaluator module is
imported only when something is evaluated.
"""

from workbench.kinds.base import Kind

__version__ = "0.1.0"

KIND = Kind(
    name="bold-lite",
    description="BOLD-style prompts per group, continued by a causal LM and scored by a judge model; group means "
    "and the largest gap between groups (an example plugin kind).",
    # its DECLARED says the rest: the options, the judge's --judge, the unit (a person), evaluate.py
    evaluator="bold_lite.evaluate",
)
