/*-------------------------------------------------------------------------
 *
 * statements.c
 *		Lock events per statement: flexlock_statements.
 *
 * Every lock event of a client backend is counted in its slot of the lock
 * statistics (storage/lockstats.h), exactly and by the backend alone.  This
 * module cuts that stream at statement boundaries and adds each piece to the
 * statement it belongs to: one entry per (userid, dbid, queryid, toplevel),
 * as pg_stat_statements keys its entries, with the query id of core's
 * compute_query_id.  It keeps no query text: join with pg_stat_statements.
 *
 * Attribution.  A backend keeps a LockUsageMark of its counters (local
 * memory); at each boundary it hands the events since the mark to the
 * current *target* and moves the mark (LockUsageAdvanceRows()), so that every
 * event lands in exactly one place.  The targets:
 *
 *	OUTSIDE		what runs outside any statement: connection start, and
 *				what the backend does while idle (interrupts, a
 *				configuration reload); kept under query id 0.
 *	UNKNOWN		a client message is being processed and no statement has
 *				been identified yet: raw parsing, parse analysis (relation
 *				locks), a Bind that reuses a cached plan (its executor
 *				locks).  No boundary is drawn: the events go to the first
 *				statement identified, or to OUTSIDE if the backend goes idle
 *				first (a syntax error, a Sync with nothing to commit).
 *	STATEMENT	a top-level statement, identified by the first of
 *				post_parse_analyze_hook, planner_hook, ExecutorStart or
 *				ProcessUtility that sees it at nesting level 0; it keeps
 *				its events until another statement is identified, its
 *				transaction commits, or the backend goes idle, so the
 *				clean-up after its execution is its own, and so is an error's.
 *	COMMIT		the commit of an implicit transaction (autocommit, or the
 *				implicit block of a multi-statement query string), from the
 *				XACT_EVENT_PRE_COMMIT callback until the backend goes idle:
 *				the columns commit_* of the transaction's last statement.  A
 *				transaction ended by COMMIT (or END, PREPARE TRANSACTION...)
 *				is that statement's own work, in its own columns.  Commits
 *				inside a statement (VACUUM, procedures) are the statement's.
 *
 * The edges of idle periods come from core's client_message_hook (a patch
 * of the series): CLIENT_MESSAGE_START makes the target UNKNOWN before
 * anything of the message runs, which is what lets a relation lock taken in
 * parse analysis, before the query id exists, count for its statement;
 * CLIENT_MESSAGE_IDLE draws the boundary once the backend has answered.
 *
 * A boundary costs a LockUsageAdvance() (what moved since the mark, found
 * from the process's count of events), whose rows are appended to local
 * pending rows; shared memory is written when the backend goes idle (or has
 * pending rows for too many statements), all pending statements under one
 * acquisition of the hash table's LWLock.  That writing is counted in
 * flexlock_backends but in no statement: once it is done the mark moves past
 * it (LockUsageSkip(), which looks at that lock's row only, or, if the write
 * took another lock too, an advance that drops what it finds), as past what
 * runs while tracking is off, so the rows hold the server's work and not the
 * instrument's (pg_stat_statements does not count its own lock either); so
 * does a write in the middle of a message, where a statement starts with
 * rows pending for too many statements (stmt_boundary()).  A boundary where
 * nothing moved and no call ended makes no pending rows.
 *
 * Nested statements (a function's SQL, run through SPI by plpgsql or SQL
 * functions, a DO block's, a procedure's) are their caller's with
 * flexlock.track = top, the default.  With flexlock.track = all each has
 * its own entry, with toplevel false, as pg_stat_statements keys them:
 * every hook of a nested statement (planner, ExecutorStart, Run, Finish,
 * End, ProcessUtility) draws a boundary when it starts, charging the
 * caller's events so far, makes the statement the target and draws
 * another when it returns or fails, charging the statement's, with its
 * caller's target back (a stack of frames: nested_enter(), nested_leave()).
 * So the caller's row keeps what runs between the hooks only: the nested
 * statement's parse analysis (before its query id is known, as
 * pg_stat_statements too leaves it out) and the locks of a cached plan
 * taken before ExecutorStart, the SPI and plpgsql work around, and the
 * clean-up of a failed nested statement (a subtransaction's rollback).
 * Deeper than NESTED_MAX frames, a statement counts for its caller.
 *
 * Parallel workers are not client backends, but the lock events of their
 * part of a query are shipped to their leader (LockUsageShip(), as their
 * buffer and WAL usage are) and count for its statement.  Autovacuum and
 * other background processes are in flexlock_backends, not here; so are a
 * parallel utility command's workers (an index build, a vacuum).  A
 * backend's events after its last boundary before it exits (the exit
 * itself) are not attributed.
 *
 * Shared memory (shared_preload_libraries): a hash table of at most
 * flexlock.max_statements entries under one LWLock, taken shared to update
 * an existing entry and exclusive to add or remove entries; an entry's
 * counters are changed under its spinlock, as pg_stat_statements does.  A
 * full table evicts the least used 5% of its entries (their counts are
 * lost, the deallocations counted).  flexlock_reset() empties it, and
 * flexlock_statements_reset(userid, dbid, queryid) removes the entries that
 * match, as pg_stat_statements_reset() does.  An entry keeps its lock
 * events by lock, raw (a LockUsageRow per lock: an LWLock tranche's
 * counters by mode, a heavyweight lock type and mode's), in two tables of
 * rows (rows_add()): STMT_ROWS for the statement and COMMIT_ROWS for its
 * commit.  The readers split a row by mode (LockUsageRowSplit()): an
 * LWLock tranche's sleep time is split by the row's sleeps per mode, over
 * the statement's whole life rather than interval by interval, which costs
 * a boundary nothing.
 *
 * Calls.  A statement's call counts when it completes (its ExecutorEnd, or
 * its ProcessUtility returning), as pg_stat_statements counts it, so that
 * calls join with pg_stat_statements' calls; a statement that fails keeps
 * the lock events it had (a lock timeout, a deadlock are often the reason
 * it failed) and counts a failed call instead: a top-level statement when
 * its transaction or subtransaction aborts, or the backend exits (FATAL),
 * before it completed; a nested one when its hook fails.  As in
 * pg_stat_statements, EXECUTE is no statement of its own: the prepared
 * statement it runs is (PREPARE and DEALLOCATE run outside statements),
 * and the subcommands of a utility statement have no query id.
 *
 * A clean shutdown writes the entries to PGSTAT_STAT_PERMANENT_DIRECTORY
 * (flexlock.save, on by default), and the next start reads them back and
 * removes the file, as pg_stat_statements keeps its statistics; after a
 * crash they start empty.
 *
 * Copyright (c) 2026, flexlock authors
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * IDENTIFICATION
 *	  contrib_flexlock/statements.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/queryjumble.h"
#include "optimizer/planner.h"
#include "parser/analyze.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/lock.h"
#include "storage/lockstats.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/injection_point.h"
#include "utils/timestamp.h"
#include "pgstat.h"

#include "flexlock.h"

/*
 * Lock rows of an entry: the statement's, and its commit's.  A row is a
 * lock's raw counters (LockUsageRow: an LWLock tranche's, by mode, or a
 * heavyweight lock type and mode's), added up over the statement's
 * intervals and split by mode when read (LockUsageRowSplit()).  Each table
 * keeps its rows in slots hashed by row, so that adding an interval's row is
 * a probe, not a search; three slots are kept for the spinlock row
 * (LOCKUSAGE_SPIN_ROW) and the overflow rows of LWLocks and of heavyweight
 * locks (ROW_OTHER_LW, ROW_OTHER_HW), which take the locks that do not fit.
 */
#define STMT_ROWS		26
#define COMMIT_ROWS		13
#define ROWS_KEPT		3

#define ROW_OTHER_LW	(LOCKUSAGE_SPIN_ROW + 1)
#define ROW_OTHER_HW	(LOCKUSAGE_SPIN_ROW + 2)

typedef LockUsageRow StmtRow;

StaticAssertDecl(STMT_ROWS <= 32 && COMMIT_ROWS <= 32,
				 "the slots of a table of rows are bits of a uint32");

/* Evict this share of the entries when the table is full */
#define EVICT_PERCENT	5

/*
 * Statements with pending rows before they are written anyway, at the end of
 * a boundary; room for two more, the targets of one boundary.
 */
#define PENDING_MAX		4
#define PENDING_SLOTS	(PENDING_MAX + 2)

typedef enum
{
	TRACK_NONE,
	TRACK_TOP,
	TRACK_ALL,
} TrackLevel;

static const struct config_enum_entry track_options[] = {
	{"none", TRACK_NONE, false},
	{"top", TRACK_TOP, false},
	{"all", TRACK_ALL, false},
	{NULL, 0, false}
};

/* GUCs */
static int	stmt_max = 5000;
static int	stmt_track = TRACK_TOP;
static bool stmt_save = true;

/*
 * The file a clean shutdown writes the entries to.  Its header: the magic
 * number (changed with the format of StmtEntry), the major version of
 * PostgreSQL, the size of an entry, the number of LWLock tranches counted.
 * (An LWLock row keeps the tranche's index: an extension's tranches are
 * numbered as they are registered, so a changed shared_preload_libraries
 * can rename the rows of extensions' tranches.)
 */
#define STMT_DUMP_FILE	PGSTAT_STAT_PERMANENT_DIRECTORY "/flexlock_statements.stat"
static const uint32 STMT_FILE_HEADER = 0x464c5317;
static const uint32 STMT_PG_MAJOR_VERSION = PG_VERSION_NUM / 100;

typedef struct StmtKey
{
	Oid			userid;
	Oid			dbid;
	int64		queryid;
	bool		toplevel;
} StmtKey;

typedef struct StmtEntry
{
	StmtKey		key;			/* hash key: must be first */
	slock_t		mutex;			/* protects everything below */
	int64		calls;
	int64		failed;			/* calls that failed */
	double		usage;
	TimestampTz stats_since;	/* when the entry was made */
	int			nrows;			/* rows with a lock of their own */
	int			ncommit;
	uint32		rows_used;		/* a bit per slot of rows[] in use */
	uint32		commit_used;
	StmtRow		rows[STMT_ROWS];
	StmtRow		commit[COMMIT_ROWS];
} StmtEntry;

