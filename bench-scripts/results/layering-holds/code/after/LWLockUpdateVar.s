push %rbp
push %rbx
mov %rdi,%rbx
sub $0x8,%rsp
xchg %rdx,(%rsi)
call <LWLockWaitListLock>
mov 0x8(%rbx),%edi
cmp $0xffffffff,%edi
je <LWLockUpdateVar:L132>
mov ADDR(%rip),%rax # <ProcGlobal>
mov $0xffffffffffffffff,%rcx
mov $0xffffffffffffffff,%rsi
mov (%rax),%rbp
movslq %edi,%rax
imul $0x350,%rax,%rdx
mov 0x5c(%rbp,%rdx,1),%r9d
nopl 0x0(%rax)
imul $0x350,%rax,%rax
lea 0x0(%rbp,%rax,1),%r8
cmpb $0x2,0x5b(%r8)
jne <LWLockUpdateVar:L74>
lea 0x5c(%rax),%r10
lea 0x0(%rbp,%r10,1),%r11
movslq 0x4(%r11),%rdx
mov (%r11),%eax
cmp $0xffffffff,%edx
je <LWLockUpdateVar:L62>
imul $0x350,%rdx,%rdx
mov %eax,0x5c(%rbp,%rdx,1)
movslq (%r11),%rax
mov 0x4(%r11),%edx
cmp $0xffffffff,%eax
je <LWLockUpdateVar:L67>
mov ADDR(%rip),%rbp # <ProcGlobal>
imul $0x350,%rax,%rax
add 0x0(%rbp),%rax
mov %edx,0x60(%rax)
movq $0x0,(%r11)
mov ADDR(%rip),%rax # <ProcGlobal>
add (%rax),%r10
mov %r10,%rax
cmp $0xffffffff,%ecx
je <LWLockUpdateVar:L70>
mov %ecx,0x4(%r10)
mov ADDR(%rip),%rdx # <ProcGlobal>
imul $0x350,%rcx,%rcx
add (%rdx),%rcx
mov %edi,0x5c(%rcx)
movl $0xffffffff,(%rax)
movb $0x2,0x5a(%r8)
cmp $0xffffffff,%r9d
je <LWLockUpdateVar:L74>
mov ADDR(%rip),%rax # <ProcGlobal>
movslq %edi,%rcx
mov %r9d,%edi
mov (%rax),%rbp
movslq %r9d,%rax
imul $0x350,%rax,%rax
mov 0x5c(%rbp,%rax,1),%r9d
movslq %edi,%rax
jmp <LWLockUpdateVar:L17>
nopl 0x0(%rax)
mov %eax,0x8(%rbx)
movslq (%r11),%rax
mov 0x4(%r11),%edx
cmp $0xffffffff,%eax
jne <LWLockUpdateVar:L33>
mov %edx,0xc(%rbx)
jmp <LWLockUpdateVar:L37>
nopl 0x0(%rax,%rax,1)
movl $0xffffffff,0x4(%r10)
movslq %edi,%rsi
jmp <LWLockUpdateVar:L48>
nopl (%rax)
lock andl $0xdfffffff,0x4(%rbx)
cmp $0xffffffff,%esi
je <LWLockUpdateVar:L127>
mov ADDR(%rip),%rax # <ProcGlobal>
mov (%rax),%rdi
imul $0x350,%rsi,%rax
mov 0x5c(%rdi,%rax,1),%ebp
xchg %ax,%ax
imul $0x350,%rsi,%rsi
movslq %ebp,%rax
lea (%rdi,%rsi,1),%rcx
lea 0x5c(%rdi,%rsi,1),%rsi
movslq 0x4(%rsi),%rdx
cmp $0xffffffff,%edx
je <LWLockUpdateVar:L92>
imul $0x350,%rdx,%rdx
mov %ebp,0x5c(%rdi,%rdx,1)
movslq (%rsi),%rax
cmp $0xffffffff,%eax
je <LWLockUpdateVar:L99>
mov ADDR(%rip),%rdi # <ProcGlobal>
mov 0x4(%rsi),%edx
imul $0x350,%rax,%rax
add (%rdi),%rax
mov %edx,0x60(%rax)
movq $0x0,(%rsi)
cmp ADDR(%rip),%rcx # <MyProc>
je <LWLockUpdateVar:L123>
movzwl (%rbx),%eax
mov $0x7f,%edx
cmp %dx,%ax
cmova %rdx,%rax
lea (%rax,%rax,4),%rax
shl $0x5,%rax
add ADDR(%rip),%rax # <MyLockStats>
addq $0x1,0x58(%rax)
movb $0x0,0x5a(%rcx)
mov 0x18(%rcx),%rdi
call <PGSemaphoreUnlock>
cmp $0xffffffff,%ebp
je <LWLockUpdateVar:L127>
mov ADDR(%rip),%rax # <ProcGlobal>
movslq %ebp,%rsi
mov (%rax),%rdi
movslq %ebp,%rax
imul $0x350,%rax,%rax
mov 0x5c(%rdi,%rax,1),%ebp
jmp <LWLockUpdateVar:L82>
nopl 0x0(%rax,%rax,1)
movb $0x1,ADDR(%rip) # <LWLockWokeSelf>
movb $0x0,0x5a(%rcx)
cmp $0xffffffff,%ebp
jne <LWLockUpdateVar:L115>
add $0x8,%rsp
pop %rbx
pop %rbp
ret
nopw 0x0(%rax,%rax,1)
lock andl $0xdfffffff,0x4(%rbx)
add $0x8,%rsp
pop %rbx
pop %rbp
ret
