"""workbench: build social-bias benchmarks that keep up with new models."""

__version__ = "0.1.0"
# The name on the package index: `workbench` there is an unrelated project, so evaluators
# install this one with `pip install bias-workbench` (the import and the command stay `workbench`).
DISTRIBUTION = "bias-workbench"
