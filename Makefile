# Makefile — flexlock, a lab for PostgreSQL lock scalability.
#
# The real work is in scripts/; this file only names the entry points.
# `make help` lists them.  Variables (environment or command line):
#   PG_SRC=/path         build from this PostgreSQL 18 source tree
#   PG_TARBALL=/path     build from this tarball (postgresql-18.x.tar.bz2)
#   PG_VERSION=18.x      which minor release to fetch when neither is given
#   VARIANTS="stock ..." variant configs (variants/*.conf) `make check` runs
#   SUITES="regress ..." suites `make check` runs (see scripts/check.sh)
#   CHECK_MATRIX=light|full  per-variant suites: light (`make check`) or all (`make check-full`)
#   TAP_TESTS="t/005_wal_insert_locks.pl ..."  which of t/*.pl the tap suite runs
#   REPEAT=N SOAK_LOAD=N `make check-soak`: runs of SUITES (default tap), busy loops beside them
#   JOBS=N               parallel build jobs (default: number of cores)
#   FORCE=1              `make tree`: discard build/src and lay it out anew
#   FLEXLOCK_USER=name   unprivileged user for servers when run as root
#   PRESET=name          `make bench`: bench-scripts/presets/NAME.conf
#   BENCH_ARGS="..."     `make bench`: more flexbench options (--clients 1,8 ...)
#   BUILDS="patched mine"  `make bench`: the builds compared (a build of yours with the one it was laid on)
#   BENCH_OUT=dir        `make bench`, `make lwbench`: the run directory to create
#   LWBENCH_ARGS="..."   `make lwbench`: --workers 1,2,4 --shared 100,95 --seconds 3 --reps 3
#   BEFORE=rev AFTER=rev `make layering`: compare these commits of build/src instead
#   RESULTS=dir          `make layering`: where RESULT.md goes
#   LAYERING_FUNCS="..." LAYERING_HELPERS="..." LAYERING_TITLE="..."  `make layering`: the functions compared (default: LWLock's), the result's title
#   LAYERING_EXTRA_FUNCS="f g"  `make layering`: more functions to compare beside LWLock's
#   BUNDLE_BUILDS="..."  `make bundle`: the installs to ship (default: vanilla patched)
#   BUNDLE_OUT=dir       `make bundle`: where the tarball goes (default: build/bundle)
#   MACHINE_PROFILE_OUT=dir  `make machine-profile`: where it goes (default: results/DATE-machine-HOST)
#   MACHINE_PROFILE_ARGS="--reps 9 --fsync-seconds 5"  `make machine-profile`: more options
#   WORKLOAD=w VARIANT=v PAIRS=w:v,... PAIRS_FILE=f TXNS=N TRACE_OUT=dir TRACE_ARGS="..."  `make trace` (SCALE too)
#   BUILD=name           `make trace`, `overhead`, `predict` (and server, below): a build of yours (make build)
#   CPUS=0 (0,2 or 0-3)  `make bench`, `machine-profile`, `trace`, `server`: the lab's commands, the servers
#                        and pgbench they start confined to these CPUs, as a smaller machine (FLEXLOCK_CPUS)
#   AARCH64_TORTURE="16 5"  the aarch64 suite: workers and seconds of each LWLock torture run
#   WORKLOAD= VARIANT= CORES= CLIENTS= MACHINE= SEED= TRACES= TRACES_MACHINE=  `make predict` (bench-scripts/flexsim)
#   SCRIPT=file.sql INIT=file.sql SCALE=N CORES= CLIENTS= VARIANT=  `make predict` of your own pgbench script (scripts/predict.sh)
#   NAME=mine PATCHES=dir|file.patch|file.diff BASE=patched|vanilla CASSERT=1  `make build`: your own
#                        patches as a build, build/install/NAME (docs/your-patch.md)
# `make server`, `psql`, `stop`, `status`, `pgbench` (scripts/server.sh) take
# these from make's command line only (not from the environment):
#   BUILD=patched|vanilla|cassert  FRESH=1  VARIANT=name  SET="guc=value ..."
#   SCALE=N  PORT=N  SCRIPT=file.sql  CLIENTS=N  TIME=S  PGBENCH_ARGS="..."

SHELL := /bin/bash
S := scripts