typedef struct StmtShared
{
	LWLock	   *lock;			/* protects the hash table's entries */
	uint64		removals;		/* entries removed; changed under the lock
								 * held exclusively */
	slock_t		mutex;			/* protects the counters below */
	int64		dealloc;		/* times entry_dealloc() ran */
	TimestampTz stats_reset;
} StmtShared;

static StmtShared *stmt_shared = NULL;
static HTAB *stmt_hash = NULL;

/* --- the backend's state ---------------------------------------------- */

typedef enum
{
	TARGET_OUTSIDE,
	TARGET_UNKNOWN,
	TARGET_STATEMENT,
	TARGET_COMMIT,
} StmtTarget;

/*
 * Events attributed to one statement, not yet in shared memory.  The sink
 * appends the rows of an interval to list[] (mostly a lock once per
 * boundary), and the write
 * adds each to the entry's rows; a full list is folded into the tables, of
 * an entry's layout, first (a long message).
 */
#define PENDING_LIST	24

typedef struct StmtPending
{
	StmtKey		key;
	bool		stored;			/* written by a write that failed later */
	int64		calls;
	int64		failed;
	int			nlist;
	uint32		list_commit;	/* a bit per list[] entry: commit's */
	StmtRow		list[PENDING_LIST];
	int			nrows;
	int			ncommit;
	uint32		rows_used;
	uint32		commit_used;
	StmtRow		rows[STMT_ROWS];
	StmtRow		commit[COMMIT_ROWS];
} StmtPending;

static LockUsageMark *stmt_mark = NULL; /* NULL until the backend tracks */
static bool stmt_backend = false;	/* a client backend, tracking */
static bool stmt_paused = false;	/* flexlock.track was none */
static bool stmt_nested = false;	/* flexlock.track is all */
static StmtTarget stmt_target = TARGET_OUTSIDE;
static StmtKey stmt_key;		/* of TARGET_STATEMENT and TARGET_COMMIT */
static int64 stmt_calls = 0;	/* calls of stmt_key not yet charged */
static int64 stmt_failed = 0;	/* failed calls of stmt_key not yet charged */
static bool stmt_done = false;	/* the top-level statement has completed */
static int	stmt_nesting = 0;	/* executor, planner and utility depth */
static bool stmt_top_open = false;	/* a top-level hook runs: top_enter() */
static SubTransactionId stmt_top_inner = InvalidSubTransactionId;

/* The last top-level statement of the current transaction */
static bool last_valid = false;
static bool last_ends_xact = false; /* a transaction statement (COMMIT...) */
static StmtKey last_key;

/*
 * flexlock.track = all: while a hook of a nested statement runs (planner,
 * ExecutorStart, Run, Finish, End, ProcessUtility), its caller's target
 * waits in a frame.  A frame is pushed and popped within one call of a hook
 * (also when the call fails: PG_CATCH), so the stack is always as deep as
 * the nested hooks running, one frame per level of nesting (two for a
 * utility statement running a query: EXPLAIN, CREATE TABLE AS).  Deeper
 * than NESTED_MAX frames, a statement counts for its caller.
 */
#define NESTED_MAX		32

typedef struct StmtFrame
{
	StmtTarget	target;
	StmtKey		key;
	int64		calls;
	int64		failed;
} StmtFrame;

static StmtFrame stmt_frames[NESTED_MAX];
static int	stmt_nframes = 0;

static StmtPending stmt_pending[PENDING_SLOTS];
static int	stmt_npending = 0;
static StmtPending *charge_to = NULL;	/* where the sink adds */
static bool charge_commit = false;
static StmtPending *charge_also = NULL; /* and, if set, there too */
static bool charge_also_commit = false;

/* hooks chained */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static client_message_hook_type prev_client_message_hook = NULL;

PG_FUNCTION_INFO_V1(flexlock_statements_1_3);
PG_FUNCTION_INFO_V1(flexlock_statement_locks_1_3);
PG_FUNCTION_INFO_V1(flexlock_statements_info_1_3);
PG_FUNCTION_INFO_V1(flexlock_statements_tracking_1_3);
PG_FUNCTION_INFO_V1(flexlock_query_id_1_3);
PG_FUNCTION_INFO_V1(flexlock_statements_1_4);
PG_FUNCTION_INFO_V1(flexlock_statement_locks_1_4);
PG_FUNCTION_INFO_V1(flexlock_statements_info_1_4);
PG_FUNCTION_INFO_V1(flexlock_statements_reset_1_4);

/* The versions of the extension's SQL the readers answer */
typedef enum
{
	STMT_API_1_3,
	STMT_API_1_4,
} StmtApi;

static void stmt_shmem_shutdown(int code, Datum arg);
static void stmt_load(void);
static void entry_evict(void);
static const char *usage_wait_event_type(const LockUsageEntry *e);
static const char *usage_wait_event(const LockUsageEntry *e);

/* --- lock rows ------------------------------------------------------------ */

static inline bool
key_equal(const StmtKey *a, const StmtKey *b)
{
	return a->queryid == b->queryid && a->userid == b->userid &&
		a->dbid == b->dbid && a->toplevel == b->toplevel;
}

/* Add a row's counters to another's (written out: see row_diff_copy()) */
static pg_attribute_always_inline void
row_counters_add(StmtRow *e, const StmtRow *add)
{
	e->v[0] += add->v[0];
	e->v[1] += add->v[1];
	e->v[2] += add->v[2];
	e->v[3] += add->v[3];
	e->v[4] += add->v[4];
	e->v[5] += add->v[5];
	e->v[6] += add->v[6];
	e->v[7] += add->v[7];
	e->v[8] += add->v[8];
}

/*
 * The slot of row (a LockUsageRow's row) in rows (nslots of them, the bits
 * of *used those in use, *n of them with locks of their own): its own, a
 * free one it takes (*fresh set, its counters left to the caller), or NULL
 * if it has none and no room is left for it.
 */
static pg_attribute_always_inline StmtRow *
rows_slot(StmtRow *rows, uint32 *used, int *n, int nslots, int32 row,
		  bool *fresh)
{
	int			i = (int) (((uint64) ((uint32) row * 0x9E3779B1U) * (uint32) nslots) >> 32);

	for (int probes = 0; probes < nslots; probes++)
	{
		StmtRow    *e = &rows[i];

		if ((*used & (((uint32) 1 << i))) == 0)
		{
			/* a lock of its own needs room beside the kept slots */
			if (row < LOCKUSAGE_SPIN_ROW)
			{
				if (*n >= nslots - ROWS_KEPT)
					return NULL;
				(*n)++;
			}
			*used |= ((uint32) 1 << i);
			e->row = row;
			*fresh = true;
			return e;
		}
		if (e->row == row)
		{
			*fresh = false;
			return e;
		}
		if (++i == nslots)
			i = 0;
	}
	return NULL;
}

/*
 * Add one row to rows (nslots, the bits of *used those in use, *n of them
 * with locks of their own): to the row of its lock, or, when there is no
 * room for that, to the overflow row of its kind.
 */
static pg_attribute_always_inline void
rows_add(StmtRow *rows, uint32 *used, int *n, int nslots, const StmtRow *add)
{
	StmtRow    *e;
	bool		fresh;

	e = rows_slot(rows, used, n, nslots, add->row, &fresh);
	if (unlikely(e == NULL))
	{
		e = rows_slot(rows, used, n, nslots,
					  add->row < LOCKSTATS_NUM_TRANCHES ? ROW_OTHER_LW : ROW_OTHER_HW,
					  &fresh);
		Assert(e != NULL);
	}
	if (fresh)
	{
		memcpy(e->v, add->v, sizeof(e->v));
		return;
	}
	row_counters_add(e, add);
}

/*
 * Add every row in use of one table to another of the same size.  A lock
 * has the same first slot in both, where it mostly is: the add needs no
 * probe then.
 */
static void
rows_merge(StmtRow *dst, uint32 *dst_used, int *n, int nslots,
		   const StmtRow *src, uint32 src_used)
{
	while (src_used != 0)
	{
		int			i = pg_rightmost_one_pos32(src_used);
		const StmtRow *add = &src[i];
		StmtRow    *e = &dst[i];

		src_used &= src_used - 1;
		if ((*dst_used & ((uint32) 1 << i)) != 0 && e->row == add->row)
			row_counters_add(e, add);
		else
			rows_add(dst, dst_used, n, nslots, add);
	}
}

/* The kind of lock a row counts */
static inline int
row_kind(int32 row)
{
	if (row < LOCKSTATS_NUM_TRANCHES || row == ROW_OTHER_LW)
		return LOCKUSAGE_LWLOCK;
	if (row == LOCKUSAGE_SPIN_ROW)
		return LOCKUSAGE_SPINLOCK;
	return LOCKUSAGE_HWLOCK;
}

/* LockUsageSink: collects a row's entries (at most four) */
typedef struct RowEntries
{
	int			n;
	LockUsageEntry e[4];
} RowEntries;

static void
collect_sink(void *arg, const LockUsageEntry *e)
{
	RowEntries *c = (RowEntries *) arg;

	Assert(c->n < lengthof(c->e));
	c->e[c->n++] = *e;
}

/*
 * A row as it is read: by mode (LockUsageRowSplit()), an overflow row as
 * one entry of kind LOCKUSAGE_OTHER whose id is the kind it collects.
 */
static void
row_entries(const StmtRow *r, RowEntries *out)
{
	LockUsageEntry *e = &out->e[0];

	out->n = 0;
	if (r->row <= LOCKUSAGE_SPIN_ROW)
	{
		LockUsageRowSplit(r, collect_sink, out);
		return;
	}
	memset(e, 0, sizeof(*e));
	e->kind = LOCKUSAGE_OTHER;
	if (r->row == ROW_OTHER_LW)
	{
		e->id = LOCKUSAGE_LWLOCK;
		e->acquired = r->v[0] + r->v[1] + r->v[2];
		e->sleeps = r->v[3] + r->v[4] + r->v[5];
		e->sleep_ns = r->v[6];
		e->hold_ns = r->v[7] + r->v[8];
	}
	else
	{
		e->id = LOCKUSAGE_HWLOCK;
		e->fastpath = r->v[0];
		e->shared_table = r->v[1];
		e->acquired = r->v[0] + r->v[1] + r->v[2];
		e->sleeps = r->v[3];
		e->sleep_ns = r->v[4];
	}
	out->n = 1;
}

