/*-------------------------------------------------------------------------
 *
 * flexlock.c
 *		Show the lock event counters of a flexlock-patched server in SQL.
 *
 * The counters themselves live in core (storage/lockstats.h): one slot per
 * PGPROC, written only by the process that owns it, with plain increments,
 * never zeroed while the server runs.  This module only reads them.
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

#include "funcapi.h"
#include "miscadmin.h"
#include "common/relpath.h"
#include "storage/buf_internals.h"
#include "storage/dsm_registry.h"
#include "storage/lock.h"
#include "storage/lockstats.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"
#include "utils/relfilenumbermap.h"
#include "utils/timestamp.h"

#include "flexlock.h"

PG_MODULE_MAGIC_EXT(
					.name = "flexlock",
					.version = "1.3"
);

/* Shared state: the reset baseline, one LockStatsData per slot */
typedef struct FlexlockShared
{
	LWLock		lock;			/* protects everything below */
	TimestampTz reset_time;		/* 0 if never reset */
	LockStatsData baseline[FLEXIBLE_ARRAY_MEMBER];	/* one per slot */
	/* then uint32 baseline_gen[nslots]: each slot's changecount at the reset */
}			FlexlockShared;

/* Size of the segment: the baseline, then the generations */
#define FLEXLOCK_SHARED_SIZE(nslots) \
	(offsetof(FlexlockShared, baseline) + \
	 sizeof(LockStatsData) * (nslots) + sizeof(uint32) * (nslots))

/* Copying counter by counter needs whole 8-byte words */
StaticAssertDecl(sizeof(LockStatsData) % sizeof(uint64) == 0,
				 "LockStatsData must be a whole number of 8-byte words");

static FlexlockShared * flexlock_shared = NULL;

/*
 * The lock variants of this build: one row each, added by the patch that
 * adds the variant.  A row shows only if the server has its GUC.
 */
typedef struct FlexlockVariant
{
	const char *name;
	const char *guc;
	const char *stock_setting;
	const char *description;
}			FlexlockVariant;

static const FlexlockVariant flexlock_variant_list[] = {
	{"btree-leaf-exclusive-descent", "btree_leaf_exclusive_descent", "on",
	"inserts lock the B-tree leaf exclusively on descent (off: share, then relock, pre-12)"},
	{"procarray-group-clear", "procarray_group_clear", "on",
	"commits clear their XID under ProcArrayLock, or as a group when it is busy (off: always wait; always: always group; holder: queue on the lock, the releaser clears)"},
	{"wal-insert-locks", "wal_insert_locks", "8",
	"WAL records are copied into WAL buffers under one of this many insertion locks (1: one lock, as before 9.4)"},
	{"lwlock-shared-add", "lwlock_shared_add", "off",
	"LWLocks are taken in shared mode with one atomic fetch-add, backing out if held exclusively (off: read + compare-exchange loop)"},
	{"wal-flush-wait", "wal_flush_wait", "acquire_or_wait",
	"a process waiting for another's WAL flush is woken by every release of WALWriteLock (lsn: once the flush has passed its record)"},
	{"wal-insert-reservation", "wal_insert_reservation", "spinlock",
	"WAL space is reserved under the insertpos_lck spinlock (atomic: one fetch-add, each record's start handed to the next record)"},
	{"wal-buffer-init", "wal_buffer_init", "lock",
	"WAL buffer pages are initialized one process at a time under WALBufMappingLock (lockfree: claimed by compare-and-exchange, initialized concurrently)"},
	{"lwlock-implementation", "lwlock_implementation", "atomic",
	"LWLocks change their state with atomic operations (spinlock: under a per-lock spinlock, pre-9.5)"},
	{"lock-fastpath", "lock_fastpath", "on",
	"weak relation locks are taken in per-process fast-path slots when possible (off: always in the shared lock table, pre-9.2)"},
	{"clock-sweep", "clock_sweep", "atomic",
	"the clock hand of buffer replacement advances by atomic fetch-add (spinlock: under buffer_strategy_lock, one tick per acquisition)"},
	{"relation-extend-pages", "relation_extend_pages", "0",
	"inserts extend a table by the pages they need, more when others wait (N: exactly N pages each time; 1: one page per extension lock acquisition)"},
	{"lwlock-read-biased", "lwlock_read_biased", "",
	"no LWLock tranche is read-biased (a list of tranches, or all: while a lock is biased, shared acquisitions announce themselves in per-process slots and leave the lock alone; a writer revokes the bias and waits for them)"},
	{NULL, NULL, NULL, NULL}
};

void
_PG_init(void)
{
	flexlock_statements_init();
	flexlock_explain_init();
	MarkGUCPrefixReserved("flexlock");
}

PG_FUNCTION_INFO_V1(flexlock_lwlocks);
PG_FUNCTION_INFO_V1(flexlock_lwlocks_1_1);
PG_FUNCTION_INFO_V1(flexlock_backends_1_1);
PG_FUNCTION_INFO_V1(flexlock_tranche_instances);
PG_FUNCTION_INFO_V1(flexlock_spinlocks);
PG_FUNCTION_INFO_V1(flexlock_counters);
PG_FUNCTION_INFO_V1(flexlock_backends);
PG_FUNCTION_INFO_V1(flexlock_variants);
PG_FUNCTION_INFO_V1(flexlock_reset);
PG_FUNCTION_INFO_V1(flexlock_test_spin_delay);
PG_FUNCTION_INFO_V1(flexlock_test_lwlock);
PG_FUNCTION_INFO_V1(flexlock_test_lwlock_nested);
PG_FUNCTION_INFO_V1(flexlock_test_procarray);
PG_FUNCTION_INFO_V1(flexlock_wait_stats);
PG_FUNCTION_INFO_V1(flexlock_wait_histogram);
PG_FUNCTION_INFO_V1(flexlock_hwlocks);
PG_FUNCTION_INFO_V1(flexlock_hwlock_backends);
PG_FUNCTION_INFO_V1(flexlock_hwlock_wait_histogram);
PG_FUNCTION_INFO_V1(flexlock_wait_stats_1_2);
PG_FUNCTION_INFO_V1(flexlock_wait_histogram_1_2);
PG_FUNCTION_INFO_V1(flexlock_lock_instances_1_2);
PG_FUNCTION_INFO_V1(flexlock_hot_lwlocks_1_2);

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

