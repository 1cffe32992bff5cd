"""Whether a renewal's licence is one the original's allows (docs/renewing.md).

A renewed benchmark is an adaptation of the published data, so the original's terms decide what it
may be released under: a ShareAlike licence (CC BY-SA, CC BY-NC-SA, and copyleft licences such as
the ODbL or the GPL) must be kept, NonCommercial stays non-commercial, and NoDerivatives allows no
adapted version at all (the original may still be shared as it is, under its own licence).
Permissive licences (CC BY, CC0, MIT, Apache ...) allow any licence; the card credits the original.
Licences are Hub licence ids (`cc-by-sa-4.0`); "CC BY-SA 4.0" is read as that id.
"""

from __future__ import annotations

import re

# No condition on the licence of adapted data (attribution is the card's "Original dataset" section).
PERMISSIVE = frozenset(
    {
        "cc0-1.0",
        "pddl",
        "unlicense",
        "mit",
        "apache-2.0",
        "bsd",
        "bsd-2-clause",
        "bsd-3-clause",
        "bsd-3-clause-clear",
        "isc",
        "odc-by",
        "cdla-permissive-1.0",
        "cdla-permissive-2.0",
        "artistic-2.0",
        "bsl-1.0",
        "zlib",
        "wtfpl",
        "afl-3.0",
        "ecl-2.0",
        "postgresql",
        "ncsa",
    }
)
# Copyleft licences other than Creative Commons': an adaptation keeps exactly the same licence.
COPYLEFT = frozenset(
    {
        "odbl",
        "cdla-sharing-1.0",
        "gpl",
        "gpl-2.0",
        "gpl-3.0",
        "agpl-3.0",
        "lgpl-2.1",
        "lgpl-3.0",
        "lgpl-lr",
        "gfdl",
        "mpl-2.0",
        "epl-1.0",
        "epl-2.0",
        "eupl-1.1",
        "osl-3.0",
    }
)
_CC = re.compile(r"cc-by(?P<nc>-nc)?(?:-(?P<cond>sa|nd))?-(?P<version>\d+(?:\.\d+)?)")


def normalised(licence: str | None) -> str:
    """A Hub licence id, lower case: "CC BY-SA 4.0" -> "cc-by-sa-4.0"."""
    return re.sub(r"[\s_]+", "-", (licence or "").strip().lower())


def _cc(licence: str):
    found = _CC.fullmatch(licence)
    return (bool(found["nc"]), found["cond"], float(found["version"])) if found else None


def known(licence: str) -> bool:
    return licence in PERMISSIVE or licence in COPYLEFT or _cc(licence) is not None


def refusal(original: str | None, renewed: str | None, *, as_published: bool) -> str | None:
    """Why a renewal may not be released under `renewed` ([project] license) given the original's
    licence, or None when it may (or the original's licence is not stated, or not one known here:
    `known` tells). `as_published`: the data is the original itself (build --original), shared as
    it is under its own licence; else it is an adaptation."""
    old, new = normalised(original), normalised(renewed)
    if not old or not known(old) or old in PERMISSIVE:
        return None
    cc = _cc(old)
    if cc and not cc[0] and cc[1] is None:  # CC BY: attribution only
        return None
    shown = f"the original is under {original}"
    fix = f'set [project] license = "{old}" in workbench.toml'
    if as_published:
        if new == old:
            return None
        return (
            f"licence: {shown}, and the data as published is shared under that licence only, not "
            f"{renewed or 'none'}: {fix}"
        )
    if cc and cc[1] == "nd":
        return (
            f"licence: {shown} (NoDerivatives): a renewed version may not be released at all, under {renewed or 'any licence'} "
            f"or another; only the data as published can be (`build --original`, under {original})"
        )
    if cc and cc[1] == "sa":
        mine = _cc(new)
        if mine and mine[:2] == cc[:2] and mine[2] >= cc[2]:
            return None
        return (
            f"licence: {shown} (ShareAlike): the renewed data must be released under it (or a later version "
            f"of it), not {renewed or 'none'}: {fix}"
        )
    if cc and cc[0]:  # NonCommercial: the renewal stays non-commercial
        mine = _cc(new)
        if mine and mine[0]:
            return None
        return (
            f"licence: {shown} (NonCommercial): the renewed data must keep a non-commercial licence "
            f"(such as cc-by-nc-4.0), not {renewed or 'none'}: {fix}"
        )
    if new == old:  # a copyleft licence: the same one
        return None
    return (
        f"licence: {shown} (copyleft): the renewed data must be released under it too, not {renewed or 'none'}: {fix}"
    )
