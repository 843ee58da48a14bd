mov 0x4(%rdi),%eax
mov %esi,%r8d
lea 0x4(%rdi),%rcx
jmp <LWLockAttemptLock:L21>
nopl 0x0(%rax)
test $0xfffff,%eax
jne <LWLockAttemptLock:L29>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockAttemptLock:L33>
movzwl (%rdi),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,2),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %r8d,%r8d
je <LWLockAttemptLock:L5>
test $0x80000,%eax
jne <LWLockAttemptLock:L29>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockAttemptLock:L9>
cs nopw 0x0(%rax,%rax,1)
mov %eax,%edx
xor %esi,%esi
jmp <LWLockAttemptLock:L9>
cs nopw 0x0(%rax,%rax,1)
mov %esi,%eax
xor $0x1,%eax
ret
