"""Configuration: where things are, workloads, variants, presets and the
run options they resolve to.

Paths are module attributes read at call time (config.BUILD, not a copy), so
that tests and the bundle can point them elsewhere: FLEXLOCK_TOP (the
checkout or an unpacked bundle), FLEXLOCK_BUILD (its build/ directory) and
FLEXBENCH_VARIANTS (variants/*.conf).
"""

import datetime
import os
import re
import shlex
from pathlib import Path

TOP = Path(os.environ.get("FLEXLOCK_TOP", Path(__file__).resolve().parent.parent.parent))
BENCH = TOP / "bench-scripts"
RESULTS = TOP / "results"  # the runs, dated: DATE-what/
WORKLOADS = BENCH / "workloads"
# a user's own workloads (make predict SCRIPT=: scripts/predict.sh writes
# one there), searched after ours; a name of ours cannot be taken
USER_WORKLOADS_ENV = "FLEXLOCK_USER_WORKLOADS"
PRESETS = BENCH / "presets"
VARIANTS = Path(os.environ.get("FLEXBENCH_VARIANTS", TOP / "variants"))
BUILD = Path(os.environ.get("FLEXLOCK_BUILD", TOP / "build"))
# ours; a user's own builds (make build) are known by flexbench/builds.py
KNOWN_BUILDS = ("vanilla", "patched", "cassert")


class UsageError(Exception):
    """Bad input: reported before anything starts."""


class BenchError(Exception):
    """A failure while running: reported loudly, the run stops."""


def parse_conf(path):
    """key = value lines; '#' starts a comment; later keys override."""
    conf = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            raise UsageError(f"{path}:{lineno}: expected 'key = value', got {line!r}")
        key, value = (part.strip() for part in line.split("=", 1))
        conf[key] = value.strip("'\"") if key != "session" else value
    return conf


def parse_settings(text):
    """'a=1, b=2' -> {'a': '1', 'b': '2'}"""
    out = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        if "=" not in item:
            raise UsageError(f"bad setting {item!r}: expected name=value")
        k, v = (p.strip() for p in item.split("=", 1))
        out[k] = v
    return out


def positive_ints(text, what):
    vals = []
    for item in re.split(r"[,\s]+", text.strip()):
        if not item:
            continue
        if not item.isdigit() or int(item) <= 0:
            raise UsageError(f"{what} must be positive integers, got {item!r}")
        vals.append(int(item))
    if not vals:
        raise UsageError(f"{what}: none given")
    return vals


def names(text):
    return [x for x in re.split(r"[,\s]+", text.strip()) if x]


SCRIPT_WEIGHT_RE = re.compile(r"^([^@\s]+)@(.*)$")


def parse_scripts(text, what):
    """'a.sql@45 b.sql@43' -> [('a.sql', 45), ('b.sql', 43)]: pgbench's
    -f FILE@WEIGHT; every script needs a weight (a whole number, not all
    zero)."""
    out = []
    for item in text.split():
        m = SCRIPT_WEIGHT_RE.match(item)
        if not m or not m.group(1):
            raise UsageError(f"{what}: expected FILE@WEIGHT, got {item!r}")
        weight = m.group(2)
        if not weight.isdigit():
            raise UsageError(f"{what}: weight of {m.group(1)} must be a whole number, got {weight!r}")
        out.append((m.group(1), int(weight)))
    if not out:
        raise UsageError(f"{what}: no scripts given")
    if sum(w for _, w in out) == 0:
        raise UsageError(f"{what}: every weight is zero")
    if len({f for f, _ in out}) != len(out):
        raise UsageError(f"{what}: a script is named twice")
    return out


def workload_dirs():
    """Where workloads are: ours, then the user's (FLEXLOCK_USER_WORKLOADS)."""
    dirs = [WORKLOADS]
    extra = os.environ.get(USER_WORKLOADS_ENV)
    if extra:
        dirs.append(Path(extra))
    return dirs


