/*-------------------------------------------------------------------------
 *
 * flexlock_inject.c
 *		Injection point actions for flexlock's TAP tests.
 *
 * The actions of the injection_points test module either return at once or
 * sleep on a condition variable.  A test that forces an interleaving inside
 * a critical section needs a third kind: the process stops there as if the
 * kernel had descheduled it, without sleeping on a latch (which is not
 * allowed in the critical section of WAL insertion, see
 * AdvanceXLInsertBufferLockFree()) and without allocating memory.  The
 * action here sends the process SIGSTOP to itself; the test sees it stopped
 * in /proc and resumes it with SIGCONT.
 *
 * A process stops at most once per point: after SIGCONT it runs on through
 * the point however often it passes it again, even though the callback
 * stays in its local cache of injection points (INJECTION_POINT_CACHED
 * does not look at the shared state).
 *
 * The points must be loaded before the critical section
 * (INJECTION_POINT_LOAD); the code under test does that.
 *
 * Two functions more force queues on PostgreSQL's own LWLocks, for tests
 * whose subject is what happens to the processes queued there (where their
 * sleeps are counted, whom a release wakes): flexlock_inject_hold_lwlock()
 * holds an individual LWLock (WALWrite, say) through an injection point of
 * its own, so that the test decides when the release comes, and
 * flexlock_inject_lwlock_waiting() tells whether a process is still on an
 * LWLock's wait list, which a test reads of processes it has stopped with
 * SIGSTOP in their sleep: a release that woke one has taken it off the list
 * although it has not run since.
 *
 * test_locks.c has the locks the regression tests take on purpose (the test
 * LWLock, ProcArrayLock held through a read-bias slot, a made-up contended
 * spinlock).  The module builds on any flexlock-patched build; the actions
 * on injection points need one configured with them (cassert here).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "utils/builtins.h"
#include "utils/injection_point.h"
#include "utils/wait_event.h"

PG_MODULE_MAGIC;

/* test_locks.c */
extern void flexlock_inject_test_locks_init(void);

void
_PG_init(void)
{
	flexlock_inject_test_locks_init();
}

#define MAX_STOPPED_POINTS	16

/* the points this process has stopped at already (no allocation) */
static char stopped_at[MAX_STOPPED_POINTS][64];
static int	nstopped = 0;

extern PGDLLEXPORT void flexlock_inject_stop_cb(const char *name,
												const void *private_data,
												void *arg);

/* which processes stop at a point: its private data */
#define MAX_STOP_PIDS	4
typedef struct StopPids
{
	int			n;
	int			pids[MAX_STOP_PIDS];
} StopPids;

void
flexlock_inject_stop_cb(const char *name, const void *private_data, void *arg)
{
	const StopPids *p = (const StopPids *) private_data;
	bool		mine = false;

	for (int i = 0; i < p->n; i++)
		if (p->pids[i] == MyProcPid)
			mine = true;
	if (!mine)
		return;
	for (int i = 0; i < nstopped; i++)
	{
		if (strcmp(stopped_at[i], name) == 0)
			return;
	}
	if (nstopped < MAX_STOPPED_POINTS)
		strlcpy(stopped_at[nstopped++], name, sizeof(stopped_at[0]));
	kill(MyProcPid, SIGSTOP);
}

PG_FUNCTION_INFO_V1(flexlock_inject_stop_once);
Datum
flexlock_inject_stop_once(PG_FUNCTION_ARGS)
{
#ifdef USE_INJECTION_POINTS
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StopPids	p = {0};

	/* the pid, and up to three more (for two processes at one point) */
	for (int i = 1; i < PG_NARGS() && p.n < MAX_STOP_PIDS; i++)
		if (!PG_ARGISNULL(i) && PG_GETARG_INT32(i) != 0)
			p.pids[p.n++] = PG_GETARG_INT32(i);
	InjectionPointAttach(name, "flexlock_inject", "flexlock_inject_stop_cb",
						 &p, sizeof(p));
	PG_RETURN_VOID();
#else
	elog(ERROR, "injection points are not supported by this build");
#endif
}

PG_FUNCTION_INFO_V1(flexlock_inject_detach);
Datum
flexlock_inject_detach(PG_FUNCTION_ARGS)
{
#ifdef USE_INJECTION_POINTS
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));

	if (!InjectionPointDetach(name))
		elog(ERROR, "could not detach injection point \"%s\"", name);
	PG_RETURN_VOID();
#else
	elog(ERROR, "injection points are not supported by this build");
