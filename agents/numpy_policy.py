"""Shipped set-network agents without torch: the actor's forward pass in numpy.

A trained :class:`~mrsched_gym.agents.networks.SetPolicy` is exported once
(:func:`~mrsched_gym.agents.training.numpy_export.export_numpy`, needs torch) to ``NAME.npz`` — the
actor's weights (the policy's feature extractor and its
:class:`~mrsched_gym.agents.networks.CandidateScorer`) and, as JSON text, ``hidden``,
``work_conserving``, ``masked``, the trained forecast length, ``node_mask`` (pool only the
present nodes, for agents trained on padded observations) and ``objective`` (the length of the
``objective`` key the agent reads, 0 if none; without it in the observation the agent reads the
world's reward weights at ``reset``). :class:`NumpySetPolicy` replays
the same computation
for one observation: symlog inputs, the per-node and per-candidate networks, masked mean pooling,
the shared candidate score and the skip score, then the argmax of the masked logits (the
deterministic action the harness takes with torch). It needs no torch, runs on any cluster size
and candidate count (the weights do not depend on N or K; the forecast is cut or padded with its
last value to the trained length), and gives the same actions as the torch policy (tested).

It is written for speed (~20 µs per decision, ~20x the torch policy on one thread; the numbers
are in the README's Speed section): a few dozen small numpy calls, each costing more in overhead
than in arithmetic, so the work is arranged to need few of them (see :class:`NumpySetPolicy`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mrsched_gym.agents import agent_files
from mrsched_gym.agents.observations import (
    fit_decision,
    objective_of,
    work_conserving_mask,
    world_objective,
)
from mrsched_gym.agents.rule_prior import preference
from mrsched_gym.env.encoding import decision_kind_slot
from mrsched_gym.sim.decision import SCHEDULE

_SCHEDULE = decision_kind_slot(SCHEDULE)       # the schedule entry of obs["decision"]

ILLEGAL_LOGIT = -1e8
#: Skip's logit while a candidate is valid under ``work_conserving`` (``set_layers``'s).
BUSY_SKIP_LOGIT = 0.5 * ILLEGAL_LOGIT
#: The array of the .npz that holds the metadata (JSON text), defined with the file checks.
META_KEY = agent_files.META_KEY
#: The actor's layers, in the order of their use (each an affine map; ReLU after every one of the
#: four encoders' layers, as ``set_layers.mlp`` builds them).
ENCODERS = {"node_enc": 2, "global_enc": 1, "cand_enc": 2, "cand_mix": 1}
#: Candidate feature 0: the row holds a candidate (as ``set_layers.VALID_FEATURE``).
VALID_FEATURE = 0
#: Node feature 9: the decision node (as ``set_layers.DECISION_NODE_FEATURE``).
DECISION_NODE_FEATURE = 9
#: Node feature 2: CPU speed, 0 only on a padded node row (as ``set_layers.NODE_SPEED_FEATURE``).
NODE_SPEED_FEATURE = 2


def symlog(x: np.ndarray) -> np.ndarray:
    """``sign(x) * log(1 + |x|)`` (as :func:`mrsched_gym.agents.networks.symlog`)."""
    return np.sign(x) * np.log1p(np.abs(x))


class _Workspace:
    """Preallocated buffers for observations with N nodes and K candidate rows.

    The biases are folded into the weight matrices (an input row ends with a constant 1, the
    matrix with the bias row), so every layer is one ``np.dot`` into a contiguous buffer and one
    ``np.maximum`` (the ReLU) into the next layer's input; the per-decision terms that torch adds
    to every candidate row (the context's share of the first candidate layer, the pool's share of
    the mixing layer) are written into the last row of a private copy of that layer's matrix.
    """

    def __init__(self, pol: NumpySetPolicy, N: int, K: int) -> None:
        h, F, G, D, W, n_obj = pol.hidden, pol.F, pol.G, pol.D, pol.W, pol.n_objective
        f32 = np.float32
        self.N, self.K = N, K
        # nodes: [nodes | 1] -> [relu(L1) | 1] -> L2 (ReLU in place) -> pooled into gin
        self.nodes_aug = np.ones((N, G + 1), f32)
        self.nodes_in = self.nodes_aug[:, :G]
        self.n1 = np.empty((N, h), f32)
        self.n1_aug = np.ones((N, h + 1), f32)
        self.n1_relu = self.n1_aug[:, :h]
        self.n2 = np.empty((N, h), f32)
        self.zeros_n = np.zeros((N, h), f32)
        self.node_w = np.full(N, 1.0 / N, f32)          # the mean (or the present nodes' mean)
        # the global input [symlog(decision), forecast, decision node, node pool, objective, 1]
        self.gin = np.ones(D + W + G + h + n_obj + 1, f32)
        self.g_dec = self.gin[:D]
        self.g_fc = self.gin[D:D + W]
        self.g_dnode = self.gin[D + W:D + W + G]
        self.g_pool = self.gin[D + W + G:D + W + G + h]
        self.g_obj = self.gin[D + W + G + h:D + W + G + h + n_obj]
        self.dec_abs = np.empty(D, f32)
        self.g_pre = np.empty(h, f32)
        self.zeros_h = np.zeros(h, f32)
        # the context [g, 1, pool, 1]: the skip score is one dot with it
        self.ctx = np.ones(2 * h + 2, f32)
        self.ctx_g = self.ctx[:h]
        self.ctx_g1 = self.ctx[:h + 1]
        self.ctx_pool = self.ctx[h + 1:2 * h + 1]
        self.ctx_pool1 = self.ctx[h + 1:]
        # candidates: [symlog(c) | 1] @ [Wx; g Wg + b] -> [relu | 1] @ [W2; b2] -> [e | 1]
        self.cand_x = np.concatenate([pol.cand_x, np.zeros((1, h), f32)])
        self.cand_ctx_row = self.cand_x[F]
        self.mix = np.concatenate([pol.mix_e, np.zeros((1, h), f32)])
        self.mix_pool_row = self.mix[h]
        self.c_aug = np.ones((K, F + 1), f32)
        self.c_abs = np.empty((K, F), f32)
        self.e1 = np.empty((K, h), f32)
        self.e1_aug = np.ones((K, h + 1), f32)
        self.e2 = np.empty((K, h), f32)
        self.e2_aug = np.ones((K, h + 1), f32)
        self.h = np.empty((K, h), f32)
        self.h_aug = np.ones((K, h + 1), f32)
        self.zeros_k = np.zeros((K, h), f32)
        self.ones_k = np.ones(K, f32)
        self.scores = np.empty(K, f32)
        # views per count n of candidate rows (rows 0..n-1)
        self.rows = [_RowViews(self, n, F, h) for n in range(K + 1)]
        # bytes of the valid flags when the first n rows hold the candidates
        self.prefix = {bytes([1] * n + [0] * (K - n)): n for n in range(K + 1)}
        self.arange = np.arange(K)


class _RowViews:
    """The workspace's buffers cut to the first ``n`` candidate rows (made once per n)."""

    def __init__(self, ws: _Workspace, n: int, F: int, h: int) -> None:
        self.c_in = ws.c_aug[:n, :F]
        self.c_aug = ws.c_aug[:n]
        self.c_abs = ws.c_abs[:n]
        self.e1 = ws.e1[:n]
        self.e1_aug = ws.e1_aug[:n]
        self.e1_relu = ws.e1_aug[:n, :h]
        self.e2 = ws.e2[:n]
        self.e2_aug = ws.e2_aug[:n]
        self.e2_relu = ws.e2_aug[:n, :h]
        self.h = ws.h[:n]
        self.h_aug = ws.h_aug[:n]
        self.h_relu = ws.h_aug[:n, :h]
        self.zeros = ws.zeros_k[:n]
        self.ones = ws.ones_k[:n]
        self.scores = ws.scores[:n]
        self.count = np.float32(n)


