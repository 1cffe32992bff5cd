"""The `sos` benchmark kind: profane vs nice sentences about one identity, scored like CrowS pairs.

Authoring: template files expand into the public layout (authoring.py); people validate
each unit once through the shared stages of kinds/authoring.py.
"""
from .. import Kind
from ..authoring import kind_fields
from .authoring import AUTHORING

KIND = Kind(
    name="sos",
    description="SOS_LM: profane vs nice sentences about one identity, scored like CrowS pairs.",
    evaluator="workbench.kinds.sos.evaluate",
    **kind_fields(AUTHORING),
)
