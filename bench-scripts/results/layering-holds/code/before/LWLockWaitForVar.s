push %r15
push %r14
push %r13
push %r12
mov $0x1,%r12d
push %rbp
mov %rdi,%rbp
push %rbx
sub $0x28,%rsp
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov ADDR(%rip),%r15 # <MyProc>
mov %rcx,(%rsp)
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
mov 0x4(%rdi),%eax
test $0x80000,%eax
je <LWLockWaitForVar:L37>
lea 0x10(%rsp),%rax
mov %rsi,%r13
mov %rdx,%r14
xor %ebx,%ebx
mov %rax,0x8(%rsp)
nopl (%rax)
mov 0x0(%r13),%rax
cmp %rax,%r14
je <LWLockWaitForVar:L58>
mov (%rsp),%rcx
xor %r12d,%r12d
mov %rax,(%rcx)
lea -0x1(%rbx),%r13d
test %ebx,%ebx
jle <LWLockWaitForVar:L37>
nopl 0x0(%rax,%rax,1)
mov 0x18(%r15),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%r13d
jae <LWLockWaitForVar:L33>
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
add $0x28,%rsp
mov %r12d,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
pop %r15
ret
nopl 0x0(%rax)
mov $0x2,%esi
mov %rbp,%rdi
call <LWLockQueueSelf>
lock orl $0x40000000,0x4(%rbp)
mov 0x4(%rbp),%eax
test $0x80000,%eax
je <LWLockWaitForVar:L100>
mov 0x0(%r13),%rax
cmp %rax,%r14
je <LWLockWaitForVar:L75>
mov (%rsp),%rcx
xor %r12d,%r12d
mov %rax,(%rcx)
mov %rbp,%rdi
call <LWLockDequeueSelf>
jmp <LWLockWaitForVar:L29>
nopl 0x0(%rax,%rax,1)
movzwl 0x0(%rbp),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
xor %r12d,%r12d
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
je <LWLockWaitForVar:L84>
jmp <LWLockWaitForVar:L103>
add $0x1,%ebx
mov 0x18(%r15),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%r15)
jne <LWLockWaitForVar:L83>
mov %r12,%rdx
mov $0x2,%esi
mov %rbp,%rdi
call <LWLockStatsWaitDone>
mov ADDR(%rip),%rax # <my_wait_event_info>
movl $0x0,(%rax)
mov 0x4(%rbp),%eax
test $0x80000,%eax
jne <LWLockWaitForVar:L23>
mov $0x1,%r12d
jmp <LWLockWaitForVar:L29>
nopl 0x0(%rax)
mov $0x1,%r12d
jmp <LWLockWaitForVar:L71>
nopl 0x0(%rax,%rax,1)
mov 0x8(%rsp),%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,0x10(%rsp),%r12
add 0x18(%rsp),%r12
jmp <LWLockWaitForVar:L84>
