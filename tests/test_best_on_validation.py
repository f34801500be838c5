"""``BestOnValidation`` (issue 45 item 5): the callback scores the model on the validation seeds as
``agent:PATH`` would be scored, keeps the best one, and leaves the training as it would be
without it."""

import gymnasium as gym
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

import mrsched_gym  # noqa: E402,F401
from mrsched_gym.agents import BestOnValidation, SetPolicy  # noqa: E402
from mrsched_gym.agents.best_on_validation import VALIDATION_SEEDS  # noqa: E402
from mrsched_gym.evaluate import evaluate  # noqa: E402

ENV = "mrsched/Hadoop-v0"


def small_model():
    torch.set_num_threads(1)
    return MaskablePPO(SetPolicy, gym.make(ENV), seed=0, n_steps=256, batch_size=64,
                       n_epochs=1, device="cpu")


def weights(model):
    return torch.cat([p.detach().flatten() for p in model.policy.parameters()])


def test_keeps_the_best_model_as_scored_and_trains_as_without_it(tmp_path):
    plain = small_model()
    plain.learn(768)
    model = small_model()
    cb = BestOnValidation(ENV, tmp_path / "best.zip", every=256, seeds=[1000, 1001])
    model.learn(768, callback=cb)
    # the training's random streams are restored after each score: the same weights
    assert torch.equal(weights(plain), weights(model))
    # scored between rollouts (after 256 and 512 steps) and at the end (768)
    assert [h["step"] for h in cb.history] == [256, 512, 768]
    scores = [h["score"] for h in cb.history]
    assert cb.best_score == min(scores)
    assert cb.best_step == cb.history[int(np.argmin(scores))]["step"]
    # the kept file scores what the callback recorded, through the harness
    recs = evaluate([f"agent:{tmp_path / 'best.zip'}"], [ENV], seeds=[1000, 1001], workers=1,
                    progress=False)
    assert np.mean([r["deadline_penalty_h"] for r in recs]) == pytest.approx(cb.best_score)


def test_at_start_scores_the_starting_model_first(tmp_path):
    model = small_model()
    cb = BestOnValidation(ENV, tmp_path / "best.zip", every=512, seeds=[1000], at_start=True)
    model.learn(512, callback=cb)
    assert [h["step"] for h in cb.history] == [0, 512]


def test_validation_seeds_are_not_the_test_seeds():
    assert not set(VALIDATION_SEEDS) & set(range(5))


@pytest.mark.parametrize("kwargs, message", [
    ({"every": 0}, "every must be >= 1"),
    ({"seeds": []}, "seeds is empty"),
])
def test_bad_arguments_fail_clearly(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        BestOnValidation(ENV, tmp_path / "best.zip", **kwargs)
