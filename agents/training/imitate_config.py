"""The ``imitate`` section of a training config (:class:`ImitateConfig`): the behaviour-cloning
phase before PPO, :mod:`mrsched_gym.agents.training.imitate`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mrsched_gym.agents.training.teachers import base_policy, load_plugins, teacher_kind

#: At most this many envs per phase (imitation or PPO): their seeds, 500 apart, must not meet.
MAX_ENVS = 500


@dataclass
class ImitateConfig:
    """The behaviour-cloning phase of a training run (:mod:`mrsched_gym.agents.training.imitate`).

    Attributes:
        teachers: World id (or ``default``) -> the policy whose actions are learned there (any
            policy spec: ``srpt``, ``edf``, ``agent:general``..., or ``PREFIX:POLICY`` of a
            teacher kind registered by a module of ``plugins``: with
            ``mrsched_gym.agents.research``, ``rollout:POLICY``, the clairvoyant rollout teacher
            over that policy, or ``myopic-rollout:POLICY``, the rollout without the jobs still
            to arrive, :mod:`mrsched_gym.agents.research.rollout`).
            Every world the run plays needs one: its id or ``default``. In a work-conserving
            run (``work_conserving``) a state where the teacher leaves a slot idle with a
            candidate waiting (``fair``'s delay scheduling, say) is played but not learned:
            the policy cannot take that action; each round counts these ``dropped``
            decisions.
        rounds: DAgger rounds (round 0 plays the teachers' actions, later ones the policy's).
        steps_per_round: Decisions played per round, summed over the envs (labelled unless
            dropped, see ``teachers``).
        n_envs: Envs played side by side (each its own episode sequence).
        epochs: Passes over all the labelled decisions after each round.
        batch_size: Minibatch size of the fit.
        learning_rate: Adam step size of the fit.
        ppo_batches: During PPO, minibatches of the imitation loss (cross-entropy on every
            labelled decision of this phase, ``batch_size`` each) taken with PPO's own
            optimizer and step size after each PPO update (a behaviour-cloning regulariser, as
            in DAPG, Rajeswaran et al. 2018): PPO then moves the policy away from its teachers
            only where its advantages outweigh them. Not while ``value_warmup_steps`` lasts.
            0 = none.
        soft_targets: Fit distributions, not only actions. Where the teacher's action is the
            most likely legal action of the policy the run starts from (its weights before
            imitation: ``init_from``'s, or the fresh network's), the target is that starting
            policy's whole distribution over the legal actions (distillation: Hinton, Vinyals
            and Dean, "Distilling the Knowledge in a Neural Network", 2015); where the teacher
            departs from it, the teacher's action. The loss is the cross-entropy of the target
            under the policy, so a state on which the teacher agrees pulls the policy back to
            where it started instead of towards a one-hot label: the fit changes what the
            teacher changes and keeps the rest. Meant for a teacher that improves on the
            starting policy on few decisions (``rollout:`` over it); each round counts the
            ``departures``. False = the teacher's action everywhere (behaviour cloning).
        teacher_workers: Processes over which a teacher of a parallel kind (the rollout
            teachers) plays its candidates out (1 = in the training process). The labels are
            the same for any number.
        plugins: Modules imported before the teachers are checked, each registering teacher
            kinds (:func:`~mrsched_gym.agents.training.teachers.register_teacher_kind`); the trainer
            reaches teachers that are not policies only through them. ``[]`` = policies only;
            ``[mrsched_gym.agents.research]`` adds the rollout teachers.
    """

    teachers: dict[str, str] = field(default_factory=dict)
    rounds: int = 4
    steps_per_round: int = 50_000
    n_envs: int = 4
    epochs: int = 3
    batch_size: int = 512
    learning_rate: float = 3e-4
    ppo_batches: int = 0
    soft_targets: bool = False
    teacher_workers: int = 1
    plugins: list[str] = field(default_factory=list)

    def validate(self, ids: list[str]) -> ImitateConfig:
        """Check the fields against the world ids the run plays.

        Raises:
            ValueError: A bad field; the message names it.
        """
        from mrsched_gym.evaluate import check_policy
        if not isinstance(self.plugins, list):
            raise ValueError(f"imitate.plugins: a list of module names; got {self.plugins!r}")
        load_plugins(self.plugins)
        for f in ("rounds", "steps_per_round", "n_envs", "epochs", "batch_size",
                  "teacher_workers"):
            v = getattr(self, f)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"imitate.{f}: must be a positive integer; got {v!r}")
        if not isinstance(self.soft_targets, bool):
            raise ValueError(f"imitate.soft_targets: must be true or false; "
                             f"got {self.soft_targets!r}")
        v = self.ppo_batches
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"imitate.ppo_batches: must be an integer >= 0; got {v!r}")
        lr = self.learning_rate
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr < math.inf:
            raise ValueError(f"imitate.learning_rate: must be a finite number > 0; got {lr!r}")
        if self.n_envs > MAX_ENVS:
            raise ValueError(f"imitate.n_envs: at most {MAX_ENVS} (its envs' seeds must stay "
                             f"apart from the next training seed's); got {self.n_envs}")
        if not self.teachers:
            raise ValueError("imitate.teachers: at least one teacher (id or default -> policy)")
        for k, spec in self.teachers.items():
            if k != "default" and k not in ids:
                raise ValueError(f"imitate.teachers.{k}: not a world of this run "
                                 f"({', '.join(ids)}) nor 'default'")
            try:
                check_policy(base_policy(spec))
            except Exception as e:  # noqa: BLE001 - re-raised with the field's name
                hint = "" if teacher_kind(spec) is not None or ":" not in str(spec) else (
                    " (a teacher kind from a plugin needs its module in imitate.plugins, e.g. "
                    "mrsched_gym.agents.research for rollout:POLICY)")
                raise ValueError(f"imitate.teachers.{k}: {e}{hint}") from None
        missing = [i for i in ids if i not in self.teachers and "default" not in self.teachers]
        if missing:
            raise ValueError(f"imitate.teachers: no teacher for {', '.join(missing)} "
                             f"(add them or a 'default')")
        return self
