"""The receding-horizon allocation problem of RDS (Section III.D, Eq. 4-5).

Variables ``u[j, i]``: slots for job j in control interval i of the horizon. Minimise

    sum_j w_j sum_i max(0, yref_j(i) - y_j(i))^2 + sum_i P_i sum_j ((u_j(i) - u_j(i-1)) / S)^2

with y_j(i) = (interval / work_j) x sum_{k <= i} u_j(k) (the progress model), u_j(0) the current
allocation, subject to sum_j u_j(i) <= cap_i (Eq. 5: the predicted available slots) and
0 <= u_j(i) <= umax_j.

The one-sided penalty is written as a standard convex QP with one slack per (job, interval):
``max(0, r)^2 = min { g^2 : g >= r, g >= 0 }``, so the variables are ``x = [u, g]`` and every
constraint is linear. It is solved by Clarabel (Goulart & Chen 2024, an interior-point solver with
its own sparse LDL factorisation): exact to ~1e-8, a few milliseconds for the problem sizes of the
leaderboard, and single-threaded — no BLAS call — so the answer is the same bit for bit whatever
the machine's BLAS/OpenMP thread count. (scipy's SLSQP, used before, needed ~100 ms per solve with
one BLAS thread and ~30x more under default threading, and its answer changed with the thread
count; a test checks that both reach the same optimum.)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp


def allocation_objective(u: np.ndarray, work: np.ndarray, left: np.ndarray, weight: np.ndarray,
                         u0: np.ndarray, interval: float, P: Sequence[float],
                         S: float) -> float:
    """The QP's objective at the allocation ``u`` ``[J, H]`` (for tests and diagnostics)."""
    H = u.shape[1]
    yref, scale = progress_targets(work, left, interval, H)
    gap = np.maximum(yref - np.cumsum(u, axis=1) * scale[:, None], 0.0)
    du = np.diff(np.concatenate([np.asarray(u0, float)[:, None], u], axis=1), axis=1) / S
    return float(np.sum(np.asarray(weight, float)[:, None] * gap ** 2)
                 + np.sum(np.asarray(P[:H], float)[None, :] * du ** 2))


def progress_targets(work: np.ndarray, left: np.ndarray, interval: float,
                     H: int) -> tuple[np.ndarray, np.ndarray]:
    """``yref [J, H]``, the calibrated progress targets (work spread evenly up to the deadline,
    RDS III.A; 1 for overdue jobs), and ``scale [J]``, the progress one slot makes in an interval
    (interval / remaining slot-seconds)."""
    left = np.asarray(left, float)
    t_end = interval * np.arange(1, H + 1)
    yref = np.where(left[:, None] > 0,
                    np.minimum(1.0, t_end[None, :] / np.maximum(left, 1e-9)[:, None]), 1.0)
    scale = interval / np.maximum(np.asarray(work, float), 1e-9)
    return yref, scale


