sub $0x8,%rsp
cmpl $0xc7,ADDR(%rip) # <num_held_lwlocks>
jg <LWLockConditionalAcquire.cold>
mov ADDR(%rip),%eax # <InterruptHoldoffCount>
mov %esi,%r9d
mov %r9d,%esi
add $0x1,%eax
mov %eax,ADDR(%rip) # <InterruptHoldoffCount>
call <LWLockAttemptLock>
test %al,%al
je <LWLockConditionalAcquire:L26>
mov ADDR(%rip),%edx # <InterruptHoldoffCount>
mov $0x7f,%ecx
sub $0x1,%edx
mov %edx,ADDR(%rip) # <InterruptHoldoffCount>
movzwl (%rdi),%edx
cmp %cx,%dx
cmova %rcx,%rdx
xor $0x1,%eax
lea (%rdx,%rdx,2),%rdx
shl $0x5,%rdx
add ADDR(%rip),%rdx # <MyLockStats>
addq $0x1,0x30(%rdx)
add $0x8,%rsp
ret
nopl 0x0(%rax)
movslq ADDR(%rip),%rsi # <num_held_lwlocks>
lea ADDR(%rip),%rdx # <held_lwlocks>
mov %rsi,%rcx
shl $0x4,%rsi
add %rsi,%rdx
add $0x1,%ecx
mov $0x7f,%esi
mov %rdi,(%rdx)
mov %ecx,ADDR(%rip) # <num_held_lwlocks>
mov ADDR(%rip),%rcx # <MyLockStats>
mov %r9d,0x8(%rdx)
movzwl (%rdi),%edx
cmp %si,%dx
cmova %rsi,%rdx
xor $0x1,%eax
lea (%rdx,%rdx,2),%rdx
lea (%r9,%rdx,4),%rdx
addq $0x1,(%rcx,%rdx,8)
add $0x8,%rsp
ret
