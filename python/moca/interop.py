"""Weights exchanged with PyTorch in the MAE/timm layout of the authors' MoCA models.

* :func:`export_pytorch` — a moca checkpoint as ``{'model': state_dict, 'moca': config}``
  (``torch.load(path, weights_only=True)`` reads it; :mod:`moca.torch_model` loads it with
  ``strict=True``). Written by the C++ library (``moca export`` does the same); no PyTorch needed.
* :func:`import_pytorch` — a ``.pth`` (a bare state dict or the authors' checkpoint dictionary
  ``{'model': ..., 'optimizer': ..., 'epoch': ..., 'args': ...}``) as a moca checkpoint every
  command accepts. The architecture is inferred from the shapes (src/moca/model/eval/interop.hpp).
* :func:`load_pth` — the safe reader behind it.

Loading never runs code from the file. :func:`load_pth` is a restricted unpickler in the manner
of PyTorch's ``weights_only`` loading, written here so that it behaves the same without PyTorch
and under PyTorch 1.13 and 2.x: the only globals it resolves are tensors' storages and rebuild
functions, ``collections.OrderedDict`` and ``argparse.Namespace`` (read as a plain dict, nothing
called); every other global is refused: what the file would build from it stays inert. Such a
refused global inside the weights makes
the whole file refused, naming the global; inside ``args``, ``optimizer`` or another entry that
entry is skipped with a note. The legacy (pre-1.6, non-zip) format is refused.

Command line: ``python3 -m moca.interop export CHECKPOINT OUT.pth`` and ``python3 -m moca.interop
import IN.pth OUT.pt --channel-names ... --sample-rate HZ`` (docs/interop.md).
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
import pickle
import sys
import zipfile
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core

__all__ = ["export_pytorch", "import_pytorch", "load_pth", "UnsafeFileError"]

PathLike = Union[str, os.PathLike]


class UnsafeFileError(ValueError):
    """A ``.pth`` whose weights cannot be loaded without running code from the file."""


def _need_torch_build(what: str) -> None:
    if not _core.with_torch:
        raise RuntimeError(f"moca.interop.{what} needs moca built with LibTorch "
                           "(-DMOCA_WITH_TORCH=ON)")


def export_pytorch(checkpoint: PathLike, path: PathLike) -> Dict[str, Any]:
    """Writes ``checkpoint`` (an MAE or a kept classifier) as a PyTorch file ``path``
    (atomically). Returns ``{'kind', 'probe', 'keys', 'notes'}``."""
    _need_torch_build("export_pytorch")
    return dict(_core.export_pytorch(os.fspath(checkpoint), os.fspath(path)))


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
    """Writes the model of a PyTorch file as a moca checkpoint ``out_checkpoint``.

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
    obj, notes = load_pth(path)
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
    e = sub.add_parser("export", help="moca checkpoint -> PyTorch .pth")
    e.add_argument("checkpoint")
    e.add_argument("out")
    i = sub.add_parser("import", help="PyTorch .pth -> moca checkpoint")
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
            r = export_pytorch(a.checkpoint, a.out)
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
