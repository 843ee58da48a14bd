/*-------------------------------------------------------------------------
 *
 * explain.c
 *		EXPLAIN (ANALYZE, LOCKS): the lock events of each plan node.
 *
 * The option asks the executor for lock usage (INSTRUMENT_LOCKS, through
 * ExplainState.extension_instrument, a patch of the series): InstrStartNode
 * marks the process's lock counters and InstrStopNode adds what moved to
 * the node's LockUsage, so a node's figures include its children's, as
 * BUFFERS does, and those of parallel workers.  The per-node hook prints
 * them after the node's buffers: LWLock acquisitions by tranche and mode,
 * LWLock sleeps with their time, heavyweight lock acquisitions and waits,
 * spinlock delays.  Nothing is collected unless LOCKS is given.
 *
 * The option exists in a session that loaded the library: with
 * shared_preload_libraries = 'flexlock', LOAD 'flexlock', or after calling
 * a function of the extension.
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/explain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/defrem.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#include "executor/instrument.h"
#include "lib/stringinfo.h"
#include "nodes/execnodes.h"

#include "flexlock.h"

typedef struct
{
	bool		locks;
} FlexlockExplainOptions;

static int	es_extension_id;
static explain_per_node_hook_type prev_explain_per_node_hook;
static explain_validate_options_hook_type prev_explain_validate_options_hook;

/* LOCKS [boolean] */
static void
locks_handler(ExplainState *es, DefElem *opt, ParseState *pstate)
{
	FlexlockExplainOptions *options = GetExplainExtensionState(es, es_extension_id);

	if (options == NULL)
	{
		options = palloc0(sizeof(FlexlockExplainOptions));
		SetExplainExtensionState(es, es_extension_id, options);
	}
	options->locks = defGetBoolean(opt);
	if (options->locks)
		es->extension_instrument |= INSTRUMENT_LOCKS;
	else
		es->extension_instrument &= ~INSTRUMENT_LOCKS;
}

/* LOCKS counts what ran: it needs ANALYZE, as WAL does */
static void
locks_validate(ExplainState *es, List *options, ParseState *pstate)
{
	FlexlockExplainOptions *o = GetExplainExtensionState(es, es_extension_id);

	if (prev_explain_validate_options_hook)
		prev_explain_validate_options_hook(es, options, pstate);
	if (o != NULL && o->locks && !es->analyze)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("EXPLAIN option %s requires ANALYZE", "LOCKS")));
}

static int
entry_cmp(const void *a, const void *b)
{
	const LockUsageEntry *l = a;
	const LockUsageEntry *r = b;
	int			c;

	if (l->kind != r->kind)
		return l->kind - r->kind;
	c = strcmp(flexlock_usage_lock_name(l), flexlock_usage_lock_name(r));
	if (c != 0)
		return c;
	return l->mode - r->mode;
}

/*
 * One text line, "label: lock mode=N ..., lock mode=N ...", of the entries
 * of a kind (LWLocks and the locks that did not fit go together) whose
 * count (acquisitions or sleeps) is above zero, with the time if asked.
 */
static void
text_line(ExplainState *es, const char *label, const LockUsageEntry *e, int n,
		  bool hw, bool sleeps)
{
	StringInfoData line;
	const char *prev = NULL;

	initStringInfo(&line);
	for (int i = 0; i < n; i++)
	{
		int64		count = sleeps ? e[i].sleeps : e[i].acquired;
		const char *lock = flexlock_usage_lock_name(&e[i]);

		if (count == 0 || (e[i].kind == LOCKUSAGE_HWLOCK) != hw ||
			e[i].kind == LOCKUSAGE_SPINLOCK)
			continue;
		if (prev != NULL && strcmp(prev, lock) == 0)
			appendStringInfoChar(&line, ' ');
		else
			appendStringInfo(&line, "%s%s ", prev ? ", " : "", lock);
		appendStringInfo(&line, "%s=%" PRId64,
						 e[i].kind == LOCKUSAGE_OTHER ? "any" : flexlock_usage_mode_name(&e[i]),
						 count);
		if (sleeps && e[i].sleep_ns > 0)
			appendStringInfo(&line, " time=%.3f", e[i].sleep_ns / 1e6);
		if (!sleeps && hw && e[i].fastpath > 0)
			appendStringInfo(&line, " (fast path=%" PRId64 ")", e[i].fastpath);
		prev = lock;
	}
	if (line.len > 0)
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "%s: %s\n", label, line.data);
	}
	pfree(line.data);
}

