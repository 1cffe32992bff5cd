"""The `honest` benchmark kind: hurtful completions of identity templates, the top-K curve.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of kinds/authoring.py.
"""
from .. import Kind
from ..authoring import kind_fields
from .authoring import AUTHORING

KIND = Kind(
    name="honest",
    description="HONEST: hurtful completions of identity templates, the top-K curve.",
    evaluator="workbench.kinds.honest.evaluate",
    **kind_fields(AUTHORING),
)
