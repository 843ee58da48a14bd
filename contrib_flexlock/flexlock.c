/*-------------------------------------------------------------------------
 *
 * flexlock.c
 *		Read the lock event counters of a flexlock-patched server.
 *
 * The counters themselves live in core (storage/lockstats.h): one slot per
 * PGPROC, written only by the process that owns it, with plain increments,
 * never zeroed while the server runs.  This extension only reads them: this
 * file has the readers of the slots, the reset and the module's entry; the
 * views are grouped by what they count in lwlocks.c, hwlocks.c, spinlocks.c
 * and variants.c (flexlock.h lists the rest).
 *
 * Reading: a reader copies a slot's counters into local memory and builds
 * rows from the copy, loading counter by counter: each is an aligned 8-byte
 * load, untorn where the platform reads 8 bytes at once (all 64-bit ones;
 * PG_HAVE_8BYTE_SINGLE_COPY_ATOMICITY), possibly torn elsewhere.  Because
 * the owner keeps writing, a copy may be a few events behind.  Sums over all
 * slots need nothing more: a slot's counters only grow, whoever owns it.  A
 * per-process row needs the counters of one owner, so the slot is read under
 * its changecount (odd while a new owner takes it, +2 per owner), the
 * header and the counters together, the way pg_stat_activity reads
 * PgBackendStatus: a copy that straddles a change of owner is thrown away.
 *
 * Resetting: no process ever writes another's slot.  flexlock_reset() takes
 * a baseline instead, a copy of every slot's counters with the slot's
 * changecount (its owner generation), kept in a named DSM segment (so the
 * module works without shared_preload_libraries); the views show counters
 * minus the baseline.  A per-process row uses the baseline only if it was
 * taken from the same owner, else the counters at the time the owner took
 * the slot: no clock is compared.  The baseline is written under an
 * exclusive LWLock and read under a shared one.  Counters of kind "max"
 * cannot be rebased by subtraction: a reset starts a new epoch of maxima in
 * core (LockStatsResetMaxima), and a slot's maxima count only if they are of
 * the current epoch, as do those that exited processes retired.
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/flexlock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "storage/dsm_registry.h"
#include "storage/proc.h"
#include "utils/backend_status.h"
#include "utils/guc.h"
#include "utils/injection_point.h"

#include "flexlock.h"

PG_MODULE_MAGIC_EXT(
					.name = "flexlock",
					.version = "1.3"
);

/* Size of the segment: the baseline, then the generations */
#define FLEXLOCK_SHARED_SIZE(nslots) \
	(offsetof(FlexlockShared, baseline) + \
	 sizeof(LockStatsData) * (nslots) + sizeof(uint32) * (nslots))

/* Copying counter by counter needs whole 8-byte words */
StaticAssertDecl(sizeof(LockStatsData) % sizeof(uint64) == 0,
				 "LockStatsData must be a whole number of 8-byte words");

FlexlockShared *flexlock_shared = NULL;

void
_PG_init(void)
{
	flexlock_statements_init();
	flexlock_explain_init();
	MarkGUCPrefixReserved("flexlock");
}

PG_FUNCTION_INFO_V1(flexlock_reset);
PG_FUNCTION_INFO_V1(flexlock_test_spin_delay);
PG_FUNCTION_INFO_V1(flexlock_test_lwlock);
PG_FUNCTION_INFO_V1(flexlock_test_lwlock_nested);
PG_FUNCTION_INFO_V1(flexlock_test_procarray);

static void
flexlock_init_shmem(void *ptr)
{
	FlexlockShared *shared = (FlexlockShared *) ptr;

	LWLockInitialize(&shared->lock, LWLockNewTrancheId());
	shared->reset_time = 0;
	/* the baselines and the generations after them */
	memset(shared->baseline, 0,
		   FLEXLOCK_SHARED_SIZE(LockStatsShmem->nslots) -
		   offsetof(FlexlockShared, baseline));
}

void
flexlock_attach(void)
{
	bool		found;

	if (flexlock_shared != NULL)
		return;
	flexlock_shared = GetNamedDSMSegment("flexlock",
										 FLEXLOCK_SHARED_SIZE(LockStatsShmem->nslots),
										 flexlock_init_shmem,
										 &found);
	LWLockRegisterTranche(flexlock_shared->lock.tranche, "flexlock");
}

/* The generations follow the baselines (a DSM address differs by process) */
uint32 *
flexlock_baseline_gen(void)
{
	return (uint32 *) &flexlock_shared->baseline[LockStatsShmem->nslots];
}

/*
 * Load a slot's counters one 8-byte word at a time (see the header comment:
 * memcpy promises no untorn load of any counter).
 */
static void
load_counters(LockStatsData *dst, const volatile LockStatsData *src)
{
	const volatile uint64 *s = (const volatile uint64 *) src;
	uint64	   *d = (uint64 *) dst;
	int			k;

	for (k = 0; k < sizeof(LockStatsData) / sizeof(uint64); k++)
		d[k] = s[k];
}

