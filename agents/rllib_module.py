"""The set network as an RLlib ``RLModule`` (new API stack), with the env's action mask.

:class:`SetRLModule` is what :func:`mrsched_gym.ray_backend.rllib_ppo_config` trains by
default (``module="set"``). It reads the observation of
:class:`~mrsched_gym.ray_backend.RLlibMaskedObservation`, RLlib's action-masking
convention::

    {"action_mask": Box(0, 1, (K + 1,)),   # env.action_masks(), skip last
     "observations": <the env's Dict observation: decision, candidates, nodes, forecast>}

and reuses the layers of the SB3 set policy (:mod:`mrsched_gym.agents.set_layers`):

* **encoder** — :class:`~mrsched_gym.agents.set_layers.SetEncoder`: shared per-node network
  with mean pooling, shared per-candidate network conditioned on the global context, masked mean
  pooling and a second shared layer that sees the pool (Deep Sets, one round of message passing);
* **policy head** — :class:`~mrsched_gym.agents.set_layers.CandidateScorer`: one shared linear
  score per candidate embedding (action ``i``) plus a score of the context for skip (action
  ``K``). Actions outside ``action_mask`` get the logit ``ILLEGAL_LOGIT`` (-1e8) in every forward
  pass (exploration, inference, training), so they are never sampled nor chosen; with
  ``work_conserving`` skip is masked too at a schedule decision that has a candidate (as the
  shipped SB3 agent);
* **value head** — an MLP over ``[global embedding, candidate pool, masked mean of the final
  candidate embeddings]``.

No weight depends on the number of candidates K or nodes N, so the candidate logits are
permutation-equivariant (permuting the candidate rows permutes their logits; skip and the value
are invariant) and one module runs on any K and N. The input sizes it needs are the per-row
feature counts and the forecast length.

``model_config`` keys (all optional): ``hidden`` (64, width of the embeddings),
``vf_hiddens`` ([64, 64], the value MLP), ``work_conserving`` (True).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch as th
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from torch import nn

from mrsched_gym.agents.agent_files import check_finite_state, load_error
from mrsched_gym.agents.set_layers import ILLEGAL_LOGIT, CandidateScorer, SetEncoder, mlp
from mrsched_gym.env.encoding import decision_kind_slot
from mrsched_gym.errors import InputError
from mrsched_gym.sim.decision import SCHEDULE

_SCHEDULE = decision_kind_slot(SCHEDULE)       # the schedule entry of obs["decision"]

#: The module's ``model_config`` defaults.
DEFAULT_MODEL_CONFIG: dict[str, Any] = {"hidden": 64, "vf_hiddens": [64, 64],
                                        "work_conserving": True}
MASK_KEY, OBS_KEY = "action_mask", "observations"


def _orthogonal(module: nn.Module, gain: float) -> None:
    """Orthogonal weights, zero biases on every ``nn.Linear`` (SB3's actor-critic init)."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=gain)
            nn.init.zeros_(m.bias)


class SetRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO-ready RLModule: set encoder, candidate scorer with the action mask, value head.

    Built by RLlib from an ``RLModuleSpec(module_class=SetRLModule, model_config={...})``
    (see the module docstring for the observation it needs and the ``model_config`` keys).
    """

    def setup(self) -> None:
        """Build the encoder, the policy head and the value head from the spaces."""
        space = self.observation_space
        if not (isinstance(space, gym.spaces.Dict) and set(space.spaces) == {MASK_KEY, OBS_KEY}):
            raise ValueError(
                "SetRLModule needs the observation {'action_mask': Box(K+1), 'observations': "
                "<env Dict>} of mrsched_gym.ray_backend.RLlibMaskedObservation "
                "(env_config "
                f"observation='masked'); got {space}")
        inner = space[OBS_KEY]
        cfg = {**DEFAULT_MODEL_CONFIG, **{k: v for k, v in dict(self.model_config or {}).items()
                                          if k in DEFAULT_MODEL_CONFIG}}
        hidden = int(cfg["hidden"])
        K = inner["candidates"].shape[0]
        self.encoder = SetEncoder(inner["candidates"].shape[1], inner["nodes"].shape[1],
                                  inner["decision"].shape[0], inner["forecast"].shape[0], hidden,
                                  inner["objective"].shape[0] if "objective" in inner.spaces
                                  else 0)
        self.pi = CandidateScorer(K, hidden, bool(cfg["work_conserving"]))
        vf = [3 * hidden, *map(int, cfg["vf_hiddens"])]
        self.vf = nn.Sequential(mlp(vf), nn.Linear(vf[-1], 1))
        _orthogonal(self.encoder, float(np.sqrt(2)))
        _orthogonal(self.vf, float(np.sqrt(2)))
        _orthogonal(self.vf[-1], 1.0)
        _orthogonal(self.pi, 0.01)          # near-uniform initial policy over the legal actions

    def _heads(self, batch: dict[str, Any]) -> tuple[th.Tensor, th.Tensor]:
        """``(masked logits [B, K+1], value embeddings [B, 3*hidden])`` of a batch."""
        obs = batch[Columns.OBS]
        inner, mask = obs[OBS_KEY], obs[MASK_KEY] > 0.5
        f = self.encoder(inner)
        w = f.valid.unsqueeze(2)
        h_pool = (f.candidates * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)
        ctx = th.cat([f.context, f.pool], dim=1)
        logits = self.pi.logits(f.candidates, ctx, mask[:, :-1],
                                inner["decision"][:, _SCHEDULE:_SCHEDULE + 1] > 0.5)
        logits = th.where(mask, logits, th.full_like(logits, ILLEGAL_LOGIT))
        return logits, th.cat([ctx, h_pool], dim=1)

    def _forward(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        """Masked action logits (exploration and inference; RLlib adds ``no_grad``)."""
        logits, _ = self._heads(batch)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs) -> dict[str, Any]:
        """Masked action logits and the value head's input (reused by :meth:`compute_values`)."""
        logits, emb = self._heads(batch)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: emb}

    def act(self, obs: dict[str, Any], explore: bool = False) -> int:
        """The action for one observation of ``RLlibMaskedObservation`` (numpy arrays): the
        most likely legal action, or one sampled from the masked distribution with
        ``explore``."""
        def batch1(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: batch1(v) for k, v in x.items()}
            return th.as_tensor(np.asarray(x, dtype=np.float32)).unsqueeze(0)

        batch = {Columns.OBS: batch1(obs)}
        out = self.forward_exploration(batch) if explore else self.forward_inference(batch)
        logits = out[Columns.ACTION_DIST_INPUTS]
        if explore:
            return int(th.distributions.Categorical(logits=logits).sample()[0])
        return int(logits[0].argmax())

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> th.Tensor:
        """State values ``[B]`` (from ``embeddings`` of :meth:`_forward_train` when given)."""
        if embeddings is None:
            _, embeddings = self._heads(batch)
        return self.vf(embeddings).squeeze(-1)


