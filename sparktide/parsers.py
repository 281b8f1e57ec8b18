"""The API's JSON parser: DRF's, with a nesting limit checked before decoding.

``json.loads`` recurses once per level, so 10,000 nested arrays end in a
``RecursionError`` (an HTTP 500) before DRF can say anything. No SparkTide body
nests deeper than a few levels; the limit is checked by one linear scan of the
raw bytes (strings skipped), so no depth of input costs any stack.
"""

import io
import re
from collections.abc import Mapping
from typing import IO, Any

from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 32

# A JSON string (escapes included) or one bracket; everything else is skipped.
# (The string is the unrolled-loop form: runs of plain bytes at C speed.)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_OPEN = frozenset(b"[{")


def json_depth_exceeds(raw: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    depth = 0
    for match in _TOKEN.finditer(raw):
        first = match.group()[0]
        if first in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif first != 0x22:  # a closing bracket, not a string
            depth -= 1
    return False


class BoundedJSONParser(JSONParser):
    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        raw = stream.read() if stream is not None else b""
        if json_depth_exceeds(raw):
            raise ParseError(_("JSON 嵌套超过 %(limit)d 层。") % {"limit": MAX_JSON_DEPTH})
        return super().parse(io.BytesIO(raw), media_type, parser_context)
