movslq ADDR(%rip),%rdx # <num_held_lwlocks>
test %edx,%edx
jle <LWLockHeldByMe:L16>
lea ADDR(%rip),%rax # <held_lwlocks>
shl $0x4,%rdx
add %rax,%rdx
jmp <LWLockHeldByMe:L11>
nopl 0x0(%rax,%rax,1)
add $0x10,%rax
cmp %rdx,%rax
je <LWLockHeldByMe:L16>
cmp %rdi,(%rax)
jne <LWLockHeldByMe:L8>
mov $0x1,%eax
ret
nopl 0x0(%rax)
xor %eax,%eax
ret
