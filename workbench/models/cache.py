"""The model-output cache lives in core (core/cache.py); this name stays for callers."""

from ..core.cache import SCHEMA, Cache  # noqa: F401
