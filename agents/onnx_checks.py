"""What a bot file must be before onnxruntime reads it: at most ``MAX_BOT_FILE_MB``, and whole.

An ONNX graph may keep a tensor's bytes in another file ("external data": the tensor names a
``location``, read relative to the graph's folder). A bot file is not one of those: it is the
``.onnx`` and its manifest, and the manifest's ``onnx_sha256`` covers the ``.onnx`` alone
(docs/bot-format.md), so weights elsewhere would be unchecked. Worse, a location is any path:
``../grades.csv``, ``/etc/shadow``, a link out of the folder, another student's file beside it;
and which of them an onnxruntime follows depends on its version (recent ones refuse paths that
leave the folder, older ones read relative to the current folder). So every tensor of the graph
is read here first, its initializers, its nodes' attribute tensors, its subgraphs and functions
included, and a file that keeps any tensor's data outside itself is refused in one line naming
the tensor and the location, before onnxruntime sees it.

The protobuf is walked by its wire format, with the few field numbers of ``onnx.proto`` this
needs: the ``bots`` extra is onnxruntime alone, which brings no ONNX protobuf classes, and the
``onnx`` package (with its pinned protobuf) is not worth adding to read one field. A test checks
the walk against the ``onnx`` package's own reading (tests/agents/test_onnx_bot.py).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

# A bot file's cap, in megabytes: the shipped bots are well under 1 MB, a large policy network
# a few tens; a file over this is refused before it is read (onnxruntime would hold it all).
MAX_BOT_FILE_MB = 256
EXTERNAL = 1  # TensorProto.DataLocation.EXTERNAL

# onnx.proto's field numbers of the messages that hold tensors, and of the tensors' own fields
_MODEL = {7: "graph", 20: "training", 25: "function"}
_GRAPH = {1: "node", 5: "tensor", 15: "sparse"}
_NODE = {5: "attribute"}
_FUNCTION = {7: "node", 11: "attribute"}
_TRAINING = {1: "graph", 2: "graph"}
_ATTRIBUTE = {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse"}
_SPARSE = {1: "tensor", 2: "tensor"}
_KINDS = {
    "graph": _GRAPH,
    "node": _NODE,
    "function": _FUNCTION,
    "training": _TRAINING,
    "attribute": _ATTRIBUTE,
    "sparse": _SPARSE,
}
_TENSOR_NAME, _EXTERNAL_DATA, _DATA_LOCATION = 8, 13, 14
_MAX_DEPTH = 64  # subgraphs within subgraphs: deeper is no policy network


class BotFileError(ValueError):
    """A bot file that is corrupt, of an unknown format, or made for another game (raised by
    ``agents.onnx_bot``, which names it)."""


class NotOnnxError(ValueError):
    """Bytes that are not a protobuf message."""


def _varint(buf: memoryview, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise NotOnnxError("a truncated or overlong varint")
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _fields(buf: memoryview) -> Iterator[tuple[int, int | memoryview]]:
    """A message's fields: (number, value), a varint's value as an int, a length-delimited
    field's bytes as a view (no copy), fixed-size fields skipped as their bytes."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, value
            continue
        if wire == 2:
            size, i = _varint(buf, i)
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
        else:
            raise NotOnnxError(f"protobuf wire type {wire}")
        if i + size > len(buf):
            raise NotOnnxError("a field runs past the end of the file")
        yield number, buf[i : i + size]
        i += size


def _text(view: int | memoryview) -> str:
    return bytes(view).decode("utf-8", "replace") if isinstance(view, memoryview) else ""


def _tensor(buf: memoryview) -> tuple[str, str] | None:
    """(name, location) of a tensor whose data is external (location '' when it names none)."""
    name, location, external = "", "", False
    for number, value in _fields(buf):
        if number == _TENSOR_NAME:
            name = _text(value)
        elif number == _DATA_LOCATION:
            external = external or value == EXTERNAL
        elif number == _EXTERNAL_DATA and isinstance(value, memoryview):
            external = True
            entry = dict(_fields(value))
            if _text(entry.get(1, b"")) == "location":
                location = _text(entry.get(2, b""))
    return (name, location) if external else None


def external_tensors(data: bytes) -> list[tuple[str, str]]:
    """Every tensor of an ONNX model whose data lies outside the model's bytes, as (tensor name,
    location); NotOnnxError for bytes that are not a protobuf message."""
    found: list[tuple[str, str]] = []
    todo: list[tuple[memoryview, dict[int, str], int]] = [(memoryview(data), _MODEL, 0)]
    while todo:
        buf, fields, depth = todo.pop()
        if depth > _MAX_DEPTH:
            raise NotOnnxError(f"graphs nested more than {_MAX_DEPTH} deep")
        for number, value in _fields(buf):
            kind = fields.get(number)
            if kind is None or not isinstance(value, memoryview):
                continue
            if kind == "tensor":
                tensor = _tensor(value)
                if tensor is not None:
                    found.append(tensor)
            else:
                todo.append((value, _KINDS[kind], depth + 1))
    return found


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:80] + "...")


def _where(location: str, folder: Path) -> str:
    """Where a location lies, as a refusal says it."""
    if not location:
        return "in a file it does not name"
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ":" in location[:3]:
        return f"in {_shown(location)}, an absolute path outside the bot file's folder"
    target = os.path.realpath(folder / location)
    root = os.path.realpath(folder)
    if ".." in Path(location).parts or os.path.commonpath([root, target]) != root:
        return f"in {_shown(location)}, outside the bot file's folder"
    return f"in {_shown(location)} beside it"


def read_bot_file(path: Path, sha256: str) -> bytes:
    """The bytes of the bot file at ``path``, which may be given to onnxruntime; BotFileError
    (one line naming the file) when they may not. Its size is checked before it is read, and its
    hash (the manifest's ``sha256``) before its tensors: a file that is not the one its manifest
    names is reported as that, whatever its bytes hold."""
    size = path.stat().st_size
    if size > MAX_BOT_FILE_MB * 1024 * 1024:
        raise BotFileError(
            f"{path}: the bot file holds {size / 1024 / 1024:.1f} MB, over the cap of "
            f"{MAX_BOT_FILE_MB} MB (agents.onnx_checks.MAX_BOT_FILE_MB)"
        )
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise BotFileError(f"{path}: the file does not match its manifest's onnx_sha256 (corrupt?)")
    try:
        external = external_tensors(data)
    except NotOnnxError as err:
        raise BotFileError(f"{path}: not an ONNX file ({err})") from None
    if external:
        name, where = external[0][0], _where(external[0][1], path.parent)
        raise BotFileError(
            f"{path}: tensor {_shown(name)} keeps its data {where}; a bot file holds its "
            "weights itself (save it without external data)"
        )
    return data
