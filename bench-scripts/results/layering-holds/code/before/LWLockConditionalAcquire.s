push %rbp
sub $0x10,%rsp
cmpl $0xc7,ADDR(%rip) # <num_held_lwlocks>
jg <LWLockConditionalAcquire.cold>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov %esi,%ebp
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
mov ADDR(%rip),%eax # <lwlock_implementation>
test %eax,%eax
jne <LWLockConditionalAcquire:L61>
mov 0x4(%rdi),%eax
lea 0x4(%rdi),%rcx
jmp <LWLockConditionalAcquire:L31>
nopl (%rax)
test $0xfffff,%eax
jne <LWLockConditionalAcquire:L39>
lea 0x80000(%rax),%edx
mov $0x1,%esi
lock cmpxchg %edx,(%rcx)
sete %dl
test %dl,%dl
jne <LWLockConditionalAcquire:L43>
movzwl (%rdi),%edx
mov $0x7f,%esi
cmp %si,%dx
cmova %rsi,%rdx
lea (%rdx,%rdx,2),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x40(%rdx)
test %ebp,%ebp
je <LWLockConditionalAcquire:L15>
test $0x80000,%eax
jne <LWLockConditionalAcquire:L39>
lea 0x1(%rax),%edx
mov $0x1,%esi
jmp <LWLockConditionalAcquire:L19>
nopl (%rax)
mov %eax,%edx
xor %esi,%esi
jmp <LWLockConditionalAcquire:L19>
xchg %ax,%ax
test %sil,%sil
jne <LWLockConditionalAcquire:L67>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov $0x7f,%edx
sub $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
movzwl (%rdi),%eax
cmp %dx,%ax
cmova %rdx,%rax
lea (%rax,%rax,2),%rax
shl $0x5,%rax
add ADDR(%rip),%rax # <MyLockStats>
addq $0x1,0x30(%rax)
add $0x10,%rsp
xor %eax,%eax
pop %rbp
ret
nop
mov %ebp,%esi
mov %rdi,0x8(%rsp)
call <LWLockAttemptLockSpin>
mov 0x8(%rsp),%rdi
test %al,%al
jne <LWLockConditionalAcquire:L45>
movslq ADDR(%rip),%rcx # <num_held_lwlocks>
lea ADDR(%rip),%rax # <held_lwlocks>
mov %rcx,%rdx
shl $0x4,%rcx
add %rcx,%rax
add $0x1,%edx
mov $0x7f,%ecx
mov %rdi,(%rax)
mov %ebp,0x8(%rax)
mov %edx,ADDR(%rip) # <num_held_lwlocks>
movzwl (%rdi),%eax
mov ADDR(%rip),%rdx # <MyLockStats>
cmp %cx,%ax
cmova %rcx,%rax
lea (%rax,%rax,2),%rax
lea 0x0(%rbp,%rax,4),%rax
addq $0x1,(%rdx,%rax,8)
add $0x10,%rsp
mov $0x1,%eax
pop %rbp
ret
