"""Data sets as NumPy arrays: the sources ``--data`` takes, and Algorithm 1's synthetic
transitions. Windows are ``X`` (N, C, L) float32, labels ``y`` (N,) and subject ids ``pid``
(N,) int32 (-1 = unknown), and ``meta`` (channel_names, class_names, subject_names,
sample_rate_hz, description)."""
from __future__ import annotations

import os
from typing import Any, Dict, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _core
from ._checks import (as_float_array, as_int_vector, check_float, check_int, check_seed,
                      document_keywords)

__all__ = ["Dataset", "load", "window_recordings", "synthetic_transitions", "GENERATOR",
           "MappedFolder", "open_stream", "write_shards"]

#: The spec of the built-in synthetic IMU generator (what the tools use without --data).
GENERATOR = "generator"


class Dataset(NamedTuple):
    """Windows and their labels; unpacks as ``X, y, pid, meta = moca.data.load(...)``."""
    X: np.ndarray
    y: np.ndarray
    pid: np.ndarray
    meta: Dict[str, Any]


def _dataset(d: Dict[str, Any]) -> Dataset:
    return Dataset(d["X"], d["y"], d["pid"], dict(d["meta"]))


def load(spec: Optional[Union[str, os.PathLike]] = None, *, rate: Optional[float] = None,
         length: Optional[int] = None, windows: Optional[int] = None,
         coupling: Optional[float] = None, seed: Optional[int] = None,
         **options: Any) -> Dataset:
    """Loads what the tools' ``--data`` takes, through the same library call they make
    (``moca::data::open_dataset``; rules in docs/data.md).

    ``spec``: ``"hapt:DIR"``, ``"hmp:DIR"``, ``"npy:DIR"``, ``"ucihar:DIR"``, ``"pamap2:DIR"``,
    ``"opportunity:DIR"``, ``"wisdm:DIR"``, ``"ts:FILE.ts"`` or ``"ts:DIR"`` (a UEA/UCR
    archive set's TRAIN/TEST pair), ``"generator[:windows=N,...]"`` or a
    bare folder whose format is detected from its contents (``data_format`` forces one);
    ``None`` is ``$MOCA_HAPT_DIR`` when set, else the generator (as the tools do).

    ``rate`` and ``length`` are the model's rate and window length. Left ``None``, a ``.npy``
    folder's windows come back as stored (no resampling, cropping or padding) and the other
    sources at 50 Hz and L = 200; give both (or either: the other takes 50 / 200) to get exactly
    what the programs see (band-limited resampling, centre crop / edge pad). ``windows``,
    ``coupling`` and ``seed`` set the generator (defaults 1000, 0.8 and 0).

    A keyword that takes no effect is a ``ValueError`` naming it, as the programs refuse the
    flag: the generator's three beside other data or beside the spec's key of the same name
    (``"generator:coupling=0.5"``), ``sample_rate``, ``npy_layout`` and ``labels`` beside data
    that is not a ``.npy`` folder, ``hapt_windowing`` beside data that is not HAPT.

    The other keywords are the tools' ``--data-*`` options (listed below with the flag each
    stands for; from ``data::DatasetOptions``' schema, the rows that make those flags); one left
    out, or None, is the flag's default. ``keep_classes`` and ``channel_names`` take sequences of
    names. A ``.npy`` folder without a stated rate (``sample_rate`` or meta.json) is an error
    when its windows must be resampled or segmented; kept as stored, it is labelled with
    ``rate``.

    ``meta`` holds channel/class/subject names, ``sample_rate_hz``, ``modalities`` (name →
    channel list), ``split`` (the data's own split, N strings ``"train"``/``"test"``: a ``.ts``
    pair's TRAIN and TEST files, a folder's split.npy; None when it states none), the resolved ``spec``, ``notes`` (every step that changed the data) and a
    one-line ``summary``. Raises ``ValueError`` for a malformed file or bad option (the
    library's messages, naming the keyword), ``TypeError`` for an unknown keyword or a value of
    the wrong type, and ``RuntimeError`` for a missing folder or file.
    """
    if spec is None:
        spec = ""
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"spec ({spec!r}) must be a path or a data spec string")
    keep = rate is None and length is None
    for key in ("keep_classes", "channel_names"):
        names = options.get(key)
        if names is None:
            continue
        if isinstance(names, str):
            raise TypeError(f"{key} must be a sequence of names, not a string")
        names = [str(c) for c in names]
        # --keep-classes is one comma-separated text in the library
        options[key] = ",".join(names) if key == "keep_classes" else names
    return _dataset(_core.open_dataset(
        os.fspath(spec), options,
        50.0 if rate is None else check_float(rate, "rate"),
        200 if length is None else check_int(length, "length"),
        keep, None if windows is None else check_int(windows, "windows"),
        None if coupling is None else check_float(coupling, "coupling"),
        None if seed is None else check_seed(seed, "seed")))


document_keywords(load, _core.dataset_options(), "data::DatasetOptions")


