push %r13
push %r12
push %rbp
push %rbx
sub $0x18,%rsp
mov ADDR(%rip),%rbp # <MyProc>
cmpl $0xc7,ADDR(%rip) # <num_held_lwlocks>
jg <LWLockAcquireOrWait.cold>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov %esi,%ebx
mov %rdi,%r12
mov %ebx,%esi
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
call <LWLockAttemptLock>
test %al,%al
jne <LWLockAcquireOrWait:L42>
movslq ADDR(%rip),%rcx # <num_held_lwlocks>
lea ADDR(%rip),%rax # <held_lwlocks>
mov %rcx,%rdx
shl $0x4,%rcx
add %rcx,%rax
add $0x1,%edx
mov $0x7f,%ecx
mov %r12,(%rax)
mov %ebx,0x8(%rax)
mov %edx,ADDR(%rip) # <num_held_lwlocks>
movzwl (%r12),%eax
mov ADDR(%rip),%rdx # <MyLockStats>
cmp %cx,%ax
cmova %rcx,%rax
lea (%rax,%rax,2),%rax
lea (%rbx,%rax,4),%rax
addq $0x1,(%rdx,%rax,8)
add $0x18,%rsp
mov $0x1,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
ret
nopl 0x0(%rax)
mov $0x2,%esi
call <LWLockQueueSelf>
mov %ebx,%esi
mov %r12,%rdi
call <LWLockAttemptLock>
test %al,%al
je <LWLockAcquireOrWait:L97>
movzwl (%r12),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
xor %ebx,%ebx
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
jne <LWLockAcquireOrWait:L99>
xor %r13d,%r13d
jmp <LWLockAcquireOrWait:L60>
nopl 0x0(%rax,%rax,1)
add $0x1,%r13d
mov 0x18(%rbp),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%rbp)
jne <LWLockAcquireOrWait:L59>
mov %rbx,%rdx
mov $0x2,%esi
lea -0x1(%r13),%ebx
mov %r12,%rdi
call <LWLockStatsWaitDone>
mov ADDR(%rip),%rax # <my_wait_event_info>
movl $0x0,(%rax)
test %r13d,%r13d
jle <LWLockAcquireOrWait:L78>
nopl 0x0(%rax)
mov 0x18(%rbp),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%ebx
jae <LWLockAcquireOrWait:L74>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov $0x7f,%edx
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
movzwl (%r12),%eax
cmp %dx,%ax
cmova %rdx,%rax
lea (%rax,%rax,2),%rax
shl $0x5,%rax
add ADDR(%rip),%rax # <MyLockStats>
addq $0x1,0x10(%rax)
add $0x18,%rsp
xor %eax,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
ret
nopw 0x0(%rax,%rax,1)
call <LWLockDequeueSelf>
jmp <LWLockAcquireOrWait:L17>
mov %rsp,%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,(%rsp),%rbx
add 0x8(%rsp),%rbx
jmp <LWLockAcquireOrWait:L56>
