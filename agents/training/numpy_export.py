"""Writing a trained SB3 set-network agent's actor as the numpy weights that
:class:`~mrsched_gym.agents.numpy_policy.NumpySetPolicy` runs without torch (``NAME.npz``: the
weights and, under :data:`~mrsched_gym.agents.numpy_policy.META_KEY`, JSON text; no pickle).
Needs torch (the model's tensors); kept apart from the numpy forward pass so that the inference
never imports the torch networks.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from mrsched_gym.agents.numpy_policy import META_KEY


def export_numpy(model, path: str | Path) -> Path:
    """Write the actor of an SB3 set-network model as ``path`` (.npz: the weights and, under
    the metadata key, JSON text; no pickle), durably."""
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
    # the trainer's runs say how they act (work_conserving: false = skip at every decision);
    # a model built elsewhere acts under the env's mask, work-conserving by default, as
    # ``agent:PATH.zip`` plays it (AgentPolicy)
    trained = getattr(model, "mrsched_work_conserving", None)
    meta = {"hidden": fx.hidden, "work_conserving": True if trained is None else bool(trained),
            # MaskablePPO or a subclass (the trainer's fast-numerics NumpyRolloutPPO)
            "masked": any(c.__name__ == "MaskablePPO" for c in type(model).__mro__),
            "forecast": int(policy.observation_space["forecast"].shape[0]),
            "node_mask": bool(getattr(fx, "node_mask", False)),
            "objective": int(getattr(fx, "objective_features", 0)),
            # the rules it was trained under (agents/rules.py): it acts under them when named
            "rules": dict(getattr(model, "mrsched_rules", None) or {})}
    if getattr(fx, "prior", None) is not None:          # a residual policy's rule
        meta.update(prior=fx.prior, prior_weight=float(policy.action_net.prior_weight))
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays, **{META_KEY: np.array(json.dumps(meta))})
    from mrsched_gym.results import durable_write
    return durable_write(path, buf.getvalue())          # a kill leaves the old file or the new


def has_numpy_actor(model) -> bool:
    """Whether :func:`export_numpy` can write ``model``'s actor (a set-network policy)."""
    from mrsched_gym.agents.networks import SetExtractor
    policy = model.policy
    fx = getattr(policy, "pi_features_extractor", None) or policy.features_extractor
    return isinstance(fx, SetExtractor)


__all__ = ["export_numpy", "has_numpy_actor"]