class NumpySetPolicy:
    """The deterministic actor of a set-network agent, in numpy (see the module docstring).

    The forward pass works in preallocated buffers (one set per observation shape), with the
    biases folded into the weights and only the rows that hold a candidate encoded; a decision
    with a single legal action (MaskablePPO agents) is taken without a forward pass, as the
    argmax over one legal action needs no logits. An instance is not thread-safe (it reuses its
    buffers); a pickled copy rebuilds them.

    Args:
        weights: Array name -> array (as written by :func:`export_numpy`).
        meta: ``hidden``, ``work_conserving``, ``masked``, ``forecast`` (and the optional
            fields of :data:`~mrsched_gym.agents.agent_files.META_FIELDS`; ``prior`` and
            ``prior_weight``: a residual policy, :mod:`mrsched_gym.agents.rule_prior`).
        name: The policy's label.
    """

    def __init__(self, weights: dict[str, np.ndarray], meta: dict, name: str) -> None:
        self.name = name
        self.masked = bool(meta["masked"])
        self.work_conserving = bool(meta["work_conserving"])
        self.W = int(meta["forecast"])
        self.node_mask = bool(meta.get("node_mask", False))
        self.n_objective = int(meta.get("objective", 0))
        self.prior = meta.get("prior")                  # a residual policy's rule, or None
        self.prior_weight = np.float32(meta.get("prior_weight", 0.0))
        self._objective: np.ndarray | None = None

        def affine(key: str) -> np.ndarray:          # [weight.T; bias]: x_aug @ it = x W^T + b
            return np.concatenate([weights[f"{key}.weight"].T,
                                   weights[f"{key}.bias"][None]]).astype(np.float32)

        node1, node2 = affine("node_enc.0"), affine("node_enc.2")
        glob, cand1 = affine("global_enc.0"), affine("cand_enc.0")
        cand2, mix = affine("cand_enc.2"), affine("cand_mix.0")
        h = self.hidden = node1.shape[1]
        self.G = node1.shape[0] - 1
        self.F = cand1.shape[0] - 1 - h
        self.D = glob.shape[0] - 1 - self.W - self.G - h - self.n_objective
        self.node1, self.node2, self.glob, self.cand2 = node1, node2, glob, cand2
        # the first candidate layer split by input block: the candidate's own features, and
        # [g; bias] whose product is the same for every row (written into the workspace's copy)
        self.cand_x = cand1[:self.F].copy()
        self.cand_g = cand1[self.F:].copy()
        self.mix_e = mix[:h].copy()
        self.mix_p = mix[h:].copy()                  # [W_pool; bias], times [pool, 1]
        self.score = affine("action_net.score")[:, 0].copy()       # [w; b], times [h, 1]
        skip = affine("action_net.skip")[:, 0]
        # the context buffer is [g, 1, pool, 1]: the bias sits at g's 1, zero at the pool's
        self.skip = np.concatenate([skip[:h], skip[2 * h:], skip[h:2 * h], [0.0]]).astype(
            np.float32)
        self._half = np.float32(0.5)
        self._zero = np.float32(0.0)
        self._ws: dict[tuple[int, int], _Workspace] = {}

    @classmethod
    def load(cls, path: str | Path, name: str | None = None) -> NumpySetPolicy:
        """Load ``NAME.npz`` (weights and metadata, as :func:`export_numpy` writes it), every
        key, shape, dtype and weight checked first
        (:func:`~mrsched_gym.agents.agent_files.read_npz`; a bad file is one
        :class:`~mrsched_gym.errors.InputError` naming it and the key)."""
        path = Path(path)
        weights, meta = agent_files.read_npz(path)
        return cls(weights, meta, name or f"agent:{path.stem}")

    def __getstate__(self) -> dict:
        """Pickle without the buffers (their views would become copies)."""
        return dict(self.__dict__, _ws={})

    def _workspace(self, N: int, K: int) -> _Workspace:
        ws = self._ws.get((N, K))
        if ws is None:
            ws = self._ws[(N, K)] = _Workspace(self, N, K)
        return ws

    @staticmethod
    def _f32(x: np.ndarray) -> np.ndarray:
        return x if x.dtype == np.float32 else x.astype(np.float32)

    def _context(self, ws: _Workspace, obs: dict) -> None:
        """The global embedding g (into ``ws.ctx``) and its share of the first candidate layer."""
        nodes = self._f32(obs["nodes"])
        dot, relu = np.dot, np.maximum
        np.copyto(ws.nodes_in, nodes)
        dot(ws.nodes_aug, self.node1, ws.n1)
        relu(ws.n1, ws.zeros_n, out=ws.n1_relu)
        dot(ws.n1_aug, self.node2, ws.n2)
        relu(ws.n2, ws.zeros_n, out=ws.n2)
        if self.node_mask:                                  # pool the present nodes only
            present = nodes[:, NODE_SPEED_FEATURE] > self._zero
            np.divide(present, np.float32(max(np.count_nonzero(present), 1)), out=ws.node_w)
        dot(ws.node_w, ws.n2, ws.g_pool)                    # the nodes' (masked) mean
        dot(nodes[:, DECISION_NODE_FEATURE], nodes, ws.g_dnode)   # the decision node's row
        decision = self._f32(obs["decision"])
        np.abs(decision, out=ws.dec_abs)                    # symlog = copysign(log1p|x|, x)
        np.log1p(ws.dec_abs, out=ws.dec_abs)
        np.copysign(ws.dec_abs, decision, out=ws.g_dec)
        fc = obs["forecast"]
        if len(fc) >= self.W:
            ws.g_fc[:] = fc[:self.W]
        else:                                               # padded with its last value
            ws.g_fc[:len(fc)] = fc
            ws.g_fc[len(fc):] = fc[-1] if len(fc) else 1.0
        if self.n_objective:
            ws.g_obj[:] = objective_of(obs, self._objective, self.name)
        dot(ws.gin, self.glob, ws.g_pre)
        relu(ws.g_pre, ws.zeros_h, out=ws.ctx_g)
        dot(ws.ctx_g1, self.cand_g, ws.cand_ctx_row)        # g Wg + b, added to every row

    def _candidates(self, ws: _Workspace, cands: np.ndarray, n: int) -> np.ndarray:
        """The scores of the first ``n`` rows of ``cands`` (all legal), pool into ``ws.ctx``."""
        dot, relu = np.dot, np.maximum
        r = ws.rows[n]
        np.abs(cands, out=r.c_abs)
        np.log1p(r.c_abs, out=r.c_abs)
        np.copysign(r.c_abs, cands, out=r.c_in)
        dot(r.c_aug, ws.cand_x, r.e1)
        relu(r.e1, r.zeros, out=r.e1_relu)
        dot(r.e1_aug, self.cand2, r.e2)
        relu(r.e2, r.zeros, out=r.e2_relu)
        dot(r.ones, r.e2_aug, ws.ctx_pool1)                 # [sum of rows, n]
        np.divide(ws.ctx_pool1, r.count, out=ws.ctx_pool1)  # [pool, 1]: the masked mean
        dot(ws.ctx_pool1, self.mix_p, ws.mix_pool_row)      # pool Wp + b, added to every row
        dot(r.e2_aug, ws.mix, r.h)
        relu(r.h, r.zeros, out=r.h_relu)
        dot(r.h_aug, self.score, r.scores)
        return r.scores

    def _encode(self, obs: dict, flags: bytes | None = None
                ) -> tuple[_Workspace, np.ndarray, np.ndarray]:
        """Run the network on ``obs``: the workspace, the valid rows' indices and their scores
        (in row order). ``flags``: the bytes of the valid flags, if already known."""
        cands = full = self._f32(obs["candidates"])
        K = len(cands)
        ws = self._workspace(len(obs["nodes"]), K)
        self._context(ws, obs)
        if flags is None:
            flags = (cands[:, VALID_FEATURE] > self._half).tobytes()
        n = ws.prefix.get(flags)
        if n is None:                                      # not the first rows: gather them
            rows = np.flatnonzero(np.frombuffer(flags, dtype=bool))
            n, cands = len(rows), cands.take(rows, axis=0)
        else:
            rows, cands = ws.arange[:n], cands[:n]
        if n == 0:
            ws.ctx_pool.fill(0.0)                           # torch: a zero sum over max(0, 1)
            return ws, rows, ws.scores[:0]
        scores = self._candidates(ws, cands, n)
        if self.prior is not None:          # a residual policy: the rule's preference added
            pref = preference(self.prior, full[None], np.asarray(obs["decision"])[None, _SCHEDULE])
            scores += self.prior_weight * pref[0, rows]
        return ws, rows, scores

    def _skip(self, ws: _Workspace) -> float:
        return float(np.dot(ws.ctx, self.skip))

    def logits(self, obs: dict) -> np.ndarray:
        """The action logits ``[K + 1]`` of one observation (illegal candidates at -1e8)."""
        ws, rows, scores = self._encode(obs)
        K = ws.K
        out = np.full(K + 1, ILLEGAL_LOGIT, dtype=np.float32)
        out[rows] = scores
        busy = self.work_conserving and len(rows) and obs["decision"][_SCHEDULE] > 0.5
        out[K] = BUSY_SKIP_LOGIT if busy else self._skip(ws)
        return out

    def reset(self, sim, seed: int | None = None) -> None:
        """An agent that observes the objective reads it from the world (what the env's
        ``observe_objective=True`` puts in the observation); otherwise stateless."""
        if self.n_objective:
            self._objective = world_objective(sim)

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The argmax of the logits, masked as the torch policy masks them.

        With a mask that allows exactly the valid candidates (the env's own), only the legal
        choices are scored: the best candidate (the first of equal scores, as ``argmax``), or
        skip if legal and strictly better. A MaskablePPO agent with one legal action takes it.
        """
        if len(obs["decision"]) != self.D:          # a world with more decision kinds
            fitted = fit_decision(obs, self.D)
            if fitted is None:
                return len(mask) - 1                # a kind it was not trained on: skip
            obs = fitted
        cands = obs["candidates"]
        K = len(cands)
        schedule = bool(obs["decision"][_SCHEDULE] > 0.5)
        if self.masked and not self.work_conserving and not mask[K]:
            mask = mask.copy()                      # trained with idling allowed: act so
            mask[K] = True                          # under the env's work-conserving mask too
        if self.masked:
            legal = mask[:K]
            flags = (cands[:, VALID_FEATURE] > self._half).tobytes()
            if legal.tobytes() == flags:
                n = flags.count(1)
                skip_ok = bool(mask[K]) and not (self.work_conserving and schedule and n)
                if n + skip_ok <= 1:                        # one legal action (or none: argmax 0)
                    return K if skip_ok else (flags.index(1) if n else 0)
                ws, rows, scores = self._encode(obs, flags)
                j = int(scores.argmax())
                if skip_ok and self._skip(ws) > scores[j]:
                    return K
                return int(rows[j])
        else:
            ws, rows, scores = self._encode(obs)
            if len(rows):
                j = int(scores.argmax())
                best = scores[j]
                busy = self.work_conserving and schedule
                if best > ILLEGAL_LOGIT and (busy or self._skip(ws) <= best):
                    return int(rows[j])
        return self._act_general(obs, mask)

    def _act_general(self, obs: dict, mask: np.ndarray) -> int:
        """The argmax of the whole masked logit vector (any mask)."""
        logits = self.logits(obs)
        if self.masked:
            if self.work_conserving:
                mask = work_conserving_mask(mask, bool(obs["decision"][_SCHEDULE] > 0.5))
            logits = np.where(mask, logits, -np.inf)
        return int(np.argmax(logits))


__all__ = ["NumpySetPolicy", "symlog"]
