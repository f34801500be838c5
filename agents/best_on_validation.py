"""Keep the best model on validation seeds while an SB3 model trains.

PPO's score moves up and down between checkpoints, so the last model of a run is not its best.
:class:`BestOnValidation` is an SB3 callback (the idea of SB3's ``EvalCallback``, scored by the
env's headline metric through the harness, with the env's action masks): every ``every`` steps it
saves the model, scores it on the validation seeds (by default 1000-1009, disjoint from the test
seeds 0-4 of the benchmark tables) exactly as ``agent:PATH`` would be scored, and keeps the best
model at ``best_path``. Select on validation seeds only, then report the kept model's score on
the test seeds::

    from sb3_contrib import MaskablePPO
    from mrsched_gym.agents import BestOnValidation, SetPolicy

    model = MaskablePPO(SetPolicy, gym.make("mrsched/Hadoop-v0"), seed=0)
    model.learn(300_000, callback=BestOnValidation("mrsched/Hadoop-v0", "best.zip"))

Scoring uses deterministic actions and its own envs, and restores Python's, numpy's and torch's
global random states after it (a short run trains to the same weights with and without it:
tests/test_best_on_validation.py).
"""

from __future__ import annotations

import math
import random
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

#: The validation seeds used by default: disjoint from the test seeds 0-4 of the guide's tables.
VALIDATION_SEEDS = tuple(range(1000, 1010))


class BestOnValidation(BaseCallback):
    """An SB3 callback that scores the model on validation seeds and keeps the best one.

    Args:
        env_id: The env id (or scenario) to score on, e.g. ``"mrsched/Hadoop-v0"``; its headline
            metric (lower is better) is the score.
        best_path: Where the best model so far is saved (an SB3 ``.zip``).
        every: Score when at least this many env steps have passed since the last score, at
            the start of the next rollout (the model then holds every update so far); and once
            at the end of training.
        seeds: The validation seeds (default :data:`VALIDATION_SEEDS`). Never the seeds you
            report results on.
        verbose: 1 prints one line per evaluation.
        at_start: Score the model before its first update too (at the start of the first
            rollout), so that the kept model is never worse on validation than the one training
            started from (a warm start, a residual policy's rule).

    Attributes:
        history: One ``{"step", "score"}`` dict per evaluation, in order.
        best_score: The best (lowest) mean headline so far (``inf`` before the first).
        best_step: The step count of the kept model (``-1`` before the first).
    """

    @property
    def next_score_step(self) -> int:
        """The step count from which the next rollout start scores the model."""
        return self._next

    def __init__(self, env_id: str, best_path: str | Path, every: int = 20_000,
                 seeds: Iterable[int] = VALIDATION_SEEDS, verbose: int = 0,
                 at_start: bool = False) -> None:
        super().__init__(verbose)
        if every < 1:
            raise ValueError(f"BestOnValidation: every must be >= 1, got {every}")
        self.seeds = [int(s) for s in seeds]
        if not self.seeds:
            raise ValueError("BestOnValidation: seeds is empty")
        from mrsched_gym.evaluate import scenario_of
        self.env_id = env_id
        self.headline = scenario_of(env_id).reward.headline
        self.best_path = Path(best_path)
        self.every = int(every)
        self.at_start = bool(at_start)
        self.history: list[dict[str, Any]] = []
        self.best_score = math.inf
        self.best_step = -1
        self._next = 0

    def score(self) -> float:
        """The current model's mean headline over the validation seeds (as ``agent:PATH``)."""
        import torch

        from mrsched_gym.evaluate import evaluate
        saved = random.getstate(), np.random.get_state(), torch.get_rng_state()
        try:                    # loading a model draws its initial weights: keep the training's
            with tempfile.TemporaryDirectory() as d:
                path = self.candidate_file(Path(d))
                recs = evaluate([f"agent:{path}"], [self.env_id], seeds=self.seeds, workers=1,
                                progress=False)
        finally:
            random.setstate(saved[0])
            np.random.set_state(saved[1])
            torch.set_rng_state(saved[2])
        return float(np.mean([r[self.headline] for r in recs]))

    def candidate_file(self, folder: Path) -> Path:
        """Write the current model into ``folder`` as the file :meth:`score` ranks as
        ``agent:PATH``, and return its path: ``candidate.zip`` (``model.save``). A subclass may
        write another form of the same policy (the numpy export, ``.npz``)."""
        path = folder / "candidate.zip"
        self.model.save(path)
        return path

    def _evaluate(self) -> None:
        step = int(self.model.num_timesteps)
        if self.history and self.history[-1]["step"] == step:
            return
        value = self.score()
        self.history.append({"step": step, "score": value})
        if value < self.best_score:
            self.best_score, self.best_step = value, step
            self.best_path.parent.mkdir(parents=True, exist_ok=True)
            self.model.save(self.best_path)
        if self.verbose:
            print(f"step {step}: validation {self.headline} {value:.3f} "
                  f"(best {self.best_score:.3f} at {self.best_step})", flush=True)

    def _on_training_start(self) -> None:
        step = self.model.num_timesteps
        self._next = step if self.at_start else (step // self.every + 1) * self.every

    def _on_rollout_start(self) -> None:
        # between rollouts the model holds every update of the steps counted so far
        if self.model.num_timesteps >= self._next:
            self._next = (self.model.num_timesteps // self.every + 1) * self.every
            self._evaluate()

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self._evaluate()
