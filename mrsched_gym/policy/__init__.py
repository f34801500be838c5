"""Outside policies in their own process: the policy process (:mod:`.process`), its channel
(:mod:`.channel`), what it reads (:mod:`.mirror`, :mod:`.serving`), its own code (:mod:`.host`)
and its resource limits (:mod:`.limits`)."""
