"""Reading hand-written YAML strictly: the one reader of the manifest (provisioning) and of
evaluation sets, each of which turns a ``StrictYamlError`` into its own error naming the file.

* duplicate mapping keys are refused (PyYAML keeps the last one silently);
* aliases (``*name``, ``<<: *name``) are refused: a billion-laughs file would otherwise be
  expanded by every walk over it and stored expanded;
* nesting deeper than ``MAX_YAML_DEPTH`` is refused while composing (PyYAML's composer recurses
  once per level), naming the key path;
* timestamps stay strings, so an impossible date (``2026-02-30``) is refused by the field's own
  parser at its key path instead of a ValueError inside PyYAML.
"""

from typing import Any

import yaml

MAX_YAML_DEPTH = 32
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class StrictYamlError(ValueError):
    """``path``: the key path (``questions[1]``), "" for the document; ``message``: why."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path or '(top level)'}: {message}")
        self.path, self.message = path, message


class _StrictLoader(yaml.SafeLoader):
    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self._path: list[str | int] = []

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
            raise StrictYamlError(
                _yaml_path(self._path, index),
                f"YAML aliases (*{event.anchor}) are not allowed, at line "
                f"{event.start_mark.line + 1}",
            )
        self._path.append(index)
        try:
            if len(self._path) > MAX_YAML_DEPTH:
                raise StrictYamlError(
                    _yaml_path(self._path[:-1], index),
                    f"nests deeper than {MAX_YAML_DEPTH} levels",
                )
            return super().compose_node(parent, index)
        finally:
            self._path.pop()


_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _yaml_path(stack: list[Any], index: Any = None) -> str:
    # compose_node's index: None for the root, an int in a sequence, the key
    # node in a mapping.
    path = ""
    for item in [*stack[1:], index] if stack else [index]:
        if item is None:
            continue
        if isinstance(item, int):
            path = f"{path}[{item}]"
        else:
            key = getattr(item, "value", item)
            path = f"{path}.{key}" if path else str(key)
    return path


def _construct_mapping(
    loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False
) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
        except TypeError:
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping key must be a plain value", key_node.start_mark
            )
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
# An explicit !!timestamp stays text too; the field's own parser checks it.
_StrictLoader.add_constructor(  # type: ignore[type-var]  # the stub's bound refuses a SafeLoader method
    _TIMESTAMP_TAG, yaml.SafeLoader.construct_scalar
)


def load_strict_yaml(text: str) -> Any:
    """The YAML document; a ``StrictYamlError`` for what the rules above refuse and for
    invalid YAML (``invalid YAML at line L, column C: …``, path "")."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise StrictYamlError("", f"invalid YAML{where}: {problem}")