/*
 * Load counters and the epoch of their maxima: the epoch first, so that a
 * copy of the current epoch never holds a maximum its owner has zeroed
 * since (the owner zeroes, then sets the epoch: lockstats.c).
 */
static void
load_slot_data(LockStatsData *dst, const volatile LockStatsData *src)
{
	uint64		epoch = src->max_epoch;

	pg_read_barrier();
	load_counters(dst, src);
	dst->max_epoch = epoch;
}

/*
 * Read slot i as one owner left it: its changecount (the owner generation),
 * pid, start time, and, if wanted, the counters at the time the owner took
 * the slot and the counters now.  A read that a change of owner overlapped
 * is repeated.  (Between the header and the counters, the injection point
 * flexlock-read-slot lets a test change the owner of the slot of pause_pid.)
 */
void
flexlock_read_slot(int i, uint32 *gen, int *pid, TimestampTz *started,
				   LockStatsData *start, LockStatsData *data, int pause_pid)
{
	volatile LockStatsSlot *slot = &LockStatsShmem->slots[i];

	for (;;)
	{
		uint32		before = slot->changecount;

		pg_read_barrier();
		*pid = slot->pid;
		*started = slot->started;
		if (start)
			load_counters(start, &slot->start);
		if (*pid == pause_pid && pause_pid != 0)
			INJECTION_POINT("flexlock-read-slot", NULL);
		if (data)
			load_slot_data(data, &slot->data);
		pg_read_barrier();
		if (before == slot->changecount && (before & 1) == 0)
		{
			*gen = before;
			break;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * What the views subtract from slot i: the baseline of the last reset, or
 * nothing if there was none.  Caller holds flexlock_shared->lock.
 */
const LockStatsData *
flexlock_slot_baseline(int i)
{
	static const LockStatsData zero;

	return flexlock_shared->reset_time ? &flexlock_shared->baseline[i] : &zero;
}

void
flexlock_copy_slot_data(int i, LockStatsData *dst)
{
	load_slot_data(dst, &LockStatsShmem->slots[i].data);
}

/*
 * dst += cur - base, for every counter.  Sum counters subtract; max counters
 * count if they are of epoch.
 */
void
flexlock_accumulate(LockStatsData *dst, const LockStatsData *cur, const LockStatsData *base,
					uint64 epoch)
{
	int			t,
				c;

	for (t = 0; t < LOCKSTATS_NUM_TRANCHES; t++)
	{
		const uint64 *cv = (const uint64 *) &cur->lwlock[t];
		const uint64 *bv = (const uint64 *) &base->lwlock[t];
		uint64	   *dv = (uint64 *) &dst->lwlock[t];

		for (c = 0; c < sizeof(LockStatsLWLock) / sizeof(uint64); c++)
			dv[c] += cv[c] - bv[c];
	}
	{
		const uint64 *cv = (const uint64 *) cur->hwlock;
		const uint64 *bv = (const uint64 *) base->hwlock;
		uint64	   *dv = (uint64 *) dst->hwlock;

		for (c = 0; c < sizeof(cur->hwlock) / sizeof(uint64); c++)
			dv[c] += cv[c] - bv[c];
		cv = (const uint64 *) cur->hwlock_wait_hist;
		bv = (const uint64 *) base->hwlock_wait_hist;
		dv = (uint64 *) dst->hwlock_wait_hist;
		for (c = 0; c < sizeof(cur->hwlock_wait_hist) / sizeof(uint64); c++)
			dv[c] += cv[c] - bv[c];
	}
	for (c = 0; c < LOCKSTATS_NUM_COUNTERS; c++)
	{
		if (LockStatsCounterDescs[c].kind == LOCKSTATS_MAX)
		{
			if (cur->max_epoch == epoch && cur->counters[c] > dst->counters[c])
				dst->counters[c] = cur->counters[c];
		}
		else
			dst->counters[c] += cur->counters[c] - base->counters[c];
	}
}

/* Sum over all slots of counters since the last reset. */
void
flexlock_sum_all_slots(LockStatsData *sum, TimestampTz *reset_time)
{
	LockStatsData *cur = palloc(sizeof(LockStatsData));
	uint64		epoch;
	int			i,
				c;

	flexlock_attach();
	/* this process's own parked spin sites: no spinlock is held here */
	LockStatsFlushSpinPending();
	memset(sum, 0, sizeof(LockStatsData));
	LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
	*reset_time = flexlock_shared->reset_time;
	epoch = pg_atomic_read_u64(&LockStatsShmem->max_epoch);
	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		flexlock_copy_slot_data(i, cur);
		flexlock_accumulate(sum, cur, flexlock_slot_baseline(i), epoch);
	}
	LWLockRelease(&flexlock_shared->lock);

	/* and the maxima of processes that have exited this epoch */
	LWLockAcquire(LockStatsRetireLock, LW_SHARED);
	if (LockStatsShmem->retired_max_epoch == epoch)
		for (c = 0; c < LOCKSTATS_NUM_COUNTERS; c++)
			if (LockStatsCounterDescs[c].kind == LOCKSTATS_MAX &&
				LockStatsShmem->retired_max[c] > sum->counters[c])
				sum->counters[c] = LockStatsShmem->retired_max[c];
	LWLockRelease(LockStatsRetireLock);
	pfree(cur);
}

/*
 * The counters of the live process in slot i since it took the slot, or
 * since the last reset if that reset saw this same owner (a per-process
 * view's row): false if the slot has no live process, or (one) not the
 * process of pid want.  p->cur and p->start are scratch; pause_pid is
 * flexlock_read_slot()'s.
 */
bool
flexlock_process_delta(int i, bool one, int want, int pause_pid, FlexlockProcessDelta *p)
{
	PGPROC	   *proc = GetPGProcByNumber(i);
	PgBackendStatus *beentry;
	uint32		gen;
	TimestampTz started;

	flexlock_read_slot(i, &gen, &p->pid, &started, &p->start, &p->cur, pause_pid);
	/* only slots whose process is alive now */
	if (p->pid == 0 || proc->pid != p->pid)
		return false;
	if (one && p->pid != want)
		return false;

	p->since = started;
	LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
	if (flexlock_shared->reset_time != 0 && flexlock_baseline_gen()[i] == gen)
	{
		memcpy(&p->start, &flexlock_shared->baseline[i], sizeof(LockStatsData));
		p->since = flexlock_shared->reset_time;
	}
	LWLockRelease(&flexlock_shared->lock);
	memset(&p->delta, 0, sizeof(LockStatsData));
	flexlock_accumulate(&p->delta, &p->cur, &p->start, p->cur.max_epoch);

	beentry = pgstat_get_beentry_by_proc_number(i);
	p->backend_type = beentry ? GetBackendTypeDesc(beentry->st_backendType) : "unknown";
	return true;
}

/* A per-process view asked for a pid that has no slot */
void
flexlock_no_such_process(int pid)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("no server process with PID %d has lock statistics", pid),
			 errhint("Lock statistics exist for processes that have a PGPROC: backends, auxiliary processes, background workers.")));
}

