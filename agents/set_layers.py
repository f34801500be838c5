"""The set network's layers in plain torch, shared by the SB3 policies and the RLlib module.

:mod:`mrsched_gym.agents.networks` wraps them for stable-baselines3 (``SetExtractor``,
``SetPolicy``), :mod:`mrsched_gym.agents.rllib_module` for RLlib (``SetRLModule``); this module
needs torch only, no RL library. The architecture is described in
:mod:`mrsched_gym.agents.networks`:

* :class:`SetEncoding` — Deep Sets over the nodes (shared per-node network, mean pooling) and
  over the candidates (shared per-candidate network conditioned on a global context, masked mean
  pooling, then a second shared layer that sees the pool). No weight depends on the number of
  candidates K or of nodes N.
* :class:`CandidateScorer` — a shared linear score per candidate embedding plus a score of the
  context for skip (the last action); illegal actions get :data:`ILLEGAL_LOGIT`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch as th
from torch import nn
from torch.nn import functional

#: The logit of an illegal action: finite (so ``p * log p`` stays 0, never NaN) and far below
#: any learned logit (its probability underflows to exactly 0 in float32).
ILLEGAL_LOGIT = -1e8
#: The logit of skip at a schedule decision with a valid candidate under ``work_conserving``:
#: as improbable as an illegal action while a candidate is legal, but above the mask's fill
#: (sb3-contrib masks at -1e8), so that when a rule of the action mask removes every candidate
#: (``agents/rules.py``) skip, the one legal action, is the one taken, not a uniform draw among
#: equal logits.
BUSY_SKIP_LOGIT = 0.5 * ILLEGAL_LOGIT
#: Candidate feature 0: the row holds a candidate (:mod:`mrsched_gym.env.encoding`).
VALID_FEATURE = 0
#: Node feature 9: the node is the decision node (:mod:`mrsched_gym.env.encoding`).
DECISION_NODE_FEATURE = 9
#: Node feature: CPU speed / max speed (0 only on a padded, absent node row).
NODE_SPEED_FEATURE = 2


def symlog(x: th.Tensor) -> th.Tensor:
    """``sign(x) * log(1 + |x|)``: compresses large magnitudes, keeps sign and zero."""
    return th.sign(x) * th.log1p(th.abs(x))


def split_affine(layer: nn.Linear, x: th.Tensor, ctx: th.Tensor) -> th.Tensor:
    """``layer(cat([x, ctx repeated for every row of x], -1))`` without the repetition.

    ``x`` is ``[B, K, n]``, ``ctx`` is ``[B, c]``: the weight is split by input block, so the
    context is multiplied once per observation instead of once per row. The same function, with
    other float roundings than the concatenated form (the sums run in another order).
    """
    n = x.shape[-1]
    return functional.linear(x, layer.weight[:, :n]) \
        + functional.linear(ctx, layer.weight[:, n:], layer.bias).unsqueeze(1)


#: Odd 64-bit multipliers of :func:`row_keys` (fixed, so a run is reproducible).
_ROW_KEY_MULTIPLIERS = np.random.default_rng(20261122).integers(
    1, 2 ** 63, 64, dtype=np.uint64) | np.uint64(1)


def row_keys(a: np.ndarray) -> np.ndarray:
    """A 64-bit key of each row of a contiguous 2-D float32 array (at most 64 columns): the
    rows' 32-bit words times fixed odd multipliers, summed modulo 2**64. Rows with equal bytes
    have equal keys; unequal rows almost never do (:func:`distinct_rows` checks)."""
    words = a.view(np.uint32).astype(np.uint64)
    return (words * _ROW_KEY_MULTIPLIERS[:a.shape[1]]).sum(axis=1)


def distinct_rows(x: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """The distinct rows of a 2-D float32 CPU tensor (equal bytes): ``first`` (the index of one
    row of each) and ``index`` (for every row, its distinct row's position), so that
    ``x[first][index]`` equals ``x``. The rows are told apart by a 64-bit key
    (:func:`row_keys`; sorting integers is ~10x faster than ``torch.unique(dim=0)``), and the
    result is checked: should two unequal rows share a key, the rows' bytes are sorted instead.
    """
    a = np.ascontiguousarray(x.detach().numpy())
    if a.dtype == np.float32 and a.shape[1] <= len(_ROW_KEY_MULTIPLIERS):
        _, first, index = np.unique(row_keys(a), return_index=True, return_inverse=True)
        if np.array_equal(a[first][index].view(np.uint32), a.view(np.uint32)):   # bytes
            return th.from_numpy(first), th.from_numpy(index.reshape(-1))
    keys = a.view(np.dtype((np.void, a.dtype.itemsize * a.shape[1]))).ravel()
    _, first, index = np.unique(keys, return_index=True, return_inverse=True)
    return th.from_numpy(first), th.from_numpy(index.reshape(-1))


def mlp(sizes: list[int]) -> nn.Sequential:
    """``Linear -> ReLU`` for each consecutive pair of ``sizes`` (ReLU after every layer)."""
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=False):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class SetFeatures(NamedTuple):
    """What :meth:`SetEncoding.encode_sets` returns for a batch of B observations with K
    candidates (``hidden`` = h)."""

    candidates: th.Tensor   # [B, K, h] per-candidate embeddings (rows past the candidates too)
    context: th.Tensor      # [B, h] global embedding (decision, forecast, decision node, nodes,
    #                         and the objective if observed)
    pool: th.Tensor         # [B, h] masked mean of the first-round candidate embeddings
    valid: th.Tensor        # [B, K] float 1/0: the row holds a candidate


class SetEncoding:
    """Mixin that builds and runs the set encoder on an ``nn.Module`` (the layers become the
    module's own attributes ``node_enc``, ``global_enc``, ``cand_enc``, ``cand_mix``, so the SB3
    extractor keeps its parameter names)."""

    hidden: int
    #: Pool only the present nodes: a row whose CPU speed feature (2) is 0 is padding (the
    #: :class:`~mrsched_gym.agents.training.worlds.WorldPool`'s); equal to the plain mean without
    #: padding.
    node_mask: bool = False
    #: Compute the same functions with fewer operations (the training option ``numerics:
    #: fast``; not saved with the weights): the first candidate layer and the mixing layer as
    #: :func:`split_affine`, only the rows that hold a candidate through the candidate network
    #: (the others' embeddings are 0, masked everywhere anyway), and the node network once per
    #: distinct node row of the batch (:func:`distinct_rows`; a minibatch of Hadoop-v0 has ~7%
    #: distinct rows; CPU only), its pool a weighted sum of those. Other roundings.
    fast_numerics: bool = False

    #: Length of ``obs["objective"]`` the context reads (0: the agent does not observe the
    #: objective; the env's ``observe_objective``).
    objective_features: int = 0

    def _build_set_layers(self, candidate_features: int, node_features: int,
                          decision_features: int, forecast_steps: int, hidden: int,
                          objective_features: int = 0) -> None:
        F, G, D, W = candidate_features, node_features, decision_features, forecast_steps
        self.hidden = hidden
        self.objective_features = objective_features
        self.node_enc = mlp([G, hidden, hidden])
        self.global_enc = mlp([D + W + G + hidden + objective_features, hidden])
        self.cand_enc = mlp([F + hidden, hidden, hidden])
        self.cand_mix = mlp([2 * hidden, hidden])

    def encode_sets(self, obs: dict[str, th.Tensor]) -> SetFeatures:
        """Encode a batch of observations (the env's ``Dict`` keys, batched, any K and N)."""
        cands, nodes = obs["candidates"], obs["nodes"]
        K = cands.shape[1]
        valid = (cands[..., VALID_FEATURE] > 0.5).float()                  # [B, K]
        node_pool = self._node_pool(nodes)                                  # [B, h]
        dec = DECISION_NODE_FEATURE
        dec_node = (nodes * nodes[..., dec:dec + 1]).sum(dim=1)             # the decision node
        parts = [symlog(obs["decision"]), obs["forecast"], dec_node, node_pool]
        if self.objective_features:
            parts.append(obs["objective"])
        g = self.global_enc(th.cat(parts, dim=1))                           # [B, h]
        if self.fast_numerics:
            return self._candidate_rows(cands, valid, g)
        else:
            gk = g.unsqueeze(1).expand(-1, K, -1)
            e = self.cand_enc(th.cat([symlog(cands), gk], dim=2))           # [B, K, h]
        w = valid.unsqueeze(2)
        pool = (e * w).sum(dim=1) / w.sum(dim=1).clamp(min=1.0)             # masked mean
        h = self.cand_mix(th.cat([e, pool.unsqueeze(1).expand(-1, K, -1)], dim=2))
        return SetFeatures(h, g, pool, valid)

    def _candidate_rows(self, cands: th.Tensor, valid: th.Tensor, g: th.Tensor) -> SetFeatures:
        """The candidate half of :meth:`encode_sets` with ``fast_numerics``: only the rows that
        hold a candidate go through the candidate network (the others' embeddings are 0; the
        features and the head mask them anyway), the context joins as :func:`split_affine`."""
        B, K, F = cands.shape
        rows = valid.reshape(-1).nonzero().squeeze(1)                       # [M] row indices
        owner = rows // K                                                    # their observation
        first, _, second, _ = self.cand_enc
        x = symlog(cands.reshape(B * K, F).index_select(0, rows))
        ctx = functional.linear(g, first.weight[:, F:], first.bias)
        e = th.relu(second(th.relu(functional.linear(x, first.weight[:, :F])
                                   + ctx.index_select(0, owner))))           # [M, h]
        pool = e.new_zeros(B, e.shape[1]).index_add(0, owner, e) \
            / valid.sum(dim=1, keepdim=True).clamp(min=1.0)                  # masked mean
        mix = self.cand_mix[0]
        h = th.relu(functional.linear(e, mix.weight[:, :e.shape[1]])
                    + functional.linear(pool, mix.weight[:, e.shape[1]:], mix.bias)
                    .index_select(0, owner))
        h = h.new_zeros(B * K, h.shape[1]).index_copy(0, rows, h).reshape(B, K, -1)
        return SetFeatures(h, g, pool, valid)

    def _node_pool(self, nodes: th.Tensor) -> th.Tensor:
        """The mean of the node network over the (present) nodes of each observation."""
        if self.fast_numerics and nodes.device.type == "cpu":
            return self._node_pool_distinct(nodes)
        node_emb = self.node_enc(nodes)                                     # [B, N, h]
        if self.node_mask:
            present = (nodes[..., NODE_SPEED_FEATURE:NODE_SPEED_FEATURE + 1] > 0).float()
            return (node_emb * present).sum(dim=1) / present.sum(dim=1).clamp(min=1.0)
        return node_emb.mean(dim=1)

    def _node_pool_distinct(self, nodes: th.Tensor) -> th.Tensor:
        """:meth:`_node_pool` with the node network run once per distinct node row: the pool
        is a weighted sum of the distinct rows' embeddings (weights ``[B, distinct]``)."""
        B, N, G = nodes.shape
        rows = nodes.reshape(B * N, G)
        first, index = distinct_rows(rows)
        if self.node_mask:
            present = (nodes[..., NODE_SPEED_FEATURE] > 0).float()
            w = present / present.sum(dim=1, keepdim=True).clamp(min=1.0)
        else:
            w = th.full((B, N), 1.0 / N)
        owner = np.repeat(np.arange(B), N) * len(first) + index.numpy()
        weights = np.bincount(owner, weights=w.reshape(-1).numpy(), minlength=B * len(first))
        weights = th.from_numpy(weights.reshape(B, len(first)).astype(np.float32))
        return weights @ self.node_enc(rows.index_select(0, first))

class SetEncoder(SetEncoding, nn.Module):
    """The set encoder as a standalone module (:class:`SetEncoding`).

    Args:
        candidate_features: Features per candidate row (F).
        node_features: Features per node row (G).
        decision_features: Length of ``decision`` (D).
        forecast_steps: Length of ``forecast`` (W).
        hidden: Width of the embeddings.
        objective_features: Length of ``objective`` (0: not observed).
    """

    def __init__(self, candidate_features: int, node_features: int, decision_features: int,
                 forecast_steps: int, hidden: int = 64, objective_features: int = 0) -> None:
        super().__init__()
        self._build_set_layers(candidate_features, node_features, decision_features,
                               forecast_steps, hidden, objective_features)

    def forward(self, obs: dict[str, th.Tensor]) -> SetFeatures:
        """:meth:`SetEncoding.encode_sets` of a batch of observations."""
        return self.encode_sets(obs)


class CandidateScorer(nn.Module):
    """Action head: shared per-candidate score + skip score.

    :meth:`forward` reads the flat feature layout of the SB3 ``SetExtractor`` (sized by K);
    :meth:`score` takes the embeddings themselves and works for any K.

    Args:
        K: Candidates per decision (the flat layout of :meth:`forward` only).
        hidden: Width of the extractor's embeddings.
        work_conserving: Make skip illegal at a schedule decision with a legal candidate.
        prior_weight: A residual head: the weight of the rule's preference added to the
            learned scores (None: no prior).
    """

    def __init__(self, K: int, hidden: int, work_conserving: bool = False,
                 prior_weight: float | None = None) -> None:
        super().__init__()
        self.K, self.hidden, self.work_conserving = K, hidden, work_conserving
        self.prior_weight = prior_weight
        self.score = nn.Linear(hidden, 1)
        self.skip = nn.Linear(2 * hidden, 1)

    def forward(self, latent: th.Tensor) -> th.Tensor:
        """The action logits ``[B, K + 1]`` (skip last); illegal actions get ``ILLEGAL_LOGIT``.
        With a ``prior_weight``, the K columns after the legality flags are the rule's
        preference (:mod:`mrsched_gym.agents.rule_prior`)."""
        K, h = self.K, self.hidden
        emb = latent[:, : K * h].reshape(-1, K, h)
        ctx = latent[:, K * h: K * h + 2 * h]
        valid = latent[:, K * h + 2 * h: K * h + 2 * h + K] > 0.5
        prior = None if self.prior_weight is None else \
            latent[:, K * h + 2 * h + K: K * h + 2 * h + 2 * K]
        return self.logits(emb, ctx, valid, latent[:, -1:] > 0.5, prior)

    def logits(self, emb: th.Tensor, ctx: th.Tensor, valid: th.Tensor,
               schedule: th.Tensor, prior: th.Tensor | None = None) -> th.Tensor:
        """The action logits ``[B, K + 1]`` for any K.

        Args:
            emb: Candidate embeddings ``[B, K, hidden]``.
            ctx: Context ``[B, 2 * hidden]`` (global embedding, candidate pool).
            valid: Legal candidates, bool ``[B, K]``; the others get ``ILLEGAL_LOGIT``.
            schedule: Bool ``[B, 1]``: this is a schedule decision (for ``work_conserving``).
            prior: A rule's preference ``[B, K]``, added times ``prior_weight`` to the
                candidates' scores (a residual policy), or None.

        Returns:
            ``[B, K + 1]`` logits, skip last.
        """
        logits = self.score(emb).squeeze(2)
        if prior is not None and self.prior_weight is not None:
            logits = logits + self.prior_weight * prior
        logits = th.where(valid, logits, th.full_like(logits, ILLEGAL_LOGIT))
        skip = self.skip(ctx)
        if self.work_conserving:
            busy = valid.any(dim=1, keepdim=True) & schedule
            skip = th.where(busy, th.full_like(skip, BUSY_SKIP_LOGIT), skip)
        return th.cat([logits, skip], dim=1)


__all__ = ["BUSY_SKIP_LOGIT", "CandidateScorer", "ILLEGAL_LOGIT", "SetEncoder", "SetEncoding",
           "SetFeatures", "distinct_rows", "mlp", "row_keys", "split_affine", "symlog"]
