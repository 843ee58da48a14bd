/*-------------------------------------------------------------------------
 *
 * variants.c
 *		The views of the lock variants: their settings and counters
 *
 * flexlock_variants lists the lock variants of this build with their
 * settings now and at stock; flexlock_counters, the counter families the
 * variants' patches add to the slots (storage/lockstats.h).
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/variants.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "flexlock.h"

PG_FUNCTION_INFO_V1(flexlock_counters);
PG_FUNCTION_INFO_V1(flexlock_variants);

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
	flexlock_sum_all_slots(sum, &reset_time);

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
		values[5] = flexlock_reset_datum(reset_time, &nulls[5]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(sum);
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
