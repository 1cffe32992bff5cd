"""A stage every kind with a validation step can reuse: the queue's items whose final label
(under the configured policy and the kind's scheme) is one of the scheme's kept choices.

Its rows are the queue's columns plus `label` (the final choice id), so a kind whose release
is "the validated items" needs no stage of its own beyond expansion.
"""

from __future__ import annotations

from ..core.ids import file_sha256
from ..core.labels import LabelScheme
from ..core.stage import Output, Stage


def label_file_inputs(ctx) -> dict[str, str]:
    """Every annotator's label file by content hash: stages that read final labels depend on them."""
    folder = ctx.config.path("annotations")
    if not folder.is_dir():
        return {}
    return {f"annotations/{p.name}": file_sha256(p) for p in sorted(folder.glob("*.jsonl"))}


class Validated(Stage):
    name = "validated"

    def __init__(self, scheme: LabelScheme, queue_stage: str = "queue"):
        self.scheme = scheme
        self.upstream = (queue_stage,)

    def settings(self, ctx):
        return {
            "scheme": self.scheme.name,
            **{
                k: v
                for k, v in ctx.config.annotation.model_dump().items()
                if k in ("policy", "min_votes", "adjudicator")
            },
        }

    def external_inputs(self, ctx):
        return label_file_inputs(ctx)

    def compute(self, ctx, inputs, reused) -> Output:
        import pyarrow as pa

        from ..annotation.summary import final_labels_for

        queue = inputs[self.upstream[0]]
        labels = final_labels_for(ctx.config, queue["item_id"].to_pylist(), self.scheme)
        finals = [labels.finals[i] for i in queue["item_id"].to_pylist()]
        keep = pa.array([f.kept for f in finals])
        table = queue.filter(keep).append_column("label", pa.array([f.category for f in finals if f.kept], pa.string()))
        return Output(table, {"items": queue.num_rows, "kept": table.num_rows})

    def counts(self, ctx, table, inputs, work):
        return dict(work)
