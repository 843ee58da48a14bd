"""ProcArrayEndTransaction's XID clear (procarray.c) in flexsim, in each
procarray_group_clear mode.

  on      ProcArrayEndTransaction: LWLockConditionalAcquire(ProcArrayLock),
          else ProcArrayGroupClearXid: join the group list with one atomic
          operation; the first member leads (takes the lock, takes the list,
          clears every member, releases, posts each), the others sleep until
          served
  off     LWLockAcquire(ProcArrayLock) and the clear
  always  ProcArrayGroupClearXid at every commit
  holder  the conditional acquisition, else LWLockAcquireOrServed
          (procarraylock.c; lwlock.Served): queue with the request, a
          releaser clears the queued requests (LWLockServeRequests)

A mixin of model.Point: it uses the point's simulator, LWLocks (lwi),
variant, costs and counters.
"""

from .engine import BLOCK, Line, pay
from .lwlock import X, Served


class ProcArrayClear:
    """The XID clear at commit of one point."""

    def _setup_procarray(self):
        v = self.variant
        self.procarray = self.lock(("ProcArray", "0"), None)
        self.group = []                 # procArrayGroupFirst
        self.group_line = Line("procArrayGroupFirst")
        self.completion_line = Line("xactCompletionCount")
        self.served = None
        if v.group_clear == "holder":
            self.served = Served(self._serve, version=1 if v.holder_version == 1 else 2)
            self.procarray.policy = self.served

    def clear(self, p, hold):
        sim = self.sim
        lwi = self.lwi
        pa = self.procarray
        mode = self.variant.group_clear
        hold = hold * self.backend_scale
        if mode in ("on", "holder"):
            got = yield from lwi.conditional(p, pa, X)
            if got:
                self._do_clear(p, hold, 1)
                yield from lwi.release(p, pa)
                return
        if mode == "off":
            yield from lwi.acquire(p, pa, X)
            self._do_clear(p, hold, 1)
            yield from lwi.release(p, pa)
            return
        if mode == "holder":
            got = yield from self.served.acquire_or_served(lwi, p, pa)
            if got:
                self.counters["self_cleared"] += 1
                self._do_clear(p, hold, 1)
                yield from lwi.release(p, pa)
            else:
                self.counters["served"] += 1
            return
        # ProcArrayGroupClearXid
        yield from pay(p)
        p.debt += sim.lw(p.core, self.group_line)
        first = not self.group
        self.group.append(p)
        if not first:
            p.served = False
            yield from pay(p)
            while not p.served:
                yield BLOCK
            return
        yield from lwi.acquire(p, pa, X)
        yield from pay(p)
        p.debt += sim.lw(p.core, self.group_line)       # take the whole list
        members = self.group
        self.group = []
        self._do_clear(p, hold, len(members))
        self.counters["groups"] += 1
        self.counters["group_members"] += len(members)
        yield from lwi.release(p, pa)
        for q in members:
            if q is not p:
                q.served = True
                p.debt += sim.C_POST
                sim.wake(q)

    def _do_clear(self, p, hold, n):
        p.debt += hold + (n - 1) * self.costs.c_member
        p.debt += self.sim.lw(p.core, self.completion_line)

    def _serve(self, p, members):
        """The server's clear of the queued requests (the lock held)."""
        self._do_clear(p, self.costs.c_member, len(members))
        self.counters["groups"] += 1
        self.counters["group_members"] += len(members)