class RLlibPolicy:
    """A trained :class:`SetRLModule` as a policy of the evaluation harness
    (:func:`mrsched_gym.evaluate.run_episode`): the most likely legal action.

    Args:
        module: The module, e.g. ``algo.get_module()`` or
            ``RLModule.from_checkpoint(...)``.
        name: The policy's label.
    """

    def __init__(self, module: SetRLModule, name: str = "rllib:set") -> None:
        self.module, self.name = module, name

    def reset(self, sim: Any, seed: int | None = None) -> None:
        """Nothing to reset: the policy is stateless."""

    def act(self, obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """The module's most likely action for the env's observation ``obs`` within ``mask``."""
        return self.module.act({MASK_KEY: np.asarray(mask, np.float32), OBS_KEY: obs})


#: Where ``algo.save_to_path`` keeps the (single-agent) module inside its checkpoint folder.
MODULE_SUBDIR = "learner_group/learner/rl_module/default_policy"


#: The module's weights in its checkpoint folder, as RLlib writes them (a pickled dict of
#: arrays by parameter name).
MODULE_STATE_FILE = "module_state.pkl"


def load_rllib_policy(path: str, name: str | None = None) -> RLlibPolicy:
    """The policy of an RLlib checkpoint folder: the folder ``algo.save_to_path`` wrote (its
    module under :data:`MODULE_SUBDIR`) or the module's own folder; relative paths are taken
    from the working directory.

    Raises:
        InputError: One line naming the folder: it does not load (a damaged file, weights of
            the wrong shape), it holds another module, a parameter of the module is missing
            from its saved weights (RLlib would keep the parameter's random start), or a
            weight is NaN or infinite. The files' contents are not otherwise verified: like
            any pickle, load only checkpoints you trust.
    """
    from ray.rllib.core.rl_module.rl_module import RLModule
    folder = Path(path).resolve()
    if (folder / MODULE_SUBDIR).is_dir():
        folder = folder / MODULE_SUBDIR
    elif (folder / "algorithm_state.pkl").exists():
        raise InputError(f"RLlib checkpoint {folder}: no RLlib module in it ({MODULE_SUBDIR}/ "
                         f"is missing from this algo.save_to_path folder)")
    name = name or f"rllib:{Path(path).name}"
    where = f"RLlib checkpoint {folder}"
    if not (folder / "class_and_ctor_args.pkl").is_file():
        raise InputError(f"{where}: no RLlib module in it (neither {MODULE_SUBDIR}/ of an "
                         f"algo.save_to_path folder nor a module folder's "
                         f"class_and_ctor_args.pkl)")
    try:
        module = RLModule.from_checkpoint(str(folder))
    except Exception as e:  # noqa: BLE001 - any damaged file: one line, not RLlib's traceback
        raise InputError(f"{where}: cannot be loaded ({load_error(e)})") from None
    if not isinstance(module, SetRLModule):
        raise InputError(f"{where}: holds a {type(module).__name__}, not the set "
                         f"module (SetRLModule) the harness runs. RLlib's default module "
                         f"(rllib_ppo_config(module='mlp')) reads the flattened observation "
                         f"and no mask: evaluate it in your own loop on RLlibObservation, or "
                         f"train with module='set'")
    check_saved_state(module, folder, where)
    return RLlibPolicy(module, name)


def check_saved_state(module: SetRLModule, folder: Path, where: str) -> None:
    """Raise :class:`InputError` unless every parameter of ``module`` was in the weights it
    was loaded from (the folder's ``module_state.msgpack``, else ``module_state.pkl``, the
    file RLlib reads; RLlib loads them non-strictly, so a missing one would keep its random
    start) and every weight is finite."""
    import pickle

    from ray.rllib.utils.checkpoints import try_import_msgpack

    own = module.state_dict()
    packed = folder / MODULE_STATE_FILE.replace(".pkl", ".msgpack")
    state_file = packed if packed.is_file() else folder / MODULE_STATE_FILE
    if state_file.is_file():
        try:
            with open(state_file, "rb") as f:
                saved = (try_import_msgpack(error=True).load(f, strict_map_key=False)
                         if state_file == packed
                         else pickle.load(f))  # noqa: S301 - the file RLlib has just unpickled
        except Exception as e:  # noqa: BLE001 - it loaded in RLlib; changed since: one line
            raise InputError(f"{where}: {state_file.name} cannot be read ({load_error(e)})"
                             ) from None
        if isinstance(saved, dict):
            missing = sorted(set(own) - set(saved))
            if missing:
                raise InputError(f"{where}: parameter {missing[0]!r} is missing from "
                                 f"{state_file.name} ({len(missing)} missing in all); the "
                                 f"module would run with its random start there")
    check_finite_state(((k, v.detach().cpu()) for k, v in own.items()), where)


__all__ = ["DEFAULT_MODEL_CONFIG", "MODULE_STATE_FILE", "MODULE_SUBDIR", "RLlibPolicy",
           "SetRLModule", "check_saved_state", "load_rllib_policy"]