Datum
flexlock_reset_datum(TimestampTz t, bool *isnull)
{
	*isnull = (t == 0);
	return TimestampTzGetDatum(t);
}

TimestampTz
flexlock_current_reset_time(void)
{
	TimestampTz t;

	flexlock_attach();
	LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
	t = flexlock_shared->reset_time;
	LWLockRelease(&flexlock_shared->lock);
	return t;
}

/* Bucket b's bounds in nanoseconds; the last bucket ends at max_ns */
void
flexlock_hist_bucket_bounds(int b, uint64 max_ns, double *lo, double *hi)
{
	*lo = b == 0 ? 0.0 : ldexp(1.0, b + LOCKSTATS_HIST_FIRST_SHIFT - 1);
	*hi = b == LOCKSTATS_HIST_BUCKETS - 1 ? (double) max_ns :
		ldexp(1.0, b + LOCKSTATS_HIST_FIRST_SHIFT);
}

/*
 * flexlock_reset(): take every slot's counters as the new baseline.
 */
Datum
flexlock_reset(PG_FUNCTION_ARGS)
{
	int			i;

	flexlock_attach();
	LWLockAcquire(&flexlock_shared->lock, LW_EXCLUSIVE);
	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		int			pid;
		TimestampTz started;

		flexlock_read_slot(i, &flexlock_baseline_gen()[i], &pid, &started, NULL,
						   &flexlock_shared->baseline[i], 0);
	}
	INJECTION_POINT("flexlock-reset-copied", NULL);
	/* maxima: from now on only those set from now on */
	LockStatsResetMaxima();
	flexlock_shared->reset_time = GetCurrentTimestamp();
	LWLockRelease(&flexlock_shared->lock);
	/* and every statement of flexlock_statements */
	flexlock_statements_reset();

	PG_RETURN_TIMESTAMPTZ(flexlock_shared->reset_time);
}

/*
 * The test functions of versions 1.0 to 1.4 moved to the test module
 * flexlock_inject in 1.5 (t/modules/flexlock_inject).  Their symbols stay,
 * so that the scripts of those versions still run (CREATE FUNCTION checks
 * that the symbol exists) on the way to 1.5, which drops the functions.
 */
static void
moved_to_test_module(const char *function)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("function %s() is no longer part of the flexlock extension", function),
			 errhint("Run ALTER EXTENSION flexlock UPDATE; the test functions are in the test module flexlock_inject.")));
}

Datum
flexlock_test_spin_delay(PG_FUNCTION_ARGS)
{
	moved_to_test_module("flexlock_test_spin_delay");
	PG_RETURN_VOID();
}

Datum
flexlock_test_lwlock(PG_FUNCTION_ARGS)
{
	moved_to_test_module("flexlock_test_lwlock");
	PG_RETURN_VOID();
}

Datum
flexlock_test_lwlock_nested(PG_FUNCTION_ARGS)
{
	moved_to_test_module("flexlock_test_lwlock_nested");
	PG_RETURN_VOID();
}

Datum
flexlock_test_procarray(PG_FUNCTION_ARGS)
{
	moved_to_test_module("flexlock_test_procarray");
	PG_RETURN_VOID();
}
