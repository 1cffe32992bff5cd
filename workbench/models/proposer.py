"""The masked LM that proposes words, as the stages that use it see it (any kind's stage that
fills masks with it): `[generate]` with the command line's overrides,
the model's fingerprint as the stage's external input, and the model loaded only when some
fill is not cached. `[generate] proposers` names several models, masked LMs and LLMs
(llm_proposer.py), for the stages that take them (`takes_proposers`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import ModelError, StageError

_LLM_SETTINGS = ("proposers", "llm_prompt", "llm_chat_template")


@dataclass
class Proposer:
    """One model of `[generate] proposers`: its name as written there, "masked" or "llm", the
    resolved checkpoint (None for a served model) and, for an LLM, how it is asked (`llm`)."""

    name: str
    kind: str
    ref: object
    llm: object = None


class UsesProposalModel:
    """Mixin for a stage that proposes words with the `[generate]` masked LM (or, where
    `takes_proposers`, with each model of `[generate] proposers`)."""

    takes_proposers = False

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

        dumped = self.section(ctx).model_dump(mode="json")
        if dumped.get("proposers") is None:  # `model` alone: the settings as they were before proposers
            dumped = {k: v for k, v in dumped.items() if k not in _LLM_SETTINGS}
        return {**dumped, **languages.freshness(ctx.config)}

    def external_inputs(self, ctx):
        from .loading import fingerprint

        gen = self.section(ctx)
        names = gen.proposers or [gen.model]
        return {f"model:{n}": fingerprint(n, gen.revision if n == gen.model else None, ctx.config.root) for n in names}

    def model_ref(self, ctx, gen):
        """The resolved model; an error names `generate.model` in workbench.toml when it came from there."""
        from .loading import resolve

        if gen.proposers is not None and not self.takes_proposers:  # said, not ignored
            raise StageError(
                f"{ctx.config.at('generate.proposers')}: the {self.name} stage proposes with generate.model "
                "alone; remove generate.proposers"
            )
        try:
            return resolve(gen.model, gen.revision, root=ctx.config.root)
        except ModelError as exc:
            from_config = ctx.options.get("model") is None
            raise ModelError(f"{ctx.config.at('generate.model')}: {exc}" if from_config else str(exc)) from None

    def proposers(self, ctx, gen) -> list[Proposer]:
        """The models that propose, resolved before any weight loads: `[generate] model` alone, or
        each of `[generate] proposers` (an error names the entry in workbench.toml)."""
        if gen.proposers is None:
            return [Proposer(gen.model, "masked", self.model_ref(ctx, gen))]
        if ctx.options.get("model") is not None:
            raise StageError(
                f"--model names the one masked LM, but {ctx.config.at('generate.proposers')} lists the models "
                "that propose: edit that list, or remove it to use --model"
            )
        seen: set[str] = set()
        out = []
        for i, name in enumerate(gen.proposers):
            where = ctx.config.at(f"generate.proposers[{i}]")
            if name in seen:
                raise StageError(f"{where}: {name!r} is listed twice")
            seen.add(name)
            try:
                out.append(_proposer(name, gen, ctx.config.root))
            except ModelError as exc:
                raise ModelError(f"{where}: {exc}") from None
        return out


def _proposer(name: str, gen, root) -> Proposer:
    """A masked LM (proposing its top-k fills) or an LLM (asked for top_k words), by the
    checkpoint's architecture; a served or vLLM name is an LLM."""
    from .llm_proposer import PROMPT, Asking, LLMProposer
    from .loading import resolve
    from .runtime import section_spec
    from .served import is_served

    asking = Asking(gen.llm_prompt or PROMPT, gen.llm_chat_template)
    if is_served(name):
        return Proposer(name, "llm", None, LLMProposer(name, None, section_spec(gen), asking))
    ref = resolve(name, gen.revision if name == gen.model else None, root=root)
    if _lm_kind(ref) == "masked":
        return Proposer(name, "masked", ref)
    return Proposer(name, "llm", ref, LLMProposer(name, ref, section_spec(gen), asking))


def _lm_kind(ref) -> str:
    """ "masked" or "causal", from the checkpoint's config alone; anything else is refused in one line."""
    from transformers import AutoConfig

    from .lm_scoring import lm_kind
    from .loading import FIXTURE_HINT

    revision = None if ref.revision.startswith("sha256:") else ref.revision
    try:
        config = AutoConfig.from_pretrained(ref.location, revision=revision)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelError(f"cannot read the config of {ref.name!r}: {exc}; {FIXTURE_HINT}") from None
    return lm_kind(config, ref.name)


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