def solve_allocation(work: np.ndarray, left: np.ndarray, weight: np.ndarray, cap: np.ndarray,
                     umax: np.ndarray, u0: np.ndarray, interval: float,
                     P: Sequence[float]) -> np.ndarray:
    """The optimal slot allocation ``[J, H]`` of the receding-horizon QP (module docstring).

    Args:
        work: Remaining slot-seconds per job.
        left: Seconds to each deadline (<= 0: overdue).
        weight: Penalty weights w_j.
        cap: Slots available per interval (S x fhat).
        umax: Useful slots per job.
        u0: Current allocation per job.
        interval: Control interval (s).
        P: Control-effort weights per horizon step (at least H of them).

    If the solver reports a failure (it has not been seen on these problems), the current
    allocation is kept over the horizon, clipped to the bounds.
    """
    import clarabel

    J, H = len(work), len(cap)
    if J == 0:
        return np.zeros((0, H))
    weight = np.asarray(weight, float)
    umax = np.maximum(np.asarray(umax, float), 0.0)
    u0 = np.asarray(u0, float)
    cap = np.maximum(np.asarray(cap, float), 0.0)
    S = max(float(cap.max()), 1.0)
    Pv = np.asarray(P[:H], float)
    yref, scale = progress_targets(work, left, interval, H)
    pat = _pattern(J, H)
    n, jj, ii = J * H, pat.jj, pat.ii

    # Objective 1/2 x'Qx + q'x (upper triangle of Q): control effort on u (a tridiagonal block
    # per job: sum_i P_i (u_i - u_{i-1})^2 / S^2, u_0 given), w_j g^2 on the slacks.
    p_next = np.append(Pv[1:], 0.0)
    Q = pat.Q.with_values(np.concatenate([2.0 * (Pv[ii] + p_next[ii]) / S ** 2,
                                          -2.0 * p_next[ii][pat.sup] / S ** 2,
                                          2.0 * weight[jj]]))
    q = np.zeros(2 * n)
    q[:n][ii == 0] = -2.0 * Pv[0] * u0 / S ** 2
    # Constraints A x <= b (Clarabel: A x + s = b, s >= 0); the rows are listed in _pattern.
    A = pat.A.with_values(np.concatenate([np.repeat(-scale, pat.n_tri), pat.A_ones]))
    b = np.concatenate([-yref.ravel(), np.zeros(n), umax[jj], cap])

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.direct_solve_method = "qdldl"     # single-threaded LDL: thread-count independent
    settings.max_threads = 1
    solution = clarabel.DefaultSolver(Q, q, A, b, [clarabel.NonnegativeConeT(len(b))],
                                      settings).solve()
    if str(solution.status) not in ("Solved", "AlmostSolved"):
        return np.minimum(np.repeat(u0[:, None], H, axis=1), umax[:, None])
    u = np.asarray(solution.x, float)[:n].reshape(J, H)
    return np.clip(u, 0.0, umax[:, None])


class SparsePattern:
    """A CSC sparsity pattern given in coordinate order; :meth:`with_values` fills it.

    Args:
        rows: Row index of each entry.
        cols: Column index of each entry.
        shape: The matrix shape.
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> None:
        self.order = np.lexsort((rows, cols))          # column-major, rows ascending
        self.indices = rows[self.order].astype(np.int64)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(cols, minlength=shape[1]))])
        self.shape = shape

    def with_values(self, values: np.ndarray) -> sp.csc_matrix:
        """The matrix with ``values`` given in the coordinate order of the constructor."""
        return sp.csc_matrix((values[self.order], self.indices, self.indptr), shape=self.shape)


class _Pattern:
    """Index arrays of one problem size (J jobs, H intervals), built once and reused."""

    def __init__(self, J: int, H: int) -> None:
        n = J * H
        ar = np.arange(n)
        self.jj, self.ii = np.divmod(ar, H)            # job and interval of each u / g variable
        self.sup = self.ii < H - 1
        # Q: diagonal of u, super-diagonal of u within a job, diagonal of g.
        self.Q = SparsePattern(np.concatenate([ar, ar[self.sup], n + ar]),
                               np.concatenate([ar, ar[self.sup] + 1, n + ar]), (2 * n, 2 * n))
        # A, four blocks of rows:
        #   -scale_j * sum_{k<=i} u_jk - g_ji <= -yref_ji     (g covers the progress gap)
        #   -u <= 0,  u <= umax,  sum_j u_ji <= cap_i
        # (g >= 0 is implied: min g^2 subject to g >= r alone gives g = max(r, 0).)
        tri_r, tri_c = np.tril_indices(H)              # (i, k) pairs with k <= i, per job
        self.n_tri = len(tri_r)
        r1 = (np.arange(J)[:, None] * H + tri_r[None, :]).ravel()
        c1 = (np.arange(J)[:, None] * H + tri_c[None, :]).ravel()
        self.A = SparsePattern(np.concatenate([r1, ar, n + ar, 2 * n + ar, 3 * n + self.ii]),
                               np.concatenate([c1, n + ar, ar, ar, ar]), (3 * n + H, 2 * n))
        self.A_ones = np.concatenate([-np.ones(n), -np.ones(n), np.ones(n), np.ones(n)])


@functools.lru_cache(maxsize=256)
def _pattern(J: int, H: int) -> _Pattern:
    return _Pattern(J, H)
