push %rbp
push %rbx
sub $0x8,%rsp
mov ADDR(%rip),%rax # <MyProc>
test %rax,%rax
je <LWLockQueueSelf.cold>
cmpb $0x0,0x5a(%rax)
jne <LWLockQueueSelf.cold:L10>
mov %rdi,%rbx
mov %esi,%ebp
call <LWLockWaitListLock>
lock orl $0x80000000,0x4(%rbx)
mov ADDR(%rip),%rax # <MyProc>
mov ADDR(%rip),%rcx # <ProcGlobal>
movb $0x1,0x5a(%rax)
mov %bpl,0x5b(%rax)
movslq ADDR(%rip),%rax # <MyProcNumber>
mov (%rcx),%rcx
mov %rax,%rdx
imul $0x350,%rax,%rax
lea 0x5c(%rcx,%rax,1),%rcx
cmp $0x2,%ebp
je <LWLockQueueSelf:L46>
movslq 0xc(%rbx),%rax
cmp $0xffffffff,%eax
je <LWLockQueueSelf:L39>
mov %eax,0x4(%rcx)
mov ADDR(%rip),%rsi # <ProcGlobal>
imul $0x350,%rax,%rax
add (%rsi),%rax
mov %edx,0x5c(%rax)
movl $0xffffffff,(%rcx)
mov %edx,0xc(%rbx)
lock andl $0xdfffffff,0x4(%rbx)
add $0x8,%rsp
pop %rbx
pop %rbp
ret
xchg %ax,%ax
mov ADDR(%rip),%rax # <.rodata>
movd %edx,%xmm1
pshufd $0xe0,%xmm1,%xmm0
mov %rax,(%rcx)
movq %xmm0,0x8(%rbx)
jmp <LWLockQueueSelf:L33>
nopw 0x0(%rax,%rax,1)
movslq 0x8(%rbx),%rax
cmp $0xffffffff,%eax
je <LWLockQueueSelf:L58>
mov %eax,(%rcx)
mov ADDR(%rip),%rsi # <ProcGlobal>
imul $0x350,%rax,%rax
add (%rsi),%rax
mov %edx,0x60(%rax)
movl $0xffffffff,0x4(%rcx)
mov %edx,0x8(%rbx)
jmp <LWLockQueueSelf:L33>
nopl 0x0(%rax,%rax,1)
mov ADDR(%rip),%rax # <.rodata>
movd %edx,%xmm2
pshufd $0xe0,%xmm2,%xmm0
mov %rax,(%rcx)
movq %xmm0,0x8(%rbx)
jmp <LWLockQueueSelf:L33>
