push %r15
push %r14
push %r13
push %r12
push %rbp
mov %rdi,%rbp
push %rbx
mov $0x1,%ebx
sub $0x38,%rsp
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov ADDR(%rip),%r15 # <MyProc>
mov %rdx,0x8(%rsp)
add $0x1,%eax
mov %rcx,0x10(%rsp)
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
mov 0x4(%rdi),%eax
test $0x80000,%eax
je <LWLockWaitForVar:L36>
lea 0x20(%rsp),%rax
mov %rsi,%r14
xor %r13d,%r13d
mov %rax,0x18(%rsp)
mov (%r14),%rax
cmp %rax,0x8(%rsp)
je <LWLockWaitForVar:L57>
mov 0x10(%rsp),%rsi
xor %ebx,%ebx
mov %rax,(%rsi)
lea -0x1(%r13),%r12d
test %r13d,%r13d
jle <LWLockWaitForVar:L36>
nopl (%rax)
mov 0x18(%r15),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%r12d
jae <LWLockWaitForVar:L32>
movzwl 0x0(%rbp),%eax
mov $0x7f,%edx
cmp %dx,%ax
cmova %rdx,%rax
lea (%rax,%rax,2),%rax
shl $0x5,%rax
add ADDR(%rip),%rax # <MyLockStats>
addq $0x1,0x10(%rax)
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
add $0x38,%rsp
mov %ebx,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
pop %r15
ret
nopl 0x0(%rax,%rax,1)
mov $0x2,%esi
mov %rbp,%rdi
call <LWLockQueueSelf>
lock orl $0x40000000,0x4(%rbp)
mov 0x4(%rbp),%eax
test $0x80000,%eax
je <LWLockWaitForVar:L109>
mov (%r14),%rax
cmp %rax,0x8(%rsp)
je <LWLockWaitForVar:L74>
mov 0x10(%rsp),%rcx
xor %ebx,%ebx
mov %rax,(%rcx)
mov %rbp,%rdi
call <LWLockDequeueSelf>
jmp <LWLockWaitForVar:L28>
nopl 0x0(%rax)
movzwl 0x0(%rbp),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
xor %r12d,%r12d
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
jne <LWLockWaitForVar:L102>
xor %ebx,%ebx
jmp <LWLockWaitForVar:L85>
nopw 0x0(%rax,%rax,1)
add $0x1,%ebx
mov 0x18(%r15),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%r15)
jne <LWLockWaitForVar:L84>
mov %r12,%rdx
mov $0x2,%esi
mov %rbp,%rdi
add %ebx,%r13d
call <LWLockStatsWaitDone>
mov ADDR(%rip),%rax # <my_wait_event_info>
movl $0x0,(%rax)
mov 0x4(%rbp),%eax
test $0x80000,%eax
jne <LWLockWaitForVar:L22>
mov $0x1,%ebx
jmp <LWLockWaitForVar:L28>
nopl 0x0(%rax,%rax,1)
mov 0x18(%rsp),%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,0x20(%rsp),%r12
add 0x28(%rsp),%r12
jmp <LWLockWaitForVar:L81>
nopw 0x0(%rax,%rax,1)
mov $0x1,%ebx
jmp <LWLockWaitForVar:L70>
