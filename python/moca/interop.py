"""Weights exchanged with PyTorch in the MAE/timm layout of the authors' MoCA models.

* :func:`export_pytorch` — a moca checkpoint as ``{'model': state_dict, 'moca': config}``
  (``torch.load(path, weights_only=True)`` reads it; :mod:`moca.torch_model` loads it with
  ``strict=True``). Written by the C++ library (``moca export`` does the same); no PyTorch needed.
* :func:`import_pytorch` — a ``.pth`` (a bare state dict or the authors' checkpoint dictionary
  ``{'model': ..., 'optimizer': ..., 'epoch': ..., 'args': ...}``) as a moca checkpoint every
  command accepts. The architecture is inferred from the shapes (src/moca/model/eval/interop.hpp).
* :func:`load_pth` — the safe reader behind it.
* :func:`load_safetensors`, :func:`save_safetensors` — the safetensors format (Hugging Face's: a
  JSON header, a string map of metadata, raw little-endian tensors; no pickle) with NumPy alone,
  checked as the C++ reader checks it (src/moca/common/safetensors.hpp). ``export_pytorch`` writes
  it for a path ending in ``.safetensors`` and ``import_pytorch`` reads it, told apart from a
  ``.pth`` by its first bytes.

Loading never runs code from the file. :func:`load_pth` is a restricted unpickler in the manner
of PyTorch's ``weights_only`` loading, written here so that it behaves the same without PyTorch
and under PyTorch 1.13 and 2.x: the only globals it resolves are tensors' storages and rebuild
functions, ``collections.OrderedDict`` and ``argparse.Namespace`` (read as a plain dict, nothing
called); every other global is refused: what the file would build from it stays inert. Such a
refused global inside the weights makes
the whole file refused, naming the global; inside ``args``, ``optimizer`` or another entry that
entry is skipped with a note. The legacy (pre-1.6, non-zip) format is refused.

Command line: ``python3 -m moca.interop export CHECKPOINT OUT.pth`` (or ``OUT.safetensors``) and
``python3 -m moca.interop import IN.pth OUT.pt --channel-names ... --sample-rate HZ``
(docs/interop.md).
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
import pickle
import struct
import sys
import tempfile
import zipfile
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

__all__ = ["export_pytorch", "import_pytorch", "load_pth", "load_safetensors", "save_safetensors",
           "UnsafeFileError"]

PathLike = Union[str, os.PathLike]


class UnsafeFileError(ValueError):
    """A ``.pth`` whose weights cannot be loaded without running code from the file."""


def _need_torch_build(what: str) -> None:
    if not _core.with_torch:
        raise RuntimeError(f"moca.interop.{what} needs moca built with LibTorch "
                           "(-DMOCA_WITH_TORCH=ON)")


def export_pytorch(checkpoint: PathLike, path: PathLike, format: str = "auto") -> Dict[str, Any]:
    """Writes ``checkpoint`` (an MAE or a kept classifier) as PyTorch weights ``path``
    (atomically): ``format`` ``"pth"`` (a torch.save file), ``"safetensors"``, or ``"auto"``
    (safetensors for a name ending in ``.safetensors``, else pth). Returns ``{'kind', 'probe',
    'keys', 'notes', 'format'}``."""
    _need_torch_build("export_pytorch")
    return dict(_core.export_pytorch(os.fspath(checkpoint), os.fspath(path), format))


# --- safetensors ------------------------------------------------------------------------------

#: The largest header read (bytes): the package's own bound (MAX_HEADER_SIZE).
SAFETENSORS_MAX_HEADER = 100_000_000
#: The ``moca_format`` metadata value of moca's safetensors exports.
SAFETENSORS_EXPORT_FORMAT = "moca-safetensors-1"

_ST_DTYPES: Dict[str, Any] = {
    "BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": "<i2", "U16": "<u2", "F16": "<f2",
    "BF16": "bfloat16", "I32": "<i4", "U32": "<u4", "F32": "<f4", "F64": "<f8", "I64": "<i8",
    "U64": "<u8", "F8_E5M2": np.uint8, "F8_E4M3": np.uint8,
}
_ST_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
             "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "F64": 8, "I64": 8, "U64": 8}
_NP_TO_ST = {np.dtype(np.bool_): "BOOL", np.dtype(np.uint8): "U8", np.dtype(np.int8): "I8",
             np.dtype("<i2"): "I16", np.dtype("<u2"): "U16", np.dtype("<f2"): "F16",
             np.dtype("<i4"): "I32", np.dtype("<u4"): "U32", np.dtype("<f4"): "F32",
             np.dtype("<f8"): "F64", np.dtype("<i8"): "I64", np.dtype("<u8"): "U64"}


def _is_safetensors(path: str) -> bool:
    """A safetensors header at the start of ``path``: the size within the file and ``{``."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(9)
    except OSError:
        return False
    if len(head) < 9:
        return False
    n = struct.unpack("<Q", head[:8])[0]
    return n <= SAFETENSORS_MAX_HEADER and n <= size - 8 and head[8:9] == b"{"


def _no_repeated_keys(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    seen: Dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError(f"key '{k}' twice in the header")
        seen[k] = v
    return seen


def load_safetensors(path: PathLike) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """Reads a safetensors file with NumPy: ``(tensors, metadata)``, tensors by name in the
    order of their offsets (BF16 as float32, the 8-bit floats as their raw bytes; the arrays are
    writable views into one buffer read at once, copies where a tensor is unaligned). The header is
    checked as the C++ reader checks it (src/moca/common/safetensors.hpp): its size against the
    file and the 100 MB bound, JSON with no key twice, each entry exactly dtype/shape/
    data_offsets, the dtype known, the byte count against the offsets, and the offsets
    contiguous from 0 to the buffer's end (no overlap, no gap). ``ValueError`` names the tensor."""
    path = os.fspath(path)
    # One read into one buffer; the arrays are views into it (copied only where a foreign file
    # leaves a tensor unaligned), so reading costs one pass over the bytes.
    with open(path, "rb", buffering=0) as f:
        data = np.empty(os.fstat(f.fileno()).st_size, np.uint8)  # not zero-filled
        view, got = memoryview(data), 0
        while got < len(data):
            k = f.readinto(view[got:])
            if not k:
                break
            got += k
    if got != len(data):
        raise ValueError(f"{path}: read {got} of {len(data)} bytes (the file changed?)")
    if len(data) < 8:
        raise ValueError(f"{path}: {len(data)} bytes, too short for a safetensors file (8 bytes "
                         "of header size first)")
    n = struct.unpack("<Q", data[:8].tobytes())[0]
    if n > SAFETENSORS_MAX_HEADER:
        raise ValueError(f"{path}: header size {n} exceeds the bound of "
                         f"{SAFETENSORS_MAX_HEADER} bytes (not a safetensors file?)")
    if n > len(data) - 8:
        raise ValueError(f"{path}: header size {n} runs past the file's end ({len(data)} "
                         "bytes; truncated?)")
    if n < 2 or data[8] != ord("{"):
        raise ValueError(f"{path}: the header does not open with '{{' (not a safetensors file?)")
    try:
        header = json.loads(data[8:8 + n].tobytes().decode("utf-8"),
                            object_pairs_hook=_no_repeated_keys)
    except ValueError as e:
        raise ValueError(f"{path}: the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is not a JSON object")
    base = 8 + n
    buffer = memoryview(data)[base:]
    metadata: Dict[str, str] = {}
    entries = []
    for name, v in header.items():
        if name == "__metadata__":
            if not isinstance(v, dict):
                raise ValueError(f"{path}: __metadata__ is not an object")
            for k, text in v.items():
                if not isinstance(text, str):
                    raise ValueError(f"{path}: __metadata__ entry '{k}' is not text (the format "
                                     "maps strings to strings)")
                metadata[k] = text
            continue
        at = f"{path}: tensor '{name}'"
        if not isinstance(v, dict):
            raise ValueError(f"{at}: the entry is not an object")
        extra = set(v) - {"dtype", "shape", "data_offsets"}
        if extra:
            raise ValueError(f"{at}: unknown field '{sorted(extra)[0]}' (an entry holds dtype, "
                             "shape and data_offsets)")
        if set(v) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"{at}: the entry needs dtype, shape and data_offsets")
        dtype, shape, off = v["dtype"], v["shape"], v["data_offsets"]
        if not isinstance(dtype, str) or dtype not in _ST_SIZES:
            raise ValueError(f"{at}: unknown dtype '{dtype}' (one of {', '.join(_ST_SIZES)})")
        if not isinstance(shape, list) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ValueError(f"{at}: shape holds a value that is not a size (>= 0)")
        if (not isinstance(off, list) or len(off) != 2 or not all(
                isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in off)):
            raise ValueError(f"{at}: data_offsets is not [begin, end] of non-negative integers")
        begin, end = off
        if end < begin:
            raise ValueError(f"{at}: data_offsets [{begin}, {end}] end before they begin")
        if end > len(buffer):
            raise ValueError(f"{at}: data_offsets [{begin}, {end}] point outside the file (its "
                             f"buffer holds {len(buffer)} bytes)")
        need = _ST_SIZES[dtype] * int(np.prod(shape, dtype=object))
        if end - begin != need:
            raise ValueError(f"{at}: {dtype} of this shape needs {need} bytes, data_offsets give "
                             f"{end - begin}")
        entries.append((begin, end, name, dtype, tuple(shape)))
    entries.sort(key=lambda e: (e[0], e[1]))
    nxt, prev = 0, None
    for begin, end, name, _, _ in entries:
        if begin < nxt:
            raise ValueError(f"{path}: tensor '{name}': data_offsets [{begin}, {end}] overlap "
                             f"tensor '{prev[2]}' [{prev[0]}, {prev[1]}]")
        if begin > nxt:
            raise ValueError(f"{path}: tensor '{name}': data_offsets begin at {begin}, leaving "
                             f"bytes [{nxt}, {begin}) of the buffer to no tensor")
        nxt, prev = end, (begin, end, name)
    if nxt != len(buffer):
        raise ValueError(f"{path}: the tensors cover {nxt} of the buffer's {len(buffer)} bytes "
                         "(trailing bytes belong to no tensor)")
    tensors: Dict[str, np.ndarray] = {}
    for begin, end, name, dtype, shape in entries:
        if dtype == "BF16":
            arr = _bf16_to_f32(bytes(buffer[begin:end]))
        else:
            dt = np.dtype(_ST_DTYPES[dtype])
            if end == begin:
                arr = np.empty(0, dt)
            else:
                arr = np.frombuffer(data, dtype=dt, count=(end - begin) // dt.itemsize,
                                    offset=base + begin)
                if not arr.flags.aligned:
                    arr = arr.copy()
        tensors[name] = arr.reshape(shape)
    return tensors, metadata


def save_safetensors(path: PathLike, tensors: Mapping[str, np.ndarray],
                     metadata: Optional[Mapping[str, str]] = None) -> None:
    """Writes ``tensors`` (NumPy arrays of a dtype the format has; any byte order, any strides)
    and ``metadata`` (text to text) as a safetensors file, atomically: the buffer holds the
    tensors by decreasing value size (each aligned to it), in the given order within a size; the
    header is padded with spaces to a multiple of 8 bytes, as the package writes it."""
    path = os.fspath(path)
    items = []
    for name, a in tensors.items():
        if not isinstance(name, str) or not name or name == "__metadata__":
            raise ValueError(f"save_safetensors: tensor name {name!r} is empty or reserved")
        a = np.asarray(a)
        st = _NP_TO_ST.get(a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype)
        if st is None:
            raise ValueError(f"save_safetensors: tensor '{name}' has dtype {a.dtype}, which the "
                             "format does not have")
        items.append((name, st, a))
    for k, v in (metadata or {}).items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise ValueError(f"save_safetensors: metadata {k!r}: {v!r} is not text to text")
    items.sort(key=lambda t: -_ST_SIZES[t[1]])  # stable
    header: Dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = dict(metadata)
    chunks, offset = [], 0
    for name, st, a in items:
        raw = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": st, "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(struct.pack("<Q", len(text)))
            f.write(text)
            for c in chunks:
                f.write(c)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _load_weights(path: str) -> Tuple[Any, List[str]]:
    """A weights file in either format as :func:`load_pth` returns it: a safetensors file as its
    tensors, or, for a moca export, as ``{'model': tensors, 'moca': record}``."""
    if not _is_safetensors(path):
        return load_pth(path)
    tensors, meta = load_safetensors(path)
    if meta.get("moca_format") != SAFETENSORS_EXPORT_FORMAT:
        return tensors, []
    record: Dict[str, Any] = {}
    for key, text in meta.items():
        if key in ("channel_names", "class_names", "input_channels"):
            try:
                value = json.loads(text)
            except ValueError:
                value = None
            if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
                raise ValueError(f"{path}: metadata '{key}' is not a JSON list of text")
            record[key] = value
        else:
            record[key] = text
    return {"model": tensors, "moca": record}, []


# --- the safe reader -------------------------------------------------------------------------

_STORAGE_DTYPES = {
    "FloatStorage": np.float32, "DoubleStorage": np.float64, "HalfStorage": np.float16,
    "BFloat16Storage": "bfloat16", "LongStorage": np.int64, "IntStorage": np.int32,
    "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
    "BoolStorage": np.bool_,
}


class _StorageType:
    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = _STORAGE_DTYPES[name]


class _RefusedGlobal:
    """An instance stands where the file would have called a refused global: building it runs
    nothing, and load_pth reports where it stands."""
    origin = "?"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        pass

    def __repr__(self) -> str:
        return f"<refused {self.origin}>"


def _refused_global(module: str, name: str) -> type:
    """A class standing for the global module.name, which the reader does not resolve."""
    return type("Refused", (_RefusedGlobal,), {"origin": f"{module}.{name}"})


class _Namespace(dict):
    """argparse.Namespace read as a dict of its attributes (nothing of argparse runs)."""

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, dict):
            self.update(state)