StaticAssertDecl(PENDING_LIST <= 32, "list_commit has a bit per list entry");

/*
 * Add the rows of a pending statement's list to tables of an entry's layout
 * (the statement's own, or its entry's): each to rows or, if its bit in
 * list_commit is set, to commit
 */
static pg_attribute_always_inline void
list_add_to(const StmtPending *p, StmtRow *rows, uint32 *rows_used, int *nrows,
			StmtRow *commit, uint32 *commit_used, int *ncommit)
{
	for (int i = 0; i < p->nlist; i++)
	{
		if (p->list_commit & ((uint32) 1 << i))
			rows_add(commit, commit_used, ncommit, COMMIT_ROWS, &p->list[i]);
		else
			rows_add(rows, rows_used, nrows, STMT_ROWS, &p->list[i]);
	}
}

/* Fold a pending statement's list into its tables */
static pg_noinline void
pending_fold(StmtPending *p)
{
	list_add_to(p, p->rows, &p->rows_used, &p->nrows,
				p->commit, &p->commit_used, &p->ncommit);
	p->nlist = 0;
	p->list_commit = 0;
}

static inline void
pending_add(StmtPending *p, bool commit, const StmtRow *r)
{
	if (commit)
		p->list_commit |= (uint32) 1 << p->nlist;
	p->list[p->nlist++] = *r;
}

/* (a full list is folded first; out of line, so that the sinks need no frame) */
static pg_noinline void
pending_add_full(StmtPending *p, bool commit, const StmtRow *r)
{
	pending_fold(p);
	pending_add(p, commit, r);
}

static inline void
pending_sink_to(StmtPending *p, bool commit, const StmtRow *r)
{
	if (likely(p->nlist < PENDING_LIST))
		pending_add(p, commit, r);
	else
		pending_add_full(p, commit, r);
}

/*
 * LockUsageRowSinks: an interval's rows go to a pending statement (arg), as
 * its own or its commit's, or to charge_to and charge_also
 */
static void
pending_sink(void *arg, const LockUsageRow *r)
{
	pending_sink_to((StmtPending *) arg, false, r);
}

static void
pending_commit_sink(void *arg, const LockUsageRow *r)
{
	pending_sink_to((StmtPending *) arg, true, r);
}

static void
pending_both_sink(void *arg, const LockUsageRow *r)
{
	pending_sink_to(charge_to, charge_commit, r);
	pending_sink_to(charge_also, charge_also_commit, r);
}

/* LockUsageRowSink: events that are nobody's (flexlock's own writing) */
static void
discard_sink(void *arg, const LockUsageRow *r)
{
}

/* --- shared memory ---------------------------------------------------------- */

static Size
stmt_memsize(void)
{
	return add_size(MAXALIGN(sizeof(StmtShared)),
					hash_estimate_size(stmt_max, sizeof(StmtEntry)));
}

static void
stmt_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(stmt_memsize());
	RequestNamedLWLockTranche("flexlock_statements", 1);
}

static void
stmt_shmem_startup(void)
{
	bool		found;
	HASHCTL		info;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stmt_shared = ShmemInitStruct("flexlock_statements", sizeof(StmtShared), &found);
	if (!found)
	{
		stmt_shared->lock = &(GetNamedLWLockTranche("flexlock_statements"))->lock;
		stmt_shared->removals = 0;
		SpinLockInit(&stmt_shared->mutex);
		stmt_shared->dealloc = 0;
		stmt_shared->stats_reset = GetCurrentTimestamp();
	}
	info.keysize = sizeof(StmtKey);
	info.entrysize = sizeof(StmtEntry);
	stmt_hash = ShmemInitHash("flexlock_statements hash", stmt_max, stmt_max,
							  &info, HASH_ELEM | HASH_BLOBS);
	LWLockRelease(AddinShmemInitLock);

	/*
	 * The postmaster (or a single-user backend) writes the entries at a clean
	 * shutdown, and reads those of the last one now.
	 */
	if (!IsUnderPostmaster)
		on_shmem_exit(stmt_shmem_shutdown, (Datum) 0);
	if (!found)
		stmt_load();
}

/* A new entry of key, its counters zero; caller holds the lock exclusively */
static StmtEntry *
entry_make(const StmtKey *key)
{
	StmtEntry  *e;
	bool		found;

	e = hash_search(stmt_hash, key, HASH_FIND, NULL);
	if (e != NULL)
		return e;
	while (hash_get_num_entries(stmt_hash) >= stmt_max)
		entry_evict();
	e = hash_search(stmt_hash, key, HASH_ENTER, &found);
	if (!found)
	{
		SpinLockInit(&e->mutex);
		e->calls = 0;
		e->failed = 0;
		e->usage = 0;
		e->stats_since = GetCurrentTimestamp();
		e->nrows = 0;
		e->ncommit = 0;
		e->rows_used = 0;
		e->commit_used = 0;
	}
	return e;
}

/*
 * Read the entries a clean shutdown wrote (stmt_shmem_shutdown()), and
 * remove the file, so that a crash later does not bring them back (with
 * flexlock.save off, remove it only).  A file
 * of another format or version is ignored (logged).  Entries past
 * flexlock.max_statements are dropped.
 */
static void
stmt_load(void)
{
	FILE	   *file;
	uint32		header[4];
	int64		num;
	int64		dealloc;
	TimestampTz stats_reset;

	/* (flexlock.save off: a file of an earlier start is not for this one) */
	if (!stmt_save)
	{
		unlink(STMT_DUMP_FILE);
		return;
	}
	file = AllocateFile(STMT_DUMP_FILE, PG_BINARY_R);
	if (file == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", STMT_DUMP_FILE)));
		return;
	}
	if (fread(header, sizeof(header), 1, file) != 1 ||
		fread(&num, sizeof(num), 1, file) != 1)
		goto read_error;
	if (header[0] != STMT_FILE_HEADER || header[1] != STMT_PG_MAJOR_VERSION ||
		header[2] != sizeof(StmtEntry) || header[3] != LOCKSTATS_NUM_TRANCHES ||
		num < 0)
	{
		ereport(LOG,
				(errmsg("ignoring file \"%s\": written by another version of flexlock or PostgreSQL",
						STMT_DUMP_FILE)));
		goto done;
	}
	for (int64 i = 0; i < num; i++)
	{
		StmtEntry	temp;
		StmtEntry  *e;

		if (fread(&temp, sizeof(StmtEntry), 1, file) != 1)
			goto read_error;
		if (hash_get_num_entries(stmt_hash) >= stmt_max)
			continue;
		e = entry_make(&temp.key);
		memcpy((char *) e + offsetof(StmtEntry, calls),
			   (char *) &temp + offsetof(StmtEntry, calls),
			   sizeof(StmtEntry) - offsetof(StmtEntry, calls));
	}
	if (fread(&dealloc, sizeof(dealloc), 1, file) != 1 ||
		fread(&stats_reset, sizeof(stats_reset), 1, file) != 1)
		goto read_error;
	stmt_shared->dealloc = dealloc;
	stmt_shared->stats_reset = stats_reset;
	goto done;

read_error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not read file \"%s\": %m", STMT_DUMP_FILE)));
done:
	FreeFile(file);
	unlink(STMT_DUMP_FILE);
}

/*
 * At a clean shutdown of the postmaster: write the entries for the next
 * start (flexlock.save), to a temporary file renamed into place.  Nothing
 * else runs then: no lock is needed.
 */
static void
stmt_shmem_shutdown(int code, Datum arg)
{
	FILE	   *file;
	HASH_SEQ_STATUS hs;
	StmtEntry  *e;
	int64		num;
	uint32		header[4] = {STMT_FILE_HEADER, STMT_PG_MAJOR_VERSION, sizeof(StmtEntry),
	LOCKSTATS_NUM_TRANCHES};

	/* not after a crash, nor without the table */
	if (code != 0 || stmt_shared == NULL || stmt_hash == NULL)
		return;
	if (!stmt_save)
	{
		/* (and no older file may come back at the next start) */
		unlink(STMT_DUMP_FILE);
		return;
	}
	file = AllocateFile(STMT_DUMP_FILE ".tmp", PG_BINARY_W);
	if (file == NULL)
		goto error;
	num = hash_get_num_entries(stmt_hash);
	if (fwrite(header, sizeof(header), 1, file) != 1 ||
		fwrite(&num, sizeof(num), 1, file) != 1)
		goto error;
	hash_seq_init(&hs, stmt_hash);
	while ((e = hash_seq_search(&hs)) != NULL)
	{
		if (fwrite(e, sizeof(StmtEntry), 1, file) != 1)
		{
			hash_seq_term(&hs);
			goto error;
		}
	}
	if (fwrite(&stmt_shared->dealloc, sizeof(int64), 1, file) != 1 ||
		fwrite(&stmt_shared->stats_reset, sizeof(TimestampTz), 1, file) != 1)
		goto error;
	if (FreeFile(file))
	{
		file = NULL;
		goto error;
	}
	(void) durable_rename(STMT_DUMP_FILE ".tmp", STMT_DUMP_FILE, LOG);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", STMT_DUMP_FILE ".tmp")));
	if (file)
		FreeFile(file);
	unlink(STMT_DUMP_FILE ".tmp");
}

static int
entry_cmp(const void *a, const void *b)
{
	double		l = (*(StmtEntry *const *) a)->usage;
	double		r = (*(StmtEntry *const *) b)->usage;

	return l < r ? -1 : l > r ? 1 : 0;
}

/*
 * Evict the least used entries, as pg_stat_statements' entry_dealloc() does.
 * Caller holds the lock exclusively.
 */
