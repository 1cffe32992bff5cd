"""The kind contract under the name plugins import (`workbench.kinds.base`). It is defined in
`workbench/contract/kind.py`, the layer below the shared packages, and re-exported here whole."""

from ..contract.kind import *  # noqa: F401,F403
