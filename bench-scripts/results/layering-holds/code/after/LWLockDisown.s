mov ADDR(%rip),%eax # <lock_stats_hold_sample>
push %rbx
mov %rdi,%rbx
test %eax,%eax
jg <LWLockDisown:L42>
mov ADDR(%rip),%esi # <num_held_lwlocks>
lea ADDR(%rip),%rdi # <held_lwlocks>
lea -0x1(%rsi),%r8d
mov %esi,%eax
movslq %r8d,%rdx
shl $0x4,%rdx
add %rdi,%rdx
jmp <LWLockDisown:L17>
nopl 0x0(%rax)
sub $0x10,%rdx
cmp 0x10(%rdx),%rbx
je <LWLockDisown:L22>
mov %eax,%ecx
sub $0x1,%eax
jns <LWLockDisown:L14>
jmp <LWLockDisown.cold>
xchg %ax,%ax
mov %r8d,ADDR(%rip) # <num_held_lwlocks>
cmp %r8d,%eax
jge <LWLockDisown:L36>
lea -0x2(%rsi),%edx
movslq %ecx,%rsi
sub %eax,%edx
cltq
shl $0x4,%rsi
add $0x1,%rdx
shl $0x4,%rax
lea (%rdi,%rsi,1),%rsi
shl $0x4,%rdx
add %rax,%rdi
call <memmove@plt>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
pop %rbx
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
ret
nopl 0x0(%rax,%rax,1)
call <LWLockHoldSampleEnd>
jmp <LWLockDisown:L5>
