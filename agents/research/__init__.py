"""Research machinery of the learned schedulers, apart from the product.

The product (:mod:`mrsched_gym.agents`: policy loading, numpy inference, the trainer) never
imports this package (tested). What is here serves the studies of docs/notes/agents.md:

* :mod:`~mrsched_gym.agents.research.rollout`: the rollout teachers (one step of policy
  improvement by simulation; clairvoyant, myopic, sampled and fair variants), teachers only;
* :mod:`~mrsched_gym.agents.research.futures`: what a rollout's copy of the world knows of the
  future.

Importing the package registers the rollout teachers as teacher kinds of the imitation
(:mod:`mrsched_gym.agents.training.teachers`): ``rollout:POLICY`` and ``myopic-rollout:POLICY`` in
``imitate.teachers`` of a run whose ``imitate.plugins`` names ``mrsched_gym.agents.research``.
"""

from mrsched_gym.agents.research.rollout import register

register()
