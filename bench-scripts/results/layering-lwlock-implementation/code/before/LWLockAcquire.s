push %r14
push %r13
push %r12
push %rbp
push %rbx
sub $0x10,%rsp
mov ADDR(%rip),%rbx # <MyProc>
cmpl $0xc7,ADDR(%rip) # <num_held_lwlocks>
jg <LWLockAcquire.cold>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov %rdi,%r12
mov %esi,%r13d
xor %ebp,%ebp
mov $0x1,%r14d
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
cmp $0x1,%r13d
jne <LWLockAcquire:L62>
nopw 0x0(%rax,%rax,1)
cmpb $0x0,ADDR(%rip) # <lwlock_shared_add>
jne <LWLockAcquire:L115>
mov $0x1,%esi
mov %r12,%rdi
call <LWLockAttemptLock>
test %al,%al
je <LWLockAcquire:L80>
mov $0x1,%esi
mov %r12,%rdi
call <LWLockQueueSelf>
cmpb $0x0,ADDR(%rip) # <lwlock_shared_add>
jne <LWLockAcquire:L121>
mov %r13d,%esi
mov %r12,%rdi
call <LWLockAttemptLock>
test %al,%al
je <LWLockAcquire:L78>
cmpb $0x0,ADDR(%rip) # <LWLockWokeSelf>
jne <LWLockAcquire:L125>
movzwl (%r12),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
xor %r14d,%r14d
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
je <LWLockAcquire:L48>
jmp <LWLockAcquire:L72>
nopl (%rax)
add $0x1,%ebp
mov 0x18(%rbx),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%rbx)
jne <LWLockAcquire:L47>
mov %r14,%rdx
mov %r13d,%esi
mov %r12,%rdi
call <LWLockStatsWaitDone>
lock orl $0x40000000,0x4(%r12)
mov ADDR(%rip),%rax # <my_wait_event_info>
xor %r14d,%r14d
movl $0x0,(%rax)
cmp $0x1,%r13d
je <LWLockAcquire:L19>
mov %r13d,%esi
mov %r12,%rdi
call <LWLockAttemptLock>
test %al,%al
je <LWLockAcquire:L80>
mov %r13d,%esi
mov %r12,%rdi
call <LWLockQueueSelf>
jmp <LWLockAcquire:L31>
nopl 0x0(%rax,%rax,1)
mov %rsp,%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,(%rsp),%r14
add 0x8(%rsp),%r14
jmp <LWLockAcquire:L48>
mov %r12,%rdi
call <LWLockDequeueSelf>
movzwl (%r12),%eax
mov $0x7f,%ecx
mov ADDR(%rip),%rdx # <MyLockStats>
cmp %cx,%ax
cmova %rcx,%rax
mov %r13d,%ecx
lea (%rax,%rax,2),%rax
lea (%rcx,%rax,4),%rax
movslq ADDR(%rip),%rcx # <num_held_lwlocks>
addq $0x1,(%rdx,%rax,8)
lea ADDR(%rip),%rax # <held_lwlocks>
mov %rcx,%rdx
shl $0x4,%rcx
add %rcx,%rax
add $0x1,%edx
mov %r12,(%rax)
lea -0x1(%rbp),%r12d
mov %edx,ADDR(%rip) # <num_held_lwlocks>
mov %r13d,0x8(%rax)
test %ebp,%ebp
jle <LWLockAcquire:L106>
nopw 0x0(%rax,%rax,1)
mov 0x18(%rbx),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%r12d
jae <LWLockAcquire:L102>
add $0x10,%rsp
mov %r14d,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
ret
nop
mov %r12,%rdi
call <LWLockAttemptLockSharedAdd>
test %al,%al
jne <LWLockAcquire:L26>
jmp <LWLockAcquire:L80>
nopl (%rax)
mov %r12,%rdi
call <LWLockAttemptLockSharedAdd>
jmp <LWLockAcquire:L34>
nopl (%rax)
mov %r12,%rdi
call <LWLockRetryAfterSelfWake>
jmp <LWLockAcquire:L16>
