"""moca from Python: score masking policies of multi-modal masked autoencoders by the canonical
correlation between the visible and the masked views, with the C++ library's speed.

* :class:`KCCA`, :class:`CCA` — kernel / linear CCA (scikit-learn conventions);
* :func:`policy` — masking policies (any spec the tools take, or a Python callable);
* :func:`score`, :func:`compare` — ``kcca_score`` on a NumPy array of windows;
* :mod:`moca.data` — ``load`` (what ``--data`` takes) and ``synthetic_transitions``;
* :class:`Encoder` — a trained MoCA encoder as the feature map (when built with LibTorch);
* :class:`Classifier` — a kept classifier (``--save-model``) applied to windows;
* :func:`run_protocol` — linprobe / finetune's classification protocol on NumPy windows;
* :mod:`moca.interop` — weights exchanged with PyTorch; :mod:`moca.torch_model` — the models as
  PyTorch modules (needs PyTorch; not imported here).

See docs/python.md.
"""
from . import _core, data
from .classifier import Classifier
from .encoder import Encoder
from .estimators import CCA, KCCA, NotFittedError
from .masking import Policy, policy, policy_names
from .protocol import run_protocol
from .scoring import ScoreResult, compare, score

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