#endif
}

/*
 * The index in MainLWLockArray of the individual LWLock of that name (as
 * pg_stat_activity names its waiters: 'WALWrite'), or an error.
 */
static int
individual_lwlock(text *name_text)
{
	char	   *name = text_to_cstring(name_text);

	for (int i = 0; i < NUM_INDIVIDUAL_LWLOCKS; i++)
	{
		const char *lock_name = GetLWLockIdentifier(PG_WAIT_LWLOCK, (uint16) i);

		/* (the ids of individual locks that were removed have no name) */
		if (lock_name != NULL && strcmp(lock_name, name) == 0)
			return i;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("\"%s\" is not the name of an individual LWLock", name)));
	pg_unreachable();
}

/*
 * flexlock_inject_hold_lwlock(name): acquire the individual LWLock of that
 * name (as pg_stat_activity names its waiters: 'WALWrite') exclusively,
 * run the injection point flexlock-inject-lwlock-held, and release it.
 * A test attaches the injection_points module's wait action to the point,
 * local to the holding session, and wakes it when the queue it wanted has
 * formed.  Interrupts are held off meanwhile, as always with an LWLock held.
 */
PG_FUNCTION_INFO_V1(flexlock_inject_hold_lwlock);
Datum
flexlock_inject_hold_lwlock(PG_FUNCTION_ARGS)
{
	LWLock	   *lock = &MainLWLockArray[individual_lwlock(PG_GETARG_TEXT_PP(0))].lock;

	LWLockAcquire(lock, LW_EXCLUSIVE);
	INJECTION_POINT("flexlock-inject-lwlock-held", NULL);
	LWLockRelease(lock);
	PG_RETURN_VOID();
}

/*
 * flexlock_inject_lwlock_at(point, name, pid): attach an action to the
 * injection point that acquires the individual LWLock of that name
 * exclusively and releases it, in process pid only: a test makes code that
 * takes no other lock take one there (flexlock's writing of its rows, whose
 * own lock's events are all LockUsageSkip() expects).
 */
typedef struct TakeLock
{
	int			pid;
	int			lock;			/* index in MainLWLockArray */
} TakeLock;

extern PGDLLEXPORT void flexlock_inject_lwlock_cb(const char *name,
												  const void *private_data,
												  void *arg);

void
flexlock_inject_lwlock_cb(const char *name, const void *private_data, void *arg)
{
	const TakeLock *t = (const TakeLock *) private_data;

	if (t->pid != MyProcPid)
		return;
	LWLockAcquire(&MainLWLockArray[t->lock].lock, LW_EXCLUSIVE);
	LWLockRelease(&MainLWLockArray[t->lock].lock);
}

PG_FUNCTION_INFO_V1(flexlock_inject_lwlock_at);
Datum
flexlock_inject_lwlock_at(PG_FUNCTION_ARGS)
{
#ifdef USE_INJECTION_POINTS
	char	   *point = text_to_cstring(PG_GETARG_TEXT_PP(0));
	TakeLock	t = {.pid = PG_GETARG_INT32(2),
	.lock = individual_lwlock(PG_GETARG_TEXT_PP(1))};

	InjectionPointAttach(point, "flexlock_inject", "flexlock_inject_lwlock_cb",
						 &t, sizeof(t));
	PG_RETURN_VOID();
#else
	elog(ERROR, "injection points are not supported by this build");
#endif
}

/*
 * flexlock_inject_lwlock_waiting(pid): whether the process of that pid is
 * on the wait list of an LWLock (lwWaiting is LW_WS_WAITING).  A releaser
 * that wakes a process sets it to LW_WS_PENDING_WAKEUP under the list's
 * lock and to LW_WS_NOT_WAITING just before it unlocks the process's
 * semaphore, so once that release has returned, a woken process reads as
 * not waiting whether or not it has run since.  Read without a lock: the
 * caller knows the release has returned (it waited for its session).
 */
PG_FUNCTION_INFO_V1(flexlock_inject_lwlock_waiting);
Datum
flexlock_inject_lwlock_waiting(PG_FUNCTION_ARGS)
{
	int			pid = PG_GETARG_INT32(0);
	PGPROC	   *proc = BackendPidGetProc(pid);

	if (proc == NULL)
		proc = AuxiliaryPidGetProc(pid);
	if (proc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("PID %d is not a PostgreSQL server process", pid)));
	PG_RETURN_BOOL(proc->lwWaiting == LW_WS_WAITING);
}
