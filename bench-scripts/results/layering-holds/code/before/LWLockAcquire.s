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
jne <LWLockAcquire:L88>
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
lea (%rdx,%rdx,2),%rdx
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
je <LWLockAcquire:L98>
movzwl 0x0(%r13),%eax
mov $0x7f,%ecx
mov ADDR(%rip),%rdx # <MyLockStats>
cmp %cx,%ax
cmova %rcx,%rax
mov %ebx,%ecx
lea (%rax,%rax,2),%rax
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
add $0x10,%rsp
mov %r12d,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
ret
xchg %ax,%ax
mov ADDR(%rip),%edx # <lwlock_implementation>
test %edx,%edx
jne <LWLockAcquire:L187>
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
jne <LWLockAcquire:L141>
mov 0x4(%r13),%eax
lea 0x4(%r13),%rcx
jmp <LWLockAcquire:L123>
nopl 0x0(%rax)
test $0xfffff,%eax
jne <LWLockAcquire:L131>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockAcquire:L135>
movzwl 0x0(%r13),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,2),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %ebx,%ebx
je <LWLockAcquire:L107>
test $0x80000,%eax
jne <LWLockAcquire:L131>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockAcquire:L111>
nop
mov %eax,%edx
xor %esi,%esi
jmp <LWLockAcquire:L111>
cs nopw 0x0(%rax,%rax,1)
test %sil,%sil
je <LWLockAcquire:L151>
mov %r13,%rdi
call <LWLockDequeueSelf>
jmp <LWLockAcquire:L53>
nopw 0x0(%rax,%rax,1)
mov ADDR(%rip),%eax # <lwlock_implementation>
test %eax,%eax
jne <LWLockAcquire:L191>
cmp $0x1,%ebx
jne <LWLockAcquire:L103>
mov %r13,%rdi
call <LWLockAttemptLockSharedAdd>
test %al,%al
je <LWLockAcquire:L137>
nopl 0x0(%rax,%rax,1)
cmpb $0x0,ADDR(%rip) # <LWLockWokeSelf>
jne <LWLockAcquire:L184>
movzwl 0x0(%r13),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
xor %r12d,%r12d
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
je <LWLockAcquire:L163>
jmp <LWLockAcquire:L177>
xchg %ax,%ax
add $0x1,%ebp
mov 0x18(%r14),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%r14)
jne <LWLockAcquire:L162>
mov %r12,%rdx
mov %ebx,%esi
mov %r13,%rdi
call <LWLockStatsWaitDone>
lock orl $0x40000000,0x4(%r13)
mov ADDR(%rip),%rax # <my_wait_event_info>
xor %r12d,%r12d
movl $0x0,(%rax)
jmp <LWLockAcquire:L17>
xchg %ax,%ax
mov %rsp,%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,(%rsp),%r12
add 0x8(%rsp),%r12
jmp <LWLockAcquire:L163>
nopl 0x0(%rax)
mov %r13,%rdi
call <LWLockRetryAfterSelfWake>
jmp <LWLockAcquire:L17>
mov %ebx,%esi
mov %r13,%rdi
call <LWLockAttemptLockSpin>
jmp <LWLockAcquire:L95>
mov %ebx,%esi
mov %r13,%rdi
call <LWLockAttemptLockSpin>
jmp <LWLockAcquire:L148>
