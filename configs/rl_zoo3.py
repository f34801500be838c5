r"""rl_zoo3 hyperparameters for the flat variants of every suite id (SB3's defaults, one env).

docs/guide/train.md, "rl_zoo3": SB3's defaults learn there. rl_zoo3 reads them by module name,
from any working directory::

    OMP_NUM_THREADS=1 python -m rl_zoo3.train --algo ppo --env mrsched/Hadoop-flat-v0 \
        --gym-packages mrsched_gym --conf-file mrsched_gym.configs.rl_zoo3 -n 50000 --seed 0

(rl_zoo3 takes the algorithm from ``--algo``: the same settings serve ``a2c``.)
"""

from mrsched_gym.config.env_ids import ENV_IDS
from mrsched_gym.env.flat import flat_id

#: rl_zoo3's table: env id -> hyperparameters (its ``--conf-file`` module convention).
hyperparams = {flat_id(env_id): {"policy": "MlpPolicy", "n_timesteps": 50_000, "n_envs": 1}
               for env_id in ENV_IDS}
