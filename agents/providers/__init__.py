"""Model providers behind one interface (see base.py).

``get_provider(config)`` returns the provider for an agent version's ``model``
config; ``validate_model_config(config)`` raises ModelConfigError (a ValueError)
naming the key path that is wrong.
"""

from typing import Any

from agents.providers.base import (
    AgentState,
    ModelConfigError,
    Provider,
    ProviderError,
    ToolCall,
    Turn,
)
from knowledge.retrieval import MAX_TOP_K

PROVIDERS = ("scripted", "extractive", "openai")


def get_provider(config: dict[str, Any]) -> Provider:
    """The provider for ``config``; ProviderError if the config is refused, so a
    version stored before a rule tightened fails its agent call, not the worker."""
    try:
        validate_model_config(config)
    except ModelConfigError as exc:
        raise ProviderError(f"invalid model config: {exc}") from None
    name = config["provider"]
    if name == "scripted":
        from agents.providers.scripted import ScriptedProvider

        return ScriptedProvider(config)
    if name == "extractive":
        from agents.providers.extractive import ExtractiveProvider

        return ExtractiveProvider(config)
    from agents.providers.openai import OpenAIProvider

    return OpenAIProvider(config)


def validate_model_config(config: Any) -> None:
    """The one model-config validator: the manifest, the admin form and
    ``get_provider`` (the engine) all call it. Raises ModelConfigError naming
    the key path inside the model mapping."""
    if not isinstance(config, dict):
        raise ModelConfigError("", "must be a mapping")
    name = config.get("provider")
    if name not in PROVIDERS:
        raise ModelConfigError("provider", f"must be one of {', '.join(PROVIDERS)}, got {name!r}")
    if name == "scripted":
        from agents.providers.scripted import validate_config as validate_scripted

        validate_scripted(config)
    elif name == "extractive":
        extra = sorted(str(k) for k in config if k not in ("provider", "topK"))
        if extra:
            raise ModelConfigError(extra[0], "is not a setting of the extractive provider")
        top_k = config.get("topK", 5)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or not 1 <= top_k <= MAX_TOP_K:
            raise ModelConfigError("topK", f"must be an integer between 1 and {MAX_TOP_K}")
    else:
        from agents.providers.openai import validate_config as validate_openai

        validate_openai(config)


__all__ = [
    "AgentState",
    "ModelConfigError",
    "Provider",
    "ProviderError",
    "ToolCall",
    "Turn",
    "get_provider",
    "validate_model_config",
]
