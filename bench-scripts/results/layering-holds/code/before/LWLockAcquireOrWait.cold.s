xor %esi,%esi
mov $0x15,%edi
call <errstart_cold>
lea ADDR(%rip),%rdi # <.rodata>
xor %eax,%eax
call <errmsg_internal>
lea ADDR(%rip),%rdx # <__func__.N>
mov $LINE,%esi
lea ADDR(%rip),%rdi # <.rodata>
call <errfinish>
