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
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/injection_point.h"

PG_MODULE_MAGIC;

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
