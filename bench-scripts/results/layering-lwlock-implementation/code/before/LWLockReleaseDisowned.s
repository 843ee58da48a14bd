lea 0x4(%rdi),%rax
test %esi,%esi
jne <LWLockReleaseDisowned:L11>
mov $0xfff80000,%edx
lock xadd %edx,(%rax)
sub $0x80000,%edx
and $0xc00fffff,%edx
cmp $0xc0000000,%edx
je <LWLockReleaseDisowned:L19>
ret
cs nopw 0x0(%rax,%rax,1)
mov $0xffffffff,%edx
lock xadd %edx,(%rax)
sub $0x1,%edx
and $0xc00fffff,%edx
cmp $0xc0000000,%edx
jne <LWLockReleaseDisowned:L9>
jmp <LWLockReleaseWakeupShared>
nop
jmp <LWLockReleaseWakeupExclusive>
