"""A node's row of the observation's ``nodes`` array (its columns are listed in
:mod:`mrsched_gym.env.encoding`'s docstring and :data:`mrsched_gym.env.features.NODE_COLUMNS`),
computed from the simulator and packed (:func:`pack_changed_rows`); the encoder adds column 9, the
decision
node's flag."""

from __future__ import annotations

from typing import TypeAlias

from mrsched_gym.env.features import NODE_COLUMNS
from mrsched_gym.env.obs_layout import NODE_ROW
from mrsched_gym.sim.engine import Simulator

#: Columns 0-8 of a node's row.
NodeRow: TypeAlias = tuple[float, float, float, float, float, float, float, float, float]


def node_row(sim: Simulator, n: int, max_speed: float) -> NodeRow:
    """Node ``n``'s columns 0-8, ``max_speed`` the cluster's fastest CPU speed."""
    s = sim
    if s.slots_mode:
        fm = (s.map_slots[n] - s.used_map[n]) / s.map_slots[n]
        red = s.red_slots[n]               # 0 on a maps-only node (reduce_slots: 0)
        fr = (red - s.used_red[n]) / red if red else 0.0
    else:
        fm = s.cap[n] - s.res[n][0]           # max(0.0, .) and min(., 1.0) below,
        fm = fm if fm > 0.0 else 0.0          # written out: the builtins are calls
        fr = 1.0 - s.res[n][2]
        fr = fr if fr > 0.0 else 0.0
    up = s.up[n]
    susp = float(len(s.susp_on[n])) / 4.0
    return (float(up), s.cap[n], s.speed[n] / max_speed, float(s.shared[n]),
            float(s.accel[n] is not None), fm if up else 0.0, fr if up else 0.0,
            s.residual[n], 1.0 if 1.0 < susp else susp)


def pack_changed_rows(sim: Simulator, packed: bytearray, free_map: list[float],
                      free_red: list[float], max_speed: float) -> None:
    """Repack columns 0-8 of the nodes the simulator marked changed (``Simulator.dirty``) into
    ``packed`` (the node rows as little-endian float32, ``NODE_ROW``), note their free map and
    reduce capacity (columns 5 and 6) in ``free_map`` and ``free_red``, and clear the marks."""
    width = 4 * len(NODE_COLUMNS)
    for n in sim.dirty:
        c = node_row(sim, n, max_speed)
        free_map[n] = c[5]
        free_red[n] = c[6]
        NODE_ROW.pack_into(packed, width * n, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
                           c[8])
    sim.dirty.clear()
