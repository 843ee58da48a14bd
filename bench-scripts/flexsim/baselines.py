"""The predictors a practitioner would use instead of the simulator,
given the same measured throughput the simulator is given (issue 43, item
3): calibration runs (flexsim/calibration/MACHINE-stock.json, taken with
`flexlab sim calibrate` at a number of clients on the machine whose
profile is machines/MACHINE.json).

flat
    The calibration taken with the most clients not above the point's
    (else the fewest), per core it kept busy, times the cores the point
    keeps busy:  X(N) = X_cal * min(N, cores) / min(n_cal, cores_cal).
    On the calibration's own machine that is the 1-client calibration at 1
    client and the 2-client one at every higher count (2 cores); on a
    larger machine it is linear scaling with the cores.

usl
    Gunther's Universal Scalability Law,
        X(N) = lambda * N / (1 + sigma (N - 1) + kappa N (N - 1)),
    fitted per workload to the calibrations' (clients, tps) points on their
    machine: least squares of the relative error, sigma and kappa at least
    0 (Gunther's constraint).  Three parameters: it needs calibrations at
    three client counts or more, and says so otherwise.  On another core
    count only the points with no more clients than the calibration
    machine's cores are fitted (there N is the cores in use) and the law is
    evaluated at min(N, cores).

Both predict every variant as stock: the calibrations are of stock
settings, and neither knows a lock.
"""

import json
from pathlib import Path

from flexsim import params as P

HERE = Path(__file__).resolve().parent
NAMES = ("flat", "usl")


class BaselineError(Exception):
    pass


class Calibration:
    """One calibration file: its machine, cores, clients and the median
    throughput of each workload.  MACHINE names the file
    (calibration/MACHINE-stock.json); a calibration without "cores" (before
    2026-11-28) takes them from machines/MACHINE.json."""

    def __init__(self, machine, cores, clients, tps):
        self.machine, self.cores, self.clients, self.tps = machine, cores, clients, tps

    def __repr__(self):
        return f"{self.machine} ({self.cores} cores, {self.clients} clients)"


def load_calibration(machine, root=HERE):
    cal = Path(root) / "calibration" / f"{machine}-stock.json"
    if not cal.exists():
        raise BaselineError(f"no calibration {cal}")
    d = json.loads(cal.read_text())
    cores = d.get("cores")          # calibrations since 2026-11-28 say; else the machine's profile
    if not cores:
        prof = P.load_profile(P.machine_profile_path(machine))
        cores = prof["machine"].get("logical_cpus")
    if not cores:
        raise BaselineError(f"neither the calibration {cal.name} nor the profile of {machine} says how many "
                            "CPUs it ran on")
    return Calibration(machine, int(cores), int(d.get("clients", 1)),
                       {w: v["median"]["tps"] for w, v in d["workloads"].items()})


def flat(cals, workload, cores, clients):
    have = [c for c in cals if workload in c.tps]
    if not have:
        return None
    below = [c for c in have if c.clients <= clients]
    c = max(below, key=lambda c: c.clients) if below else min(have, key=lambda c: c.clients)
    return c.tps[workload] * min(clients, cores) / min(c.clients, c.cores)


def _solve3(A, b):
    """A x = b for a 3x3 system (Gaussian elimination, partial pivoting);
    None if singular."""
    M = [list(A[i]) + [b[i]] for i in range(3)]
    for i in range(3):
        p = max(range(i, 3), key=lambda r: abs(M[r][i]))
        if abs(M[p][i]) < 1e-300:
            return None
        M[i], M[p] = M[p], M[i]
        for r in range(i + 1, 3):
            f = M[r][i] / M[i][i]
            for k in range(i, 4):
                M[r][k] -= f * M[i][k]
    x = [0.0] * 3
    for i in (2, 1, 0):
        x[i] = (M[i][3] - sum(M[i][k] * x[k] for k in range(i + 1, 3))) / M[i][i]
    return x


def usl_fit(points):
    """(lambda, sigma, kappa) for [(N, X), ...] with three distinct N or
    more.  The law is linear in (1/lambda, sigma/lambda, kappa/lambda) once
    written N/X = a + b (N-1) + c N (N-1); each point's equation is divided
    by its N/X so that its residual is the relative error of X.  sigma and
    kappa at least 0: of the full fit and the fits with b, c or both held at
    0, the one with the least squared error among those whose coefficients
    are all allowed (lambda > 0, sigma >= 0, kappa >= 0)."""
    if len({n for n, _ in points}) < 3:
        raise BaselineError(f"USL needs three client counts, the inputs have {len({n for n, _ in points})}")
    rows = [([1.0, n - 1.0, n * (n - 1.0)], x / n) for n, x in points]
    best = None
    for free in ((0, 1, 2), (0, 1), (0, 2), (0,)):
        A = [[0.0] * 3 for _ in range(3)]
        v = [0.0] * 3
        for f, w in rows:
            g = [f[k] * w if k in free else 0.0 for k in range(3)]
            for i in range(3):
                v[i] += g[i]
                for j in range(3):
                    A[i][j] += g[i] * g[j]
        for k in range(3):
            if k not in free:
                A[k][k], v[k] = 1.0, 0.0
        x = _solve3(A, v)
        if x is None or x[0] <= 0 or x[1] < 0 or x[2] < 0:
            continue
        err = sum((sum(fk * xk for fk, xk in zip(f, x)) * w - 1.0) ** 2 for f, w in rows)
        if best is None or err < best[0] - 1e-15:
            best = (err, x)
    if best is None:
        raise BaselineError("no USL fit with sigma, kappa >= 0")
    a, b, c = best[1]
    return 1.0 / a, b / a, c / a


def usl_x(fit, n):
    lam, sigma, kappa = fit
    return lam * n / (1.0 + sigma * (n - 1) + kappa * n * (n - 1))


def usl(cals, workload, cores, clients):
    have = [c for c in cals if workload in c.tps]
    if not have:
        return None
    same = all(c.cores == cores for c in have)
    pts = [(c.clients, c.tps[workload]) for c in have if same or c.clients <= c.cores]
    fit = usl_fit(pts)
    return usl_x(fit, clients if same else min(clients, cores))


def predict(name, cals, workload, cores, clients):
    """The baseline NAME's throughput at a point, or None where its
    calibrations have no such workload.  BaselineError if it cannot be
    fitted to these calibrations."""
    return {"flat": flat, "usl": usl}[name](cals, workload, cores, clients)
