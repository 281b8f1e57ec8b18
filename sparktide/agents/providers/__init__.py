"""Model providers behind one interface (see base.py).

``get_provider(config)`` returns the provider for an agent version's ``model``
config; ``validate_model_config(config)`` raises ValueError with a clear message.
"""

from sparktide.agents.providers.base import (
    AgentState,
    Provider,
    ProviderError,
    ToolCall,
    Turn,
)

PROVIDERS = ("scripted", "extractive", "openai")


def get_provider(config: dict) -> Provider:
    name = config.get("provider")
    if name == "scripted":
        from sparktide.agents.providers.scripted import ScriptedProvider

        return ScriptedProvider(config)
    if name == "extractive":
        from sparktide.agents.providers.extractive import ExtractiveProvider

        return ExtractiveProvider(config)
    if name == "openai":
        from sparktide.agents.providers.openai import OpenAIProvider

        return OpenAIProvider(config)
    raise ProviderError(f"unknown model provider {name!r}")


def validate_model_config(config: dict) -> None:
    """Raise ValueError naming what is wrong with a model config."""
    if not isinstance(config, dict):
        raise ValueError("model must be a mapping")
    name = config.get("provider")
    if name not in PROVIDERS:
        raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, got {name!r}")
    if name == "scripted":
        from sparktide.agents.providers.scripted import validate_steps

        validate_steps(config.get("steps"))
    elif name == "openai":
        from sparktide.agents.providers.openai import validate_config

        validate_config(config)


__all__ = [
    "AgentState",
    "Provider",
    "ProviderError",
    "ToolCall",
    "Turn",
    "get_provider",
    "validate_model_config",
]
