"""The `sofa` benchmark kind: identity x stereotype probes, normalised perplexity, variance and delta disparity.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of kinds/authoring.py.
"""
from .. import Kind
from ..authoring import kind_fields
from .authoring import AUTHORING

KIND = Kind(
    name="sofa",
    description="SOFA: identity x stereotype probes, normalised perplexity, variance and delta disparity.",
    evaluator="workbench.kinds.sofa.evaluate",
    **kind_fields(AUTHORING),
)