static void
entry_evict(void)
{
	HASH_SEQ_STATUS hs;
	StmtEntry **entries;
	StmtEntry  *e;
	int			n = 0;
	int			nvictims;

	entries = palloc(hash_get_num_entries(stmt_hash) * sizeof(StmtEntry *));
	hash_seq_init(&hs, stmt_hash);
	while ((e = hash_seq_search(&hs)) != NULL)
	{
		entries[n++] = e;
		e->usage *= 0.99;		/* older uses count less */
	}
	qsort(entries, n, sizeof(StmtEntry *), entry_cmp);
	nvictims = Min(n, Max(10, n * EVICT_PERCENT / 100));
	stmt_shared->removals++;
	for (int i = 0; i < nvictims; i++)
		hash_search(stmt_hash, &entries[i]->key, HASH_REMOVE, NULL);
	pfree(entries);

	SpinLockAcquire(&stmt_shared->mutex);
	stmt_shared->dealloc += 1;
	SpinLockRelease(&stmt_shared->mutex);
}

/*
 * The entry of key, or NULL; caller holds the lock.  The entries this
 * backend wrote last are remembered by query id: one is still key's while
 * no entry was removed since (removing one is what lets its memory hold
 * another key), so the common store finds its entry without hashing.
 */
#define ENTRY_CACHE		16

typedef struct EntryCacheSlot
{
	StmtEntry  *entry;
	uint64		removals;		/* stmt_shared->removals when found */
} EntryCacheSlot;

static EntryCacheSlot entry_cache[ENTRY_CACHE];

static StmtEntry *
entry_find(const StmtKey *key)
{
	EntryCacheSlot *c = &entry_cache[(uint64) key->queryid % ENTRY_CACHE];
	StmtEntry  *e;

	if (c->entry != NULL && c->removals == stmt_shared->removals &&
		key_equal(&c->entry->key, key))
		return c->entry;
	e = hash_search(stmt_hash, key, HASH_FIND, NULL);
	if (e != NULL)
	{
		c->entry = e;
		c->removals = stmt_shared->removals;
	}
	return e;
}

/* Add one pending statement to its entry; caller holds the lock */
static void
entry_add(StmtEntry *e, const StmtPending *p)
{
	SpinLockAcquire(&e->mutex);
	e->calls += p->calls;
	e->failed += p->failed;
	/* as pg_stat_statements: a use per call (a row without calls: per write) */
	e->usage += p->calls > 0 ? (double) p->calls : 1.0;
	if (unlikely((p->rows_used | p->commit_used) != 0))
	{
		rows_merge(e->rows, &e->rows_used, &e->nrows, STMT_ROWS, p->rows, p->rows_used);
		rows_merge(e->commit, &e->commit_used, &e->ncommit, COMMIT_ROWS, p->commit, p->commit_used);
	}
	list_add_to(p, e->rows, &e->rows_used, &e->nrows,
				e->commit, &e->commit_used, &e->ncommit);
	SpinLockRelease(&e->mutex);
}

/* Write the pending statements: see pending_store() */
static void
pending_store_locked(void)
{
	bool		missing = false;

	LWLockAcquire(stmt_shared->lock, LW_SHARED);
	for (int i = 0; i < stmt_npending; i++)
	{
		StmtPending *p = &stmt_pending[i];
		StmtEntry  *e;

		if (p->stored)
			continue;
		e = entry_find(&p->key);
		if (e == NULL)
		{
			missing = true;
			continue;
		}
		entry_add(e, p);
		p->stored = true;
		/* (tests make a write fail half way here) */
		INJECTION_POINT("flexlock-statements-stored", NULL);
	}
	if (missing)
	{
		LWLockRelease(stmt_shared->lock);
		LWLockAcquire(stmt_shared->lock, LW_EXCLUSIVE);
		for (int i = 0; i < stmt_npending; i++)
		{
			StmtPending *p = &stmt_pending[i];

			if (p->stored)
				continue;
			entry_add(entry_make(&p->key), p);
			p->stored = true;
		}
	}
	LWLockRelease(stmt_shared->lock);
}

/*
 * A write that failed half way (out of memory evicting, an error in a test)
 * leaves pending_writing set: the statements written already leave the
 * pending ones (so that the next try does not write them again, and what
 * they get meanwhile is pending anew), and the lock is let go if the error
 * has not done it (at the edge of idle time no transaction's abort does).
 * Done before the pending statements are used again, instead of in a
 * PG_CATCH of every write.
 */
static bool pending_writing = false;

static pg_noinline void
pending_recover(void)
{
	int			n = 0;

	if (LWLockHeldByMe(stmt_shared->lock))
	{
		/* as LWLockReleaseAll(): the error has reset the holdoff count */
		HOLD_INTERRUPTS();
		LWLockRelease(stmt_shared->lock);
	}
	/* keep the statements not written, and only those */
	for (int i = 0; i < stmt_npending; i++)
	{
		if (!stmt_pending[i].stored)
			stmt_pending[n++] = stmt_pending[i];
	}
	stmt_npending = n;
	pending_writing = false;
}

/*
 * Write every pending statement to shared memory, under one acquisition of
 * the lock (shared if every entry exists).  For a caller in a transaction
 * (whose abort lets the lock go on an error) or in the PG_TRY of the edge of
 * idle time (whose PG_CATCH recovers); elsewhere pending_store_guarded().
 */
static void
pending_store(void)
{
	if (unlikely(pending_writing))
		pending_recover();
	if (stmt_npending == 0)
		return;
	pending_writing = true;
	pending_store_locked();
	pending_writing = false;
	stmt_npending = 0;
}

/*
 * The same, wherever it is called: a write because the pending statements
 * are full, which can come where a message starts, outside any transaction
 * (rarely: after failed writes or calls of statements ended together), and
 * at the backend's exit.  An error lets the lock go at once.
 */