def workload_conf(name):
    """The NAME.conf of a workload, ours first; None if there is none."""
    for d in workload_dirs():
        if (d / f"{name}.conf").is_file():
            return d / f"{name}.conf"
    return None


def workload_scripts(name, conf, where=None):
    """[(path, weight)] of a workload: 'script = FILE' (one script, weight
    None: plain -f FILE; default NAME.sql) or 'scripts = FILE@W ...'
    (pgbench picks one per transaction by weight), not both."""
    if "script" in conf and "scripts" in conf:
        raise UsageError(f"workload {name}: give either 'script' or 'scripts', not both")
    where = where or WORKLOADS
    if "scripts" in conf:
        scripts = [(where / f, w) for f, w in parse_scripts(conf["scripts"], f"workload {name}: scripts")]
    else:
        scripts = [(where / conf.get("script", f"{name}.sql"), None)]
    for path, _ in scripts:
        if not path.is_file():
            raise UsageError(f"workload {name}: script {path} does not exist")
    return scripts


class Workload:
    """A pgbench script (or several, weighted) with its init and settings:
    workloads/NAME.conf.  scripts: [(path, weight)], weight None for a
    single-script workload; script: the first.  nopm_script: the script
    whose transactions are new orders (new orders per minute in runs.csv)."""

    def __init__(self, name):
        conf_path = workload_conf(name)
        if conf_path is None:
            raise UsageError(f"unknown workload {name!r} (known: {', '.join(list_workloads())})")
        conf = parse_conf(conf_path)
        self.name = name
        self.description = conf.get("description", name)
        self.seed = conf.get("seed", "")
        self.scripts = workload_scripts(name, conf, conf_path.parent)
        self.script = self.scripts[0][0]
        self.nopm_script = conf.get("nopm_script")
        if self.nopm_script and self.nopm_script not in [p.name for p, _ in self.scripts]:
            raise UsageError(f"workload {name}: nopm_script {self.nopm_script!r} is not one of its scripts "
                             f"({', '.join(p.name for p, _ in self.scripts)})")
        self.pgbench_init = conf.get("pgbench_init")
        self.scale = int(conf.get("scale", "1"))
        self.init_sql = conf_path.parent / conf["init_sql"] if "init_sql" in conf else None
        self.reset_sql = conf.get("reset_sql")
        self.session = parse_settings(conf.get("session", ""))
        self.vars = parse_settings(conf.get("vars", ""))
        self.pgbench_args = shlex.split(conf.get("pgbench_args", ""))

    @property
    def dbname(self):
        return "wl_" + re.sub(r"[^a-z0-9]", "_", self.name.lower())


def list_workloads():
    return sorted({p.stem for d in workload_dirs() for p in d.glob("*.conf")})


def list_presets():
    return sorted(p.stem for p in PRESETS.glob("*.conf"))


def variant_conf(name):
    path = VARIANTS / f"{name}.conf"
    if not path.is_file():
        known = sorted(p.stem for p in VARIANTS.glob("*.conf"))
        raise UsageError(f"unknown variant {name!r} (known: {', '.join(known)})")
    return parse_conf(path)


def variant_settings(name):
    """GUCs of variants/NAME.conf (the same files make check uses)."""
    return {k: v for k, v in variant_conf(name).items() if not k.startswith("flexlock_test.")}


def variant_workloads(name):
    """The workloads a variant is benchmarked on: flexlock_test.bench_workloads
    (a placeholder GUC, harmless to the server), or all if unset."""
    w = variant_conf(name).get("flexlock_test.bench_workloads")
    return set(names(w)) if w else None


def install_dir(build):
    return BUILD / "install" / build


