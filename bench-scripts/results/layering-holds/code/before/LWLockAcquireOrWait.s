push %r13
push %r12
push %rbp
push %rbx
sub $0x18,%rsp
mov ADDR(%rip),%rbp # <MyProc>
cmpl $0xc7,ADDR(%rip) # <num_held_lwlocks>
jg <LWLockAcquireOrWait.cold>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov ADDR(%rip),%edx # <lwlock_implementation>
mov %rdi,%rbx
mov %esi,%r12d
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
test %edx,%edx
jne <LWLockAcquireOrWait:L170>
mov 0x4(%rdi),%eax
lea 0x4(%rdi),%rcx
jmp <LWLockAcquireOrWait:L36>
nopl (%rax)
test $0xfffff,%eax
jne <LWLockAcquireOrWait:L44>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockAcquireOrWait:L48>
movzwl (%rbx),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,2),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %r12d,%r12d
je <LWLockAcquireOrWait:L20>
test $0x80000,%eax
jne <LWLockAcquireOrWait:L44>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockAcquireOrWait:L24>
cs nopw 0x0(%rax,%rax,1)
mov %eax,%edx
xor %esi,%esi
jmp <LWLockAcquireOrWait:L24>
cs nopw 0x0(%rax,%rax,1)
test %sil,%sil
jne <LWLockAcquireOrWait:L88>
mov $0x2,%esi
mov %rbx,%rdi
call <LWLockQueueSelf>
mov ADDR(%rip),%eax # <lwlock_implementation>
test %eax,%eax
jne <LWLockAcquireOrWait:L116>
mov 0x4(%rbx),%eax
lea 0x4(%rbx),%rcx
jmp <LWLockAcquireOrWait:L76>
nopl (%rax)
test $0xfffff,%eax
jne <LWLockAcquireOrWait:L113>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockAcquireOrWait:L84>
movzwl (%rbx),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,2),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %r12d,%r12d
je <LWLockAcquireOrWait:L60>
test $0x80000,%eax
jne <LWLockAcquireOrWait:L113>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockAcquireOrWait:L64>
xchg %ax,%ax
test %sil,%sil
je <LWLockAcquireOrWait:L122>
mov %rbx,%rdi
call <LWLockDequeueSelf>
movslq ADDR(%rip),%rcx # <num_held_lwlocks>
lea ADDR(%rip),%rax # <held_lwlocks>
mov %rcx,%rdx
shl $0x4,%rcx
add %rcx,%rax
add $0x1,%edx
mov $0x7f,%ecx
mov %rbx,(%rax)
mov %r12d,0x8(%rax)
mov %edx,ADDR(%rip) # <num_held_lwlocks>
movzwl (%rbx),%eax
mov ADDR(%rip),%rdx # <MyLockStats>
cmp %cx,%ax
cmova %rcx,%rax
lea (%rax,%rax,2),%rax
lea (%r12,%rax,4),%rax
addq $0x1,(%rdx,%rax,8)
add $0x18,%rsp
mov $0x1,%eax
pop %rbx
pop %rbp
pop %r12
pop %r13
ret
nopl 0x0(%rax)
mov %eax,%edx
xor %esi,%esi
jmp <LWLockAcquireOrWait:L64>
mov %r12d,%esi
mov %rbx,%rdi
call <LWLockAttemptLockSpin>
test %al,%al
je <LWLockAcquireOrWait:L86>
nopl 0x0(%rax)
movzwl (%rbx),%eax
mov ADDR(%rip),%rdx # <my_wait_event_info>
xor %r12d,%r12d
or $0x1000000,%eax
cmpb $0x0,ADDR(%rip) # <lock_stats_timing>
mov %eax,(%rdx)
jne <LWLockAcquireOrWait:L175>
xor %r13d,%r13d
jmp <LWLockAcquireOrWait:L133>
cs nopw 0x0(%rax,%rax,1)
add $0x1,%r13d
mov 0x18(%rbp),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%rbp)
jne <LWLockAcquireOrWait:L132>
mov %r12,%rdx
mov $0x2,%esi
lea -0x1(%r13),%r12d
mov %rbx,%rdi
call <LWLockStatsWaitDone>
mov ADDR(%rip),%rax # <my_wait_event_info>
movl $0x0,(%rax)
test %r13d,%r13d
jle <LWLockAcquireOrWait:L151>
nopl 0x0(%rax)
mov 0x18(%rbp),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%r12d
jae <LWLockAcquireOrWait:L147>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov $0x7f,%edx
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
movzwl (%rbx),%eax
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
xchg %ax,%ax
mov %r12d,%esi
call <LWLockAttemptLockSpin>
test %al,%al
je <LWLockAcquireOrWait:L88>
jmp <LWLockAcquireOrWait:L50>
mov %rsp,%rsi
mov $0x1,%edi
call <clock_gettime@plt>
imul $0x3b9aca00,(%rsp),%r12
add 0x8(%rsp),%r12
jmp <LWLockAcquireOrWait:L129>