static pg_noinline void
pending_store_guarded(void)
{
	PG_TRY();
	{
		pending_store();
	}
	PG_CATCH();
	{
		pending_recover();
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/* --- attribution ------------------------------------------------------------ */

static void
make_key(StmtKey *key, int64 queryid)
{
	memset(key, 0, sizeof(StmtKey));	/* the hash reads the padding */
	key->userid = GetUserId();
	key->dbid = MyDatabaseId;
	key->queryid = queryid;
	key->toplevel = true;
}

/* The pending rows of key, made if needed */
static StmtPending *
pending_of(const StmtKey *key)
{
	StmtPending *p;

	if (unlikely(pending_writing))
		pending_recover();
	for (int i = 0; i < stmt_npending; i++)
	{
		if (key_equal(&stmt_pending[i].key, key))
			return &stmt_pending[i];
	}

	/*
	 * (full only if calls of other statements came in between, as portals
	 * dropped together at a commit, or writes failed: that write then counts
	 * for the target charged next)
	 */
	if (unlikely(stmt_npending == PENDING_SLOTS))
		pending_store_guarded();
	p = &stmt_pending[stmt_npending++];
	p->key = *key;
	p->stored = false;
	p->calls = 0;
	p->failed = 0;
	p->nlist = 0;
	p->list_commit = 0;
	p->nrows = 0;
	p->ncommit = 0;
	p->rows_used = 0;
	p->commit_used = 0;
	return p;
}

/*
 * The events since the mark, and calls, go to target (of key); an UNKNOWN
 * target keeps them for whatever it turns out to be.
 */
static void charge_target_also(StmtTarget target, const StmtKey *key,
							   int64 calls, int64 failed,
							   StmtTarget also_target, const StmtKey *also_key);

static void
charge_target(StmtTarget target, const StmtKey *key, int64 calls, int64 failed)
{
	charge_target_also(target, key, calls, failed, TARGET_UNKNOWN, NULL);
}

/*
 * The same, the events going to a second target too (also_target, of
 * also_key; UNKNOWN: none): a nested statement's also to its top-level
 * statement's row, which includes them, as pg_stat_statements' does.
 */
static void
charge_target_also(StmtTarget target, const StmtKey *key,
				   int64 calls, int64 failed,
				   StmtTarget also_target, const StmtKey *also_key)
{
	StmtKey		outside;
	LockUsageRowSink sink;

	if (target == TARGET_UNKNOWN)
		return;
	/* nothing moved and no call: no rows to make */
	if (calls == 0 && failed == 0 && !LockUsageMoved(stmt_mark) &&
		!LockUsageReceivedAny)
		return;
	if (target == TARGET_OUTSIDE)
	{
		make_key(&outside, INT64CONST(0));
		key = &outside;
	}
	if (unlikely(pending_writing))
		pending_recover();
	/* room for both (short of it as pending_of() can be full) */
	if (unlikely(stmt_npending > PENDING_SLOTS - 2))
		pending_store_guarded();
	if (also_target == TARGET_STATEMENT || also_target == TARGET_COMMIT)
	{
		charge_also = pending_of(also_key);
		charge_also_commit = (also_target == TARGET_COMMIT);
	}
	charge_to = pending_of(key);
	charge_commit = (target == TARGET_COMMIT);
	if (charge_also != NULL)
		sink = pending_both_sink;
	else if (charge_commit)
		sink = pending_commit_sink;
	else
		sink = pending_sink;
	LockUsageAdvanceRows(stmt_mark, sink, charge_to);
	/* and the events of parallel workers this backend led meanwhile */
	if (LockUsageReceivedAny)
		LockUsageReportReceived(sink, charge_to);
	charge_also = NULL;
	charge_to->calls += calls;
	charge_to->failed += failed;
}

/*
 * Write the pending rows at the end of a boundary, every event so far
 * charged: the writing itself is nobody's, the mark moves past it.
 */
static inline void
pending_write(void)
{
	pending_store();

	/*
	 * (its events are its lock's, unless the write took another lock too, or
	 * the lock's row is not in the mark yet: the backend's first write)
	 */
	if (!LockUsageSkip(stmt_mark, stmt_shared->lock))
		LockUsageAdvanceRows(stmt_mark, discard_sink, NULL);
}

/*
 * Rows pending for too many statements (a message of many, nested ones):
 * write them at the end of a boundary, once the calls charged are no longer
 * the caller's to charge (so a failed write leaves nothing counted twice),
 * as at the edge of idle time.
 */
static void
pending_write_if_full(void)
{
	if (unlikely(stmt_npending >= PENDING_MAX))
		pending_write();
}

/*
 * Draw a boundary: the events since the mark, and the calls counted, go to
 * the current target (stmt_charge(), below, returns at once if there are
 * none).
 */
static pg_noinline void
stmt_charge_moved(void)
{
	/* a nested statement's events are its top-level statement's too */
	if (stmt_target == TARGET_STATEMENT && !stmt_key.toplevel && stmt_nframes > 0)
		charge_target_also(stmt_target, &stmt_key, stmt_calls, stmt_failed,
						   stmt_frames[0].target, &stmt_frames[0].key);
	else
		charge_target(stmt_target, &stmt_key, stmt_calls, stmt_failed);
	stmt_calls = 0;
	stmt_failed = 0;
}

static inline void
stmt_charge(void)
{
	if (stmt_target == TARGET_UNKNOWN)
		return;
	/* (as charge_target_also(), before its call: the edges of idle time) */
	if (stmt_calls == 0 && stmt_failed == 0 && !LockUsageMoved(stmt_mark) &&
		!LockUsageReceivedAny)
		return;
	stmt_charge_moved();
}

/*
 * A boundary inside a message, where a statement starts: a failed write
 * fails that statement, as anything it runs may.  (Not where the message
 * starts, before anything of it runs, nor at a commit: those only charge,
 * and the edge of idle time writes; they write only when the pending rows
 * are full, after failed writes or calls of statements ended together, as
 * portals dropped at a commit: see pending_of().)
 */
static void
stmt_boundary(void)
{
	if (stmt_target == TARGET_UNKNOWN)
		return;
	stmt_charge();
	pending_write_if_full();
}

/*
 * Is this backend tracking?  Decided when a message starts
 * (flexlock.track), so that the nesting level is counted for all of a
 * message or for none of it.
 */
static inline bool
stmt_tracking(void)
{
	return stmt_backend && !stmt_paused;
}

static void stmt_before_exit(int code, Datum arg);

/*
 * A client backend starts tracking at its first message: from where its
 * counters stood when it took its slot, so that its connection start counts
 * (for OUTSIDE), as flexlock_backends counts it.
 */
static void
stmt_start_backend(void)
{
	stmt_mark = MemoryContextAllocZero(TopMemoryContext, sizeof(LockUsageMark));
	LockUsageMarkStart(stmt_mark);
	stmt_target = TARGET_OUTSIDE;
	stmt_backend = true;
	before_shmem_exit(stmt_before_exit, (Datum) 0);
}

/* A top-level statement is identified: see stmt_identify() */
static pg_noinline void
stmt_identify_new(int64 queryid)
{
	StmtKey		key;
	bool		charged;

	/*
	 * No query id (compute_query_id off, and nobody asked for them): no
	 * statement to count, its events are what runs outside statements.
	 */
	if (unlikely(queryid == INT64CONST(0)))
	{
		if (stmt_target != TARGET_OUTSIDE)
		{
			stmt_boundary();
			stmt_target = TARGET_OUTSIDE;
		}
		last_valid = false;
		return;
	}

	make_key(&key, queryid);
	/* (the statement is the target before a write can fail it) */
	charged = (stmt_target != TARGET_UNKNOWN);
	stmt_charge();
	stmt_done = false;
	stmt_target = TARGET_STATEMENT;
	stmt_key = key;
	last_key = key;
	last_valid = true;
	last_ends_xact = false;
	if (charged)
		pending_write_if_full();
}

/* Is the target the top-level statement of this query id (and user)? */
static inline bool
stmt_is_target(int64 queryid)
{
	return stmt_target == TARGET_STATEMENT && stmt_key.queryid == queryid &&
		stmt_key.toplevel && stmt_key.userid == GetUserId() &&
		stmt_key.dbid == MyDatabaseId;
}

/*
 * A top-level statement is identified: the first of its hooks makes it the
 * target, the others find it is already (its planner, its ExecutorStart),
 * as does the same statement again ("SELECT 1; SELECT 1").
 */
static inline void
stmt_identify(int64 queryid)
{
	if (stmt_is_target(queryid))
		stmt_done = false;
	else
		stmt_identify_new(queryid);
}

/*
 * A nested statement's hook starts (flexlock.track = all): the caller's
 * events so far go to the caller, whose target waits in a frame while the
 * statement's are its own.  Returns the frame, or -1 if the statement
 * counts for its caller: not tracking nested statements, not nested, no
 * query id, a caller not identified yet (its events are still UNKNOWN's),
 * or NESTED_MAX frames deep already (nested_enter(), below, tells; then
 * nested_enter_frame() pushes the frame).
 */
static pg_noinline int
nested_enter_frame(int64 queryid)
{
	StmtFrame  *f;

	stmt_boundary();
	f = &stmt_frames[stmt_nframes];
	f->target = stmt_target;
	f->key = stmt_key;
	f->calls = stmt_calls;
	f->failed = stmt_failed;
	make_key(&stmt_key, queryid);
	stmt_key.toplevel = false;
	stmt_target = TARGET_STATEMENT;
	stmt_calls = 0;
	stmt_failed = 0;
	stmt_nframes++;
	return stmt_nframes - 1;
}

static inline int
nested_enter(int64 queryid)
{
	if (likely(!stmt_nested) || stmt_nesting == 0 || queryid == INT64CONST(0) ||
		stmt_target == TARGET_UNKNOWN || stmt_nframes >= NESTED_MAX)
		return -1;
	return nested_enter_frame(queryid);
}

/*
 * The hook of the frame's nested statement is done, or failed: the events
 * since the last boundary go to the statement (an error's too, as a
 * top-level statement's error is its own; the call counts only if the hook
 * completed: stmt_calls is counted after it, and a hook that failed counts
 * a failed call), and its caller is the target again.  The frame is popped
 * before anything is charged, so that the stack stays as deep as the hooks
 * running even if charging fails.
 * After an error, the events stay the caller's if flexlock's own lock is
 * still held (an error while writing rows): charging could need it again.
 */
static pg_noinline void
nested_leave_frame(int frame, bool failed)
{
	StmtFrame  *f;
	StmtKey		key;
	int64		calls;
	int64		nfailed;

	Assert(stmt_nframes == frame + 1);
	Assert(stmt_target == TARGET_STATEMENT && !stmt_key.toplevel);
	key = stmt_key;
	calls = failed ? 0 : stmt_calls;
	nfailed = stmt_failed + (failed ? 1 : 0);
	f = &stmt_frames[frame];
	stmt_target = f->target;
	stmt_key = f->key;
	stmt_calls = f->calls;
	stmt_failed = f->failed;
	stmt_nframes = frame;
	/* (a write that failed half way lets the lock go now, as it always did) */
	if (failed && pending_writing)
		pending_recover();
	if (failed && LWLockHeldByMe(stmt_shared->lock))
		return;
	/* the top-level statement: the caller, or the bottom frame's */
	if (frame == 0)
		charge_target_also(TARGET_STATEMENT, &key, calls, nfailed,
						   stmt_target, &stmt_key);
	else
		charge_target_also(TARGET_STATEMENT, &key, calls, nfailed,
						   stmt_frames[0].target, &stmt_frames[0].key);
	/* (not while an error is handled: the next boundary writes) */
	if (!failed)
		pending_write_if_full();
}

static inline void
nested_leave(int frame, bool failed)
{
	if (frame >= 0)
		nested_leave_frame(frame, failed);
}

/*
 * A top-level statement that had not completed failed: its events stay its
 * own, and it counts a failed call.  Called where an error ends it: its
 * transaction's abort, its subtransaction's (after a SAVEPOINT); the
 * backend's exit (FATAL) has its own test.  (A ROLLBACK, or a statement
 * whose commit fails, has completed.)
 */
static void
stmt_failed_top(void)
{
	if (stmt_nesting == 0 && stmt_target == TARGET_STATEMENT &&
		stmt_key.toplevel && !stmt_done)
	{
		stmt_failed++;
		stmt_done = true;
	}
}

static void
stmt_before_exit(int code, Datum arg)
{
	if (!stmt_backend || stmt_shared == NULL)
		return;

	/*
	 * (a FATAL error leaves the hooks without their PG_CATCH: the nesting
	 * level stays where it was, and no frame tells a nested statement)
	 */
	if (!stmt_paused && stmt_nframes == 0 && stmt_target == TARGET_STATEMENT &&
		stmt_key.toplevel && !stmt_done)
		stmt_failed++;
	if (stmt_target == TARGET_UNKNOWN)
		stmt_target = TARGET_OUTSIDE;
	stmt_charge();
	pending_store_guarded();
	stmt_backend = false;
}

static void
stmt_client_message(ClientMessageEdge edge, int firstchar)
{
	if (prev_client_message_hook)
		prev_client_message_hook(edge, firstchar);

	if (unlikely(!stmt_backend))
	{
		if (stmt_shared == NULL ||
			(MyBackendType != B_BACKEND && MyBackendType != B_STANDALONE_BACKEND))
			return;
		stmt_start_backend();
	}
	if (stmt_track == TRACK_NONE)
	{
		/* (at the edge of idle time, so that no statement is cut short) */
		stmt_paused = true;
		return;
	}
	/* between messages no statement runs: no frame is left (nested_leave) */
	Assert(stmt_nframes == 0 && stmt_nesting == 0 && !stmt_top_open);
	stmt_nframes = 0;
	stmt_nesting = 0;
	stmt_top_open = false;
	stmt_nested = (stmt_track == TRACK_ALL);
	if (unlikely(stmt_paused))
	{
		/* tracking was off: what ran meanwhile is nobody's */
		LockUsageMarkSet(stmt_mark);
		stmt_target = TARGET_OUTSIDE;
		stmt_calls = 0;
		stmt_failed = 0;
		last_valid = false;
		stmt_paused = false;
	}

	if (edge == CLIENT_MESSAGE_START)
	{
		if (stmt_target != TARGET_UNKNOWN)
		{
			stmt_charge();
			stmt_target = TARGET_UNKNOWN;
		}
	}
	else
	{
		/*
		 * The backend has answered (ReadyForQuery is sent): an error now
		 * would reach a client that waits for nothing.  A failure to write is
		 * logged; the rows not written stay pending for the next try.
		 */
		MemoryContext cxt = CurrentMemoryContext;

		if (stmt_target == TARGET_UNKNOWN)
			stmt_target = TARGET_OUTSIDE;
		PG_TRY();
		{
			stmt_charge();
			/* (before writing: what follows is outside) */
			stmt_target = TARGET_OUTSIDE;
			pending_write();
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(cxt);
			edata = CopyErrorData();
			FlushErrorState();
			/* (no transaction's abort lets the lock go here) */
			if (pending_writing)
				pending_recover();
			/* (a charge that failed left its target and calls to charge) */
			ereport(LOG,
					(errmsg("could not write the lock statistics of statements: %s",
							edata->message)));
			FreeErrorData(edata);
		}
		PG_END_TRY();
	}
}

/*
 * A top-level hook (planner, ExecutorStart, Run, Finish, and ProcessUtility
 * but for CALL, DO and transaction statements) runs its statement without a
 * PG_TRY, a setjmp per hook and statement.  An error that leaves it ends in
 * the abort of its transaction, or of the subtransaction that was current
 * when it began (a SAVEPOINT's), and that abort's callback sets the level
 * back (top_unwound()) before it counts the failed call.  No other abort
 * unwinds it: nothing in a planner, an executor or those utility statements ends a
 * transaction without an error (CALL and DO do, COMMIT and ROLLBACK in a
 * procedure: their hook keeps its PG_TRY; a transaction statement can fail
 * in a failed block, where no abort runs: so does its hook), and a
 * subtransaction begun inside the hook (an exception block's), whose abort
 * is caught there, has an id from stmt_top_inner on (ids only grow within a
 * transaction; after a commit inside the hook, every subtransaction is one
 * begun inside it).
 */
static inline void
top_enter(void)
{
	Assert(stmt_nesting == 0);
	stmt_nesting = 1;
	stmt_top_open = true;
	stmt_top_inner = InvalidSubTransactionId;
}

static inline void
top_leave(void)
{
	Assert(stmt_nesting == 1);
	stmt_nesting = 0;
	stmt_top_open = false;
}

/* The abort of subid, or of the transaction (InvalidSubTransactionId) */
static inline void
top_unwound(SubTransactionId subid)
{
	if (stmt_top_open &&
		(subid == InvalidSubTransactionId ||
		 stmt_top_inner == InvalidSubTransactionId || subid < stmt_top_inner))
	{
		stmt_nesting = 0;
		stmt_top_open = false;
	}
}

static void
stmt_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_ABORT)
		top_unwound(InvalidSubTransactionId);

	/*
	 * A commit inside a top-level statement (VACUUM, CREATE INDEX
	 * CONCURRENTLY...): the next transaction's subtransaction ids start
	 * again, and every one of them begins inside the hook
	 */
	if ((event == XACT_EVENT_COMMIT || event == XACT_EVENT_PREPARE) &&
		stmt_top_open)
		stmt_top_inner = TopSubTransactionId;
	if (!stmt_tracking())
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (stmt_nesting > 0 || !last_valid)
				break;
			if (last_ends_xact)
			{
				/* COMMIT, END: the statement's own work */
				if (stmt_target != TARGET_STATEMENT || !key_equal(&stmt_key, &last_key))
				{
					stmt_charge();
					stmt_key = last_key;
					stmt_target = TARGET_STATEMENT;
				}
			}
			else
			{
				/*
				 * What ran since the message began is the end of the
				 * statement's portal (the extended protocol's, dropped at
				 * Sync, its parallel workers' shutdown with it): the
				 * statement's, as under the simple protocol.
				 */
				if (stmt_target == TARGET_UNKNOWN)
				{
					stmt_target = TARGET_STATEMENT;
					stmt_key = last_key;
				}
				stmt_charge();
				stmt_key = last_key;
				stmt_target = TARGET_COMMIT;
			}
			break;
		case XACT_EVENT_ABORT:
			stmt_failed_top();
			if (stmt_nesting == 0)
				last_valid = false;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PREPARE:
			if (stmt_nesting == 0)
				last_valid = false;
			break;
		default:
			break;
	}
}