export PG_SRC PG_TARBALL PG_VERSION VARIANTS SUITES CHECK_MATRIX TAP_TESTS REPEAT SOAK_LOAD JOBS FLEXLOCK_USER PG_CONFIGURE_EXTRA FORCE \
	PRESET BUILDS BENCH_ARGS BENCH_OUT LWBENCH_ARGS BEFORE AFTER BUNDLE_BUILDS BUNDLE_OUT AARCH64_TORTURE \
	RESULTS LAYERING_EXTRA_FUNCS LAYERING_FUNCS LAYERING_HELPERS LAYERING_TITLE \
	MACHINE_PROFILE_OUT MACHINE_PROFILE_ARGS WORKLOAD PAIRS PAIRS_FILE TXNS TRACE_OUT TRACE_ARGS

# CPUS: the lab's commands (flexlab, flexbench.py) confine themselves and
# what they start (bench-scripts/flexbench/machine.py, confine)
ifneq ($(CPUS),)
export FLEXLOCK_CPUS := $(CPUS)
endif

.PHONY: predict predict-check help deps postgres vanilla patched cassert tree export-patches \
	build check-patches check check-full check-soak bench lwbench overhead layering bundle aarch64 clean distclean machine-profile trace \
	server psql stop status pgbench

# BUILD= of make's command line for make trace, overhead and predict (lib.sh
# takes BUILD for the build directory: passed on as FLEXLOCK_USE_BUILD)
USE_BUILD := $(if $(filter command line,$(origin BUILD)),$(BUILD))

SERVER_VARS := BUILD FRESH VARIANT SET SCALE PORT SCRIPT CLIENTS TIME PGBENCH_ARGS
SERVER_CMDLINE := $(strip $(foreach v,$(SERVER_VARS),$(if $(filter command line,$(origin $(v))),$(v))))

help:
	@echo "flexlock — PostgreSQL 18 lock-scalability lab"
	@echo
	@echo "  make postgres        build vanilla, patched and cassert into build/install/"
	@echo "  make build           NAME=mine PATCHES=dir|file [BASE=patched|vanilla CASSERT=1]: your own patches as a build"
	@echo "  make server          start a server of the patched build (BUILD= VARIANT= SET= SCALE= FRESH=1 PORT=)"
	@echo "  make pgbench         SCRIPT=file.sql [CLIENTS= TIME=]: a pgbench run and its lock profile"
	@echo "  make psql            psql on that server; make status, make stop"
	@echo "  make check           every test, against the cassert build"
	@echo "  make bench           the benchmark: PRESET=quick|default|full|seed-000|... (bench-scripts/); BUILDS='patched yours'"
	@echo "  make lwbench         LWLock micro-benchmark: compare-exchange, fetch-add, read-biased (LWBENCH_ARGS)"
	@echo "  make overhead        instructions per transaction, vanilla vs patched (callgrind); BUILD=yours: against its base"
	@echo "  make layering        the lwlock.c/flexlock.c split: LWLock code and callgrind counts before vs after"
	@echo "  make predict         simulated tps of WORKLOAD= VARIANT= on CORES= with CLIENTS= (flexsim; MACHINE= SEED= TRACES=),"
	@echo "                       or of your own SCRIPT=file.sql (INIT= SCALE=), traced and calibrated here first"
	@echo "  make predict-check   the simulator's tests, make predict reproducing a row of its validation.csv, and"
	@echo "                       every committed prediction set of the model version re-run (12 minutes)"
	@echo "  make bundle          one tarball to run the benchmark on another machine (build/bundle/)"
	@echo "  make machine-profile cache-line transfer, semaphore wake-up, WAL flush time of this machine (MACHINE_PROFILE_OUT)"
	@echo "  make trace           WORKLOAD= VARIANT= [TXNS= SCALE= BUILD=]: lock traces with one client (docs/lock-trace.md)"
	@echo "  make aarch64         cross-compile the cassert build for aarch64 (build/install/aarch64); its tests: make check SUITES=aarch64"
	@echo "  make deps            install build/test packages (root) or name the missing ones"
	@echo "  make tree            lay out build/src: vanilla commit + one commit per patch"
	@echo "  make export-patches  write build/src's commits back to patches/"
	@echo "  make check-patches   check that patches/ applies to the pristine source"
	@echo "  make check-full      make check with every PostgreSQL suite for every variant config"
	@echo "  make check-soak      SUITES= (tap) REPEAT= (5) times with every core busy: tests that chance breaks"
	@echo "  make clean           remove builds (keeps source and build/src)"
	@echo "  make distclean       remove build/ and the cached source download"

deps:
	@$(S)/deps.sh

postgres: deps
	@$(S)/build.sh vanilla patched cassert

vanilla patched cassert: deps
	@$(S)/build.sh $@

