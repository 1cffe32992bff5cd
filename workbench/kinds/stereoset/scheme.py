"""What StereoSet's validators decide on each sentence: the association it makes with its target.

Stereotype, anti-stereotype and unrelated are the three options every CAT needs, so all three
keep a sentence (when enough validators agree with the writer: stages.py); incoherent never
does. Ids have no spaces, so they are also the values written to label files and to the
StereoSet JSON's `gold_label`.
"""

from __future__ import annotations

from ...core.labels import Choice, LabelScheme

GOLD = ("stereotype", "anti-stereotype", "unrelated")  # the options of a CAT, in StereoSet's spelling

SCHEME = LabelScheme(
    "stereoset",
    (
        Choice("stereotype", "stereotype", None, "1", "stereotype", kept=True),
        Choice("anti-stereotype", "anti-stereotype", None, "2", "anti-stereotype (its opposite)", kept=True),
        Choice("unrelated", "unrelated", None, "3", "unrelated (no association)", kept=True),
        Choice("incoherent", "incoherent", None, "4", "incoherent (not a sensible sentence)"),
    ),
    question="Given its context, does the sentence state a common stereotype about the target, its opposite, "
    "or something unrelated to the target (or is it incoherent)?",
)
