/*-------------------------------------------------------------------------
 *
 * flexlock.h
 *		What the files of the flexlock extension share.
 *
 * flexlock.c reads the per-process lock counters (the slots of
 * storage/lockstats.h) and keeps the reset baseline; the views of the
 * counters are grouped by what they count: lwlocks.c, hwlocks.c,
 * spinlocks.c and variants.c (the lock variants' settings and counters).
 * statements.c attributes the lock events of client backends to the
 * statements they run (flexlock_statements), explain.c adds the LOCKS
 * option of EXPLAIN, and lwbench.c hammers one LWLock from background
 * workers.  flexlock_report() and flexlock_lock_caps() are SQL, in the
 * install script.
 *
 * Copyright (c) 2026, flexlock authors
 *
 * IDENTIFICATION
 *	  contrib_flexlock/flexlock.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FLEXLOCK_H
#define FLEXLOCK_H

#include "executor/instrument.h"
#include "storage/lockstats.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

/*
 * flexlock.c: the reset baseline, in a named DSM segment: one LockStatsData
 * per slot, then the slots' changecounts at the reset.
 */
typedef struct FlexlockShared
{
	LWLock		lock;			/* protects everything below */
	TimestampTz reset_time;		/* 0 if never reset */
	LockStatsData baseline[FLEXIBLE_ARRAY_MEMBER];	/* one per slot */
	/* then uint32 baseline_gen[nslots]: each slot's changecount at the reset */
} FlexlockShared;

extern FlexlockShared *flexlock_shared;

/* flexlock.c: reading the slots (see there for the protocol) */
extern void flexlock_attach(void);
extern uint32 *flexlock_baseline_gen(void);
extern void flexlock_read_slot(int i, uint32 *gen, int *pid, TimestampTz *started,
							   LockStatsData *start, LockStatsData *data, int pause_pid);
extern const LockStatsData *flexlock_slot_baseline(int i);
extern void flexlock_copy_slot_data(int i, LockStatsData *dst);
extern void flexlock_accumulate(LockStatsData *dst, const LockStatsData *cur,
								const LockStatsData *base, uint64 epoch);
extern void flexlock_sum_all_slots(LockStatsData *sum, TimestampTz *reset_time);
extern Datum flexlock_reset_datum(TimestampTz t, bool *isnull);

/* flexlock.c: one live process's counters, for the per-process views */
typedef struct FlexlockProcessDelta
{
	LockStatsData cur;			/* scratch */
	LockStatsData start;		/* scratch */
	LockStatsData delta;		/* the counters since since */
	int			pid;
	TimestampTz since;
	const char *backend_type;
} FlexlockProcessDelta;

extern bool flexlock_process_delta(int i, bool one, int want, int pause_pid,
								   FlexlockProcessDelta *p);
extern void flexlock_no_such_process(int pid);
extern TimestampTz flexlock_current_reset_time(void);
extern void flexlock_hist_bucket_bounds(int b, uint64 max_ns, double *lo, double *hi);

/* _PG_init() of each part */
extern void flexlock_statements_init(void);
extern void flexlock_explain_init(void);

/* statements.c: forget every statement (flexlock_reset()) */
extern void flexlock_statements_reset(void);

/* Names of what a LockUsageEntry counts, for views and EXPLAIN */
extern const char *flexlock_usage_kind_name(const LockUsageEntry *e);
extern const char *flexlock_usage_lock_name(const LockUsageEntry *e);
extern const char *flexlock_usage_mode_name(const LockUsageEntry *e);

#endif							/* FLEXLOCK_H */
