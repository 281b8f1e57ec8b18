"""The base of every REST input serializer: unknown fields and unstorable text
are refused, naming the field, before any field is validated.

A field the API does not know is a 400, never silently ignored: a client that
sends ``{"version": "2"}`` believes it chose a version, and would otherwise run
the pinned one. Text the database cannot hold (NUL, lone surrogates) is refused
here, at the client's storage boundary (foundation/text_boundary.py).
"""

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _
from rest_framework import serializers

from foundation.text_boundary import UnstorableText, refuse_unstorable


class StrictSerializer(serializers.Serializer[Any]):
    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            errors: dict[str, list[str]] = {}
            for name in data:
                if name not in self.fields:
                    errors[str(name)] = [_("未知字段。")]
                    continue
                try:
                    refuse_unstorable(data[name])
                except UnstorableText:
                    errors[name] = [_("包含无法存储的字符（NUL 或孤立代理项）。")]
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)
