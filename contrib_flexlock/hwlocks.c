/*-------------------------------------------------------------------------
 *
 * hwlocks.c
 *		The heavyweight lock views
 *
 * flexlock_hwlocks (over all processes past and present since the last
 * reset), flexlock_hwlock_backends (per live process) and
 * flexlock_hwlock_wait_histogram: lock.c's acquisitions by lock tag type
 * and mode, how they were granted, and the waits.
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/hwlocks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "storage/proc.h"
#include "utils/builtins.h"

#include "flexlock.h"

PG_FUNCTION_INFO_V1(flexlock_hwlocks);
PG_FUNCTION_INFO_V1(flexlock_hwlock_backends);
PG_FUNCTION_INFO_V1(flexlock_hwlock_wait_histogram);

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
	flexlock_sum_all_slots(sum, &reset_time);

	for (t = 0; t < LOCKSTATS_HW_TYPES; t++)
		for (m = 0; m < LOCKSTATS_HW_MODES; m++)
		{
			Datum		values[HWLOCK_COLS + 1] = {0};
			bool		nulls[HWLOCK_COLS + 1] = {0};

			if (!hwlock_row_active(&sum->hwlock[t][m]))
				continue;
			hwlock_row(t, m, &sum->hwlock[t][m], values, nulls, 0);
			values[HWLOCK_COLS] = flexlock_reset_datum(reset_time, &nulls[HWLOCK_COLS]);
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
	FlexlockProcessDelta *p = palloc(sizeof(FlexlockProcessDelta));
	int			i,
				t,
				m;

	InitMaterializedSRF(fcinfo, 0);
	flexlock_attach();

	for (i = 0; i < LockStatsShmem->nslots; i++)
	{
		if (!flexlock_process_delta(i, one, want, 0, p))
			continue;
		found = true;
		for (t = 0; t < LOCKSTATS_HW_TYPES; t++)
			for (m = 0; m < LOCKSTATS_HW_MODES; m++)
			{
				Datum		values[HWLOCK_COLS + 3] = {0};
				bool		nulls[HWLOCK_COLS + 3] = {0};

				if (!hwlock_row_active(&p->delta.hwlock[t][m]))
					continue;
				values[0] = Int32GetDatum(p->pid);
				values[1] = CStringGetTextDatum(p->backend_type);
				hwlock_row(t, m, &p->delta.hwlock[t][m], values, nulls, 2);
				values[HWLOCK_COLS + 2] = TimestampTzGetDatum(p->since);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
	}
	if (one && !found)
		flexlock_no_such_process(want);
	pfree(p);
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
	flexlock_sum_all_slots(sum, &reset_time);

	for (t = 0; t < LOCKSTATS_HW_TYPES; t++)
		for (b = 0; b < LOCKSTATS_HIST_BUCKETS; b++)
		{
			Datum		values[5] = {0};
			bool		nulls[5] = {0};
			double		lo,
						hi;

			if (sum->hwlock_wait_hist[t][b] == 0)
				continue;
			flexlock_hist_bucket_bounds(b, 0, &lo, &hi);
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
