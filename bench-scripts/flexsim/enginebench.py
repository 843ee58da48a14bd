"""The engine choice, measured: one toy lock model on two engines.

N processes each loop: compute for an exponential time (mean 1 us), take one
lock (FIFO queue when it is held), hold it 0.25 us, release it.  The same
model on SimPy (if importable; PyPI, not a dependency of the lab) and on a
plain heapq event loop of the kind flexsim.engine uses.  Prints simulated
lock acquisitions and events per wall-clock second for each.

    python3 -m flexlab sim enginebench [--procs 16] [--acquisitions 300000]
"""

import argparse
import heapq
import random
import time


def heapq_model(procs, acquisitions, seed=1):
    rnd = random.Random(seed)
    heap = []
    seq = 0
    held = [False]
    queue = []
    done = [0]
    events = [0]
    HOLD = 250

    def push(t, kind, p):
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (t, seq, kind, p))

    for p in range(procs):
        push(rnd.expovariate(1 / 1000), 0, p)
    while heap and done[0] < acquisitions:
        t, _, kind, p = heapq.heappop(heap)
        events[0] += 1
        if kind == 0:  # wants the lock
            if held[0]:
                queue.append(p)
            else:
                held[0] = True
                done[0] += 1
                push(t + HOLD, 1, p)
        else:  # releases
            if queue:
                q = queue.pop(0)
                done[0] += 1
                push(t + HOLD, 1, q)
            else:
                held[0] = False
            push(t + rnd.expovariate(1 / 1000), 0, p)
    return done[0], events[0]


def simpy_model(procs, acquisitions, seed=1):
    import simpy
    rnd = random.Random(seed)
    env = simpy.Environment()
    lock = simpy.Resource(env, capacity=1)
    done = [0]

    def proc(env):
        while done[0] < acquisitions:
            yield env.timeout(rnd.expovariate(1 / 1000))
            with lock.request() as req:
                yield req
                done[0] += 1
                yield env.timeout(250)

    for _ in range(procs):
        env.process(proc(env))
    while done[0] < acquisitions and env.peek() != float("inf"):
        env.step()
    # SimPy schedules a timeout, a request and a release event per cycle
    return done[0], 3 * done[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--procs", type=int, default=16)
    ap.add_argument("--acquisitions", type=int, default=300000)
    a = ap.parse_args(argv)
    for name, fn in (("heapq", heapq_model), ("simpy", simpy_model)):
        try:
            t0 = time.perf_counter()
            n, ev = fn(a.procs, a.acquisitions)
            dt = time.perf_counter() - t0
        except ImportError:
            print(f"{name}: not installed")
            continue
        print(f"{name}: {n / dt / 1e6:.2f} M acquisitions/s, {ev / dt / 1e6:.2f} M events/s ({dt:.2f} s)")


if __name__ == "__main__":
    main()
