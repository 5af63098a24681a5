"""moca from Python: score masking policies of multi-modal masked autoencoders by the canonical
correlation between the visible and the masked views, with the C++ library's speed.

* :class:`KCCA`, :class:`CCA` — kernel / linear CCA (scikit-learn conventions);
* :func:`policy` — masking policies (any spec the tools take, or a Python callable);
* :func:`score`, :func:`compare` — ``kcca_score`` on a NumPy array of windows;
* :mod:`moca.data` — ``load`` (what ``--data`` takes), ``window_recordings`` (what ``moca data
  window`` cuts) and ``synthetic_transitions``;
* :class:`Encoder` — a trained MoCA encoder as the feature map (when built with LibTorch);
* :class:`Classifier` — a kept classifier (``--save-model``) applied to windows;
* :func:`run_protocol` — linprobe / finetune's classification protocol on NumPy windows;
* :mod:`moca.interop` — weights exchanged with PyTorch; :mod:`moca.torch_model` — the models as
  PyTorch modules (needs PyTorch; not imported here).

See docs/python.md.
"""
import importlib.metadata as _metadata
import importlib.util as _util
import re as _re
import sys as _sys

from . import _build_info


def _release(version: str) -> tuple:
    """(major, minor, patch) of a version string: "2.11.0+cu130" and "2.11.0" alike."""
    out = []
    for part in version.split("+")[0].split(".")[:3]:
        digits = _re.match(r"\d+", part)
        if not digits:
            break
        out.append(int(digits.group()))
    return tuple(out)


def _refuse_foreign_torch() -> None:
    """An extension built with LibTorch maps that LibTorch when it loads; a torch of another
    version in the same process maps a second one (two c10 dispatchers, two allocators). Refuse
    before loading _core when the torch beside moca (imported, or the one `import torch` would
    find) is of another version than the one moca was built against."""
    built = _build_info.libtorch_version
    if not built:
        return
    torch = _sys.modules.get("torch")
    if torch is not None:
        have, where = getattr(torch, "__version__", ""), getattr(torch, "__file__", "")
    else:
        spec = _util.find_spec("torch")  # finds, does not import
        if spec is None:
            return
        try:
            have = _metadata.version("torch")
        except _metadata.PackageNotFoundError:
            return
        where = spec.origin or ""
    if _release(have) != _release(built):
        raise ImportError(
            f"moca: this extension was built against LibTorch {built} "
            f"({_build_info.libtorch_prefix}), but the torch beside it is {have} ({where}); one "
            "process cannot hold two LibTorch builds. Rebuild moca against this torch "
            "(MOCA_CMAKE_ARGS=-DMOCA_WITH_TORCH=ON pip install --no-build-isolation .) or use "
            f"torch {built}")


_refuse_foreign_torch()

from . import _core, data  # noqa: E402  (after the check: loading _core maps its LibTorch)
from .classifier import Classifier  # noqa: E402
from .encoder import Encoder  # noqa: E402
from .estimators import CCA, KCCA, NotFittedError  # noqa: E402
from .masking import Policy, policy, policy_names  # noqa: E402
from .protocol import run_protocol  # noqa: E402
from .scoring import ScoreResult, compare, score  # noqa: E402

__version__: str = _core.__version__


def __getattr__(name: str):
    # moca.interop on first use (importing it here would make `python3 -m moca.interop` warn)
    if name == "interop":
        import importlib
        return importlib.import_module(".interop", __name__)
    raise AttributeError(f"module 'moca' has no attribute {name!r}")

#: Whether the extension was built with LibTorch (``Encoder`` works).
with_torch: bool = bool(_core.with_torch)

__all__ = ["KCCA", "CCA", "NotFittedError", "Policy", "policy", "policy_names", "score",
           "compare", "ScoreResult", "Encoder", "Classifier", "run_protocol", "interop", "data", "with_torch",
           "__version__"]
