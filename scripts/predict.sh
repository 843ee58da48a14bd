#!/usr/bin/env bash
# scripts/predict.sh — `make predict SCRIPT=file.sql`: your own pgbench script
# simulated on CORES cores with CLIENTS clients, stock and a variant
# (docs/simulator.md, "Your own workload").  On this machine it takes what
# the simulator needs, as for the lab's workloads (about two minutes):
#
#   1. the machine's profile (flexlock-lab profile, 3 repetitions);
#   2. lock traces of the script with one client (flexlock-lab trace), of
#      stock and of VARIANT;
#   3. a calibration with as many clients as this machine has cores
#      (flexlock-lab sim calibrate);
#
# then prints the prediction of each, with the model's measured error at
# that core and client count beside it.
#
#   SCRIPT=file.sql    a pgbench script: one transaction (pgbench's \set
#                      and :scale work; -D scale=SCALE is given)
#   INIT=file.sql      its data set-up, run once in a fresh database
#   SCALE=N            pgbench -i -s N first (the script may use its tables)
#   CORES=N CLIENTS=N  the point predicted
#   VARIANT=name       a variants/ name besides stock
#   MACHINE=name       the profile of the machine predicted (default: this
#                      machine's, measured now, when CORES is its core
#                      count; else the lab's profile of that many cores)
#   TRACE_ARGS="..."   more trace options (--traced 300)
#   CALIBRATE_ARGS="..."  the calibration's run (default --secs 5 --reps 3)
#   PREDICT_BUILD=patched|cassert  the server traced and calibrated (patched)
#
# Everything goes to build/predict/user-NAME/ (NAME from the script's file
# name; FLEXLOCK_PREDICT_DIR=dir instead); the install is built if missing.

. "$(dirname "$0")/lib.sh"

usage="make predict SCRIPT=file.sql CORES=N CLIENTS=N [INIT=file.sql] [SCALE=N] [VARIANT=name] [MACHINE=name]"
[ -n "${SCRIPT:-}" ] || die "name a script: $usage"
[ -f "$SCRIPT" ] && [ -r "$SCRIPT" ] || die "SCRIPT=$SCRIPT: no such readable file"
[ -z "${INIT:-}" ] || { [ -f "$INIT" ] && [ -r "$INIT" ]; } || die "INIT=$INIT: no such readable file"
[ -z "${SCALE:-}" ] || [[ $SCALE =~ ^[1-9][0-9]*$ ]] || die "SCALE must be a positive integer, not '$SCALE'"
for v in CORES CLIENTS; do
	[[ ${!v:-} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, not '${!v:-}': $usage"
done
variant=${VARIANT:-stock}
build=${PREDICT_BUILD:-patched}
case $build in patched|cassert) ;; *) die "PREDICT_BUILD=$build: the traces need a patched server (patched or cassert)" ;; esac
[ "$variant" = stock ] || [ -f "$FLEXLOCK_TOP/variants/$variant.conf" ] ||
	die "VARIANT=$variant: no variants/$variant.conf (make bench lists them: flexlock-lab bench list)"

base=$(basename "$SCRIPT")
base=${base%.sql}
name=user-$(printf '%s' "$base" | tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' '-')
dir=$BUILD/predict/$name
if [ -n "${FLEXLOCK_PREDICT_DIR:-}" ]; then
	dir=$FLEXLOCK_PREDICT_DIR
	[ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || die "FLEXLOCK_PREDICT_DIR=$dir is not empty"
else
	rm -rf "$dir"
fi
mkdir -p "$dir/workloads"
cp "$SCRIPT" "$dir/workloads/$name.sql"
{
	echo "# written by make predict SCRIPT=$SCRIPT"
	echo "description = $SCRIPT (make predict SCRIPT=)"
	echo "scale = ${SCALE:-1}"
	[ -z "${SCALE:-}" ] || echo "pgbench_init = -s $SCALE"
	[ -z "${INIT:-}" ] || echo "init_sql = $name.init.sql"
} >"$dir/workloads/$name.conf"
[ -z "${INIT:-}" ] || cp "$INIT" "$dir/workloads/$name.init.sql"
chmod -R go+rX "$dir"
export FLEXLOCK_USER_WORKLOADS=$dir/workloads

if [ ! -e "$BUILD" ] || [ -O "$BUILD" ]; then
	"$FLEXLOCK_TOP/scripts/build.sh" "$build"
else
	# another user's build tree (make check's suites run as its user): use
	# the install as it is
	[ -x "$BUILD/install/$build/bin/postgres" ] ||
		die "the $build build is not there ($(rel "$BUILD/install/$build") is missing): run 'make $build' first"
fi
ensure_test_user
mkdir -p "$BUILD/bench"
hand_over "$BUILD/bench"

variants=stock
[ "$variant" = stock ] || variants+=",$variant"
here=$(nproc)
say "predict: $SCRIPT as workload $name: this machine's profile, traces ($variants), calibration ($here clients)"
run_logged "$dir/profile.log" "the machine profile" "" \
	"${FLEXLAB[@]}" profile --out "$dir/machine" --reps 3 --fsync-seconds 1 --data-dir "$BUILD/bench/machine-profile"
# shellcheck disable=SC2086  # TRACE_ARGS and CALIBRATE_ARGS are word lists
run_logged "$dir/trace.log" "traces of $name ($variants)" "" \
	"${FLEXLAB[@]}" trace --build "$build" --workload "$name" --variant "$variants" --out "$dir/traces" ${TRACE_ARGS:-}
# shellcheck disable=SC2086
run_logged "$dir/calibrate.log" "the calibration of $name ($here clients)" "" \
	"${FLEXLAB[@]}" sim calibrate --build "$build" --workloads "$name" --clients "$here" \
	${CALIBRATE_ARGS:---secs 5 --reps 3} --out "$dir/calibration.json"

machine=${MACHINE:-}
[ -n "$machine" ] || [ "$CORES" != "$here" ] || machine=$dir/machine/machine-profile.json
for v in ${variants//,/ }; do
	args=(sim predict --workload "$name" --variant "$v" --cores "$CORES" --clients "$CLIENTS"
		--traces "$dir/traces" --traces-machine "$dir/machine/machine-profile.json"
		--calibration "$dir/calibration.json")
	[ -z "$machine" ] || args+=(--machine "$machine")
	"${FLEXLAB[@]}" "${args[@]}" >"$dir/predict-$v.txt" 2>&1 || { cat "$dir/predict-$v.txt" >&2; exit 1; }
	cat "$dir/predict-$v.txt"
done
say "predict: inputs and outputs in $(rel "$dir")"
