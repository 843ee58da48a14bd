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
movb $0x1,0x5a(%rax)
mov %bpl,0x5b(%rax)
movslq ADDR(%rip),%rax # <MyProcNumber>
lea (%rax,%rax,2),%rcx
mov %rax,%rdx
lea (%rax,%rcx,4),%rax
mov ADDR(%rip),%rcx # <ProcGlobal>
shl $0x6,%rax
mov (%rcx),%rcx
lea 0x5c(%rcx,%rax,1),%rcx
cmp $0x2,%ebp
je <LWLockQueueSelf:L50>
movslq 0xc(%rbx),%rax
cmp $0xffffffff,%eax
je <LWLockQueueSelf:L43>
lea (%rax,%rax,2),%rsi
mov %eax,0x4(%rcx)
lea (%rax,%rsi,4),%rax
mov ADDR(%rip),%rsi # <ProcGlobal>
shl $0x6,%rax
add (%rsi),%rax
mov %edx,0x5c(%rax)
movl $0xffffffff,(%rcx)
mov %edx,0xc(%rbx)
lock andl $0xdfffffff,0x4(%rbx)
add $0x8,%rsp
pop %rbx
pop %rbp
ret
nopl 0x0(%rax,%rax,1)
mov ADDR(%rip),%rax # <.rodata>
movd %edx,%xmm1
pshufd $0xe0,%xmm1,%xmm0
mov %rax,(%rcx)
movq %xmm0,0x8(%rbx)
jmp <LWLockQueueSelf:L37>
nopw 0x0(%rax,%rax,1)
movslq 0x8(%rbx),%rax
cmp $0xffffffff,%eax
je <LWLockQueueSelf:L63>
lea (%rax,%rax,2),%rsi
mov %eax,(%rcx)
lea (%rax,%rsi,4),%rax
mov ADDR(%rip),%rsi # <ProcGlobal>
shl $0x6,%rax
add (%rsi),%rax
mov %edx,0x60(%rax)
movl $0xffffffff,0x4(%rcx)
mov %edx,0x8(%rbx)
jmp <LWLockQueueSelf:L37>
mov ADDR(%rip),%rax # <.rodata>
movd %edx,%xmm2
pshufd $0xe0,%xmm2,%xmm0
mov %rax,(%rcx)
movq %xmm0,0x8(%rbx)
jmp <LWLockQueueSelf:L37>
