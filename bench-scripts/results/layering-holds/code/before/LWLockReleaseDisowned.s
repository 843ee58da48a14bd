mov ADDR(%rip),%eax # <lwlock_implementation>
test %eax,%eax
jne <LWLockReleaseDisowned:L23>
lea 0x4(%rdi),%rax
test %esi,%esi
jne <LWLockReleaseDisowned:L13>
mov $0xfff80000,%edx
lock xadd %edx,(%rax)
sub $0x80000,%edx
and $0xc00fffff,%edx
cmp $0xc0000000,%edx
je <LWLockReleaseDisowned:L21>
ret
mov $0xffffffff,%edx
lock xadd %edx,(%rax)
sub $0x1,%edx
and $0xc00fffff,%edx
cmp $0xc0000000,%edx
jne <LWLockReleaseDisowned:L12>
jmp <LWLockReleaseWakeupShared>
nop
jmp <LWLockReleaseWakeupExclusive>
nopl (%rax)
sub $0x18,%rsp
mov %esi,0xc(%rsp)
mov %rdi,(%rsp)
call <LWLockReleaseSpin>
mov (%rsp),%rdi
mov 0xc(%rsp),%esi
and $0xc00fffff,%eax
cmp $0xc0000000,%eax
je <LWLockReleaseDisowned:L35>
add $0x18,%rsp
ret
nopw 0x0(%rax,%rax,1)
test %esi,%esi
je <LWLockReleaseDisowned:L40>
add $0x18,%rsp
jmp <LWLockReleaseWakeupShared>
nopl (%rax)
add $0x18,%rsp
jmp <LWLockReleaseWakeupExclusive>
