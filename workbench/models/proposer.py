"""The masked LM that proposes words, as the stages that use it see it (any kind's stage that
fills masks with it): `[generate]` with the command line's overrides,
the model's fingerprint as the stage's external input, and the model loaded only when some
fill is not cached."""

from __future__ import annotations

from ..core.errors import ModelError, StageError


class UsesProposalModel:
    """Mixin for a stage that proposes words with the `[generate]` masked LM."""

    def section(self, ctx):
        """[generate] with the command line's overrides (--model, --top-k)."""
        gen = ctx.config.generate
        overrides = {k: ctx.options[k] for k in ("model", "top_k") if ctx.options.get(k) is not None}
        gen = gen.model_copy(update=overrides)
        if gen.top_k <= 0:
            raise StageError(f"top_k must be at least 1, not {gen.top_k}")
        return gen

    def settings(self, ctx):
        """[generate], and the project's language: the fills' filters follow its rules."""
        from .. import languages

        return {**self.section(ctx).model_dump(mode="json"), **languages.freshness(ctx.config)}

    def external_inputs(self, ctx):
        from .loading import fingerprint

        gen = self.section(ctx)
        return {f"model:{gen.model}": fingerprint(gen.model, gen.revision, ctx.config.root)}

    def model_ref(self, ctx, gen):
        """The resolved model; an error names `generate.model` in workbench.toml when it came from there."""
        from .loading import resolve

        try:
            return resolve(gen.model, gen.revision, root=ctx.config.root)
        except ModelError as exc:
            from_config = ctx.options.get("model") is None
            raise ModelError(f"{ctx.config.at('generate.model')}: {exc}" if from_config else str(exc)) from None


def cache_ref(ref, section):
    """`ref` with the revision the stage files its cached outputs under (runtime.keyed_revision):
    the section's precision, read from the config alone, before any weight loads."""
    import dataclasses

    from .loading import runtime_for
    from .runtime import keyed_revision, section_spec

    return dataclasses.replace(ref, revision=keyed_revision(ref, runtime_for(ref, "mlm", section_spec(section))))


class LazyMaskedLM:
    """The MaskedLM, loaded on the first call: a fully cached run never loads it."""

    def __init__(self, ref, gen):
        self.ref, self.gen, self.lm = ref, gen, None

    def __call__(self):
        if self.lm is None:
            from .loading import load
            from .mlm import MaskedLM
            from .runtime import section_spec

            tok, mdl, device = load(self.ref, "mlm", section_spec(self.gen))
            self.lm = MaskedLM(self.ref, tok, mdl, device, self.gen.batch_size)
        return self.lm

    @property
    def loaded(self) -> bool:
        return self.lm is not None
