push %rbp
push %rbx
mov %rdi,%rbx
sub $0x8,%rsp
xchg %rdx,(%rsi)
mov ADDR(%rip),%edi # <num_held_lwlocks>
lea ADDR(%rip),%rsi # <held_lwlocks>
lea -0x1(%rdi),%r9d
mov %edi,%eax
movslq %r9d,%rdx
shl $0x4,%rdx
add %rsi,%rdx
jmp <LWLockReleaseClearVar:L17>
nopl 0x0(%rax,%rax,1)
sub $0x10,%rdx
cmp 0x10(%rdx),%rbx
je <LWLockReleaseClearVar:L22>
movslq %eax,%rcx
sub $0x1,%eax
jns <LWLockReleaseClearVar:L14>
jmp <LWLockReleaseClearVar.cold>
nopw 0x0(%rax,%rax,1)
movslq %eax,%r8
mov %r9d,ADDR(%rip) # <num_held_lwlocks>
shl $0x4,%r8
add %rsi,%r8
mov 0x8(%r8),%ebp
cmp %r9d,%eax
jge <LWLockReleaseClearVar:L37>
lea -0x2(%rdi),%edx
shl $0x4,%rcx
mov %r8,%rdi
sub %eax,%edx
add %rcx,%rsi
add $0x1,%rdx
shl $0x4,%rdx
call <memmove@plt>
lea 0x4(%rbx),%rdx
test %ebp,%ebp
jne <LWLockReleaseClearVar:L54>
mov $0xfff80000,%eax
lock xadd %eax,(%rdx)
sub $0x80000,%eax
and $0xc00fffff,%eax
cmp $0xc0000000,%eax
je <LWLockReleaseClearVar:L60>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
add $0x8,%rsp
pop %rbx
pop %rbp
ret
xchg %ax,%ax
mov $0xffffffff,%eax
lock xadd %eax,(%rdx)
sub $0x1,%eax
and $0xc00fffff,%eax
cmp $0xc0000000,%eax
jne <LWLockReleaseClearVar:L46>
mov %rbx,%rdi
call <LWLockWakeup>
jmp <LWLockReleaseClearVar:L46>
