push %r14
push %r13
push %r12
push %rbp
push %rbx
sub $0x10,%rsp
mov ADDR(%rip),%r14 # <MyProc>
cmpl $0xc7,ADDR(%rip) # <num_held_lwlocks>
jg <LWLockAcquire.cold>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov %rdi,%r13
mov %esi,%ebx
xor %ebp,%ebp
mov $0x1,%r12d
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
nop
cmpb $0x0,ADDR(%rip) # <lwlock_attempt_variant>
jne <LWLockAcquire:L91>
mov 0x4(%r13),%eax
lea 0x4(%r13),%rcx
jmp <LWLockAcquire:L39>
nopw 0x0(%rax,%rax,1)
test $0xfffff,%eax
jne <LWLockAcquire:L47>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockAcquire:L51>
movzwl 0x0(%r13),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,4),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %ebx,%ebx
je <LWLockAcquire:L23>
test $0x80000,%eax
jne <LWLockAcquire:L47>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockAcquire:L27>
nopw 0x0(%rax,%rax,1)
mov %eax,%edx
xor %esi,%esi
jmp <LWLockAcquire:L27>
cs nopw 0x0(%rax,%rax,1)
test %sil,%sil
je <LWLockAcquire:L101>
movzwl 0x0(%r13),%eax
mov $0x7f,%ecx
mov ADDR(%rip),%rdx # <MyLockStats>
cmp %cx,%ax
cmova %rcx,%rax
mov %ebx,%ecx
lea (%rax,%rax,4),%rax
lea (%rcx,%rax,4),%rax
movslq ADDR(%rip),%rcx # <num_held_lwlocks>
addq $0x1,(%rdx,%rax,8)
lea ADDR(%rip),%rax # <held_lwlocks>
mov %rcx,%rdx
shl $0x4,%rcx
add %rcx,%rax
add $0x1,%edx
mov %ebx,0x8(%rax)
lea -0x1(%rbp),%ebx
mov %r13,(%rax)
mov %edx,ADDR(%rip) # <num_held_lwlocks>
test %ebp,%ebp
jle <LWLockAcquire:L79>
xchg %ax,%ax
mov 0x18(%r14),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%ebx
jae <LWLockAcquire:L75>
mov ADDR(%rip),%eax # <lock_stats_hold_sample>
test %eax,%eax
jg <LWLockAcquire:L199>
add $0x10,%rsp
mov %r12d,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
ret
nopl 0x0(%rax)
mov ADDR(%rip),%esi # <lwlock_implementation>
test %esi,%esi
jne <LWLockAcquire:L191>
cmp $0x1,%ebx
jne <LWLockAcquire:L19>
mov %r13,%rdi
call <LWLockAttemptLockSharedAdd>
test %al,%al
je <LWLockAcquire:L53>
nopw 0x0(%rax,%rax,1)
mov %ebx,%esi
mov %r13,%rdi
call <LWLockQueueSelf>
cmpb $0x0,ADDR(%rip) # <lwlock_attempt_variant>
jne <LWLockAcquire:L144>
mov 0x4(%r13),%eax
lea 0x4(%r13),%rcx
jmp <LWLockAcquire:L126>
nopl 0x0(%rax)
test $0xfffff,%eax
jne <LWLockAcquire:L134>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockAcquire:L138>
movzwl 0x0(%r13),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,4),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %ebx,%ebx
je <LWLockAcquire:L110>
test $0x80000,%eax
jne <LWLockAcquire:L134>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockAcquire:L114>
nop
mov %eax,%edx
xor %esi,%esi
jmp <LWLockAcquire:L114>
cs nopw 0x0(%rax,%rax,1)
test %sil,%sil
je <LWLockAcquire:L154>
mov %r13,%rdi
call <LWLockDequeueSelf>
jmp <LWLockAcquire:L53>
nopw 0x0(%rax,%rax,1)
mov ADDR(%rip),%ecx # <lwlock_implementation>
test %ecx,%ecx
jne <LWLockAcquire:L195>
cmp $0x1,%ebx
jne <LWLockAcquire:L106>
mov %r13,%rdi
call <LWLockAttemptLockSharedAdd>
test %al,%al
je <LWLockAcquire:L140>
nopl 0x0(%rax,%rax,1)
cmpb $0x0,ADDR(%rip) # <LWLockWokeSelf>
jne <LWLockAcquire:L188>
movzwl 0x0(%r13),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
jne <LWLockAcquire:L166>
mov ADDR(%rip),%edx # <LockStatsHoldsTimed>
xor %r12d,%r12d
test %edx,%edx
jle <LWLockAcquire:L174>
mov %rsp,%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,(%rsp),%r12
add 0x8(%rsp),%r12
jmp <LWLockAcquire:L174>
nopw 0x0(%rax,%rax,1)
add $0x1,%ebp
mov 0x18(%r14),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%r14)
jne <LWLockAcquire:L173>
mov %r12,%rdx
mov %ebx,%esi
mov %r13,%rdi
call <LWLockStatsWaitDone>
lock orl $0x40000000,0x4(%r13)
mov ADDR(%rip),%rax # <my_wait_event_info>
xor %r12d,%r12d
movl $0x0,(%rax)
jmp <LWLockAcquire:L17>
cs nopw 0x0(%rax,%rax,1)
mov %r13,%rdi
call <LWLockRetryAfterSelfWake>
jmp <LWLockAcquire:L17>
mov %ebx,%esi
mov %r13,%rdi
call <LWLockAttemptLockSpin>
jmp <LWLockAcquire:L98>
mov %ebx,%esi
mov %r13,%rdi
call <LWLockAttemptLockSpin>
jmp <LWLockAcquire:L151>
add $0x10,%rsp
movzbl %r12b,%edi
mov $0x1,%esi
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
jmp <LWLockHoldSampleLast>
