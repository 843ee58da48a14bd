push %rbp
lea ADDR(%rip),%rsi # <held_lwlocks>
push %rbx
mov %rdi,%rbx
sub $0x8,%rsp
mov ADDR(%rip),%edi # <num_held_lwlocks>
lea -0x1(%rdi),%r9d
mov %edi,%eax
movslq %r9d,%rdx
shl $0x4,%rdx
add %rsi,%rdx
jmp <LWLockRelease:L16>
nopl 0x0(%rax,%rax,1)
sub $0x10,%rdx
cmp 0x10(%rdx),%rbx
je <LWLockRelease:L21>
movslq %eax,%rcx
sub $0x1,%eax
jns <LWLockRelease:L13>
jmp <LWLockRelease.cold>
nopw 0x0(%rax,%rax,1)
movslq %eax,%r8
mov %r9d,ADDR(%rip) # <num_held_lwlocks>
shl $0x4,%r8
add %rsi,%r8
mov 0x8(%r8),%ebp
cmp %r9d,%eax
jge <LWLockRelease:L36>
lea -0x2(%rdi),%edx
shl $0x4,%rcx
mov %r8,%rdi
sub %eax,%edx
add %rcx,%rsi
add $0x1,%rdx
shl $0x4,%rdx
call <memmove@plt>
mov ADDR(%rip),%eax # <lwlock_implementation>
test %eax,%eax
jne <LWLockRelease:L66>
lea 0x4(%rbx),%rax
test %ebp,%ebp
je <LWLockRelease:L56>
mov $0xffffffff,%edx
lock xadd %edx,(%rax)
sub $0x1,%edx
and $0xc00fffff,%edx
cmp $0xc0000000,%edx
je <LWLockRelease:L75>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
add $0x8,%rsp
pop %rbx
pop %rbp
ret
nopl 0x0(%rax,%rax,1)
mov $0xfff80000,%edx
lock xadd %edx,(%rax)
sub $0x80000,%edx
and $0xc00fffff,%edx
cmp $0xc0000000,%edx
jne <LWLockRelease:L48>
mov %rbx,%rdi
call <LWLockReleaseWakeupExclusive>
jmp <LWLockRelease:L48>
nopw 0x0(%rax,%rax,1)
mov %ebp,%esi
mov %rbx,%rdi
call <LWLockReleaseSpin>
and $0xc00fffff,%eax
cmp $0xc0000000,%eax
jne <LWLockRelease:L48>
test %ebp,%ebp
je <LWLockRelease:L62>
nopw 0x0(%rax,%rax,1)
mov %rbx,%rdi
call <LWLockReleaseWakeupShared>
jmp <LWLockRelease:L48>