static void
show_lock_usage(ExplainState *es, const LockUsage *usage)
{
	LockUsageEntry e[LOCKUSAGE_ENTRIES];
	int			n = usage->nentries;

	memcpy(e, usage->entries, n * sizeof(LockUsageEntry));
	qsort(e, n, sizeof(LockUsageEntry), entry_cmp);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		int64		spin = 0;

		text_line(es, "LWLocks", e, n, false, false);
		text_line(es, "LWLock Sleeps", e, n, false, true);
		text_line(es, "Heavyweight Locks", e, n, true, false);
		text_line(es, "Heavyweight Lock Waits", e, n, true, true);
		for (int i = 0; i < n; i++)
		{
			if (e[i].kind == LOCKUSAGE_SPINLOCK)
				spin += e[i].sleeps;
		}
		if (spin > 0)
		{
			ExplainIndentText(es);
			appendStringInfo(es->str, "Spinlock Delays: %" PRId64 "\n", spin);
		}
		return;
	}

	ExplainOpenGroup("Locks", "Locks", false, es);
	for (int i = 0; i < n; i++)
	{
		ExplainOpenGroup("Lock", NULL, true, es);
		ExplainPropertyText("Lock Kind", flexlock_usage_kind_name(&e[i]), es);
		ExplainPropertyText("Lock", flexlock_usage_lock_name(&e[i]), es);
		ExplainPropertyText("Mode", flexlock_usage_mode_name(&e[i]), es);
		ExplainPropertyInteger("Acquisitions", NULL, e[i].acquired, es);
		if (e[i].kind == LOCKUSAGE_HWLOCK)
		{
			ExplainPropertyInteger("Fast Path", NULL, e[i].fastpath, es);
			ExplainPropertyInteger("Shared Table", NULL, e[i].shared_table, es);
		}
		ExplainPropertyInteger(e[i].kind == LOCKUSAGE_HWLOCK ? "Waits" :
							   e[i].kind == LOCKUSAGE_SPINLOCK ? "Delays" : "Sleeps",
							   NULL, e[i].sleeps, es);
		if (e[i].kind != LOCKUSAGE_SPINLOCK)
			ExplainPropertyFloat(e[i].kind == LOCKUSAGE_HWLOCK ? "Wait Time" : "Sleep Time",
								 "ms", e[i].sleep_ns / 1e6, 3, es);
		ExplainCloseGroup("Lock", NULL, true, es);
	}
	ExplainCloseGroup("Locks", "Locks", false, es);
}

/*
 * Show a node's lock usage if it was collected: what is shown is what the
 * executor counted, so a plan shows none unless LOCKS asked for it.
 */
static void
locks_per_node(PlanState *planstate, List *ancestors, const char *relationship,
			   const char *plan_name, ExplainState *es)
{
	if (prev_explain_per_node_hook)
		prev_explain_per_node_hook(planstate, ancestors, relationship,
								   plan_name, es);

	if (planstate->instrument == NULL || !planstate->instrument->need_lockusage)
		return;
	show_lock_usage(es, &planstate->instrument->lockusage);
}

void
flexlock_explain_init(void)
{
	es_extension_id = GetExplainExtensionId("flexlock");
	RegisterExtensionExplainOption("locks", locks_handler);

	prev_explain_per_node_hook = explain_per_node_hook;
	explain_per_node_hook = locks_per_node;
	prev_explain_validate_options_hook = explain_validate_options_hook;
	explain_validate_options_hook = locks_validate;
}