def _reconstructor(cls: Any, base: Any, state: Any = None) -> Any:
    """copyreg._reconstructor for the classes the reader itself provides; anything else is an
    refused global."""
    if isinstance(cls, type) and issubclass(cls, (_Namespace, _RefusedGlobal)):
        return cls()
    return _refused_global("copyreg", "_reconstructor")()


def _bf16_to_f32(raw: bytes) -> np.ndarray:
    u = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
    return u.view(np.float32)


def _rebuild_tensor(storage: Any, offset: int, size: Sequence[int], stride: Sequence[int],
                    *_rest: Any) -> np.ndarray:
    if not isinstance(storage, np.ndarray):
        return _refused_global("torch._utils", "_rebuild_tensor_v2")()
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if not size:
        return storage[offset:offset + 1].reshape(()).copy()
    need = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride) if n > 0)
    if any(n == 0 for n in size):
        return np.zeros(size, dtype=storage.dtype)
    if offset < 0 or need > storage.size or any(s < 0 for s in stride):
        raise UnsafeFileError(f"a tensor of shape {size} and strides {stride} does not fit its "
                              f"storage of {storage.size} elements")
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=[s * storage.itemsize for s in stride],
                                           writeable=False)
    return np.array(view)


def _rebuild_parameter(data: Any, *_rest: Any) -> Any:
    return data


