"""Stage `expand`: templates -> masked samples (BBNLI's expansion, masks kept; each sentence written
as the project's language writes it: agreement with a swapped group, spelling where a placeholder
meets a word, premises in sentence case). With `[expand] original = true` or `workbench expand
--original`: BBNLI's own expansion, string for string, as its published rows were made."""

from __future__ import annotations

from collections import Counter

from .... import languages
from ....core.stage import Output, Stage
from ..tables import expand_schema
from ....authoring.files import ReadsTemplateFiles


class Expand(ReadsTemplateFiles, Stage):
    name = "expand"
    format = 4  # 4: sentences written in the project's language (spelling where placeholders meet words, agreement)
    has_original = True

    def schema(self):
        return expand_schema()

    def original(self, ctx) -> bool:
        """BBNLI's own expansion: asked for on the command line or in [expand]."""
        from ..settings import expand_settings

        return bool(ctx.options.get("original")) or expand_settings(ctx.config).original

    def settings(self, ctx):
        if self.original(ctx):  # the language's rules are not used: changing them stales nothing
            return {**super().settings(ctx), "original": True}
        return {**super().settings(ctx), **languages.freshness(ctx.config)}

    def compute(self, ctx, inputs, reused) -> Output:
        from ..templates.expand import expand_all
        from ..templates.loader import load_templates_or_fail

        original = self.original(ctx)
        language = (
            None
            if original
            else languages.require(ctx.config.project.language, "expand (its spelling and agreement rules)")
        )
        templates, warnings = load_templates_or_fail([self.folder(ctx)])
        rows = expand_all(templates, language)
        import pyarrow as pa

        work = {"templates": len(templates), "warnings": len(warnings)}
        extra = {"expansion": "original" if original else "language"}  # the manifest says which rule made the rows
        return Output(pa.Table.from_pylist(rows, schema=expand_schema()), work, extra)

    def counts(self, ctx, table, inputs, work):
        kinds = table["kind"].to_pylist()
        n_masks = table["n_masks"].to_pylist()
        return {
            "templates": work["templates"],
            "samples": table.num_rows,
            "masked_samples": sum(1 for n in n_masks if n > 0),
            "by_kind": dict(Counter(kinds)),
            "warnings": work["warnings"],
        }


STAGE = Expand()
