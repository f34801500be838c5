"""The training run's callbacks: a progress bar, the periodic evaluation against the baselines
(learning curve, best and last checkpoints), the value-function warm-up and the imitation loss
kept during PPO."""

from __future__ import annotations

import math
import time
from pathlib import Path

from mrsched_gym.agents.training.train_config import TrainConfig
from mrsched_gym.agents.training.train_files import save_checkpoint, write_state
from mrsched_gym.agents.training.train_model import evaluate_model


def make_callbacks(cfg: TrainConfig, out: Path, baselines: dict, state: dict, progress: bool,
               labelled: dict):
    """The run's callbacks (evaluation, progress bar, value warm-up, imitation loss) and its
    evaluation function ``run_eval(model, logger=None)``; ``state`` holds the learning curve and
    the best validation mean, ``labelled`` the imitation's decisions."""
    from stable_baselines3.common.callbacks import BaseCallback

    from mrsched_gym.evaluate import mean_ci95

    seeds = list(range(cfg.eval.seed_start, cfg.eval.seed_start + cfg.eval.n_seeds))

    class Progress(BaseCallback):
        """A tqdm bar over env steps, with the latest validation result and the best so far
        (shown the moment an evaluation ends, the last one included)."""

        def _on_training_start(self) -> None:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=cfg.total_timesteps, initial=self.model.num_timesteps,
                            disable=not progress, unit="step", desc=cfg.name, smoothing=0.05)
            self.last = self.model.num_timesteps
            self.shown = 0                          # evaluations shown so far
            self._show()

        def _show(self) -> None:
            if len(state["history"]) != self.shown:
                self.shown = len(state["history"])
                h = state["history"][-1]
                self.bar.set_postfix(val=f"{h['mean']:.2f}", best=f"{state['best']:.2f}")

        def _on_step(self) -> bool:
            n = self.model.num_timesteps
            self.bar.update(n - self.last)
            self.last = n
            self._show()
            return True

        def _on_training_end(self) -> None:
            self.bar.update(self.model.num_timesteps - self.last)
            self._show()
            self.bar.close()

    class EvalVsBaselines(BaseCallback):
        """Evaluate on the validation seeds, log beside the baselines, keep the best checkpoint;
        the last evaluation at the end of training (logged to TensorBoard like the others).

        An evaluation runs when a rollout starts (the first after ``every_steps`` more steps),
        after the previous rollout's PPO update: the policy it evaluates is the one it saves
        (``last_model.zip``, ``best_model.zip``), so a run resumed from either loses no
        update, and the final policy is the last evaluated."""

        def _next_after(self, steps: int) -> float:
            """The first multiple of ``every_steps`` after ``steps`` (none without it)."""
            every = cfg.eval.every_steps
            return (steps // every + 1) * every if every else math.inf

        def _on_training_start(self) -> None:
            self.next = self._next_after(self.model.num_timesteps)
            while unlogged:                         # the step-0 evaluation, run before PPO
                log_row(self.logger, *unlogged.pop(0))  # had its logger

        def _on_rollout_start(self) -> None:
            if self.model.num_timesteps >= self.next:
                self.next = self._next_after(self.model.num_timesteps)
                run_eval(self.model, self.logger)

        def _on_step(self) -> bool:
            return True

        def _on_training_end(self) -> None:
            if not state["history"] or state["history"][-1]["step"] != self.model.num_timesteps:
                run_eval(self.model, self.logger)

    unlogged: list[tuple[dict, float]] = []     # evaluations run without a logger, and the
                                                # best validation mean after each

    def log_row(logger, row: dict, best: float) -> None:
        """An evaluation's row and the best mean so far to TensorBoard (the logger SB3 sets up
        when learning starts)."""
        logger.record("eval/headline_mean", row["mean"])
        logger.record("eval/best", best)
        for b, v in baselines.items():
            if not isinstance(v, dict):
                logger.record(f"eval/baseline_{b}", v)
        logger.dump(row["step"])

    def run_eval(model, logger=None) -> None:
        """Evaluate ``model`` now, keep it (``last_model.zip``, and ``best_model.zip`` if it is
        the best so far), write the state."""
        t0 = time.perf_counter()
        vals = evaluate_model(model, cfg, seeds, baselines if cfg.worlds is not None else None)
        mean, ci = mean_ci95(vals)
        step = int(model.num_timesteps)
        row = {"step": step, "wall_s": round(time.perf_counter() - state["t0"] + state["wall0"], 1),
               "mean": mean, "ci95": ci, "eval_s": round(time.perf_counter() - t0, 2)}
        state["history"].append(row)
        if cfg.worlds is not None:
            row.update({f"ratio_{i.split('/')[-1]}": round(v, 4)
                        for i, v in zip(cfg.worlds.ids, vals, strict=True)})
        better = mean < state["best"]
        if better:
            state["best"], state["best_step"] = mean, step
        if logger is not None:
            log_row(logger, row, state["best"])
        else:
            unlogged.append((row, state["best"]))
        save_checkpoint(model, out / "last_model.zip")
        if better:
            save_checkpoint(model, out / "best_model.zip")
            from mrsched_gym.agents.training.numpy_export import export_numpy, has_numpy_actor
            if has_numpy_actor(model):          # the same policy, loadable without pickle
                export_numpy(model, out / "best_model.npz")
        write_state(out, state)

    class ValueWarmup(BaseCallback):
        """Before each PPO update: freeze every parameter but the value function's while the
        steps so far are within ``cfg.value_warmup_steps`` (frozen parameters get no gradient,
        so Adam leaves them as they are), unfreeze them after."""

        def _on_rollout_end(self) -> None:
            warm = self.model.num_timesteps <= cfg.value_warmup_steps
            for name, p in self.model.policy.named_parameters():
                if not is_value_parameter(name):
                    p.requires_grad_(not warm)

        def _on_step(self) -> bool:
            return True

    class KeepImitating(BaseCallback):
        """After each PPO update (at the next rollout's end, before the next update), steps of
        the imitation loss on the imitation's labelled decisions (``imitate.ppo_batches``)."""

        def _on_training_start(self) -> None:
            from mrsched_gym.agents.training.imitate import ImitationLoss
            self.loss = ImitationLoss(labelled, cfg.imitate.batch_size, cfg.seed)
            self.first = self.model.num_timesteps

        def _on_rollout_end(self) -> None:
            n = self.model.num_timesteps
            rollout = cfg.n_envs * int(self.model.n_steps)
            if n - rollout > max(self.first, cfg.value_warmup_steps):   # an update happened
                self.logger.record("imitate/loss", self.loss.steps(
                    self.model.policy, self.model.policy.optimizer, cfg.imitate.ppo_batches))

        def _on_step(self) -> bool:
            return True

    extra = [ValueWarmup()] if cfg.value_warmup_steps else []
    if cfg.imitate is not None and cfg.imitate.ppo_batches:
        extra.append(KeepImitating())
    if cfg.input_driven is not None:
        from mrsched_gym.agents.training.input_driven import input_baseline_callback
        extra.append(input_baseline_callback(cfg.input_driven))
    # the evaluation first: at each step and at the end, the bar then shows what it found
    return [EvalVsBaselines(), Progress(), *extra], run_eval


def is_value_parameter(name: str) -> bool:
    """Whether the policy parameter ``name`` belongs to the value function alone (SB3's
    ``mlp_extractor.value_net`` and ``value_net``)."""
    return name.startswith(("mlp_extractor.value_net.", "value_net."))
