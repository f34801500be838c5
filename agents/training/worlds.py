"""A pool of randomised worlds for training one generalist agent (``agent:general``).

:class:`WorldPool` is a Gymnasium env that, at every ``reset``, draws a registered id and a set of
randomised scenario overrides from its own generator (seeded by ``reset(seed=...)``: the same seed
gives the same sequence of worlds and episodes), builds that world and plays one episode of it.
The registered ids pose observations of different shapes (K candidates, N nodes, W forecast
steps), so the pool pads them to fixed maxima:

* candidates: zero rows up to ``K_max`` — their valid flag is 0 and their actions are never
  legal; the env's skip (action ``K``) is the pool's action ``K_max`` (and back);
* nodes: zero rows up to ``N_max`` — an absent node (its speed feature, column 2, is 0, which no
  real node has); the set network pools nodes with a mask (``SetExtractor(node_mask=True)``), so
  absent rows change nothing and the trained agent runs on any cluster size *without* padding;
* forecast: padded with its last value up to ``W_max`` (what the agent adapters do at evaluation
  time when an env's forecast is shorter than the trained one);
* objective (``observe_objective``): the world's own, unpadded.

Randomisation (:class:`WorldsConfig`): each key of ``vary`` is a scenario field scaled by a factor
drawn uniformly from ``[lo, hi]`` (both ends of a range field such as ``deadline_factor``),
with the special key ``cluster.size`` scaling every node group's count. On trace workloads,
``workload.trace_rate_scale`` thickens or thins the arrival stream, ``workload.bytes_scale``
scales job sizes and ``workload.trace_keep.<class>`` thins one class of jobs (skewing the mix).
Rewards are divided by a per-id ``reward_scale`` (about the scenario's typical headline), so
families whose penalties differ by three orders of magnitude weigh alike in one PPO objective. A
per-id ``overrides`` changes an id's scenario itself before any randomisation (e.g.
ThesisScale-v0 at 18 nodes and two days of arrivals); training, validation and the baselines'
means all play that changed world.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

#: Fields a factor of ``vary`` may scale, with the bounds the scaled value is clipped to.
VARY_BOUNDS = {
    "workload.load": (0.05, 3.0),
    "workload.deadline_factor": (1.05, 50.0),
    "interference.mean": (0.0, 0.9),
    "interference.amplitude": (0.0, 0.9),
    "availability.min_fraction": (0.1, 1.0),
    "workload.task_work_scale": (0.1, 10.0),
    "cluster.size": (1, 10_000),
    "workload.trace_rate_scale": (0.05, 20.0),
    "workload.bytes_scale": (1e-4, 1e4),
    "workload.trace_keep.map_only": (0.0, 1.0),
    "workload.trace_keep.aggregate": (0.0, 1.0),
    "workload.trace_keep.transform": (0.0, 1.0),
}

#: Mapping fields whose entries ``vary`` scales one by one (``workload.trace_keep.map_only``):
#: the override replaces the whole mapping.
VARY_MAPS = ("workload.trace_keep",)


@dataclass
class WorldsConfig:
    """The pool of worlds a generalist trains on.

    Attributes:
        ids: Registered env ids to draw from.
        weights: id -> relative probability of drawing it (default 1).
        reward_scale: id -> divisor of its rewards (default 1); about its typical headline.
        vary: Scenario field -> ``[lo, hi]``: the field is multiplied by a factor drawn uniformly
            from that range at every reset (keys: :data:`VARY_BOUNDS`).
        overrides: id -> scenario overrides (dotted paths, as ``env_kwargs``) that replace the
            id's scenario in the pool, before ``vary``, and in the validation of a training run.
        vary_by_id: id -> ``{field: [lo, hi]}``: ranges that replace ``vary``'s for that id's
            draws (the other fields keep ``vary``'s), e.g. ``cluster.size: [1.0, 5.5]`` for a
            world scaled down by ``overrides`` to 18 nodes, drawn at 18 to 99 nodes.
        max_nodes: ``N_max``, the padded node count (at least every drawn world's node count).
        observe_objective: Observations carry the ``objective`` key (the drawn world's reward
            weights, :func:`~mrsched_gym.env.encoding.objective_vector`): worlds scored on mean time
            in system and worlds scored on deadlines can then call for different orders.
    """

    ids: list[str] = field(default_factory=list)
    weights: dict[str, float] = field(default_factory=dict)
    reward_scale: dict[str, float] = field(default_factory=dict)
    vary: dict[str, list[float]] = field(default_factory=dict)
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)
    vary_by_id: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    max_nodes: int = 32
    observe_objective: bool = False

    def validate(self) -> WorldsConfig:
        """Check ids, weights, scales and ranges.

        Returns:
            ``self``.

        Raises:
            ValueError: A bad field; the message names it.
        """
        from mrsched_gym.registration import ENV_IDS
        if not self.ids:
            raise ValueError("worlds.ids: at least one registered id is needed")
        for i in self.ids:
            if i not in ENV_IDS:
                raise ValueError(f"worlds.ids: {i!r} is not a registered id")
        for name, d in (("weights", self.weights), ("reward_scale", self.reward_scale)):
            for k, v in d.items():
                if k not in self.ids or not v > 0:
                    raise ValueError(f"worlds.{name}.{k}: must be a listed id with a value > 0")
        check_ranges("worlds.vary", self.vary)
        for k, ranges in self.vary_by_id.items():
            if k not in self.ids or not isinstance(ranges, dict) or not ranges:
                raise ValueError(f"worlds.vary_by_id.{k}: must be a listed id with a mapping of "
                                 f"field -> [lo, hi]")
            check_ranges(f"worlds.vary_by_id.{k}", ranges)
        for k, ov in self.overrides.items():
            if k not in self.ids or not isinstance(ov, dict) or not ov:
                raise ValueError(f"worlds.overrides.{k}: must be a listed id with a mapping of "
                                 f"scenario overrides")
            try:
                self.scenario(k)
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"worlds.overrides.{k}: {e}") from None
        return self

    def vary_for(self, env_id: str) -> dict[str, list[float]]:
        """The factor ranges of ``env_id``'s draws: ``vary`` with ``vary_by_id``'s over it."""
        return {**self.vary, **self.vary_by_id.get(env_id, {})}

    def scenario(self, env_id: str):
        """The scenario the pool plays for ``env_id``: its registered one with ``overrides``."""
        from mrsched_gym.config import with_overrides
        from mrsched_gym.registration import scenario_for
        ov = self.overrides.get(env_id)
        return with_overrides(scenario_for(env_id), ov) if ov else scenario_for(env_id)


def check_ranges(where: str, ranges: dict[str, list[float]]) -> None:
    """Raise ``ValueError`` naming ``where.FIELD`` for an unknown field or a bad range."""
    for k, r in ranges.items():
        if k not in VARY_BOUNDS:
            raise ValueError(f"{where}.{k}: unknown; known: {', '.join(VARY_BOUNDS)}")
        if (not isinstance(r, (list, tuple)) or len(r) != 2
                or not all(isinstance(x, (int, float)) for x in r) or not 0 < r[0] <= r[1]):
            raise ValueError(f"{where}.{k}: must be [lo, hi] with 0 < lo <= hi")


def _get(d: dict, path: str) -> Any:
    for p in path.split("."):
        d = d[p]
    return d


def world_overrides(base, vary: dict[str, list[float]], rng: np.random.Generator,
                    max_nodes: int | None = None) -> dict[str, Any]:
    """Scenario overrides for one randomised world of ``base`` (a Scenario).

    Args:
        base: The registered id's scenario.
        vary: Field -> ``[lo, hi]`` factor range (:attr:`WorldsConfig.vary`).
        rng: The generator the factors are drawn from (one draw per key, in sorted key order).
        max_nodes: Cap on the scaled cluster's node count.

    Returns:
        Dotted-path overrides (``{"workload.load": 0.83, ...}``).
    """
    from mrsched_gym.config import to_dict
    d = to_dict(base)
    out: dict[str, Any] = {}
    for key in sorted(vary):
        lo, hi = vary[key]
        f = float(rng.uniform(lo, hi))
        a, b = VARY_BOUNDS[key]
        if key == "cluster.size":
            groups = [dict(g) for g in d["cluster"]["nodes"]]
            n0 = sum(g["count"] for g in groups)
            for g in groups:
                g["count"] = max(1, int(round(g["count"] * f)))
            while max_nodes and sum(g["count"] for g in groups) > max_nodes:
                big = max(groups, key=lambda g: g["count"])
                big["count"] -= 1
            if sum(g["count"] for g in groups) != n0:
                out["cluster.nodes"] = groups
            continue
        v = _get(d, key)
        parent, _, entry = key.rpartition(".")
        if parent in VARY_MAPS:
            m = dict(out.get(parent, _get(d, parent)))
            m[entry] = float(np.clip(v * f, a, b))
            out[parent] = m
        elif isinstance(v, (list, tuple)):
            lo_v, hi_v = (float(np.clip(x * f, a, b)) for x in v)
            out[key] = [lo_v, max(lo_v, hi_v)]
        else:
            out[key] = float(np.clip(v * f, a, b))
    return out


def pad_observation(obs: dict, K: int, N: int, W: int) -> dict[str, np.ndarray]:
    """``obs`` padded to ``K`` candidates, ``N`` nodes and ``W`` forecast steps (module doc)."""
    c, n, fc = obs["candidates"], obs["nodes"], obs["forecast"]
    if c.shape[0] < K:
        c = np.concatenate([c, np.zeros((K - c.shape[0], c.shape[1]), np.float32)])
    if n.shape[0] < N:
        n = np.concatenate([n, np.zeros((N - n.shape[0], n.shape[1]), np.float32)])
    if fc.shape[0] < W:
        fc = np.concatenate([fc, np.full(W - fc.shape[0], fc[-1] if len(fc) else 1.0,
                                         np.float32)])
    elif fc.shape[0] > W:
        fc = fc[:W]
    return dict(obs, candidates=c, nodes=n, forecast=fc)


def pad_mask(mask: np.ndarray, K: int) -> np.ndarray:
    """An env's mask (``K_env + 1``; skip last) as the pool's (``K + 1``; skip last)."""
    out = np.zeros(K + 1, dtype=bool)
    out[: len(mask) - 1] = mask[:-1]
    out[K] = mask[-1]
    return out


class WorldPool(gym.Env):
    """One env over many randomised worlds, with padded observations (see the module doc).

    Args:
        worlds: The pool (:class:`WorldsConfig`).
        lean_info: Make the worlds with the env's ``lean_info=True`` and give ``step()`` an info
            with only ``world``, ``invalid_action`` and ``episode_over`` (for training loops
            that read none of the rest; the episodes are the same).
    """

    metadata = {"render_modes": []}

    def __init__(self, worlds: WorldsConfig, lean_info: bool = False) -> None:
        self.worlds = worlds.validate()
        self.ids = list(worlds.ids)
        w = np.array([worlds.weights.get(i, 1.0) for i in self.ids], float)
        self.p = w / w.sum()
        self.bases = {i: worlds.scenario(i) for i in self.ids}
        self.K = max(sc.decisions.max_candidates for sc in self.bases.values())
        self.W = max(sc.availability.forecast_steps for sc in self.bases.values())
        self.N = int(worlds.max_nodes)
        too_big = [i for i, sc in self.bases.items()
                   if sum(g.count for g in sc.cluster.nodes) > self.N]
        if too_big:
            raise ValueError(f"worlds.max_nodes {self.N} < the node count of {too_big}")
        speculating = [i for i, sc in self.bases.items() if sc.decisions.speculation.enabled]
        if speculating:
            raise ValueError(f"worlds.ids: {speculating} pose speculation decisions, whose "
                             f"observation has a longer decision array; the pool holds worlds "
                             f"without them")
        from mrsched_gym.env import observation_space
        self.action_space = spaces.Discrete(self.K + 1)
        self.observation_space = observation_space(self.K, self.N, self.W,
                                                   objective=bool(worlds.observe_objective))
        self.lean_info = bool(lean_info)
        self.env = None
        self.world: tuple[str, dict] | None = None
        #: The current world's own observation (unpadded), as its env returned it.
        self.world_obs: dict | None = None
        self._rng = np.random.default_rng()

    # ------------------------------------------------------------------ the world
    def draw_world(self) -> tuple[str, dict[str, Any], int]:
        """The next world from the pool's generator: ``(id, overrides, episode seed)``."""
        i = self.ids[int(self._rng.choice(len(self.ids), p=self.p))]
        ov = world_overrides(self.bases[i], self.worlds.vary_for(i), self._rng, self.N)
        return i, ov, int(self._rng.integers(2**31))

    @property
    def sim(self):
        """The current world's simulator (what ``WorkConserving`` reads)."""
        return self.env.sim

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Draw a world (from the pool's generator, seeded by ``seed``) and reset it.

        Returns:
            ``(observation, info)``; ``info["world"]`` is the id, ``info["overrides"]`` the
            randomised fields.
        """
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        from mrsched_gym.config import with_overrides
        from mrsched_gym.env import MRSchedEnv
        i, ov, s = self.draw_world()
        self.world = (i, ov)
        self.scale = float(self.worlds.reward_scale.get(i, 1.0))
        self.env = MRSchedEnv(with_overrides(self.bases[i], ov),
                              observe_objective=bool(self.worlds.observe_objective),
                              lean_info=self.lean_info)
        obs, info = self.env.reset(seed=s)
        self.world_obs = obs
        info = dict(info, world=i, overrides=ov, action_mask=self.action_masks())
        return self._pad(obs), info

    def step(self, action):
        """One decision of the current world (the pool's skip ``K_max`` is the env's ``K``).

        Returns:
            ``(observation, reward / reward_scale, terminated, truncated, info)``.
        """
        a = int(action)
        K = self.env.K
        if a == self.K:
            a = K
        elif a >= K:
            a = K + 1 + a                     # a padded candidate: invalid in the env too
        obs, r, term, trunc, info = self.env.step(a)
        self.world_obs = obs
        info["world"] = self.world[0]
        if not self.lean_info:
            info["action_mask"] = self.action_masks()
        return self._pad(obs), r / self.scale, term, trunc, info

    def action_masks(self) -> np.ndarray:
        """The current world's mask, padded (padded candidates illegal; skip last)."""
        return pad_mask(self.env.action_masks(), self.K)

    def _pad(self, obs: dict) -> dict[str, np.ndarray]:
        return pad_observation(obs, self.K, self.N, self.W)


__all__ = ["WorldPool", "WorldsConfig", "check_ranges", "pad_mask", "pad_observation",
           "world_overrides", "VARY_BOUNDS", "VARY_MAPS"]
