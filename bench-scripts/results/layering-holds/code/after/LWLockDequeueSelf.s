push %rbp
mov $0x7f,%edx
push %rbx
mov %rdi,%rbx
sub $0x8,%rsp
movzwl (%rdi),%eax
cmp %dx,%ax
cmova %rdx,%rax
lea (%rax,%rax,4),%rax
shl $0x5,%rax
add ADDR(%rip),%rax # <MyLockStats>
addq $0x1,0x50(%rax)
call <LWLockWaitListLock>
mov ADDR(%rip),%rax # <MyProc>
cmpb $0x1,0x5a(%rax)
je <LWLockDequeueSelf:L49>
cmpl $0xffffffff,0x8(%rbx)
je <LWLockDequeueSelf:L43>
lock andl $0xdfffffff,0x4(%rbx)
lock orl $0x40000000,0x4(%rbx)
mov ADDR(%rip),%rbx # <MyProc>
xor %ebp,%ebp
jmp <LWLockDequeueSelf:L25>
nop
add $0x1,%ebp
mov 0x18(%rbx),%rdi
call <PGSemaphoreLock>
cmpb $0x0,0x5a(%rbx)
jne <LWLockDequeueSelf:L24>
lea -0x1(%rbp),%ebx
test %ebp,%ebp
jle <LWLockDequeueSelf:L38>
nopl 0x0(%rax)
mov ADDR(%rip),%rax # <MyProc>
mov 0x18(%rax),%rdi
call <PGSemaphoreUnlock>
sub $0x1,%ebx
jae <LWLockDequeueSelf:L33>
add $0x8,%rsp
pop %rbx
pop %rbp
ret
nopl 0x0(%rax)
mov 0x4(%rbx),%eax
test %eax,%eax
jns <LWLockDequeueSelf:L18>
lock andl $0x7fffffff,0x4(%rbx)
jmp <LWLockDequeueSelf:L18>
nopl 0x0(%rax)
mov ADDR(%rip),%rax # <ProcGlobal>
mov (%rax),%rcx
movslq ADDR(%rip),%rax # <MyProcNumber>
imul $0x350,%rax,%rax
lea 0x5c(%rcx,%rax,1),%rdx
movslq 0x4(%rdx),%rax
mov (%rdx),%esi
cmp $0xffffffff,%eax
je <LWLockDequeueSelf:L79>
imul $0x350,%rax,%rax
mov %esi,0x5c(%rcx,%rax,1)
movslq (%rdx),%rax
mov 0x4(%rdx),%ecx
cmp $0xffffffff,%eax
je <LWLockDequeueSelf:L89>
mov ADDR(%rip),%rsi # <ProcGlobal>
imul $0x350,%rax,%rax
add (%rsi),%rax
mov %ecx,0x60(%rax)
movq $0x0,(%rdx)
cmpl $0xffffffff,0x8(%rbx)
je <LWLockDequeueSelf:L82>
lock andl $0xdfffffff,0x4(%rbx)
mov ADDR(%rip),%rax # <MyProc>
movb $0x0,0x5a(%rax)
add $0x8,%rsp
pop %rbx
pop %rbp
ret
nopl 0x0(%rax)
mov %esi,0x8(%rbx)
jmp <LWLockDequeueSelf:L60>
nopl (%rax)
mov 0x4(%rbx),%eax
test %eax,%eax
jns <LWLockDequeueSelf:L71>
lock andl $0x7fffffff,0x4(%rbx)
lock andl $0xdfffffff,0x4(%rbx)
jmp <LWLockDequeueSelf:L72>
nopl 0x0(%rax)
mov %ecx,0xc(%rbx)
jmp <LWLockDequeueSelf:L68>
