/*-------------------------------------------------------------------------
 *
 * lwlocks.c
 *		The LWLock views: counters by tranche and process, sleep and hold
 *
 * The views of LWLocks: flexlock_lwlocks (per tranche, over all processes
 * past and present) and flexlock_backends (per live process), the
 * tranches' sizes, the sleep and hold histograms and their percentiles
 * (flexlock_lwlock_waits, flexlock_lwlock_wait_histogram), the distinct
 * locks that sampled holds took (flexlock_lock_load) and the hottest locks
 * (flexlock_hot_lwlocks).  They read the slots through flexlock.c.
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/lwlocks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "funcapi.h"
#include "storage/buf_internals.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/relfilenumbermap.h"

#include "flexlock.h"

PG_FUNCTION_INFO_V1(flexlock_lwlocks);
PG_FUNCTION_INFO_V1(flexlock_lwlocks_1_1);
PG_FUNCTION_INFO_V1(flexlock_backends_1_1);
PG_FUNCTION_INFO_V1(flexlock_tranche_instances);
PG_FUNCTION_INFO_V1(flexlock_backends);
PG_FUNCTION_INFO_V1(flexlock_wait_stats);
PG_FUNCTION_INFO_V1(flexlock_wait_histogram);
PG_FUNCTION_INFO_V1(flexlock_wait_stats_1_2);
PG_FUNCTION_INFO_V1(flexlock_wait_histogram_1_2);
PG_FUNCTION_INFO_V1(flexlock_lock_instances_1_2);
PG_FUNCTION_INFO_V1(flexlock_hot_lwlocks_1_2);

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
	flexlock_sum_all_slots(sum, &reset_time);

	for (t = 0; t < LOCKSTATS_NUM_TRANCHES; t++)
	{
		Datum		values[LWLOCK_COLS + LWLOCK_HOLD_COLS] = {0};
		bool		nulls[LWLOCK_COLS + LWLOCK_HOLD_COLS] = {0};

		/* extension rows that nobody used stay out */
		if (t >= LWTRANCHE_FIRST_USER_DEFINED && !lwlock_row_active(&sum->lwlock[t]))
			continue;
		if (!lwlock_row(t, &sum->lwlock[t], values, nulls, 0, holds))
			continue;
		values[ncols - 1] = flexlock_reset_datum(reset_time, &nulls[ncols - 1]);
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
	FlexlockProcessDelta *p = palloc(sizeof(FlexlockProcessDelta));
	int			i,
				t;

	InitMaterializedSRF(fcinfo, 0);
	flexlock_attach();

	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		if (!flexlock_process_delta(i, one, want, want, p))
			continue;
		found = true;
		for (t = 0; t < LOCKSTATS_NUM_TRANCHES; t++)
		{
			Datum		values[LWLOCK_COLS + 2 + LWLOCK_HOLD_COLS] = {0};
			bool		nulls[LWLOCK_COLS + 2 + LWLOCK_HOLD_COLS] = {0};

			if (!lwlock_row_active(&p->delta.lwlock[t]))
				continue;
			values[0] = Int32GetDatum(p->pid);
			values[1] = CStringGetTextDatum(p->backend_type);
			if (!lwlock_row(t, &p->delta.lwlock[t], values, nulls, 2, holds))
				continue;
			values[ncols - 1] = TimestampTzGetDatum(p->since);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	if (one && !found)
		flexlock_no_such_process(want);
	pfree(p);
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
			flexlock_read_slot(i, &gen, &pid, &started, NULL, NULL, 0);
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

			flexlock_hist_bucket_bounds(b, h->max_ns[m], &lo, &hi);
			hi = Min(hi, (double) h->max_ns[m]);
			lo = Min(lo, hi);
			return (lo + (hi - lo) * (target - cum) / c) / 1000.0;
		}
		cum += c;
	}
	return h->max_ns[m] / 1000.0;
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
	TimestampTz reset_time = flexlock_current_reset_time();

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
			values[i] = flexlock_reset_datum(reset_time, &nulls[i]);
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
				flexlock_hist_bucket_bounds(b, h->max_ns[m], &lo, &hi);
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
	TimestampTz reset_time = flexlock_current_reset_time();
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
		values[11] = flexlock_reset_datum(reset_time, &nulls[11]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