# a user's own build (scripts/build.sh own, docs/your-patch.md); NAME, BASE
# and CASSERT count from make's command line only (NAME is often set in the
# environment to something else)
CMDLINE = $(if $(filter command line,$(origin $(1))),$($(1)))
build: deps
	@$(S)/build.sh own "$(call CMDLINE,NAME)" "$(call CMDLINE,PATCHES)" "$(or $(call CMDLINE,BASE),patched)" \
		$(if $(filter 1 yes on true,$(call CMDLINE,CASSERT)),cassert)

tree: deps
	@if [ -n "$(FORCE)" ]; then $(S)/tree.sh reset; else $(S)/tree.sh ensure; fi
	@echo "build/src: $$(git -C build/src log --oneline vanilla..HEAD | wc -l) patches on top of tag 'vanilla'"

export-patches:
	@$(S)/tree.sh export

check-patches: deps
	@$(S)/tree.sh check

check: deps
	@$(S)/check.sh

check-full: deps
	@CHECK_MATRIX=full $(S)/check.sh

check-soak: deps
	@$(S)/soak.sh

bench: deps
	@$(S)/bench.sh

lwbench: deps
	@$(S)/bench.sh lwlock

overhead:
	@FLEXLOCK_DEPS_EXTRA=valgrind $(S)/deps.sh
	@FLEXLOCK_USE_BUILD="$(USE_BUILD)" $(S)/overhead.sh

layering:
	@FLEXLOCK_DEPS_EXTRA=valgrind $(S)/deps.sh
	@$(S)/layering.sh

bundle: deps
	@$(S)/bundle.sh

machine-profile: deps
	@$(S)/machine-profile.sh

# VARIANT and SCALE are also server.sh's: passed on explicitly
trace: deps
	@WORKLOAD="$(WORKLOAD)" VARIANT="$(VARIANT)" SCALE="$(SCALE)" FLEXLOCK_USE_BUILD="$(USE_BUILD)" $(S)/trace.sh

# installs the cross compiler and qemu-user-static itself (only here and in
# the aarch64 suite of check-full), like overhead's valgrind
aarch64:
	@$(S)/cross.sh build

server:
	@FLEXLOCK_CMDLINE="$(SERVER_CMDLINE)" $(S)/server.sh start

psql stop status pgbench:
	@FLEXLOCK_CMDLINE="$(SERVER_CMDLINE)" $(S)/server.sh $@

# the simulator (bench-scripts/flexsim, docs/simulator.md): python3 only
predict:
ifneq ($(SCRIPT),)
	@SCRIPT="$(SCRIPT)" INIT="$(INIT)" SCALE="$(SCALE)" CORES="$(CORES)" CLIENTS="$(CLIENTS)" VARIANT="$(VARIANT)" \
		MACHINE="$(MACHINE)" PREDICT_BUILD="$(or $(USE_BUILD),$(PREDICT_BUILD))" CALIBRATE_ARGS="$(CALIBRATE_ARGS)" $(S)/predict.sh
else
	@if [ -z "$(WORKLOAD)" ] || [ -z "$(CORES)" ] || [ -z "$(CLIENTS)" ]; then \
		echo "make predict: WORKLOAD=name CORES=N CLIENTS=N [VARIANT=name (stock)] [MACHINE=name SEED=N TRACES=dir TRACES_MACHINE=name BUILD=name]" >&2; \
		echo "          or SCRIPT=file.sql CORES=N CLIENTS=N [INIT=file.sql SCALE=N VARIANT=name MACHINE=name] (your own workload)" >&2; exit 2; fi
	@cd bench-scripts && python3 -m flexlab sim predict --workload "$(WORKLOAD)" --variant "$(or $(VARIANT),stock)" \
		--cores "$(CORES)" --clients "$(CLIENTS)" $(if $(MACHINE),--machine "$(MACHINE)") $(if $(SEED),--seed "$(SEED)") \
		$(if $(TRACES),--traces "$(abspath $(TRACES))") $(if $(TRACES_MACHINE),--traces-machine "$(TRACES_MACHINE)") \
		$(if $(USE_BUILD),--build "$(USE_BUILD)")
endif

predict-check:
	@cd bench-scripts && FLEXSIM_RERUN=1 python3 -m unittest tests.test_flexsim

clean:
	@$(S)/server.sh stop >/dev/null 2>&1 || true
	rm -rf build/obj build/install build/builds build/ext build/check build/logs build/overhead build/layering build/check-patches build/check-patches.src build/bundle

distclean:
	@$(S)/clean.sh distclean
