mov %rbx,%rdi
call <LWLockDisownInternal.part.0>
