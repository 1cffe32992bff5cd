"""Loading a text classifier (a judge) in a standalone evaluate.py: the shared layer's
`open_classifier` (the one `workbench evaluate` loads with), without workbench's score cache
(no file is written beside a release) and with the model named as `models.model_ref` does.
"""

from __future__ import annotations

from ...core.errors import ModelError
from ...models.classify import open_classifier
from .models import model_ref
from .release import Refused


def load_classifier_standalone(name: str, spec, runtimes: dict):
    """A `TextClassifier` for `name`, loaded as the model options `spec` ask; how it runs is
    recorded in `runtimes[name]` (the JSON's `runtime`)."""
    ref = model_ref(name)
    try:
        classifier = open_classifier(ref, spec)
    except ModelError as exc:
        raise Refused(str(exc)) from None
    except ImportError:
        raise Refused("a judge needs torch and transformers (pip install torch transformers)") from None
    runtimes[name] = classifier.runtime
    return classifier
