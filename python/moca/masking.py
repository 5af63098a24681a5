"""Masking policies: any spec the tools take (``cross:ratio=0.75``, ``sync``, ``sensor:keep=1``,
``adaptive:base=cross``, ...; docs/masking.md), or a Python callable."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import _core
from ._checks import as_float_array, check_int, check_seed

__all__ = ["Policy", "policy", "policy_names"]


class Policy:
    """A masking policy on a grid of ``C`` channels x ``P`` patches (``patch_length`` samples
    each). ``spec`` is canonical (every key filled in); ``name`` the scheme."""

    def __init__(self, core: Any) -> None:
        self._core = core

    spec = property(lambda self: self._core.spec, doc="canonical spec string")
    name = property(lambda self: self._core.name, doc="scheme name")
    C = property(lambda self: self._core.C, doc="channels (modalities)")
    P = property(lambda self: self._core.P, doc="patches per channel")
    patch_length = property(lambda self: self._core.patch_length, doc="samples per patch")

    def sample(self, n: int, seed: int = 0, *, draw: int = 0) -> np.ndarray:
        """``n`` masks as an (n, C, P) bool array (True = masked), drawn one after the other
        from the stream of draw ``draw`` with ``seed`` — exactly the per-window masks that
        ``moca.score``/``kcca_score --seed seed`` use in that draw for the first n windows.
        No policy's draw depends on the window it masks (``adaptive`` fixes its distribution
        from its ``pilot`` when it is made), so no windows are taken."""
        return self._core.sample(check_int(n, "n"), check_seed(seed, "seed"),
                                 check_int(draw, "draw"))

    def __repr__(self) -> str:
        return f"moca.Policy({self.spec!r}, C={self.C}, P={self.P})"


def policy(spec: "str | Callable[[int], np.ndarray]", *, channels: int = 6, length: int = 200,
           patch_length: int = 20, ratio: Optional[float] = None, name: str = "custom",
           pilot: Optional[Any] = None) -> Policy:
    """Builds a policy for windows of ``channels`` x ``length`` cut into patches of
    ``patch_length``.

    ``spec`` is a spec string (``ratio`` fills in a ratio the spec does not set, as
    ``kcca_score --ratio``; ``pilot`` are the pilot windows adaptive policies need) or a
    callable ``f(seed) -> (C, P) bool array`` drawn with a 64-bit seed from the library's
    stream (so scores of custom policies are reproducible and paired with the others; the role
    of docs/examples/custom_policy.cpp). Raises ``ValueError`` with the library's message for an
    unknown scheme, key or value.
    """
    C, L, Lp = (check_int(channels, "channels"), check_int(length, "length"),
                check_int(patch_length, "patch_length"))
    if callable(spec):
        return Policy(_core.make_callable_policy(str(name), spec, C, L, Lp))
    if not isinstance(spec, str):
        raise TypeError(f"spec ({spec!r}) must be a spec string or a callable")
    if ratio is not None:
        spec = _core.with_default_ratio(spec, float(ratio))
    P = None if pilot is None else as_float_array(pilot, "pilot", 3, np.float32)
    return Policy(_core.make_policy(spec, C, L, Lp, P))


def policy_names() -> list:
    """The scheme names the spec strings may start with."""
    return list(_core.policy_names())
