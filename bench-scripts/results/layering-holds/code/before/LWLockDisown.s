sub $0x8,%rsp
mov ADDR(%rip),%esi # <num_held_lwlocks>
lea ADDR(%rip),%r8 # <held_lwlocks>
lea -0x1(%rsi),%r9d
mov %esi,%eax
movslq %r9d,%rdx
shl $0x4,%rdx
add %r8,%rdx
jmp <LWLockDisown:L13>
nopl 0x0(%rax,%rax,1)
sub $0x10,%rdx
cmp 0x10(%rdx),%rdi
je <LWLockDisown:L18>
mov %eax,%ecx
sub $0x1,%eax
jns <LWLockDisown:L10>
jmp <LWLockDisown.cold>
xchg %ax,%ax
mov %r9d,ADDR(%rip) # <num_held_lwlocks>
cmp %r9d,%eax
jge <LWLockDisown:L32>
lea -0x2(%rsi),%edx
movslq %ecx,%rsi
sub %eax,%edx
cltq
shl $0x4,%rsi
add $0x1,%rdx
shl $0x4,%rax
lea (%r8,%rsi,1),%rsi
shl $0x4,%rdx
lea (%r8,%rax,1),%rdi
call <memmove@plt>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
add $0x8,%rsp
ret
