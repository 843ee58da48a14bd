call <LWLockDisownInternal.part.0>
