lea 0x4(%rdi),%rdx
test %esi,%esi
jne <LWLockReleaseDisowned:L11>
mov $0xfff80000,%eax
lock xadd %eax,(%rdx)
sub $0x80000,%eax
and $0xc00fffff,%eax
cmp $0xc0000000,%eax
je <LWLockReleaseDisowned:L17>
ret
nopl 0x0(%rax,%rax,1)
mov $0xffffffff,%eax
lock xadd %eax,(%rdx)
sub $0x1,%eax
and $0xc00fffff,%eax
cmp $0xc0000000,%eax
jne <LWLockReleaseDisowned:L9>
jmp <LWLockWakeup>