_ALLOWED = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("argparse", "Namespace"): _Namespace,
    ("copyreg", "_reconstructor"): _reconstructor,
    ("builtins", "object"): object,
}


class _Reader(pickle.Unpickler):
    def __init__(self, data: bytes, archive: zipfile.ZipFile, prefix: str) -> None:
        super().__init__(io.BytesIO(data))
        self._archive = archive
        self._prefix = prefix
        self._storages: Dict[str, np.ndarray] = {}
        self.refused: List[str] = []

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(name)
        self.refused.append(f"{module}.{name}")
        return _refused_global(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise UnsafeFileError(f"unknown persistent id {pid!r:.80}")
        stype, key = pid[1], str(pid[2])
        if not isinstance(stype, _StorageType):
            raise UnsafeFileError(f"storage {key} has an unknown type")
        if key not in self._storages:
            try:
                raw = self._archive.read(f"{self._prefix}data/{key}")
            except KeyError:
                raise UnsafeFileError(f"storage {key} is missing from the archive") from None
            if stype.dtype == "bfloat16":
                arr = _bf16_to_f32(raw)
            else:
                arr = np.frombuffer(raw, dtype=np.dtype(stype.dtype).newbyteorder("<"))
            self._storages[key] = arr
        return self._storages[key]


def _find_refused(obj: Any, path: str, out: List[Tuple[str, str]]) -> None:
    if isinstance(obj, _RefusedGlobal):
        out.append((path, obj.origin))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _find_refused(v, f"{path}.{k}" if path else str(k), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _find_refused(v, f"{path}[{i}]", out)


def load_pth(path: PathLike) -> Tuple[Any, List[str]]:
    """Reads a ``torch.save`` file without running code from it. Returns ``(object, notes)``:
    tensors become NumPy arrays (bfloat16 as float32), dicts stay dicts.

    Raises ``UnsafeFileError`` when the file's weights need a global outside the allow-list
    (the message names it; nothing of it was called), ``ValueError`` for a file that is not a
    PyTorch zip archive (including the legacy pre-1.6 format)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if not zipfile.is_zipfile(path):
        raise ValueError(f"{path}: not a PyTorch zip archive (the legacy pre-1.6 torch.save "
                         "format is not read: re-save it with a current PyTorch)")
    with zipfile.ZipFile(path) as z:
        pkl = [n for n in z.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if len(pkl) != 1:
            raise ValueError(f"{path}: not a torch.save archive (no single */data.pkl)")
        prefix = pkl[0][: -len("data.pkl")]
        reader = _Reader(z.read(pkl[0]), z, prefix)
        try:
            obj = reader.load()
        except UnsafeFileError as e:
            raise UnsafeFileError(f"{path}: {e}") from None
        except Exception as e:  # malformed pickle: a clear error, never a crash
            raise ValueError(f"{path}: unreadable pickle ({type(e).__name__}: {e})") from None
    notes: List[str] = []
    found: List[Tuple[str, str]] = []
    _find_refused(obj, "", found)
    if isinstance(obj, dict) and found:
        weights_key = "model" if "model" in obj else None
        for where, origin in found:
            top = where.split(".")[0].split("[")[0]
            if weights_key is None or top == weights_key:
                raise UnsafeFileError(
                    f"{path}: refused: '{where or '<top>'}' needs {origin}, which loading would "
                    "have to call (code in the file); nothing was run")
        for top in sorted({w.split(".")[0].split("[")[0] for w, _ in found}):
            origins = sorted({o for w, o in found if w.split(".")[0].split("[")[0] == top})
            notes.append(f"entry '{top}' skipped: it needs {', '.join(origins)}, which is not "
                         "loaded from files (nothing was run)")
            del obj[top]
    elif found:
        raise UnsafeFileError(f"{path}: refused: the file needs {found[0][1]}, which loading "
                              "would have to call (code in the file); nothing was run")
    return obj, notes


# --- import ----------------------------------------------------------------------------------

def _state_dict(obj: Any, path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, Any],
                                               Dict[str, Any]]:
    """The weights, the authors' args (or {}) and a moca export's architecture (or {}) of a
    loaded .pth."""
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: holds a {type(obj).__name__}, not a state dict or a "
                         "checkpoint dictionary")
    args: Dict[str, Any] = {}
    exported: Dict[str, Any] = {}
    if "model" in obj and isinstance(obj["model"], dict):
        sd = obj["model"]
        if isinstance(obj.get("args"), dict):
            args = dict(obj["args"])
        info = obj.get("moca")
        if isinstance(info, dict) and isinstance(info.get("model"), str):
            exported = json.loads(info["model"])
    else:
        sd = obj
    out: Dict[str, np.ndarray] = {}
    for k, v in sd.items():
        if not isinstance(v, np.ndarray):
            raise ValueError(f"{path}: entry '{k}' of the weights is a {type(v).__name__}, "
                             "not a tensor")
        out[str(k)] = v
    return out, args, exported


def import_pytorch(path: PathLike, out_checkpoint: PathLike, *,
                   channel_names: Optional[Sequence[str]] = None,
                   sample_rate: Optional[float] = None,
                   class_names: Optional[Sequence[str]] = None,
                   input_channels: Optional[Sequence[str]] = None, kind: str = "auto",
                   num_heads: Optional[int] = None,
                   decoder_num_heads: Optional[int] = None) -> Dict[str, Any]:
    """Writes the model of a PyTorch weights file (a ``.pth`` or a safetensors file, told apart
    by their first bytes) as a moca checkpoint ``out_checkpoint``.

    ``channel_names`` (the model's C modalities in token-row order; the authors' UCI-HAR models
    have gyro_x, gyro_y, gyro_z, acc_x, acc_y, acc_z) and ``sample_rate`` (Hz of the training
    windows; 50 for theirs) cannot be read from weights and must be given, unless the file is a
    moca export: its record gives them (and ``class_names``, ``input_channels``), and a value
    given that contradicts the record is a ValueError naming the parameter. ``kind``: auto, mae or
    classifier (an error when the file holds the other). Heads: ``num_heads`` (default width/64)
    and ``decoder_num_heads`` (default width/32), as in every registered MAE/ViT config; the
    authors' ``args`` (``norm_pix_loss``, ``loss_type``) are used when they could be read.
    Returns ``{'kind', 'probe', 'keys', 'notes'}``; the notes say what was inferred or skipped.
    """
    _need_torch_build("import_pytorch")
    path = os.fspath(path)
    obj, notes = _load_weights(path)
    tensors, args, exported = _state_dict(obj, path)
    norm_pix = bool(args.get("norm_pix_loss", False))
    loss_scope = "masked" if args.get("loss_type") == "masked" else "all"
    if args:
        notes.append(f"args read: norm_pix_loss={norm_pix}, loss_type={loss_scope}")
    record = obj.get("moca") if isinstance(obj, dict) and exported else None
    if isinstance(record, dict):  # a moca export: what it records fills what was not given
        def recorded(given: Any, key: str, name: str) -> Any:
            value = record.get(key)
            if value is None or value == []:
                return given
            if key == "sample_rate_hz":
                value = float(value)  # recorded as text
                same = given is None or float(given) == value
            else:
                value = [str(v) for v in value]
                same = given is None or [str(v) for v in given] == value
            if not same:
                raise ValueError(f"{path}: {name}={given!r} contradicts the export's record "
                                 f"({value!r})")
            if given is None:
                notes.append(f"{name} from the export's record: {value}")
            return value
        channel_names = recorded(channel_names, "channel_names", "channel_names")
        sample_rate = recorded(sample_rate, "sample_rate_hz", "sample_rate")
        if record.get("kind") == "classifier":
            class_names = recorded(class_names, "class_names", "class_names")
            input_channels = recorded(input_channels, "input_channels", "input_channels")
    channel_names = list(channel_names or [])
    size = args.get("input_size")
    if exported:  # a moca export states its input size and heads; arguments win
        size = [exported.get("channels"), exported.get("length")]
        num_heads = num_heads or exported.get("num_heads")
        decoder_num_heads = decoder_num_heads or exported.get("decoder_num_heads")
        notes.append(f"heads {num_heads}/{decoder_num_heads} (the export's moca entry or given)")
    if isinstance(size, (list, tuple)) and len(size) == 2 and size[0] != len(channel_names):
        raise ValueError(f"{path}: the file's input_size {list(size)} says {size[0]} "
                         f"channels, channel_names has {len(channel_names)}")
    arrays = {k: np.require(v, np.float32, "C") for k, v in tensors.items()}  # keeps 0-d
    r = dict(_core.import_arrays(
        arrays, os.fspath(out_checkpoint), path,
        dict(kind=kind, channel_names=list(channel_names),
             input_channels=list(input_channels or []), class_names=list(class_names or []),
             sample_rate=float(sample_rate or 0.0), num_heads=int(num_heads or 0),
             decoder_num_heads=int(decoder_num_heads or 0), norm_pix_loss=norm_pix,
             loss_scope=loss_scope)))
    r["notes"] = notes + list(r["notes"])
    return r


# --- command line ----------------------------------------------------------------------------

def _names(text: str) -> List[str]:
    return [t for t in text.split(",") if t]


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python3 -m moca.interop",
                                description="exchange weights with PyTorch (docs/interop.md)")
    sub = p.add_subparsers(dest="command", required=True)
    e = sub.add_parser("export", help="moca checkpoint -> PyTorch .pth or .safetensors")
    e.add_argument("checkpoint")
    e.add_argument("out")
    e.add_argument("--format", default="auto", choices=["auto", "pth", "safetensors"],
                   help="auto: safetensors for a name ending in .safetensors, else pth")
    i = sub.add_parser("import", help="PyTorch .pth or .safetensors -> moca checkpoint")
    i.add_argument("pth")
    i.add_argument("out")
    i.add_argument("--channel-names", type=_names, default=None,
                   help="the model's modalities, comma-separated, in token-row order (required "
                   "unless the file is a moca export)")
    i.add_argument("--sample-rate", type=float, default=None,
                   help="Hz of the training windows (required unless the file is a moca export)")
    i.add_argument("--class-names", type=_names, default=None)
    i.add_argument("--input-channels", type=_names, default=None)
    i.add_argument("--kind", default="auto", choices=["auto", "mae", "classifier"])
    i.add_argument("--num-heads", type=int, default=None)
    i.add_argument("--decoder-num-heads", type=int, default=None)
    a = p.parse_args(argv)
    try:
        if a.command == "export":
            r = export_pytorch(a.checkpoint, a.out, a.format)
        else:
            r = import_pytorch(a.pth, a.out, channel_names=a.channel_names,
                               sample_rate=a.sample_rate, class_names=a.class_names,
                               input_channels=a.input_channels, kind=a.kind,
                               num_heads=a.num_heads, decoder_num_heads=a.decoder_num_heads)
    except (ValueError, TypeError) as err:
        print(f"moca.interop: {err}", file=sys.stderr)
        return 2
    except (RuntimeError, OSError) as err:
        print(f"moca.interop: {err}", file=sys.stderr)
        return 1
    for note in r["notes"]:
        print(f"moca.interop: {note}", file=sys.stderr)
    print(f"{a.command}: {r['kind']}{' (linear probe)' if r['probe'] else ''}, "
          f"{len(r['keys'])} tensors -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
