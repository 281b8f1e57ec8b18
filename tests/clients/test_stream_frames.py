"""The Python client tells the live text's stream frames from event frames (docs/events.md)."""

import importlib.util
import json
from pathlib import Path

# This checkout's client module, whichever copy of the package the environment installed.
_PATH = Path(__file__).parents[2] / "clients/python/src/sparktide_client/_core.py"
_spec = importlib.util.spec_from_file_location("sparktide_client_core_here", _PATH)
assert _spec and _spec.loader
_core = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_core)


def test_a_stream_frame_is_recognised_and_an_event_frame_is_not():
    data = {"streamId": "stm_1_1", "offset": 0, "delta": "营收", "state": "streaming"}
    frame = json.dumps(
        {"kind": "stream", "type": "answer.stream", "data": data}, separators=(",", ":")
    )
    assert _core.stream_frame(frame) == {"kind": "stream", "type": "answer.stream", "data": data}
    event = json.dumps({"kind": "event", "seq": 1, "type": "answer.stream", "data": data})
    assert _core.stream_frame(event) is None
    assert _core.stream_frame('{"kind":"stream","data":"not an object"}') is None
