"""Issue 38: each public name that no other test named, checked against its docstring's words
(an audit of tests/python found 11 such names; the known answers are arithmetic and numpy)."""
import json

import numpy as np
import pytest

import moca


def test_policy_names_each_make_a_policy():
    # "The scheme names the spec strings may start with."
    names = moca.policy_names()
    assert {"cross", "random", "sync", "temporal", "sensor", "per-modality"} <= set(names)
    for name in names:
        if name in ("fixed", "adaptive"):  # need cells / a pilot (docs/masking.md)
            continue
        assert moca.policy(name, ratio=0.5).name == name
    with pytest.raises(ValueError):
        moca.policy("no-such-scheme")


def test_generator_constant_and_dataset_fields():
    d = moca.data.load(moca.data.GENERATOR, windows=12)
    assert isinstance(d, moca.data.Dataset) and d._fields == ("X", "y", "pid", "meta")
    X, y, pid, meta = d  # a NamedTuple unpacks as (X, y, pid, meta)
    assert X.shape == (12, 6, 200) and y.shape == (12,) and pid.shape == (12,)
    assert meta["sample_rate_hz"] == 50.0


def test_score_result_to_dict_is_a_json_copy():
    X = moca.data.load("generator", windows=40).X
    r = moca.score(X, ["cross"], draws=2, pca=4)
    assert isinstance(r, moca.ScoreResult)
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d  # plain JSON types, as kcca_score --json writes
    d["schemes"][0]["score"] = -1.0
    assert r.schemes[0]["score"] != -1.0  # a copy, not the result's own document


@pytest.fixture
def T():
    """torch, moca.torch and moca.torch_model (the tests below skip without torch)."""
    torch = pytest.importorskip("torch")
    return torch, pytest.importorskip("moca.torch"), pytest.importorskip("moca.torch_model")


def test_masks_ids_masked_complements_ids_keep(T):
    torch, mt, _ = T
    m = mt.draw_masks("cross", 5, seed=3)
    keep, masked = m.ids_keep, m.ids_masked()
    T = m.mask.shape[1]
    for i in range(5):
        both = torch.cat([keep[i], masked[i]]).sort().values
        assert torch.equal(both, torch.arange(T))  # disjoint, together every token
        assert torch.all(masked[i][1:] > masked[i][:-1])  # ascending
        assert torch.equal(m.mask[i][masked[i]], torch.ones(len(masked[i])))


def test_as_policy_returns_policies_and_reuses_specs(T):
    _, mt, _ = T
    p = moca.policy("sync", ratio=0.5)
    assert mt.as_policy(p) is p  # "or the policy itself"
    a = mt.as_policy("cross", ratio=0.6)
    assert a is mt.as_policy("cross", ratio=0.6)  # "built once per arguments and reused"
    assert a.spec == "cross:ratio=0.6,count=keep-floor" and mt.LAYOUTS == ("modality", "time", "stacked")


def test_score_hook_due(T):
    torch, mt, _ = T
    hook = mt.ScoreHook("cross", every=7)
    assert [s for s in range(30) if hook.due(s)] == [0, 7, 14, 21, 28]  # step % every == 0
    assert hook(3, torch.zeros(4, 6, 200)) is None and hook.history == []


@pytest.mark.parametrize("layout", ["modality", "stacked"])
def test_patchify_is_the_documented_reshape_and_unpatchify_inverts_it(T, layout):
    torch, _, tm = T
    B, C, L, Lp = 2, 3, 40, 10
    x = torch.arange(B * C * L, dtype=torch.float32).reshape(B, C, L)
    t = tm.patchify(x, layout, Lp)
    xn = x.numpy()
    if layout == "modality":  # (B, C*P, Lp): token c * P + p
        ref = xn.reshape(B, C * (L // Lp), Lp)
    else:  # (B, P, C*Lp): token p holds every channel's patch p
        ref = np.stack([np.concatenate([xn[:, c, p * Lp:(p + 1) * Lp] for c in range(C)], axis=1)
                        for p in range(L // Lp)], axis=1)
    np.testing.assert_array_equal(t.numpy(), ref)
    assert torch.equal(tm.unpatchify(t, layout, C, Lp), x)
