"""An independent re-implementation of BBNLI's own expansion, for comparison in tests.

It renders with Jinja2's NativeEnvironment (as BBNLI does), builds rows in BBNLI's order and
column set, and drops exact duplicate rows with pandas, keeping the first.
"""

from __future__ import annotations

import itertools
import json
from functools import lru_cache
from pathlib import Path

import pandas as pd
from jinja2.nativetypes import NativeEnvironment

COLUMNS = [
    "domain",
    "name",
    "id",
    "type",
    "premise",
    "hypothesis_type",
    "hypothesis",
    "question",
    "true_label",
    "bias_label",
    "reference",
]


_ENV = NativeEnvironment()


@lru_cache(maxsize=None)
def _compiled(text: str):
    return _ENV.from_string(text)


@lru_cache(maxsize=None)
def expand_file(path: Path) -> pd.DataFrame:
    src = json.loads(path.read_text(encoding="utf-8"))
    keys = list(src["data"])
    rows = []

    def render(text, values):
        return str(_compiled(text).render(**values))

    for index, premise in enumerate(src["premise"]):
        for combo in itertools.product(*(src["data"][k] for k in keys)):
            values = dict(zip(keys, combo))
            for stance, g1, g2 in (
                ("pro", src["GROUP1"][0], src["GROUP2"][0]),
                ("anti", src["GROUP2"][0], src["GROUP1"][0]),
            ):
                values["GROUP1"], values["GROUP2"] = g1, g2
                p = render(premise, values)
                for i, (text, label) in enumerate(src["test_hypothesis"]):
                    q = render(src["test_question"][i][0], values)
                    rows.append(
                        [
                            src["domain"],
                            src["name"],
                            index,
                            stance,
                            p,
                            "test",
                            render(text, values),
                            q,
                            label,
                            -1,
                            src["reference"][index],
                        ]
                    )
                kind = "stereotypical" if stance == "pro" else "anti-stereotypical"
                for i, (text, label, bias) in enumerate(src["bias_hypothesis_stereotypical"]):
                    q = render(src["bias_question_stereotypical"][i][0], values)
                    rows.append(
                        [
                            src["domain"],
                            src["name"],
                            index,
                            stance,
                            p,
                            kind,
                            render(text, values),
                            q,
                            label,
                            bias,
                            src["reference"][index],
                        ]
                    )
    return pd.DataFrame(rows, columns=COLUMNS).drop_duplicates().reset_index(drop=True)
