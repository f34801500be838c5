"""Shipped set-network agents without torch: the actor's forward pass in numpy.

A trained :class:`~mrsched_gym.agents.networks.SetPolicy` is exported once (:func:`export_numpy`,
needs torch) to ``NAME.npz`` — the actor's weights (the policy's feature extractor and its
:class:`~mrsched_gym.agents.networks.CandidateScorer`) and, as JSON text, ``hidden``,
``work_conserving``, ``masked``, the trained forecast length and ``node_mask`` (pool only the
present nodes, for agents trained on padded observations). :class:`NumpySetPolicy` replays
the same computation
for one observation: symlog inputs, the per-node and per-candidate networks, masked mean pooling,
the shared candidate score and the skip score, then the argmax of the masked logits (the
deterministic action the harness takes with torch). It needs no torch, runs on any cluster size
and candidate count (the weights do not depend on N or K; the forecast is cut or padded with its
last value to the trained length), and gives the same actions as the torch policy (tested).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mrsched_gym.encoding import decision_kind_slot
from mrsched_gym.sim.decision import SCHEDULE

_SCHEDULE = decision_kind_slot(SCHEDULE)       # the schedule entry of obs["decision"]

ILLEGAL_LOGIT = -1e8
#: The array of the .npz that holds the metadata (JSON text).
META_KEY = "__meta__"
#: The actor's layers, in the order of their use (each an affine map; ReLU after every one of the
#: four encoders' layers, as ``set_layers.mlp`` builds them).
ENCODERS = {"node_enc": 2, "global_enc": 1, "cand_enc": 2, "cand_mix": 1}


def symlog(x: np.ndarray) -> np.ndarray:
    """``sign(x) * log(1 + |x|)`` (as :func:`mrsched_gym.agents.networks.symlog`)."""
    return np.sign(x) * np.log1p(np.abs(x))


def export_numpy(model, path: str | Path) -> Path:
    """Write the actor of an SB3 set-network model as ``path`` (.npz + a .json beside it)."""
    from mrsched_gym.agents.networks import SetExtractor
    policy = model.policy
    fx = getattr(policy, "pi_features_extractor", None) or policy.features_extractor
    if not isinstance(fx, SetExtractor):
        raise ValueError("only set-network agents have a numpy forward pass")
    arrays = {f"{k}": v.detach().cpu().numpy().astype(np.float32)
              for k, v in fx.state_dict().items()}
    arrays.update({f"action_net.{k}": v.detach().cpu().numpy().astype(np.float32)
                   for k, v in policy.action_net.state_dict().items()})
    path = Path(path).with_suffix(".npz")
    meta = {"hidden": fx.hidden, "work_conserving": bool(policy.action_net.work_conserving),
            "masked": type(model).__name__ == "MaskablePPO",
            "forecast": int(policy.observation_space["forecast"].shape[0]),
            "node_mask": bool(getattr(fx, "node_mask", False))}
    np.savez_compressed(path, **arrays, **{META_KEY: np.array(json.dumps(meta))})
    return path


class NumpySetPolicy:
    """The deterministic actor of a set-network agent, in numpy (see the module docstring).

    Args:
        weights: Array name -> array (as written by :func:`export_numpy`).
        meta: ``hidden``, ``work_conserving``, ``masked``, ``forecast``.
        name: The policy's label.
    """

    def __init__(self, weights: dict[str, np.ndarray], meta: dict, name: str) -> None:
        self.name = name
        self.masked = bool(meta["masked"])
        self.work_conserving = bool(meta["work_conserving"])
        self.W = int(meta["forecast"])
        self.node_mask = bool(meta.get("node_mask", False))
        self.layers = {enc: [(weights[f"{enc}.{2 * i}.weight"].T.copy(),
                              weights[f"{enc}.{2 * i}.bias"]) for i in range(n)]
                       for enc, n in ENCODERS.items()}
        # the first layers of cand_enc and cand_mix split by input block, so the shared part
        # (the context g, the pool) is one vector product instead of a tiled matrix product
        F = self.layers["cand_enc"][0][0].shape[0] - len(self.layers["global_enc"][0][1])
        w1, b1 = self.layers["cand_enc"][0]
        self.cand_x, self.cand_g, self.cand_b = w1[:F], w1[F:], b1
        wm, bm = self.layers["cand_mix"][0]
        hidden = len(bm)
        self.mix_e, self.mix_p, self.mix_b = wm[:hidden], wm[hidden:], bm
        self.score_w = weights["action_net.score.weight"][0]
        self.score_b = float(weights["action_net.score.bias"][0])
        self.skip_w = weights["action_net.skip.weight"][0]
        self.skip_b = float(weights["action_net.skip.bias"][0])

    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> NumpySetPolicy:
        """Load ``NAME.npz`` (weights and metadata, as :func:`export_numpy` writes it)."""
        path = Path(path)
        with np.load(path, allow_pickle=False) as z:
            weights = {k: z[k] for k in z.files}
        meta = json.loads(str(weights.pop(META_KEY)))
        return cls(weights, meta, name or f"agent:{path.stem}")

    def _mlp(self, enc: str, x: np.ndarray) -> np.ndarray:
        for w, b in self.layers[enc]:
            x = np.maximum(x @ w + b, 0.0)
        return x

    def logits(self, obs: dict) -> np.ndarray:
        """The action logits ``[K + 1]`` of one observation (illegal candidates at -1e8)."""
        cands = obs["candidates"].astype(np.float32, copy=False)
        nodes = obs["nodes"].astype(np.float32, copy=False)
        fc = obs["forecast"].astype(np.float32, copy=False)
        fc = fc[:self.W] if len(fc) >= self.W else np.concatenate(
            [fc, np.full(self.W - len(fc), fc[-1] if len(fc) else 1.0, np.float32)])
        decision = obs["decision"].astype(np.float32, copy=False)
        K = len(cands)
        valid = cands[:, 0] > 0.5
        if self.node_mask:                                  # pool the present nodes only
            present = (nodes[:, 2] > 0).astype(np.float32)
            node_pool = (present @ self._mlp("node_enc", nodes)) / max(float(present.sum()), 1.0)
        else:
            node_pool = self._mlp("node_enc", nodes).sum(axis=0) * np.float32(1.0 / len(nodes))
        dec_node = nodes[:, 9] @ nodes                      # the decision node's row
        g = self._mlp("global_enc", np.concatenate([symlog(decision), fc, dec_node, node_pool]))
        e = np.maximum(symlog(cands) @ self.cand_x + (g @ self.cand_g + self.cand_b), 0.0)
        for w2, b2 in self.layers["cand_enc"][1:]:
            e = np.maximum(e @ w2 + b2, 0.0)
        w = valid.astype(np.float32)
        pool = (w @ e) / max(float(w.sum()), 1.0)           # masked mean
        h = np.maximum(e @ self.mix_e + (pool @ self.mix_p + self.mix_b), 0.0)
        out = np.empty(K + 1, dtype=np.float32)
        out[:K] = np.where(valid, h @ self.score_w + self.score_b, ILLEGAL_LOGIT)
        skip = float(np.concatenate([g, pool]) @ self.skip_w + self.skip_b)
        if self.work_conserving and valid.any() and decision[_SCHEDULE] > 0.5:
            skip = ILLEGAL_LOGIT
        out[K] = skip
        return out

    def reset(self, sim, seed: int | None = None) -> None:
        """Nothing to reset: the policy is stateless."""

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The argmax of the logits, masked as the torch policy masks them."""
        from mrsched_gym.agents.policy import work_conserving_mask
        logits = self.logits(obs)
        if self.masked:
            if self.work_conserving:
                mask = work_conserving_mask(mask, bool(obs["decision"][_SCHEDULE] > 0.5))
            logits = np.where(mask, logits, -np.inf)
        return int(np.argmax(logits))


__all__ = ["NumpySetPolicy", "export_numpy", "symlog"]
