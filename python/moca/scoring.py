"""Scoring masking policies by the canonical correlation between the views they create
(``kcca_score``, docs/masking.md), on windows given as a NumPy array."""
from __future__ import annotations

import json
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import numpy as np

from . import _core
from ._checks import as_float_array, as_int_vector, check_int, document_keywords
from .masking import Policy

__all__ = ["ScoreResult", "score", "compare"]


def _spec_items(spec: str):
    """``name:k=v,k=v`` as (name, {(k, v), ...}) for lookups by a partial spec."""
    name, _, rest = spec.partition(":")
    items = {tuple(kv.split("=", 1)) for kv in rest.split(",") if "=" in kv}
    return name.strip(), items


class ScoreResult:
    """The result of :func:`score`, with the fields of ``kcca_score --json``.

    ``schemes`` (one dict per policy: scheme, spec, score, std_error, ci, null_level, draws,
    values, null_values, masked_fraction, warning, seconds), ``comparisons`` (paired
    differences of every pair: a, b (the specs), difference, std_error, ci, p_value, test, draws),
    ``settings`` (the scoring as it ran: features, estimator, pca, draws, mask_mode, grid, ...),
    ``data``, ``seed``, ``seconds``. (The tool's JSON also has ``options``, its flags as
    ``--print-config`` writes them; a call from Python has keyword arguments instead.)
    """

    def __init__(self, doc: Dict[str, Any]) -> None:
        self._doc = doc

    schemes = property(lambda self: self._doc["schemes"], doc="per-policy scores")
    comparisons = property(lambda self: self._doc["comparisons"], doc="paired differences")
    settings = property(lambda self: self._doc["settings"], doc="the scoring as it ran")
    data = property(lambda self: self._doc["data"], doc="what the windows were")
    seed = property(lambda self: self._doc["seed"], doc="seed of the mask draws")
    seconds = property(lambda self: self._doc["seconds"], doc="wall time of the scoring")

    def __getitem__(self, scheme: str) -> Dict[str, Any]:
        """The entry of a scheme by spec or name (``result["cross:ratio=0.5"]``,
        ``result["cross"]``). A full (canonical) spec is looked up first, then the scored specs
        of that name whose keys include the given ones (``cross:ratio=0.5`` finds
        ``cross:ratio=0.5,count=keep-floor``); a name or partial spec that several scored specs
        share (``cross`` for ``cross:ratio=0.5`` and ``cross:ratio=0.75``), or a spec scored
        twice, raises ``KeyError`` listing them."""
        if not isinstance(scheme, str):
            raise TypeError(f"a scheme is looked up by spec or name, not {scheme!r}")
        found = [s for s in self.schemes if s["spec"] == scheme]
        if not found:
            name, keys = _spec_items(scheme)
            found = [s for s in self.schemes
                     if _spec_items(s["spec"])[0] == name and keys <= _spec_items(s["spec"])[1]]
        if len(found) == 1:
            return found[0]
        scored = ", ".join(s["spec"] for s in self.schemes)
        if not found:
            raise KeyError(f"no scheme {scheme!r} (scored: {scored})")
        raise KeyError(f"{scheme!r} is ambiguous: {len(found)} scored schemes match it "
                       f"({', '.join(s['spec'] for s in found)}); name one by its full spec")

    def compare(self, a: str, b: str) -> Dict[str, Any]:
        """The paired comparison a - b (either order of a scored pair). ``a`` and ``b`` are
        looked up as by ``result[...]``; one scheme compared with itself raises ``KeyError``."""
        a, b = self[a]["spec"], self[b]["spec"]
        if a == b:
            raise KeyError(f"compare({a!r}, {b!r}): a scheme compared with itself")
        for c in self.comparisons:
            if (c["a"], c["b"]) == (a, b):
                return c
            if (c["a"], c["b"]) == (b, a):
                return _flipped(c)
        raise KeyError(f"no comparison of {a!r} and {b!r}")

    def to_dict(self) -> Dict[str, Any]:
        """The whole document (as ``kcca_score --json`` writes it)."""
        return json.loads(json.dumps(self._doc))

    def to_frame(self) -> Any:
        """One row per scheme as a ``pandas.DataFrame`` (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("ScoreResult.to_frame() needs pandas "
                              "(Debian: apt-get install python3-pandas)") from None
        rows = [{k: v for k, v in s.items() if k not in ("values", "null_values")}
                for s in self.schemes]
        return pd.DataFrame(rows).set_index("scheme")

    def __repr__(self) -> str:
        body = ", ".join(f"{s['spec']}: {s['score']:.4f} ± {s['std_error']:.4f}"
                         for s in self.schemes)
        return f"ScoreResult({body})"


def _modality_text(modalities: Any) -> str:
    """``modalities`` as ``--modalities`` text ("" = from the channel names)."""
    if modalities is None:
        return ""
    if isinstance(modalities, str):
        return modalities
    if not isinstance(modalities, Mapping):
        raise TypeError(f"modalities ({modalities!r}) must be a string like "
                        "'acc=0-2,gyro=3-5' or a dict of name -> channel list")
    parts = []
    for name, channels in modalities.items():
        if isinstance(channels, (str, bytes)) or not isinstance(channels, Sequence) or not channels:
            raise ValueError(f"modalities: group {name!r} needs a non-empty list of channels, "
                             f"got {channels!r}")
        parts.append(f"{name}=" + "+".join(str(check_int(c, f"modalities[{name!r}]"))
                                           for c in channels))
    return ",".join(parts)


def _flipped(c: Dict[str, Any]) -> Dict[str, Any]:
    """The comparison b - a from a - b (the paired t-test's p-value is two-sided)."""
    return dict(c, a=c["b"], b=c["a"], difference=-c["difference"],
                ci=[-c["ci"][1], -c["ci"][0]])


def _in_call_order(doc: Dict[str, Any], order: List[int]) -> None:
    """Puts ``doc``'s schemes and comparisons in the call's order. ``order[i]`` is the library's
    index of the call's i-th scheme (the library scores the spec strings first, then the Policy
    objects, and compares every pair a < b in its own order)."""
    n = len(order)
    if order == list(range(n)):
        return
    lib = doc["comparisons"]
    index = {}
    k = 0
    for a in range(n):
        for b in range(a + 1, n):
            index[(a, b)] = k
            k += 1
    comparisons = []
    for i in range(n):
        for j in range(i + 1, n):
            a, b = order[i], order[j]
            comparisons.append(lib[index[(a, b)]] if a < b else _flipped(lib[index[(b, a)]]))
    doc["schemes"] = [doc["schemes"][k] for k in order]
    doc["comparisons"] = comparisons


def score(X: Any, schemes: Sequence[Union[str, Policy]] = ("cross", "sync"), *,
          features: Any = "raw", y: Optional[Any] = None,
          channel_names: Optional[List[str]] = None,
          modalities: Union[None, str, Mapping[str, Sequence[int]]] = None,
          data: Optional[Dict[str, Any]] = None, **options: Any) -> ScoreResult:
    """Scores masking schemes on windows ``X`` (N, C, L) as ``kcca_score`` does.

    ``schemes``: spec strings (``ratio`` fills in a ratio they do not set) and/or
    :class:`Policy` objects (e.g. a Python callable, made for the same C, L, patch_length).
    ``features``: "raw" | "patch-mean" | "rff-mean", or a :class:`moca.Encoder` (the trained
    encoder as the feature map). ``modalities``: the modality groups that ``per-modality``
    masks and ``cross_modal`` scores across, as ``--modalities`` (``"acc=0-2,gyro=3-5"``, or a
    dict ``{"acc": [0, 1, 2], ...}``; channels it does not name are dropped). Left ``None``, the
    groups come from ``channel_names`` as ``--data`` makes them (the prefix before the last
    ``_``: acc_x, acc_y -> acc); windows without names (ch0, ch1, ...) are one group, which
    ``cross_modal`` and ``per-modality`` refuse, as kcca_score does.
    ``data``: provenance stored as the result's ``data`` (default: the array's shape).

    The other keywords are kcca_score's scoring flags (listed below with the flag each stands
    for; from ``masking::ScoreRunOptions``' schema, the rows that make those flags): one left
    out, or None, is the tool's default. ``X`` is copied once into float32 windows; the GIL is
    released while scoring. A bad value raises ``ValueError`` naming the keyword (the tool's
    rule), and so does a keyword the estimator or kernel leaves without effect (``sigma``
    beside ``estimator="cca"``, ``pca`` beside ``"kcca"``), as kcca_score refuses the flag; an
    unknown keyword or a value of the wrong type ``TypeError``.
    """
    X = as_float_array(X, "X", 3, np.float32)
    yv = None if y is None else as_int_vector(y, "y", X.shape[0])
    specs: List[str] = []
    policies: List[Any] = []
    if isinstance(schemes, (str, Policy)):
        schemes = [schemes]
    kinds = []
    for s in schemes:
        if isinstance(s, Policy):
            policies.append(s._core)
            kinds.append(False)
        elif isinstance(s, str):
            specs.append(s)
            kinds.append(True)
        else:
            raise TypeError(f"schemes: {s!r} is neither a spec string nor a moca.Policy")
    encoder = ""
    if isinstance(features, str):
        options["features"] = features
    elif hasattr(features, "checkpoint"):
        encoder = str(features.checkpoint)
        if channel_names is None and X.shape[1] == features.channels:
            channel_names = features.channel_names  # the model matches channels by name
    else:
        raise TypeError(f"features ({features!r}) must be raw, patch-mean, rff-mean "
                        "or a moca.Encoder")
    o = _core.ScoreRunOptions.from_keywords(options)
    if isinstance(features, str):
        pl = o.patch_length
        for s in schemes:
            if isinstance(s, Policy) and (s.C, s.P * s.patch_length, s.patch_length) != (
                    X.shape[1], X.shape[2], pl):
                raise ValueError(
                    f"schemes: policy {s.spec} was made for {s.C} channels x {s.P} patches of "
                    f"{s.patch_length} samples, the windows X are {X.shape[1]} x {X.shape[2]} "
                    f"with patch_length {pl} (make it with moca.policy(..., channels="
                    f"{X.shape[1]}, length={X.shape[2]}, patch_length={pl}))")
    # The library scores the specs, then the policies; the result comes back in the call's order.
    order = [sum(kinds[:i]) if k else len(specs) + i - sum(kinds[:i]) for i, k in enumerate(kinds)]
    info = {"source": "numpy", "windows": int(X.shape[0])} if data is None else dict(data)
    o.schemes = specs
    for p in policies:
        o.add_policy(p)
    if encoder:
        o.use_encoder(encoder)
    caution = o.mask_mode_warning()
    if caution:  # kcca_score prints it (docs/masking.md)
        warnings.warn(f"moca.score: {caution}; mask_mode=\"shared\" is the leak-free choice",
                      UserWarning, stacklevel=2)
    try:
        doc = _core.score_windows(X, yv, list(channel_names or []), _modality_text(modalities),
                                  o, info).to_dict()
    except ValueError as e:
        if "modality groups" not in str(e):
            raise
        # the library names the tool's flag; say how a Python call states the groups
        raise ValueError(f"{e}; from Python: modalities='acc=0-2,gyro=3-5', or channel_names "
                         "whose prefixes name the groups (acc_x, ..., gyro_x, ...)") from None
    # kcca_score also records its data-selection flags: the windows given here, and the
    # generator's coupling (its default; the generator does not run for NumPy windows).
    doc["settings"].update(samples=int(X.shape[0]), coupling=0.8)
    _in_call_order(doc, order)
    return ScoreResult(doc)


def compare(X: Any, a: Union[str, Policy], b: Union[str, Policy], **options: Any) -> Dict[str, Any]:
    """Paired comparison of two schemes on ``X`` (same windows, same mask streams): scores
    both with :func:`score` (``options`` as there) and returns the comparison a - b
    (a, b: their specs; difference, std_error, ci, p_value of the paired t-test, draws), in the
    call's order whatever mix of spec strings and Policy objects ``a`` and ``b`` are."""
    r = score(X, [a, b], **options)
    return r.comparisons[0]


document_keywords(score, _core.score_options(), "masking::ScoreRunOptions")
