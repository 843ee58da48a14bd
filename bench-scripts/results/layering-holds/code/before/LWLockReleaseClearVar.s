xchg %rdx,(%rsi)
jmp <LWLockRelease>