def check_installed(build):
    """One clear line naming a missing install (a checkout: make it; a
    bundle: it was not packed)."""
    d = install_dir(build)
    if not (d / "bin" / "pgbench").is_file():
        hint = ("run 'make " + build + "' first" if build in KNOWN_BUILDS else
                f"run 'make build NAME={build} PATCHES=...' first") \
            if (TOP / ".git").exists() or (TOP / "Makefile").is_file() else "this bundle does not contain it"
        raise UsageError(f"build {build!r} is not built ({d}): {hint}")


def resolve(args):
    """Fill the run options from the preset, then check everything before
    anything starts."""
    args = resolve_matrix(args)
    if args.out is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        args.out = str(RESULTS / f"{stamp}-{args.preset or 'custom'}")
    if Path(args.out).exists():
        raise UsageError(f"output directory {args.out} exists; name a new one with --out")
    return args


def resolve_matrix(args):
    """resolve() but for the run directory: what a run of these options
    measures (flexsim's validation predicts a declared run's points before
    it exists)."""
    preset = {}
    if args.preset:
        path = PRESETS / f"{args.preset}.conf"
        if not path.is_file():
            raise UsageError(f"unknown preset {args.preset!r} (known: {', '.join(list_presets())})")
        preset = parse_conf(path)

    def pick(opt, key, default):
        v = getattr(args, opt, None)
        return v if v is not None else preset.get(key, default)

    # a preset may take its variants from a directory of its own
    # (variants_dir, from the top of the checkout): settings that are not
    # lock variants, which make check must not run its suites with
    if "variants_dir" in preset:
        global VARIANTS
        VARIANTS = TOP / preset["variants_dir"]
        if not VARIANTS.is_dir():
            raise UsageError(f"preset {args.preset!r}: variants_dir {preset['variants_dir']!r} is not a directory")

    args.workloads = names(pick("workloads", "workloads", ""))
    if not args.workloads:
        raise UsageError("no workloads given (--workloads or --preset)")
    for w in args.workloads:
        Workload(w)
    args.clients = positive_ints(str(pick("clients", "clients", "1")), "clients")
    args.reps = positive_ints(str(pick("reps", "reps", "3")), "reps")[0]
    args.duration = positive_ints(str(pick("duration", "duration", "10")), "duration")[0]
    warm = str(pick("warmup", "warmup", "0"))
    if not warm.isdigit():
        raise UsageError(f"warmup must be a whole number of seconds, got {warm!r}")
    args.warmup = int(warm)
    scale = pick("scale", "scale", None)
    args.scale = positive_ints(str(scale), "scale")[0] if scale is not None else None
    args.builds = names(pick("builds", "builds", "vanilla patched"))
    from . import builds
    for b in args.builds:
        if not builds.is_known(b):
            raise builds.unknown_build(b)
        check_installed(b)
        builds.check_current(b)
    variants = pick("variants", "variants", None)
    if variants is None and any(b not in KNOWN_BUILDS for b in args.builds):
        # a build of the user's: the run is its A/B with its base, at stock;
        # variants only when named (--variants, or a preset's variants line)
        args.variants = ["stock"]
    elif variants is None or variants == "all":
        args.variants = ["stock"] + sorted(p.stem for p in VARIANTS.glob("*.conf") if p.stem != "stock")
    else:
        args.variants = names(variants)
    for v in args.variants:
        variant_settings(v)
    # the profile runs (capmodel): on unless switched off, by option or preset
    prof = getattr(args, "profile_holds", None)
    if prof is None:
        prof = preset.get("profile_holds", "on").lower() not in ("off", "false", "0", "no")
    args.profile_holds = prof
    pdur = pick("profile_duration", "profile_duration", None)
    args.profile_duration = positive_ints(str(pdur), "profile-duration")[0] if pdur is not None \
        else min(args.duration, 3)
    args.predict_cores = positive_ints(str(pick("predict_cores", "predict_cores", "16,64")), "predict-cores")
    mprof = getattr(args, "machine_profile", None)
    if mprof is None:
        mprof = preset.get("machine_profile", "on").lower() not in ("off", "false", "0", "no")
    args.machine_profile = mprof
    return args
