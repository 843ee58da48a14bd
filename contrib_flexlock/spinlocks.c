/*-------------------------------------------------------------------------
 *
 * spinlocks.c
 *		The spinlock view
 *
 * flexlock_spinlocks: contended spinlock acquisitions by call site, summed
 * over the slots' per-process site tables.
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/spinlocks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/builtins.h"

#include "flexlock.h"

PG_FUNCTION_INFO_V1(flexlock_spinlocks);

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
		const LockStatsData *base = flexlock_slot_baseline(i);

		flexlock_copy_slot_data(i, cur);
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
		values[4] = flexlock_reset_datum(reset_time, &nulls[4]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(cur);
	return (Datum) 0;
}