static void
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
static inline uint32 *
baseline_gen(void)
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
static void
read_slot(int i, uint32 *gen, int *pid, TimestampTz *started,
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
static const LockStatsData *
slot_baseline(int i)
{
	static const LockStatsData zero;

	return flexlock_shared->reset_time ? &flexlock_shared->baseline[i] : &zero;
}

static inline void
copy_slot_data(int i, LockStatsData *dst)
{
	load_slot_data(dst, &LockStatsShmem->slots[i].data);
}

/*
 * dst += cur - base, for every counter.  Sum counters subtract; max counters
 * count if they are of epoch.
 */
static void
accumulate(LockStatsData *dst, const LockStatsData *cur, const LockStatsData *base,
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
static void
sum_all_slots(LockStatsData *sum, TimestampTz *reset_time)
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
		copy_slot_data(i, cur);
		accumulate(sum, cur, slot_baseline(i), epoch);
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

static Datum
reset_datum(TimestampTz t, bool *isnull)
{
	*isnull = (t == 0);
	return TimestampTzGetDatum(t);
}

/* columns of a flexlock_lwlocks() row in 1.0, stats_reset included */
#define LWLOCK_COLS 17
/* the sampled hold times that 1.1 adds before stats_reset */
#define LWLOCK_HOLD_COLS 7

/*
 * Fill the hold-time columns of a tranche row from values[i]; returns the
 * next column.  The totals are estimates (each sampled hold scaled by the
 * sampling interval of lock_stats_hold_sample when it was taken), the
 * averages are of the sampled holds themselves.
 */
static int
lwlock_hold_cols(const LockStatsLWLock *c, Datum *values, bool *nulls, int i)
{
	values[i++] = Int64GetDatum(c->holds_timed[LW_SHARED] + c->holds_timed[LW_EXCLUSIVE]);
	values[i++] = Float8GetDatum(c->hold_est_ns[LW_SHARED] / 1000000.0);
	values[i++] = Float8GetDatum(c->hold_est_ns[LW_EXCLUSIVE] / 1000000.0);
	if (c->holds_timed[LW_SHARED] > 0)
		values[i++] = Float8GetDatum(c->hold_ns[LW_SHARED] / 1000.0 / c->holds_timed[LW_SHARED]);
	else
		nulls[i++] = true;
	if (c->holds_timed[LW_EXCLUSIVE] > 0)
		values[i++] = Float8GetDatum(c->hold_ns[LW_EXCLUSIVE] / 1000.0 / c->holds_timed[LW_EXCLUSIVE]);
	else
		nulls[i++] = true;
	values[i++] = Float8GetDatum(c->hold_wait_est_ns[LW_SHARED] / 1000000.0);
	values[i++] = Float8GetDatum(c->hold_wait_est_ns[LW_EXCLUSIVE] / 1000000.0);
	return i;
}

/*
 * Fill values[] for one tranche row starting at values[first], with the
 * hold-time columns if holds; returns false if the row has no name (an
 * unused individual lock number).
 */
static bool
lwlock_row(int t, const LockStatsLWLock *c, Datum *values, bool *nulls, int first,
		   bool holds)
{
	const char *name = LockStatsTrancheName(t);
	uint64		waits;
	int			i = first;

	if (name == NULL)
		return false;
	waits = c->block[LW_SHARED] + c->block[LW_EXCLUSIVE] + c->block[LW_WAIT_UNTIL_FREE];

	values[i++] = Int32GetDatum(t);
	values[i++] = CStringGetTextDatum(name);
	values[i++] = Int64GetDatum(c->acquire[LW_SHARED]);
	values[i++] = Int64GetDatum(c->acquire[LW_EXCLUSIVE]);
	values[i++] = Int64GetDatum(c->acquire[LW_WAIT_UNTIL_FREE]);
	values[i++] = Int64GetDatum(c->cond_fail);
	values[i++] = Int64GetDatum(c->block[LW_SHARED]);
	values[i++] = Int64GetDatum(c->block[LW_EXCLUSIVE]);
	values[i++] = Int64GetDatum(c->block[LW_WAIT_UNTIL_FREE]);
	values[i++] = Int64GetDatum(waits);
	values[i++] = Float8GetDatum(c->wait_time_ns / 1000000.0);
	if (waits > 0)
		values[i++] = Float8GetDatum(c->wait_time_ns / 1000.0 / waits);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum(c->cas_retries);
	values[i++] = Int64GetDatum(c->spin_delays);
	values[i++] = Int64GetDatum(c->dequeue_self);
	values[i++] = Int64GetDatum(c->wakeups);
	if (holds)
		i = lwlock_hold_cols(c, values, nulls, i);
	Assert(i - first == LWLOCK_COLS - 1 + (holds ? LWLOCK_HOLD_COLS : 0));
	return true;
}

static bool
lwlock_row_active(const LockStatsLWLock *c)
{
	const uint64 *v = (const uint64 *) c;
	int			i;

	for (i = 0; i < sizeof(LockStatsLWLock) / sizeof(uint64); i++)
		if (v[i] != 0)
			return true;
	return false;
}

/*
 * flexlock_lwlocks(): one row per tranche, counters summed over all
 * processes, past and present, since the last reset.  The 1.0 function and
 * the 1.1 one, which adds the sampled hold times.
 */
static Datum
flexlock_lwlocks_internal(FunctionCallInfo fcinfo, bool holds)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LockStatsData *sum = palloc(sizeof(LockStatsData));
	TimestampTz reset_time;
	int			ncols = LWLOCK_COLS + (holds ? LWLOCK_HOLD_COLS : 0);
	int			t;

	InitMaterializedSRF(fcinfo, 0);
	sum_all_slots(sum, &reset_time);

	for (t = 0; t < LOCKSTATS_NUM_TRANCHES; t++)
	{
		Datum		values[LWLOCK_COLS + LWLOCK_HOLD_COLS] = {0};
		bool		nulls[LWLOCK_COLS + LWLOCK_HOLD_COLS] = {0};

		/* extension rows that nobody used stay out */
		if (t >= LWTRANCHE_FIRST_USER_DEFINED && !lwlock_row_active(&sum->lwlock[t]))
			continue;
		if (!lwlock_row(t, &sum->lwlock[t], values, nulls, 0, holds))
			continue;
		values[ncols - 1] = reset_datum(reset_time, &nulls[ncols - 1]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(sum);
	return (Datum) 0;
}

Datum
flexlock_lwlocks(PG_FUNCTION_ARGS)
{
	return flexlock_lwlocks_internal(fcinfo, false);
}

Datum
flexlock_lwlocks_1_1(PG_FUNCTION_ARGS)
{
	return flexlock_lwlocks_internal(fcinfo, true);
}

/*
 * flexlock_spinlocks(): contended spinlock acquisitions by call site.
 */
Datum
flexlock_spinlocks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LockStatsData *cur = palloc(sizeof(LockStatsData));

	/* sites by name, at most all entries of all slots */
	int			maxsites;
	char	  **names;
	uint64	   *agg;
	int			nsites = 0;
	TimestampTz reset_time;
	int			i,
				j,
				k;

	InitMaterializedSRF(fcinfo, 0);
	flexlock_attach();
	LockStatsFlushSpinPending();

	maxsites = LOCKSTATS_SPIN_SITES * LockStatsShmem->nslots;
	names = palloc(sizeof(char *) * maxsites);
	agg = palloc0(sizeof(uint64) * 3 * maxsites);

	LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
	reset_time = flexlock_shared->reset_time;
	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		const LockStatsData *base = slot_baseline(i);

		copy_slot_data(i, cur);
		for (j = 0; j < LOCKSTATS_SPIN_SITES; j++)
		{
			LockStatsSpinSite *s = &cur->spin[j];
			uint64		contended = s->contended - base->spin[j].contended;

			if (s->func[0] == '\0' || contended == 0)
				continue;
			s->func[LOCKSTATS_SPIN_SITE_NAMELEN - 1] = '\0';
			for (k = 0; k < nsites; k++)
				if (strcmp(names[k], s->func) == 0)
					break;
			if (k == nsites)
				names[nsites++] = pstrdup(s->func);
			agg[3 * k] += contended;
			agg[3 * k + 1] += s->spins - base->spin[j].spins;
			agg[3 * k + 2] += s->delays - base->spin[j].delays;
		}
	}
	LWLockRelease(&flexlock_shared->lock);

	for (k = 0; k < nsites; k++)
	{
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = CStringGetTextDatum(names[k]);
		values[1] = Int64GetDatum(agg[3 * k]);
		values[2] = Int64GetDatum(agg[3 * k + 1]);
		values[3] = Int64GetDatum(agg[3 * k + 2]);
		values[4] = reset_datum(reset_time, &nulls[4]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(cur);
	return (Datum) 0;
}

/*
 * flexlock_counters(): the counter families of the lock variants.
 */
Datum
flexlock_counters(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LockStatsData *sum = palloc(sizeof(LockStatsData));
	TimestampTz reset_time;
	int			c;

	InitMaterializedSRF(fcinfo, 0);
	sum_all_slots(sum, &reset_time);

	for (c = 0; c < LOCKSTATS_NUM_COUNTERS; c++)
	{
		const LockStatsCounterDesc *d = &LockStatsCounterDescs[c];
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = CStringGetTextDatum(d->family);
		values[1] = CStringGetTextDatum(d->name);
		values[2] = CStringGetTextDatum(d->kind == LOCKSTATS_MAX ? "max" : "sum");
		values[3] = Int64GetDatum(sum->counters[c]);
		values[4] = CStringGetTextDatum(d->description);
		values[5] = reset_datum(reset_time, &nulls[5]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(sum);
	return (Datum) 0;
}

/*
 * flexlock_backends(pid): per live process (or one process), the tranches
 * it used, counted since it started or since the last reset, whichever is
 * later.  In 1.1 with the sampled hold times.
 */
static Datum
flexlock_backends_internal(FunctionCallInfo fcinfo, bool holds)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			ncols = LWLOCK_COLS + 2 + (holds ? LWLOCK_HOLD_COLS : 0);
	bool		one = !PG_ARGISNULL(0);
	int			want = one ? PG_GETARG_INT32(0) : 0;
	bool		found = false;
	LockStatsData *cur = palloc(sizeof(LockStatsData));
	LockStatsData *start = palloc(sizeof(LockStatsData));
	LockStatsData *delta = palloc(sizeof(LockStatsData));
	int			i,
				t;

	InitMaterializedSRF(fcinfo, 0);
	flexlock_attach();

	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		PGPROC	   *proc = GetPGProcByNumber(i);
		PgBackendStatus *beentry;
		const char *btype;
		int			pid;
		uint32		gen;
		TimestampTz started;
		TimestampTz since;

		read_slot(i, &gen, &pid, &started, start, cur, want);
		/* only slots whose process is alive now */
		if (pid == 0 || proc->pid != pid)
			continue;
		if (one && pid != want)
			continue;
		found = true;

		/*
		 * Counted since the process took the slot, or since the last reset if
		 * that reset saw this same owner.
		 */
		since = started;
		LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
		if (flexlock_shared->reset_time != 0 && baseline_gen()[i] == gen)
		{
			memcpy(start, &flexlock_shared->baseline[i], sizeof(LockStatsData));
			since = flexlock_shared->reset_time;
		}
		LWLockRelease(&flexlock_shared->lock);
		memset(delta, 0, sizeof(LockStatsData));
		accumulate(delta, cur, start, cur->max_epoch);

		beentry = pgstat_get_beentry_by_proc_number(i);
		btype = beentry ? GetBackendTypeDesc(beentry->st_backendType) : "unknown";

		for (t = 0; t < LOCKSTATS_NUM_TRANCHES; t++)
		{
			Datum		values[LWLOCK_COLS + 2 + LWLOCK_HOLD_COLS] = {0};
			bool		nulls[LWLOCK_COLS + 2 + LWLOCK_HOLD_COLS] = {0};

			if (!lwlock_row_active(&delta->lwlock[t]))
				continue;
			values[0] = Int32GetDatum(pid);
			values[1] = CStringGetTextDatum(btype);
			if (!lwlock_row(t, &delta->lwlock[t], values, nulls, 2, holds))
				continue;
			values[ncols - 1] = TimestampTzGetDatum(since);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}

	if (one && !found)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no server process with PID %d has lock statistics", want),
				 errhint("Lock statistics exist for processes that have a PGPROC: backends, auxiliary processes, background workers.")));

	pfree(cur);
	pfree(start);
	pfree(delta);
	return (Datum) 0;
}

Datum
flexlock_backends(PG_FUNCTION_ARGS)
{
	return flexlock_backends_internal(fcinfo, false);
}

Datum
flexlock_backends_1_1(PG_FUNCTION_ARGS)
{
	return flexlock_backends_internal(fcinfo, true);
}

/*
 * flexlock_tranche_instances(): how many locks each tranche of this server
 * has, where the server fixes it: one for an individual LWLock, the
 * partitions of the partitioned tables, one per shared buffer for the buffer
 * content locks, and the WAL insertion locks; other tranches (locks in DSM,
 * per-backend locks, extensions' tranches) are not listed.
 */
Datum
flexlock_tranche_instances(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const char *walins = GetConfigOption("wal_insert_locks", true, false);

	InitMaterializedSRF(fcinfo, 0);
	for (int t = 0; t < LWTRANCHE_FIRST_USER_DEFINED; t++)
	{
		const char *name = LockStatsTrancheName(t);
		Datum		values[3];
		bool		nulls[3] = {0};
		int64		n;

		if (name == NULL)
			continue;
		if (t < NUM_INDIVIDUAL_LWLOCKS)
			n = 1;
		else if (t == LWTRANCHE_BUFFER_MAPPING)
			n = NUM_BUFFER_PARTITIONS;
		else if (t == LWTRANCHE_LOCK_MANAGER)
			n = NUM_LOCK_PARTITIONS;
		else if (t == LWTRANCHE_PREDICATE_LOCK_MANAGER)
			n = NUM_PREDICATELOCK_PARTITIONS;
		else if (t == LWTRANCHE_BUFFER_CONTENT)
			n = NBuffers;
		else if (t == LWTRANCHE_WAL_INSERT)
			n = walins ? pg_strtoint64(walins) : 8;
		else
			continue;
		values[0] = Int32GetDatum(t);
		values[1] = CStringGetTextDatum(name);
		values[2] = Int64GetDatum(n);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * flexlock_variants(): the lock variants of this build.
 */
Datum
flexlock_variants(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	const		FlexlockVariant *v;

	InitMaterializedSRF(fcinfo, 0);

	for (v = flexlock_variant_list; v->name != NULL; v++)
	{
		const char *setting = GetConfigOption(v->guc, true, false);
		Datum		values[5];
		bool		nulls[5] = {0};

		if (setting == NULL)
			continue;			/* this server lacks the variant */
		values[0] = CStringGetTextDatum(v->name);
		values[1] = CStringGetTextDatum(v->guc);
		values[2] = CStringGetTextDatum(setting);
		values[3] = CStringGetTextDatum(v->stock_setting);
		values[4] = CStringGetTextDatum(v->description);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
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

		read_slot(i, &baseline_gen()[i], &pid, &started, NULL,
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

/*
 * Sleep-time histograms (storage/lockstats.h): by tranche, index
 * LOCKSTATS_NUM_TRANCHES for the rows of tranches beyond a process's
 * LOCKSTATS_HIST_ROWS.
 */
#define HIST_KEYS	(LOCKSTATS_NUM_TRANCHES + 1)

static const char *const hist_mode_names[3] = {"exclusive", "shared", "wait_until_free"};

/*
 * acc[key] += the rows of slot i, if they are of epoch and not retired.
 * Returns false if the slot has none.
 */
static bool
add_slot_hists(LockStatsWaitHist *acc, int i, uint64 epoch, bool holds)
{
	volatile LockStatsSlot *slot = &LockStatsShmem->slots[i];
	bool		any = false;
	int			r;

	if (slot->hist_retired || slot->hist_epoch != epoch)
		return false;
	pg_read_barrier();
	for (r = 0; r < LOCKSTATS_HIST_ROWS; r++)
	{
		volatile LockStatsHistRow *row = holds ? &slot->hold_hist[r] : &slot->hist[r];
		int			t;

		if (!row->used)
			continue;
		pg_read_barrier();
		t = row->tranche;
		if (t == LOCKSTATS_HIST_OTHER)
			t = LOCKSTATS_NUM_TRANCHES;
		else if (t < 0 || t >= LOCKSTATS_NUM_TRANCHES)
			continue;
		LockStatsAddWaitHist(&acc[t], &row->h);
		any = true;
	}
	return any;
}

/*
 * The histograms of all processes, past and present, since the last reset:
 * the live slots' rows and the rows retired by processes that exited.  A
 * process retiring meanwhile moves its rows from one to the other; the read
 * is repeated then (retire_gen), so that they count exactly once.  holds:
 * the hold-time histograms instead of the sleep-time ones.
 */
static void
sum_all_hists(LockStatsWaitHist *acc, bool holds)
{
	for (;;)
	{
		uint64		gen = pg_atomic_read_u64(&LockStatsShmem->retire_gen);
		uint64		epoch;
		int			i,
					k;

		if (gen & 1)
		{
			/* a process is retiring its rows: a matter of microseconds */
			CHECK_FOR_INTERRUPTS();
			pg_usleep(10);
			continue;
		}
		pg_read_barrier();
		epoch = pg_atomic_read_u64(&LockStatsShmem->max_epoch);
		memset(acc, 0, sizeof(LockStatsWaitHist) * HIST_KEYS);
		if (LockStatsShmem->retired_max_epoch == epoch)
			for (k = 0; k < HIST_KEYS; k++)
				LockStatsAddWaitHist(&acc[k], holds ? &LockStatsShmem->retired_hold_hist[k] :
									 &LockStatsShmem->retired_hist[k]);
		for (i = 0; i < LockStatsShmem->nslots; i++)
			add_slot_hists(acc, i, epoch, holds);
		pg_read_barrier();
		if (pg_atomic_read_u64(&LockStatsShmem->retire_gen) == gen)
			break;
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Per backend type, the histograms of the live processes of that type since
 * the last reset (or since they started).  Returns an array indexed by
 * BackendType of HIST_KEYS histograms each, NULL for types not seen.
 */
static LockStatsWaitHist **
sum_hists_by_type(bool holds)
{
	LockStatsWaitHist **bytype = palloc0(sizeof(LockStatsWaitHist *) * BACKEND_NUM_TYPES);
	LockStatsWaitHist *one = palloc(sizeof(LockStatsWaitHist) * HIST_KEYS);
	uint64		epoch = pg_atomic_read_u64(&LockStatsShmem->max_epoch);
	int			i,
				k;

	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		PGPROC	   *proc = GetPGProcByNumber(i);
		volatile LockStatsSlot *slot = &LockStatsShmem->slots[i];
		PgBackendStatus *beentry;
		BackendType type;
		uint32		gen;
		int			pid;
		TimestampTz started;
		bool		any = false;

		/* the rows of one owner: repeat if the slot changed owner meanwhile */
		for (;;)
		{
			read_slot(i, &gen, &pid, &started, NULL, NULL, 0);
			if (pid == 0 || proc->pid != pid)
				break;
			memset(one, 0, sizeof(LockStatsWaitHist) * HIST_KEYS);
			any = add_slot_hists(one, i, epoch, holds);
			pg_read_barrier();
			if (slot->changecount == gen)
				break;
		}
		if (pid == 0 || proc->pid != pid || !any)
			continue;

		beentry = pgstat_get_beentry_by_proc_number(i);
		type = beentry ? beentry->st_backendType : B_INVALID;
		if (type < 0 || type >= BACKEND_NUM_TYPES)
			type = B_INVALID;
		if (bytype[type] == NULL)
			bytype[type] = palloc0(sizeof(LockStatsWaitHist) * HIST_KEYS);
		for (k = 0; k < HIST_KEYS; k++)
			LockStatsAddWaitHist(&bytype[type][k], &one[k]);
	}
	pfree(one);
	return bytype;
}

static const char *
hist_key_name(int k)
{
	if (k == LOCKSTATS_NUM_TRANCHES)
		return "other tranches";
	return LockStatsTrancheName(k);
}

/* Bucket b's bounds in nanoseconds; the last bucket ends at max_ns */
static void
hist_bucket_bounds(int b, uint64 max_ns, double *lo, double *hi)
{
	*lo = b == 0 ? 0.0 : ldexp(1.0, b + LOCKSTATS_HIST_FIRST_SHIFT - 1);
	*hi = b == LOCKSTATS_HIST_BUCKETS - 1 ? (double) max_ns :
		ldexp(1.0, b + LOCKSTATS_HIST_FIRST_SHIFT);
}

/*
 * The q-quantile of one mode's histogram in microseconds: the bucket that
 * holds it, interpolated linearly within the bucket, and never beyond the
 * longest sleep seen.
 */
static double
hist_quantile_us(const LockStatsWaitHist *h, int m, uint64 total, double q)
{
	double		target = ceil(q * (double) total);
	double		cum = 0;
	int			b;

	if (target < 1)
		target = 1;
	for (b = 0; b < LOCKSTATS_HIST_BUCKETS; b++)
	{
		double		c = (double) h->count[m][b];

		if (c > 0 && cum + c >= target)
		{
			double		lo,
						hi;

			hist_bucket_bounds(b, h->max_ns[m], &lo, &hi);
			hi = Min(hi, (double) h->max_ns[m]);
			lo = Min(lo, hi);
			return (lo + (hi - lo) * (target - cum) / c) / 1000.0;
		}
		cum += c;
	}
	return h->max_ns[m] / 1000.0;
}

static TimestampTz
current_reset_time(void)
{
	TimestampTz t;

	flexlock_attach();
	LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
	t = flexlock_shared->reset_time;
	LWLockRelease(&flexlock_shared->lock);
	return t;
}

/*
 * Puts the rows of one set of histograms (btype NULL: all processes): the
 * sleep-time ones, and the hold-time ones if hold is not NULL (1.2).
 */
typedef void (*put_hists_fn) (ReturnSetInfo *rsinfo, const char *btype,
							  const LockStatsWaitHist *acc,
							  const LockStatsWaitHist *hold, TimestampTz reset_time);

/*
 * Put the rows of the histograms of all processes, or of each backend type
 * seen among the live ones; with the hold-time histograms if holds.  (The
 * sleep and the hold histograms are read one after the other: a process
 * exiting between the two reads counts in both, each exactly once.)
 */
static void
put_hist_sets(ReturnSetInfo *rsinfo, bool by_type, put_hists_fn put, bool holds)
{
	TimestampTz reset_time = current_reset_time();

	if (!by_type)
	{
		LockStatsWaitHist *acc = palloc(sizeof(LockStatsWaitHist) * HIST_KEYS);
		LockStatsWaitHist *hold = NULL;

		sum_all_hists(acc, false);
		if (holds)
		{
			hold = palloc(sizeof(LockStatsWaitHist) * HIST_KEYS);
			sum_all_hists(hold, true);
		}
		put(rsinfo, NULL, acc, hold, reset_time);
	}
	else
	{
		LockStatsWaitHist **bytype = sum_hists_by_type(false);
		LockStatsWaitHist **holdtype = holds ? sum_hists_by_type(true) : NULL;
		LockStatsWaitHist *empty = palloc0(sizeof(LockStatsWaitHist) * HIST_KEYS);
		int			t;

		for (t = 0; t < BACKEND_NUM_TYPES; t++)
		{
			LockStatsWaitHist *hold = holdtype ? holdtype[t] : NULL;

			if (bytype[t] == NULL && hold == NULL)
				continue;
			put(rsinfo, GetBackendTypeDesc((BackendType) t),
				bytype[t] ? bytype[t] : empty,
				holds ? (hold ? hold : empty) : NULL, reset_time);
		}
	}
}

/* Put the count and the p50, p90, p99 and maximum of one histogram mode */
static int
put_quantiles(const LockStatsWaitHist *h, int m, uint64 total,
			  Datum *values, bool *nulls, int i)
{
	values[i++] = Int64GetDatum(total);
	if (total == 0)
	{
		for (int j = 0; j < 4; j++)
			nulls[i++] = true;
		return i;
	}
	values[i++] = Float8GetDatum(hist_quantile_us(h, m, total, 0.50));
	values[i++] = Float8GetDatum(hist_quantile_us(h, m, total, 0.90));
	values[i++] = Float8GetDatum(hist_quantile_us(h, m, total, 0.99));
	values[i++] = Float8GetDatum(h->max_ns[m] / 1000.0);
	return i;
}

static uint64
hist_total(const LockStatsWaitHist *h, int m)
{
	uint64		total = 0;

	for (int b = 0; b < LOCKSTATS_HIST_BUCKETS; b++)
		total += h->count[m][b];
	return total;
}

/*
 * One row per tranche and mode with sleeps (1.0), or with sleeps or sampled
 * holds (1.2: the hold columns before stats_reset; holds are exclusive or
 * shared only).
 */
static void
put_wait_stats(ReturnSetInfo *rsinfo, const char *btype, const LockStatsWaitHist *acc,
			   const LockStatsWaitHist *hold, TimestampTz reset_time)
{
	int			k,
				m;

	for (k = 0; k < HIST_KEYS; k++)
	{
		const char *name = hist_key_name(k);

		if (name == NULL)
			continue;
		for (m = 0; m < 3; m++)
		{
			uint64		total = hist_total(&acc[k], m);
			uint64		htotal = hold && m != LW_WAIT_UNTIL_FREE ? hist_total(&hold[k], m) : 0;
			Datum		values[14];
			bool		nulls[14] = {0};
			int			i;

			if (total == 0 && htotal == 0)
				continue;
			if (btype)
				values[0] = CStringGetTextDatum(btype);
			else
				nulls[0] = true;
			values[1] = CStringGetTextDatum(name);
			values[2] = CStringGetTextDatum(hist_mode_names[m]);
			i = put_quantiles(&acc[k], m, total, values, nulls, 3);
			if (hold)
				i = put_quantiles(&hold[k], m, htotal, values, nulls, i);
			values[i] = reset_datum(reset_time, &nulls[i]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
}

/*
 * flexlock_wait_stats(by_backend_type): LWLock sleeps by tranche and mode,
 * with percentiles of their duration from the histograms: over all
 * processes past and present since the last reset, or per backend type over
 * the live processes.  Sleeps are timed only while lock_stats_timing is on.
 */
Datum
flexlock_wait_stats(PG_FUNCTION_ARGS)
{
	InitMaterializedSRF(fcinfo, 0);
	put_hist_sets((ReturnSetInfo *) fcinfo->resultinfo, PG_GETARG_BOOL(0),
				  put_wait_stats, false);
	return (Datum) 0;
}

/*
 * flexlock_wait_stats(by_backend_type) of 1.2: the same, and the hold times
 * of the sampled holds (lock_stats_hold_sample) with their percentiles.
 */
Datum
flexlock_wait_stats_1_2(PG_FUNCTION_ARGS)
{
	InitMaterializedSRF(fcinfo, 0);
	put_hist_sets((ReturnSetInfo *) fcinfo->resultinfo, PG_GETARG_BOOL(0),
				  put_wait_stats, true);
	return (Datum) 0;
}

static void
put_histogram(ReturnSetInfo *rsinfo, const char *btype, const LockStatsWaitHist *acc,
			  const LockStatsWaitHist *hold, TimestampTz reset_time)
{
	int			k,
				m,
				b;

	for (k = 0; k < HIST_KEYS; k++)
	{
		const char *name = hist_key_name(k);

		if (name == NULL)
			continue;
		for (m = 0; m < 3; m++)
			for (b = 0; b < LOCKSTATS_HIST_BUCKETS; b++)
			{
				const LockStatsWaitHist *h = &acc[k];
				uint64		holds = hold && m != LW_WAIT_UNTIL_FREE ? hold[k].count[m][b] : 0;
				Datum		values[8];
				bool		nulls[8] = {0};
				double		lo,
							hi;

				if (h->count[m][b] == 0 && holds == 0)
					continue;
				hist_bucket_bounds(b, h->max_ns[m], &lo, &hi);
				if (btype)
					values[0] = CStringGetTextDatum(btype);
				else
					nulls[0] = true;
				values[1] = CStringGetTextDatum(name);
				values[2] = CStringGetTextDatum(hist_mode_names[m]);
				values[3] = Int32GetDatum(b);
				values[4] = Float8GetDatum(lo / 1000.0);
				if (b == LOCKSTATS_HIST_BUCKETS - 1)
					nulls[5] = true;	/* open-ended */
				else
					values[5] = Float8GetDatum(hi / 1000.0);
				values[6] = Int64GetDatum(h->count[m][b]);
				values[7] = Int64GetDatum(holds);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
	}
}

/*
 * flexlock_wait_histogram(by_backend_type): the non-empty buckets of the
 * same histograms, for plotting.
 */
Datum
flexlock_wait_histogram(PG_FUNCTION_ARGS)
{
	InitMaterializedSRF(fcinfo, 0);
	put_hist_sets((ReturnSetInfo *) fcinfo->resultinfo, PG_GETARG_BOOL(0),
				  put_histogram, false);
	return (Datum) 0;
}

/*
 * flexlock_wait_histogram(by_backend_type) of 1.2: the same with the sampled
 * holds of each bucket (a column more; a bucket shows if either counts).
 */
Datum
flexlock_wait_histogram_1_2(PG_FUNCTION_ARGS)
{
	InitMaterializedSRF(fcinfo, 0);
	put_hist_sets((ReturnSetInfo *) fcinfo->resultinfo, PG_GETARG_BOOL(0),
				  put_histogram, true);
	return (Datum) 0;
}

/*
 * Heavyweight locks: one row per lock tag type and mode that has counts.
 */
#define HWLOCK_COLS 14

static bool
hwlock_row_active(const LockStatsHWLock *c)
{
	const uint64 *v = (const uint64 *) c;
	int			i;

	for (i = 0; i < sizeof(LockStatsHWLock) / sizeof(uint64); i++)
		if (v[i] != 0)
			return true;
	return false;
}

/* Fill values[first ..] with one row; the caller adds what follows. */
static void
hwlock_row(int type, int m, const LockStatsHWLock *c, Datum *values,
		   bool *nulls, int first)
{
	int			i = first;
	uint64		granted = c->fastpath + c->shared_table;

	values[i++] = CStringGetTextDatum(LockTagTypeNames[type]);
	values[i++] = CStringGetTextDatum(GetLockmodeName(DEFAULT_LOCKMETHOD, m + 1));
	values[i++] = Int64GetDatum(c->fastpath);
	values[i++] = Int64GetDatum(c->shared_table);
	if (granted > 0)
		values[i++] = Float8GetDatum((double) c->fastpath / granted);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum(c->local);
	values[i++] = Int64GetDatum(c->fastpath_full);
	values[i++] = Int64GetDatum(c->fastpath_strong);
	values[i++] = Int64GetDatum(c->not_avail);
	values[i++] = Int64GetDatum(c->waits);
	values[i++] = Float8GetDatum(c->wait_time_ns / 1000000.0);
	if (c->waits > 0)
		values[i++] = Float8GetDatum(c->wait_time_ns / 1000.0 / c->waits);
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum(c->deadlock_checks);
	values[i++] = Int64GetDatum(c->deadlocks);
	Assert(i - first == HWLOCK_COLS);
}

/*
 * flexlock_hwlocks(): heavyweight lock counters by lock type and mode,
 * summed over all processes, past and present, since the last reset.
 */
Datum
flexlock_hwlocks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LockStatsData *sum = palloc(sizeof(LockStatsData));
	TimestampTz reset_time;
	int			t,
				m;

	InitMaterializedSRF(fcinfo, 0);
	sum_all_slots(sum, &reset_time);

	for (t = 0; t < LOCKSTATS_HW_TYPES; t++)
		for (m = 0; m < LOCKSTATS_HW_MODES; m++)
		{
			Datum		values[HWLOCK_COLS + 1] = {0};
			bool		nulls[HWLOCK_COLS + 1] = {0};

			if (!hwlock_row_active(&sum->hwlock[t][m]))
				continue;
			hwlock_row(t, m, &sum->hwlock[t][m], values, nulls, 0);
			values[HWLOCK_COLS] = reset_datum(reset_time, &nulls[HWLOCK_COLS]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	pfree(sum);
	return (Datum) 0;
}

/*
 * flexlock_hwlock_backends(pid): the same per live process (or one), counted
 * since it started or since the last reset, whichever is later.
 */
Datum
flexlock_hwlock_backends(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		one = !PG_ARGISNULL(0);
	int			want = one ? PG_GETARG_INT32(0) : 0;
	bool		found = false;
	LockStatsData *cur = palloc(sizeof(LockStatsData));
	LockStatsData *start = palloc(sizeof(LockStatsData));
	LockStatsData *delta = palloc(sizeof(LockStatsData));
	int			i,
				t,
				m;

	InitMaterializedSRF(fcinfo, 0);
	flexlock_attach();

	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		PGPROC	   *proc = GetPGProcByNumber(i);
		PgBackendStatus *beentry;
		const char *btype;
		int			pid;
		uint32		gen;
		TimestampTz started;
		TimestampTz since;

		read_slot(i, &gen, &pid, &started, start, cur, 0);
		if (pid == 0 || proc->pid != pid)
			continue;
		if (one && pid != want)
			continue;
		found = true;

		since = started;
		LWLockAcquire(&flexlock_shared->lock, LW_SHARED);
		if (flexlock_shared->reset_time != 0 && baseline_gen()[i] == gen)
		{
			memcpy(start, &flexlock_shared->baseline[i], sizeof(LockStatsData));
			since = flexlock_shared->reset_time;
		}
		LWLockRelease(&flexlock_shared->lock);
		memset(delta, 0, sizeof(LockStatsData));
		accumulate(delta, cur, start, cur->max_epoch);

		beentry = pgstat_get_beentry_by_proc_number(i);
		btype = beentry ? GetBackendTypeDesc(beentry->st_backendType) : "unknown";

		for (t = 0; t < LOCKSTATS_HW_TYPES; t++)
			for (m = 0; m < LOCKSTATS_HW_MODES; m++)
			{
				Datum		values[HWLOCK_COLS + 3] = {0};
				bool		nulls[HWLOCK_COLS + 3] = {0};

				if (!hwlock_row_active(&delta->hwlock[t][m]))
					continue;
				values[0] = Int32GetDatum(pid);
				values[1] = CStringGetTextDatum(btype);
				hwlock_row(t, m, &delta->hwlock[t][m], values, nulls, 2);
				values[HWLOCK_COLS + 2] = TimestampTzGetDatum(since);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
	}

	if (one && !found)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no server process with PID %d has lock statistics", want),
				 errhint("Lock statistics exist for processes that have a PGPROC: backends, auxiliary processes, background workers.")));

	pfree(cur);
	pfree(start);
	pfree(delta);
	return (Datum) 0;
}

/*
 * flexlock_hwlock_wait_histogram(): the non-empty buckets of the sleep-time
 * histograms of heavyweight lock waits, by lock type, over all processes
 * since the last reset.  The last bucket is open-ended (upper_us NULL).
 */
Datum
flexlock_hwlock_wait_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	LockStatsData *sum = palloc(sizeof(LockStatsData));
	TimestampTz reset_time;
	int			t,
				b;

	InitMaterializedSRF(fcinfo, 0);
	sum_all_slots(sum, &reset_time);

	for (t = 0; t < LOCKSTATS_HW_TYPES; t++)
		for (b = 0; b < LOCKSTATS_HIST_BUCKETS; b++)
		{
			Datum		values[5] = {0};
			bool		nulls[5] = {0};
			double		lo,
						hi;

			if (sum->hwlock_wait_hist[t][b] == 0)
				continue;
			hist_bucket_bounds(b, 0, &lo, &hi);
			values[0] = CStringGetTextDatum(LockTagTypeNames[t]);
			values[1] = Int32GetDatum(b);
			values[2] = Float8GetDatum(lo / 1000.0);
			if (b == LOCKSTATS_HIST_BUCKETS - 1)
				nulls[3] = true;
			else
				values[3] = Float8GetDatum(hi / 1000.0);
			values[4] = Int64GetDatum(sum->hwlock_wait_hist[t][b]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	pfree(sum);
	return (Datum) 0;
}

/*
 * Read the retired pool and the live slots of the current epoch, repeating
 * the read if a process retired meanwhile (as sum_all_hists()), with
 * read_one() called for the retired part (slot -1) and each live slot.
 */
typedef void (*read_epoch_fn) (int slot, void *arg);

static void
read_current_epoch(read_epoch_fn reset, read_epoch_fn read_one, void *arg)
{
	for (;;)
	{
		uint64		gen = pg_atomic_read_u64(&LockStatsShmem->retire_gen);
		uint64		epoch;

		if (gen & 1)
		{
			CHECK_FOR_INTERRUPTS();
			pg_usleep(10);
			continue;
		}
		pg_read_barrier();
		epoch = pg_atomic_read_u64(&LockStatsShmem->max_epoch);
		reset(-1, arg);
		if (LockStatsShmem->retired_max_epoch == epoch)
			read_one(-1, arg);
		for (int i = 0; i < LockStatsShmem->nslots; i++)
		{
			volatile LockStatsSlot *slot = &LockStatsShmem->slots[i];

			if (slot->hist_retired || slot->hist_epoch != epoch)
				continue;
			pg_read_barrier();
			read_one(i, arg);
		}
		pg_read_barrier();
		if (pg_atomic_read_u64(&LockStatsShmem->retire_gen) == gen)
			break;
		CHECK_FOR_INTERRUPTS();
	}
}

/* The OR of the lock bitmaps of all processes since the last reset */
typedef uint64 InstanceBits[LOCKSTATS_INSTANCE_TRANCHES][LOCKSTATS_INSTANCE_BITS / 64];

static void
bits_reset(int slot, void *arg)
{
	memset(arg, 0, sizeof(InstanceBits));
}

static void
bits_read(int i, void *arg)
{
	uint64		(*acc)[LOCKSTATS_INSTANCE_BITS / 64] = arg;
	volatile uint64 (*src)[LOCKSTATS_INSTANCE_BITS / 64] = i < 0 ?
		LockStatsShmem->retired_instance_bits : LockStatsShmem->slots[i].instance_bits;

	for (int t = 0; t < LOCKSTATS_INSTANCE_TRANCHES; t++)
		for (int w = 0; w < LOCKSTATS_INSTANCE_BITS / 64; w++)
			acc[t][w] |= src[t][w];
}

/*
 * flexlock_lock_instances() (1.2): per tranche, how many distinct locks of it
 * the sampled holds since the last reset took: 1 for an individual lock; for
 * a tranche of many, the linear-counting estimate from the OR of the
 * processes' bitmaps (storage/lockstats.h: standard error 0.2 locks at 8,
 * 2.3% at 128, 5.4% at 4000), saturated when every bit is set
 * (then about 7100, a lower bound).  Tranches with no sampled hold: no row.
 * Locks in dynamic shared memory may be mapped at other addresses in other
 * processes, and then counted once per address.
 */
Datum
flexlock_lock_instances_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint64		(*bits)[LOCKSTATS_INSTANCE_BITS / 64] = palloc(sizeof(InstanceBits));
	LockStatsWaitHist *hold = palloc(sizeof(LockStatsWaitHist) * HIST_KEYS);

	InitMaterializedSRF(fcinfo, 0);
	read_current_epoch(bits_reset, bits_read, bits);
	sum_all_hists(hold, true);

	for (int t = 0; t < LOCKSTATS_NUM_TRANCHES; t++)
	{
		const char *name = LockStatsTrancheName(t);
		Datum		values[5];
		bool		nulls[5] = {0};
		int			ones = 0;
		double		est;

		if (name == NULL)
			continue;
		if (t < NUM_INDIVIDUAL_LWLOCKS)
		{
			if (hist_total(&hold[t], LW_EXCLUSIVE) + hist_total(&hold[t], LW_SHARED) == 0)
				continue;
			ones = 1;
			est = 1;
		}
		else
		{
			for (int w = 0; w < LOCKSTATS_INSTANCE_BITS / 64; w++)
				ones += pg_popcount64(bits[t - NUM_INDIVIDUAL_LWLOCKS][w]);
			if (ones == 0)
				continue;
			if (ones == LOCKSTATS_INSTANCE_BITS)
				est = LOCKSTATS_INSTANCE_BITS * log((double) LOCKSTATS_INSTANCE_BITS);
			else
				est = -LOCKSTATS_INSTANCE_BITS *
					log((double) (LOCKSTATS_INSTANCE_BITS - ones) / LOCKSTATS_INSTANCE_BITS);
		}
		values[0] = Int32GetDatum(t);
		values[1] = CStringGetTextDatum(name);
		values[2] = Int64GetDatum(Max((int64) rint(est), 1));
		values[3] = Int32GetDatum(ones);
		values[4] = BoolGetDatum(ones == LOCKSTATS_INSTANCE_BITS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* The hottest locks of all processes since the last reset, merged */
typedef struct HotAcc
{
	LockStatsHotLock *e;
	int			n;
	int			cap;
} HotAcc;

static void
hot_reset(int slot, void *arg)
{
	((HotAcc *) arg)->n = 0;
}

static void
hot_read(int i, void *arg)
{
	HotAcc	   *acc = arg;
	volatile LockStatsHotLock *src = i < 0 ? LockStatsShmem->retired_hot :
		LockStatsShmem->slots[i].hot;
	int			n = i < 0 ? LOCKSTATS_HOT_RETIRED : LOCKSTATS_HOT_LOCKS;

	for (int j = 0; j < n; j++)
	{
		LockStatsHotLock e;

		/* an entry being rewritten has lock 0: see LockStatsHotLock */
		e.lock = src[j].lock;
		if (e.lock == 0)
			continue;
		pg_read_barrier();
		e.tranche = src[j].tranche;
		e.hold_ns = src[j].hold_ns;
		e.wait_ns = src[j].wait_ns;
		e.err_ns = src[j].err_ns;
		pg_read_barrier();
		if (src[j].lock != e.lock)
			continue;
		if (acc->n == acc->cap)
		{
			acc->cap *= 2;
			acc->e = repalloc(acc->e, sizeof(LockStatsHotLock) * acc->cap);
		}
		acc->e[acc->n++] = e;
	}
}

static int
hot_cmp_lock(const void *a, const void *b)
{
	const LockStatsHotLock *x = a,
			   *y = b;

	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	return x->tranche - y->tranche;
}

/*
 * Name a lock by its address, as this process sees the server's shared
 * memory: an individual lock by its name, a partition of the main array by
 * its tranche and number, a buffer content lock by its buffer, a process's
 * fast-path lock by its process number (PGPROC); otherwise the
 * tranche and the offset of the lock from the main array (in the main shared
 * memory segment), or "(not in the main shared memory)".  *offset: that
 * offset, or -1.
 */
static char *
hot_lock_name(const LockStatsHotLock *e, const char *tranche, int *buf_id, int64 *offset)
{
	char	   *p = (char *) (uintptr_t) e->lock;
	char	   *main_lo = (char *) MainLWLockArray;
	char	   *main_hi = (char *) (MainLWLockArray + NUM_FIXED_LWLOCKS);

	*buf_id = -1;
	*offset = ShmemAddrIsValid(p) ? (int64) (p - main_lo) : -1;
	if (p >= main_lo && p < main_hi && (p - main_lo) % sizeof(LWLockPadded) == 0)
	{
		int			i = (p - main_lo) / sizeof(LWLockPadded);

		if (i < NUM_INDIVIDUAL_LWLOCKS)
			return pstrdup(tranche);
		if (i < LOCK_MANAGER_LWLOCK_OFFSET)
			return psprintf("%s %d", tranche, i - BUFFER_MAPPING_LWLOCK_OFFSET);
		if (i < PREDICATELOCK_MANAGER_LWLOCK_OFFSET)
			return psprintf("%s %d", tranche, i - LOCK_MANAGER_LWLOCK_OFFSET);
		return psprintf("%s %d", tranche, i - PREDICATELOCK_MANAGER_LWLOCK_OFFSET);
	}
	if (e->tranche == LWTRANCHE_BUFFER_CONTENT && BufferDescriptors != NULL)
	{
		char	   *lo = (char *) BufferDescriptors;

		if (p >= lo && p < lo + (Size) NBuffers * sizeof(BufferDescPadded))
		{
			int			b = (p - lo) / sizeof(BufferDescPadded);

			if ((char *) BufferDescriptorGetContentLock(GetBufferDescriptor(b)) == p)
			{
				*buf_id = b;
				return psprintf("buffer %d", b + 1);
			}
		}
	}
	if (e->tranche == LWTRANCHE_LOCK_FASTPATH && ProcGlobal != NULL)
	{
		char	   *lo = (char *) ProcGlobal->allProcs;

		/* a PGPROC's fpInfoLock: the process number, not who has it now */
		if (p >= lo && p < lo + (Size) ProcGlobal->allProcCount * sizeof(PGPROC) &&
			(p - lo) % sizeof(PGPROC) == offsetof(PGPROC, fpInfoLock))
			return psprintf("%s proc %d", tranche, (int) ((p - lo) / sizeof(PGPROC)));
	}
	if (*offset >= 0)
		return psprintf("%s +%lld", tranche, (long long) *offset);
	return psprintf("%s (not in the main shared memory)", tranche);
}

/*
 * flexlock_hot_lwlocks() (1.2): the hottest LWLocks since the last reset, by
 * sampled hold time (estimated: samples scaled by the sampling interval) and
 * time slept on them, from every process's space-saving table and the pool
 * of those that exited, merged by lock address.  error_ms bounds the time
 * a lock may have had that these do not show (storage/lockstats.h).  For a
 * buffer content lock, the relation, fork and block of the page its buffer
 * holds now (read from the buffer tag).
 */
Datum
flexlock_hot_lwlocks_1_2(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TimestampTz reset_time = current_reset_time();
	HotAcc		acc;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	acc.cap = 256;
	acc.n = 0;
	acc.e = palloc(sizeof(LockStatsHotLock) * acc.cap);
	read_current_epoch(hot_reset, hot_read, &acc);
	qsort(acc.e, acc.n, sizeof(LockStatsHotLock), hot_cmp_lock);

	for (i = 0; i < acc.n;)
	{
		LockStatsHotLock e = acc.e[i];
		const char *tranche;
		Datum		values[12];
		bool		nulls[12] = {0};
		int			buf_id;
		int64		offset;

		for (i++; i < acc.n && hot_cmp_lock(&acc.e[i], &e) == 0; i++)
		{
			e.hold_ns += acc.e[i].hold_ns;
			e.wait_ns += acc.e[i].wait_ns;
			e.err_ns += acc.e[i].err_ns;
		}
		if (e.tranche < 0 || e.tranche >= LOCKSTATS_NUM_TRANCHES ||
			(tranche = LockStatsTrancheName(e.tranche)) == NULL)
			continue;
		values[0] = Int32GetDatum(e.tranche);
		values[1] = CStringGetTextDatum(tranche);
		values[2] = CStringGetTextDatum(hot_lock_name(&e, tranche, &buf_id, &offset));
		if (offset >= 0)
			values[3] = Int64GetDatum(offset);
		else
			nulls[3] = true;
		values[4] = Float8GetDatum(e.hold_ns / 1000000.0);
		values[5] = Float8GetDatum(e.wait_ns / 1000000.0);
		values[6] = Float8GetDatum(e.err_ns / 1000000.0);
		nulls[7] = nulls[8] = nulls[9] = nulls[10] = true;
		if (buf_id >= 0)
		{
			BufferDesc *buf = GetBufferDescriptor(buf_id);
			uint32		state = LockBufHdr(buf);
			BufferTag	tag = buf->tag;

			UnlockBufHdr(buf, state);
			if (state & BM_TAG_VALID)
			{
				if (tag.dbOid == MyDatabaseId || tag.dbOid == InvalidOid)
				{
					Oid			relid = RelidByRelfilenumber(tag.spcOid,
															 BufTagGetRelNumber(&tag));

					if (OidIsValid(relid))
					{
						values[7] = ObjectIdGetDatum(relid);
						nulls[7] = false;
					}
				}
				values[8] = ObjectIdGetDatum(BufTagGetRelNumber(&tag));
				values[9] = CStringGetTextDatum(forkNames[BufTagGetForkNum(&tag)]);
				values[10] = Int64GetDatum(tag.blockNum);
				nulls[8] = nulls[9] = nulls[10] = false;
			}
		}
		values[11] = reset_datum(reset_time, &nulls[11]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
