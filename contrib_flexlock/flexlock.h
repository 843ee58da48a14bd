/*-------------------------------------------------------------------------
 *
 * flexlock.h
 *		What the files of the flexlock extension share.
 *
 * flexlock.c shows the per-process lock counters (the views of 1.0 to
 * 1.2), lwbench.c hammers one LWLock from background workers, statements.c
 * attributes the lock events of client backends to the statements they
 * run (flexlock_statements), and explain.c adds the LOCKS option of
 * EXPLAIN.
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
