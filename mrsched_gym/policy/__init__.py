"""The policy contract and everything that guards it: what an outside policy implements, what it
sees and how it runs.

* the contract: :mod:`~mrsched_gym.policy.contract` (``RulePolicy``, ``ObservationPolicy``,
  ``ModelPolicy``, :func:`~mrsched_gym.policy.contract.as_policy`), the actions a policy returns
  (:mod:`~mrsched_gym.policy.policy_actions`) and policies named on the command line
  (:mod:`~mrsched_gym.policy.policy_files`);
* what a policy sees: the read-only view (:mod:`~mrsched_gym.policy.readonly`), its proxies
  (:mod:`~mrsched_gym.policy.proxies`, :mod:`~mrsched_gym.policy.proxy_base`) and the proxies of
  one episode (:mod:`~mrsched_gym.policy.guard`); a rule's hot path
  (:mod:`~mrsched_gym.policy.rule_adapter`);
* how it may fail: its time budget per decision (:mod:`~mrsched_gym.policy.decision_budget`) and
  every way its code can end (:mod:`~mrsched_gym.policy.policy_failures`);
* the policy process that policy files run in: the process (:mod:`~mrsched_gym.policy.process`),
  its channel (:mod:`~mrsched_gym.policy.channel`), what it reads
  (:mod:`~mrsched_gym.policy.mirror`, :mod:`~mrsched_gym.policy.serving`), its own code
  (:mod:`~mrsched_gym.policy.host`, :mod:`~mrsched_gym.policy.child`) and its resource limits
  (:mod:`~mrsched_gym.policy.limits`).
"""
