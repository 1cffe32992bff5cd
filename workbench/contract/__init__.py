"""The layer below the shared packages: the kind contract (`kind.py`), the registry of installed
kinds (`registry.py`), the guarded loader of a kind's modules (`loader.py`) and the identity of a
kind's code (`code.py`). Shared code imports these and nothing of `workbench/kinds/`; it is handed
the `Kind` it works for by the command line."""
