push %r14
lea ADDR(%rip),%r14 # <.rodata>
push %r13
lea ADDR(%rip),%r13 # <__func__.N>
push %r12
lea 0x4(%rdi),%r12
push %rbp
push %rbx
mov %rdi,%rbx
sub $0x30,%rsp
mov %rsp,%rbp
nopl 0x0(%rax)
lock btsl $0x1d,(%r12)
jae <LWLockWaitListLock:L38>
movq $0x0,(%rsp)
movl $0x0,0x8(%rsp)
mov %r14,0x10(%rsp)
movl $0x107,0x18(%rsp)
mov %r13,0x20(%rsp)
nopl 0x0(%rax,%rax,1)
mov %rbp,%rdi
call <perform_spin_delay>
mov 0x4(%rbx),%eax
test $0x20000000,%eax
jne <LWLockWaitListLock:L20>
movzwl (%rbx),%eax
mov $0x7f,%edx
mov %rbp,%rdi
cmp %dx,%ax
cmova %rdx,%rax
movslq 0x4(%rsp),%rdx
lea (%rax,%rax,2),%rax
shl $0x5,%rax
add ADDR(%rip),%rax # <MyLockStats>
add %rdx,0x48(%rax)
call <finish_spin_delay>
jmp <LWLockWaitListLock:L12>
nopl 0x0(%rax,%rax,1)
add $0x30,%rsp
pop %rbx
pop %rbp
pop %r12
pop %r13
pop %r14
ret