/*
 * A statement in a subtransaction (after a SAVEPOINT) fails; and where
 * subtransactions begin inside a top-level hook (see top_unwound())
 */
static void
stmt_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_START_SUB)
	{
		/* the first subtransaction begun inside a top-level hook */
		if (stmt_top_open && stmt_top_inner == InvalidSubTransactionId)
			stmt_top_inner = mySubid;
		return;
	}
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	top_unwound(mySubid);
	if (stmt_tracking())
		stmt_failed_top();
}

/* --- hooks around statements ------------------------------------------------ */

/*
 * EXECUTE, PREPARE and DEALLOCATE are no statements of their own, as in
 * pg_stat_statements: EXECUTE's prepared statement is the top-level
 * statement it runs (its executor hooks identify it), PREPARE's and
 * DEALLOCATE's work is what runs outside statements.
 */
static inline bool
utility_transparent(Node *utilityStmt)
{
	return utilityStmt != NULL &&
		(IsA(utilityStmt, ExecuteStmt) ||
		 IsA(utilityStmt, PrepareStmt) ||
		 IsA(utilityStmt, DeallocateStmt));
}

/*
 * The next hook of each chain, or the standard routine: what every hook below
 * runs, whatever it counts around it
 */
static inline PlannedStmt *
next_planner(Query *parse, const char *query_string, int cursorOptions,
			 ParamListInfo boundParams)
{
	if (prev_planner_hook)
		return prev_planner_hook(parse, query_string, cursorOptions,
								 boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

static inline void
next_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static inline void
next_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
{
	if (prev_ExecutorRun)
		prev_ExecutorRun(queryDesc, direction, count);
	else
		standard_ExecutorRun(queryDesc, direction, count);
}

static inline void
next_ExecutorFinish(QueryDesc *queryDesc)
{
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
}

static inline void
next_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

static inline void
next_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

static void
stmt_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (prev_post_parse_analyze_hook)
		prev_post_parse_analyze_hook(pstate, query, jstate);

	if (stmt_tracking() && stmt_nesting == 0 &&
		!utility_transparent(query->utilityStmt))
		stmt_identify(query->queryId);
}

static PlannedStmt *
stmt_planner(Query *parse, const char *query_string, int cursorOptions,
			 ParamListInfo boundParams)
{
	PlannedStmt *result;
	int			frame;

	if (!stmt_tracking())
		return next_planner(parse, query_string, cursorOptions, boundParams);
	if (stmt_nesting == 0)
	{
		stmt_identify(parse->queryId);
		top_enter();
		result = next_planner(parse, query_string, cursorOptions, boundParams);
		top_leave();
		return result;
	}
	frame = nested_enter(parse->queryId);

	stmt_nesting++;
	PG_TRY();
	{
		result = next_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_CATCH();
	{
		stmt_nesting--;
		nested_leave(frame, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	stmt_nesting--;
	nested_leave(frame, false);
	return result;
}

static void
stmt_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	int			frame = -1;

	if (!stmt_tracking())
	{
		next_ExecutorStart(queryDesc, eflags);
		return;
	}
	/* what runs in ExecutorStart (initial partition pruning) is nested */
	if (stmt_nesting == 0)
	{
		stmt_identify(queryDesc->plannedstmt->queryId);
		top_enter();
		next_ExecutorStart(queryDesc, eflags);
		top_leave();
		return;
	}
	frame = nested_enter(queryDesc->plannedstmt->queryId);
	stmt_nesting++;
	PG_TRY();
	{
		next_ExecutorStart(queryDesc, eflags);
	}
	PG_CATCH();
	{
		stmt_nesting--;
		nested_leave(frame, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	stmt_nesting--;
	nested_leave(frame, false);
}

static void
stmt_ExecutorRun(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
{
	int			frame;

	if (!stmt_tracking())
	{
		next_ExecutorRun(queryDesc, direction, count);
		return;
	}

	/*
	 * An Execute message of the extended protocol runs a portal whose
	 * ExecutorStart ran in its Bind: the statement is known again here.
	 */
	if (stmt_nesting == 0)
	{
		if (stmt_target == TARGET_UNKNOWN)
			stmt_identify(queryDesc->plannedstmt->queryId);
		top_enter();
		next_ExecutorRun(queryDesc, direction, count);
		top_leave();
		return;
	}
	frame = nested_enter(queryDesc->plannedstmt->queryId);
	stmt_nesting++;
	PG_TRY();
	{
		next_ExecutorRun(queryDesc, direction, count);
	}
	PG_CATCH();
	{
		stmt_nesting--;
		nested_leave(frame, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	stmt_nesting--;
	nested_leave(frame, false);
}

static void
stmt_ExecutorFinish(QueryDesc *queryDesc)
{
	int			frame;

	if (!stmt_tracking())
	{
		next_ExecutorFinish(queryDesc);
		return;
	}
	if (stmt_nesting == 0)
	{
		if (stmt_target == TARGET_UNKNOWN)
			stmt_identify(queryDesc->plannedstmt->queryId);
		top_enter();
		next_ExecutorFinish(queryDesc);
		top_leave();
		return;
	}
	frame = nested_enter(queryDesc->plannedstmt->queryId);
	stmt_nesting++;
	PG_TRY();
	{
		next_ExecutorFinish(queryDesc);
	}
	PG_CATCH();
	{
		stmt_nesting--;
		nested_leave(frame, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	stmt_nesting--;
	nested_leave(frame, false);
}

static void
stmt_ExecutorEnd(QueryDesc *queryDesc)
{
	int			frame = -1;

	/*
	 * A call of the statement.  A portal may end long after its statement: a
	 * cursor closed by a later statement, or at commit (an unnamed portal of
	 * the extended protocol, dropped in the Sync's commit): the call is its
	 * statement's, the events are whoever's they are.  A nested statement's
	 * ExecutorEnd is its own (flexlock.track = all), and counts its call when
	 * it completes.
	 */
	if (stmt_tracking() && stmt_nesting == 0)
	{
		int64		queryid = queryDesc->plannedstmt->queryId;

		/* (no query id: no statement, no call) */
		if (stmt_is_target(queryid))
		{
			stmt_calls++;
			stmt_done = true;
		}
		else if (queryid != INT64CONST(0))
		{
			StmtKey		key;

			make_key(&key, queryid);
			pending_of(&key)->calls++;
		}
	}
	else if (stmt_tracking())
		frame = nested_enter(queryDesc->plannedstmt->queryId);

	if (frame < 0)
	{
		next_ExecutorEnd(queryDesc);
		return;
	}
	PG_TRY();
	{
		next_ExecutorEnd(queryDesc);
	}
	PG_CATCH();
	{
		nested_leave(frame, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	stmt_calls++;
	nested_leave(frame, false);
}

/*
 * The query id of a utility statement, as parse analysis computed it.
 * pg_stat_statements, when its ProcessUtility hook runs before ours (loaded
 * after flexlock), sets a utility statement's queryId to 0, so that its
 * executor hooks leave the statement's inner query alone; in a cached plan
 * (a prepared BEGIN) that lasts, and later executions arrive with 0 in
 * whichever order the modules are loaded.  The id is then computed again,
 * from the statement under a Query as parse analysis puts it there.
 */
static int64
utility_query_id(PlannedStmt *pstmt, ProcessUtilityContext context)
{
	Query	   *query;
	JumbleState *jstate;
	int64		queryid;

	/*
	 * (a subcommand, such as a primary key's index of CREATE TABLE, was never
	 * analyzed: it has no id of its own)
	 */
	if (likely(pstmt->queryId != INT64CONST(0)) || pstmt->utilityStmt == NULL ||
		context == PROCESS_UTILITY_SUBCOMMAND || !IsQueryIdEnabled())
		return pstmt->queryId;
	query = makeNode(Query);
	query->commandType = CMD_UTILITY;
	query->querySource = QSRC_ORIGINAL;
	query->canSetTag = true;
	query->utilityStmt = pstmt->utilityStmt;
	query->stmt_location = pstmt->stmt_location;
	query->stmt_len = pstmt->stmt_len;
	jstate = JumbleQuery(query);
	queryid = query->queryId;
	pfree(jstate->jumble);
	pfree(jstate->clocations);
	pfree(jstate);
	pfree(query);
	return queryid;
}


static void
stmt_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					bool readOnlyTree, ProcessUtilityContext context,
					ParamListInfo params, QueryEnvironment *queryEnv,
					DestReceiver *dest, QueryCompletion *qc)
{
	bool		top;
	int			frame;
	int64		queryid;

	if (!stmt_tracking() || utility_transparent(pstmt->utilityStmt))
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
		return;
	}
	top = (stmt_nesting == 0);
	/* (the id is needed for a top-level statement, and a nested one's row) */
	queryid = top || stmt_nested ? utility_query_id(pstmt, context) : pstmt->queryId;
	if (top)
	{
		stmt_identify(queryid);
		last_ends_xact = IsA(pstmt->utilityStmt, TransactionStmt);
	}
	frame = nested_enter(queryid);

	/*
	 * At the top level only these keep the PG_TRY: CALL and DO may end
	 * transactions without an error (COMMIT and ROLLBACK in a procedure), and
	 * a transaction statement may fail where no abort follows (ROLLBACK TO a
	 * savepoint that does not exist, in a block that has failed already)
	 */
	if (top && !IsA(pstmt->utilityStmt, CallStmt) &&
		!IsA(pstmt->utilityStmt, DoStmt) &&
		!IsA(pstmt->utilityStmt, TransactionStmt))
	{
		top_enter();
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
		top_leave();
		if (stmt_target == TARGET_STATEMENT)
			stmt_calls++;
		stmt_done = true;
		return;
	}
	stmt_nesting++;
	PG_TRY();
	{
		next_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		stmt_nesting--;
		nested_leave(frame, true);
		PG_RE_THROW();
	}
	PG_END_TRY();
	stmt_nesting--;

	if ((top && stmt_target == TARGET_STATEMENT) || frame >= 0)
		stmt_calls++;
	if (top)
		stmt_done = true;
	nested_leave(frame, false);
}

/* --- set-up ----------------------------------------------------------------- */

void
flexlock_statements_init(void)
{
	DefineCustomEnumVariable("flexlock.track",
							 "Selects which statements flexlock_statements tracks the lock events of.",
							 "none: none; top: top-level statements (the statements "
							 "they run in functions count as theirs); all: nested "
							 "statements too, in rows of their own (toplevel false).",
							 &stmt_track,
							 TRACK_TOP,
							 track_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * The statistics need shared memory and the hooks of every backend: the
	 * rest only when preloaded (and a PGC_POSTMASTER setting can be made only
	 * then).
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("flexlock.max_statements",
							"Sets the maximum number of statements tracked by flexlock_statements.",
							NULL,
							&stmt_max,
							5000,
							100,
							INT_MAX / 2,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("flexlock.save",
							 "Save flexlock_statements' statistics across server shutdowns.",
							 NULL,
							 &stmt_save,
							 true,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);

	/*
	 * Query ids as pg_stat_statements has them (compute_query_id = auto
	 * computes them), unless the server starts with tracking off: then
	 * nothing is computed for us, and tracking turned on later finds query
	 * ids only if compute_query_id or another module asks for them.
	 */
	if (stmt_track != TRACK_NONE)
		EnableQueryId();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stmt_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stmt_shmem_startup;
	prev_post_parse_analyze_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = stmt_post_parse_analyze;
	prev_planner_hook = planner_hook;
	planner_hook = stmt_planner;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = stmt_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = stmt_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = stmt_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = stmt_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = stmt_ProcessUtility;
	prev_client_message_hook = client_message_hook;
	client_message_hook = stmt_client_message;
	RegisterXactCallback(stmt_xact_callback, NULL);
	RegisterSubXactCallback(stmt_subxact_callback, NULL);
}

/*
 * Remove the entries of userid, dbid and queryid (0: any), as
 * pg_stat_statements_reset() does, both toplevel and not; when every entry
 * goes, the deallocations are zeroed and stats_reset set too.  A backend's
 * pending events (those of its current statement, or of its last idle
 * period) are written after, into new entries.  Returns the time of the
 * reset.
 */
static TimestampTz
entries_reset(Oid userid, Oid dbid, int64 queryid)
{
	HASH_SEQ_STATUS hs;
	StmtEntry  *e;
	TimestampTz now = GetCurrentTimestamp();
	long		before;
	long		removed = 0;

	LWLockAcquire(stmt_shared->lock, LW_EXCLUSIVE);
	before = hash_get_num_entries(stmt_hash);
	hash_seq_init(&hs, stmt_hash);
	while ((e = hash_seq_search(&hs)) != NULL)
	{
		if ((userid == InvalidOid || e->key.userid == userid) &&
			(dbid == InvalidOid || e->key.dbid == dbid) &&
			(queryid == INT64CONST(0) || e->key.queryid == queryid))
		{
			hash_search(stmt_hash, &e->key, HASH_REMOVE, NULL);
			removed++;
			stmt_shared->removals++;
		}
	}
	if (removed == before)
	{
		SpinLockAcquire(&stmt_shared->mutex);
		stmt_shared->dealloc = 0;
		stmt_shared->stats_reset = now;
		SpinLockRelease(&stmt_shared->mutex);
	}
	LWLockRelease(stmt_shared->lock);
	return now;
}

/* flexlock_reset(): forget every statement */
void
flexlock_statements_reset(void)
{
	if (stmt_shared == NULL)
		return;
	(void) entries_reset(InvalidOid, InvalidOid, INT64CONST(0));
}

/* --- reading ---------------------------------------------------------------- */

static void
check_loaded(void)
{
	if (stmt_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("flexlock must be loaded via \"shared_preload_libraries\" to track statements")));
}

/* Copy the entries, so that rows are built without the lock */
static StmtEntry *
copy_entries(int *n)
{
	HASH_SEQ_STATUS hs;
	StmtEntry  *e;
	StmtEntry  *copy;
	int			i = 0;

	LWLockAcquire(stmt_shared->lock, LW_SHARED);
	copy = palloc(Max(1, hash_get_num_entries(stmt_hash)) * sizeof(StmtEntry));
	hash_seq_init(&hs, stmt_hash);
	while ((e = hash_seq_search(&hs)) != NULL)
	{
		SpinLockAcquire(&e->mutex);
		memcpy(&copy[i], e, sizeof(StmtEntry));
		SpinLockRelease(&e->mutex);
		i++;
	}
	LWLockRelease(stmt_shared->lock);
	*n = i;
	return copy;
}

/* userid, dbid, toplevel, queryid (NULL for others' statements, unless allowed) */
static int
key_columns(const StmtKey *key, bool all_visible, Datum *values, bool *nulls)
{
	values[0] = ObjectIdGetDatum(key->userid);
	values[1] = ObjectIdGetDatum(key->dbid);
	values[2] = BoolGetDatum(key->toplevel);
	if (all_visible || key->userid == GetUserId())
		values[3] = Int64GetDatum(key->queryid);
	else
		nulls[3] = true;
	return 4;
}

/*
 * Ten totals of lock rows (the slots in use): LWLock acquisitions, sleeps, sleep
 * time, hold time; heavyweight lock acquisitions, through the fast path, in
 * the shared table, waits, wait time; spinlock delays.  An overflow row
 * counts for the kind it collects.
 */
static int
total_columns(const StmtRow *rows, uint32 used, Datum *values)
{
	int64		lw_acq = 0,
				lw_sleeps = 0,
				hw_acq = 0,
				hw_fast = 0,
				hw_shared = 0,
				hw_waits = 0,
				spin = 0;
	double		lw_sleep_ns = 0,
				lw_hold_ns = 0,
				hw_wait_ns = 0;

	for (; used != 0; used &= used - 1)
	{
		const StmtRow *r = &rows[pg_rightmost_one_pos32(used)];

		switch (row_kind(r->row))
		{
			case LOCKUSAGE_HWLOCK:
				hw_acq += r->v[0] + r->v[1] + r->v[2];
				hw_fast += r->v[0];
				hw_shared += r->v[1];
				hw_waits += r->v[3];
				hw_wait_ns += r->v[4];
				break;
			case LOCKUSAGE_SPINLOCK:
				spin += r->v[1];
				break;
			case LOCKUSAGE_LWLOCK:
				lw_acq += r->v[0] + r->v[1] + r->v[2];
				lw_sleeps += r->v[3] + r->v[4] + r->v[5];
				lw_sleep_ns += r->v[6];
				lw_hold_ns += r->v[7] + r->v[8];
				break;
		}
	}
	values[0] = Int64GetDatum(lw_acq);
	values[1] = Int64GetDatum(lw_sleeps);
	values[2] = Float8GetDatum(lw_sleep_ns / 1e6);
	values[3] = Float8GetDatum(lw_hold_ns / 1e6);
	values[4] = Int64GetDatum(hw_acq);
	values[5] = Int64GetDatum(hw_fast);
	values[6] = Int64GetDatum(hw_shared);
	values[7] = Int64GetDatum(hw_waits);
	values[8] = Float8GetDatum(hw_wait_ns / 1e6);
	values[9] = Int64GetDatum(spin);
	return 10;
}

/*
 * flexlock_statements(): one row per statement, with its calls and the
 * totals of its lock events and of its commit's; from 1.4, its failed
 * calls and when its entry was made too.
 */
static void
statements_internal(FunctionCallInfo fcinfo, StmtApi api)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all_visible = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	StmtEntry  *entries;
	int			n;

	check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	entries = copy_entries(&n);
	for (int i = 0; i < n; i++)
	{
		StmtEntry  *e = &entries[i];
		Datum		values[27];
		bool		nulls[27] = {0};
		int			c;

		c = key_columns(&e->key, all_visible, values, nulls);
		values[c++] = Int64GetDatum(e->calls);
		if (api >= STMT_API_1_4)
			values[c++] = Int64GetDatum(e->failed);
		c += total_columns(e->rows, e->rows_used, &values[c]);
		c += total_columns(e->commit, e->commit_used, &values[c]);
		if (api >= STMT_API_1_4)
			values[c++] = TimestampTzGetDatum(e->stats_since);
		Assert(c == (api >= STMT_API_1_4 ? 27 : 25));
		Assert(c == rsinfo->setDesc->natts);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

Datum
flexlock_statements_1_3(PG_FUNCTION_ARGS)
{
	statements_internal(fcinfo, STMT_API_1_3);
	return (Datum) 0;
}

Datum
flexlock_statements_1_4(PG_FUNCTION_ARGS)
{
	statements_internal(fcinfo, STMT_API_1_4);
	return (Datum) 0;
}

/*
 * flexlock_statement_locks(): one row per statement, part (the statement or
 * its commit) and lock; from 1.4 the lock named as pg_stat_activity names
 * what a backend waits for (wait_event_type, wait_event).
 */
static void
statement_locks_internal(FunctionCallInfo fcinfo, StmtApi api)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		all_visible = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	StmtEntry  *entries;
	int			n;

	check_loaded();
	InitMaterializedSRF(fcinfo, 0);
	entries = copy_entries(&n);
	for (int i = 0; i < n; i++)
	{
		StmtEntry  *e = &entries[i];

		for (int part = 0; part < 2; part++)
		{
			StmtRow    *rows = part == 0 ? e->rows : e->commit;
			uint32		used = part == 0 ? e->rows_used : e->commit_used;
			RowEntries	split = {0};
			int			next = 0;

			for (;;)
			{
				LockUsageEntry *u;
				Datum		values[14];
				bool		nulls[14] = {0};
				int			c;

				/* the next entry of the row, or of the next row in use */
				if (next == split.n)
				{
					if (used == 0)
						break;
					row_entries(&rows[pg_rightmost_one_pos32(used)], &split);
					used &= used - 1;
					next = 0;
					if (split.n == 0)
						continue;
				}
				u = &split.e[next++];
				c = key_columns(&e->key, all_visible, values, nulls);
				values[c++] = BoolGetDatum(part == 1);
				if (api >= STMT_API_1_4)
				{
					values[c++] = CStringGetTextDatum(usage_wait_event_type(u));
					values[c++] = CStringGetTextDatum(usage_wait_event(u));
				}
				else
				{
					values[c++] = CStringGetTextDatum(flexlock_usage_kind_name(u));
					values[c++] = CStringGetTextDatum(flexlock_usage_lock_name(u));
				}
				values[c++] = CStringGetTextDatum(flexlock_usage_mode_name(u));
				values[c++] = Int64GetDatum(u->acquired);
				values[c++] = Int64GetDatum(u->fastpath);
				values[c++] = Int64GetDatum(u->shared_table);
				values[c++] = Int64GetDatum(u->sleeps);
				values[c++] = Float8GetDatum(u->sleep_ns / 1e6);
				values[c++] = Float8GetDatum(u->hold_ns / 1e6);
				Assert(c == lengthof(values));
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
	}
}

Datum
flexlock_statement_locks_1_3(PG_FUNCTION_ARGS)
{
	statement_locks_internal(fcinfo, STMT_API_1_3);
	return (Datum) 0;
}

Datum
flexlock_statement_locks_1_4(PG_FUNCTION_ARGS)
{
	statement_locks_internal(fcinfo, STMT_API_1_4);
	return (Datum) 0;
}

/*
 * flexlock_statements_info(): the deallocations (evictions: 1.3's name),
 * the statements tracked, and when the table was last emptied; 1.4 orders
 * them as pg_stat_statements_info, its two columns first.
 */
static Datum
statements_info_internal(FunctionCallInfo fcinfo, StmtApi api)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {0};
	int64		dealloc;
	int64		statements;
	TimestampTz reset;

	check_loaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	SpinLockAcquire(&stmt_shared->mutex);
	dealloc = stmt_shared->dealloc;
	reset = stmt_shared->stats_reset;
	SpinLockRelease(&stmt_shared->mutex);
	LWLockAcquire(stmt_shared->lock, LW_SHARED);
	statements = hash_get_num_entries(stmt_hash);
	LWLockRelease(stmt_shared->lock);
	values[0] = Int64GetDatum(dealloc);
	if (api >= STMT_API_1_4)
	{
		values[1] = TimestampTzGetDatum(reset);
		values[2] = Int64GetDatum(statements);
	}
	else
	{
		values[1] = Int64GetDatum(statements);
		values[2] = TimestampTzGetDatum(reset);
	}
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

Datum
flexlock_statements_info_1_3(PG_FUNCTION_ARGS)
{
	return statements_info_internal(fcinfo, STMT_API_1_3);
}

Datum
flexlock_statements_info_1_4(PG_FUNCTION_ARGS)
{
	return statements_info_internal(fcinfo, STMT_API_1_4);
}

/*
 * flexlock_statements_reset(userid, dbid, queryid): remove the entries that
 * match (0: any), as pg_stat_statements_reset(); the time of the reset.
 */
Datum
flexlock_statements_reset_1_4(PG_FUNCTION_ARGS)
{
	check_loaded();
	PG_RETURN_TIMESTAMPTZ(entries_reset(PG_GETARG_OID(0), PG_GETARG_OID(1),
										PG_GETARG_INT64(2)));
}

/* flexlock_statements_tracking(): preloaded, and flexlock.track not none */
Datum
flexlock_statements_tracking_1_3(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(stmt_shared != NULL && stmt_track != TRACK_NONE);
}

/*
 * flexlock_query_id(query): the query id of one statement, as core's
 * compute_query_id gives it to the statement when it runs, to find it in
 * flexlock_statements without pg_stat_statements.  The statement is parsed
 * and analyzed, not run; $n parameters take the types they would get from
 * a client that leaves them unspecified, as pgbench's -M extended and
 * prepared do.
 */
Datum
flexlock_query_id_1_3(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	List	   *raw = pg_parse_query(sql);
	Oid		   *types = NULL;
	int			ntypes = 0;
	Query	   *query;

	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("flexlock_query_id() takes one statement, not %d", list_length(raw))));
	if (!IsQueryIdEnabled())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("query ids are not computed"),
				 errhint("Set compute_query_id, or preload flexlock.")));
	query = parse_analyze_varparams(linitial_node(RawStmt, raw), sql, &types, &ntypes, NULL);
	PG_RETURN_INT64(query->queryId);
}

/* --- names --------------------------------------------------------------------- */

/*
 * The lock of a row as pg_stat_activity names what a backend waits for:
 * wait_event_type LWLock (wait_event the tranche), Lock (the lock tag's
 * type), and for the spinlock row Timeout and SpinDelay, as
 * perform_spin_delay() reports its sleeps.  An overflow row has its kind's
 * type, and the wait event "(other)".
 */
static const char *
usage_wait_event_type(const LockUsageEntry *e)
{
	switch (e->kind == LOCKUSAGE_OTHER ? e->id : e->kind)
	{
		case LOCKUSAGE_LWLOCK:
			return "LWLock";
		case LOCKUSAGE_HWLOCK:
			return "Lock";
		case LOCKUSAGE_SPINLOCK:
			return "Timeout";
		default:
			return "?";
	}
}

static const char *
usage_wait_event(const LockUsageEntry *e)
{
	switch (e->kind)
	{
		case LOCKUSAGE_LWLOCK:
		case LOCKUSAGE_HWLOCK:
			return flexlock_usage_lock_name(e);
		case LOCKUSAGE_SPINLOCK:
			return "SpinDelay";
		default:
			return "(other)";
	}
}

const char *
flexlock_usage_kind_name(const LockUsageEntry *e)
{
	/* (an overflow row of flexlock_statements collects one kind: its id) */
	switch (e->kind == LOCKUSAGE_OTHER && e->id != 0 ? e->id : e->kind)
	{
		case LOCKUSAGE_LWLOCK:
			return "lwlock";
		case LOCKUSAGE_HWLOCK:
			return "hwlock";
		case LOCKUSAGE_SPINLOCK:
			return "spinlock";
		default:
			return "other";
	}
}

const char *
flexlock_usage_lock_name(const LockUsageEntry *e)
{
	switch (e->kind)
	{
		case LOCKUSAGE_LWLOCK:
			return LockStatsTrancheName(e->id);
		case LOCKUSAGE_HWLOCK:
			return e->id <= LOCKTAG_LAST_TYPE ? LockTagTypeNames[e->id] : "?";
		case LOCKUSAGE_SPINLOCK:
			return "all sites";
		default:
			return "other locks";
	}
}

const char *
flexlock_usage_mode_name(const LockUsageEntry *e)
{
	static const char *const lw_modes[3] = {"exclusive", "shared", "wait_until_free"};

	switch (e->kind)
	{
		case LOCKUSAGE_LWLOCK:
			return e->mode < 3 ? lw_modes[e->mode] : "?";
		case LOCKUSAGE_HWLOCK:
			return GetLockmodeName(DEFAULT_LOCKMETHOD, e->mode);
		default:
			return "";
	}
}