def window_recordings(source: Union[str, os.PathLike], **options: Any) -> Dataset:
    """Continuous labelled recordings cut into windows, as ``moca data window`` cuts them (the
    same library call, ``moca::data::RecordingSource``; rules in docs/data.md, "Continuous
    recordings"), returned in memory instead of written as a folder.

    ``source``: a folder of ``.csv``/``.csv.gz`` files (one per subject) or of one folder per
    subject, or a glob (``"raw/S*/imu.csv.gz"``: the subject is what the first wildcard
    component matches). ``sample_rate_hz`` is required (the recordings' rate; never assumed).

    The keywords are ``moca data window``'s flags (listed below with the flag each stands for;
    from ``data::RecordingWindowOptions``' schema): ``channels`` (a sequence of names),
    ``modalities`` (``"acc=ax,ay,az;gyro=gx,gy,gz"``), ``scale`` (``"acc=0.101972"``),
    ``missing`` (``"error"``, ``"drop"`` or ``"interpolate:SECONDS"``), ``label_map``
    (``"FILE[:COLUMN]"``), ``unmapped`` and the windowing's. ``meta["recordings"]`` holds what
    the folder's meta.json would: the files, scales, gap rule and the counts of gaps,
    interpolated rows and unmapped labels. Raises ``ValueError`` for bad options or data (naming
    the keyword, file, line and column), ``TypeError`` for an unknown keyword, ``RuntimeError``
    for a folder or file that cannot be read.
    """
    import json
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"source ({source!r}) must be a folder or a glob")
    names = options.get("channels")
    if isinstance(names, str):
        raise TypeError("channels must be a sequence of names, not a string")
    if names is not None:
        options["channels"] = [str(c) for c in names]
    d = _core.window_recordings(os.fspath(source), options)
    d["meta"]["recordings"] = json.loads(d["meta"]["recordings"])
    return _dataset(d)


document_keywords(window_recordings, _core.recording_options(),
                  "data::RecordingWindowOptions")


def synthetic_transitions(X: Any, y: Any, n: int, seed: int = 0,
                          pid: Optional[Any] = None) -> Dataset:
    """Algorithm 1 (paper): ``n`` synthetic transition windows, each a window x1 of ``X``
    (N >= 2, C, L) with a segment of 20-50% of L replaced by one of a window x2, as
    ``moca data --transitions`` makes them. x1 and x2 are drawn independently and uniformly
    from the N windows, as Algorithm 1 samples them: a pair may share its activity (the chance
    is the sum of the squared class shares), and x1 = x2 has chance 1/N. Labels (and ``pid``)
    are x1's. ``X`` is copied (float32). ``ValueError`` for N < 2 or n < 1."""
    X = as_float_array(X, "X", 3, np.float32)
    y = as_int_vector(y, "y", X.shape[0])
    p = None if pid is None else as_int_vector(pid, "pid", X.shape[0])
    return _dataset(_core.synthetic_transitions(X, y, p, check_int(n, "n"),
                                                check_seed(seed, "seed")))


#: A .npy folder read through memory maps a batch at a time (moca.data.open_stream).
MappedFolder = _core.MappedFolder


def open_stream(path: Union[str, os.PathLike], *, npy_layout: str = "auto") -> MappedFolder:
    """A .npy folder (one ``X.npy``, or shards ``X_000.npy``, ... with ``Y_k.npy`` and
    ``pid_k.npy``; float32 or float16, C order) opened through memory maps, as ``moca pretrain
    --stream`` reads it: nothing is read until asked. ``len(f)`` windows of ``f.channels`` x
    ``f.length``; ``f.read(rows)`` gives those windows as float32 (len(rows), C, L), widened from
    float16 where stored so; ``f.labels()`` the ``y``, ``pid`` and ``meta`` of every window;
    ``f.block_order(seed, block=64, pool=1024)`` one epoch's order under the block shuffle
    (docs/model.md); ``f.shards`` (path, windows, bytes) per file; ``f.check_unchanged()``
    raises when a file changed since opening. ``ValueError`` for a folder that disagrees with
    itself (shapes, dtypes, label counts, a truncated or Fortran-order file), naming the file;
    reading a window with NaN or Inf raises, naming its shard and row."""
    return _core.MappedFolder(os.fspath(path), npy_layout)


def write_shards(X: Any, y: Optional[Any] = None, pid: Optional[Any] = None, *,
                 out: Union[str, os.PathLike], shard_mb: float = 1024.0, float16: bool = False,
                 rate: float = 50.0, channel_names: Optional[Sequence[str]] = None) -> int:
    """Writes windows ``X`` (N, C, L) into the existing folder ``out`` as shards ``X_000.npy``,
    ... of at most ``shard_mb`` MiB (float16 when asked), with ``Y_k.npy`` and ``pid_k.npy``
    (``y``/``pid`` default to -1) and ``meta.json`` (sample rate ``rate``; ``channel_names``, C
    distinct names, default ``ch0``, ``ch1``, ...: names such as ``acc_x`` group the channels by
    prefix when the folder is read), each file atomically; a failure removes the shards written
    and names the file. Returns the number of shards."""
    if check_float(shard_mb, "shard_mb") <= 0:
        raise ValueError(f"shard_mb ({shard_mb}) must be > 0")
    X = as_float_array(X, "X", 3, np.float32)
    n = X.shape[0]
    y = np.full(n, -1, dtype=np.int32) if y is None else as_int_vector(y, "y", n)
    p = np.full(n, -1, dtype=np.int32) if pid is None else as_int_vector(pid, "pid", n)
    names = [f"ch{c}" for c in range(X.shape[1])] if channel_names is None else channel_names
    if isinstance(names, str) or not all(isinstance(c, str) and c for c in names):
        raise ValueError(f"channel_names ({names!r}) must be a sequence of non-empty strings")
    names = list(names)
    if len(names) != X.shape[1] or len(set(names)) != len(names):
        raise ValueError(f"channel_names ({names}) must be {X.shape[1]} distinct names, one per "
                         "channel of X")
    return _core.write_shards(X, y, p, os.fspath(out), check_float(shard_mb, "shard_mb"),
                              bool(float16), check_float(rate, "rate"), names)
