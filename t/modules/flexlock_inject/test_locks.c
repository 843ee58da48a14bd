/*-------------------------------------------------------------------------
 *
 * test_locks.c
 *		Locks for the tests of flexlock's statistics to take on purpose.
 *
 * The regression tests (sql/) and the TAP tests need lock events they
 * decide on: an LWLock of their own to hold for a given time or through an
 * injection point, a nested hold, ProcArrayLock held through the state word
 * or through a read-biased slot, and a contended spinlock acquisition at a
 * call site of their naming.  These functions make them.  They used to be
 * part of the flexlock extension (up to its version 1.4), which shipped
 * them to every user; they are for tests only.
 *
 * The test lock lives in the main shared memory segment, allocated from its
 * spare space on first use, at the same address in every process: the
 * read-biased LWLock identifies a lock by its address across processes,
 * which a DSM segment does not give.  Its tranche, "flexlock_test", is
 * assigned once per server and registered in each process that uses it.
 *
 * IDENTIFICATION
 *	  t/modules/flexlock_inject/test_locks.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lockstats.h"
#include "storage/lwlock.h"
#include "storage/s_lock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/injection_point.h"
#include "utils/memutils.h"

/* flexlock_inject.test_lock_read_biased: see flexlock_test_lwlock() */
static bool test_lock_read_biased = false;

extern void flexlock_inject_test_locks_init(void);

void
flexlock_inject_test_locks_init(void)
{
	DefineCustomBoolVariable("flexlock_inject.test_lock_read_biased",
							 "Makes the test lock of flexlock_test_lwlock() read-biased.",
							 "In every session that uses the lock, as if lwlock_read_biased "
							 "could name its tranche: for tests of read-biased LWLocks "
							 "whose counters must come from that lock alone.",
							 &test_lock_read_biased,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("flexlock_inject");
}

/* The test lock and the outer lock of flexlock_test_lwlock_nested() */
typedef struct TestLocks
{
	int			tranche_id;
	int			outer_tranche_id;
	LWLockPadded test;
	LWLockPadded outer;
} TestLocks;

static TestLocks *
test_locks(void)
{
	static TestLocks *locks = NULL;
	bool		found;

	if (locks == NULL)
	{
		LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
		locks = ShmemInitStruct("flexlock_inject test locks",
								sizeof(TestLocks), &found);
		if (!found)
		{
			locks->tranche_id = LWLockNewTrancheId();
			locks->outer_tranche_id = LWLockNewTrancheId();
			LWLockInitialize(&locks->test.lock, locks->tranche_id);
			LWLockInitialize(&locks->outer.lock, locks->outer_tranche_id);
		}
		LWLockRelease(AddinShmemInitLock);
		LWLockRegisterTranche(locks->tranche_id, "flexlock_test");
		LWLockRegisterTranche(locks->outer_tranche_id, "flexlock_test_outer");
	}
	return locks;
}

static void
check_hold_ms(int32 hold_ms)
{
	if (hold_ms < 0 || hold_ms > 600000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hold_ms must be between 0 and 600000")));
}

/*
 * flexlock_test_lwlock(mode, hold_ms): for tests that need an interleaving
 * on an LWLock of their own: acquire the test lock in mode 'shared' or
 * 'exclusive', hold it for hold_ms milliseconds and through the injection
 * point flexlock-test-lwlock-held, release it.  'exclusive_conditional'
 * takes it with LWLockConditionalAcquire() and fails if that does;
 * 'exclusive_conditional_twice' tries twice in a row, and fails if both do
 * (for the read-biased lock's pause after a conditional attempt that found
 * a reader).  With flexlock_inject.test_lock_read_biased on, the lock's
 * tranche is read-biased in the calling process (every process that takes
 * the lock must agree).
 */
PG_FUNCTION_INFO_V1(flexlock_test_lwlock);
Datum
flexlock_test_lwlock(PG_FUNCTION_ARGS)
{
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		hold_ms = PG_GETARG_INT32(1);
	LWLockMode	m;
	TestLocks  *locks;
	int			conditional = 0;

	if (strcmp(mode, "shared") == 0)
		m = LW_SHARED;
	else if (strcmp(mode, "exclusive") == 0)
		m = LW_EXCLUSIVE;
	else if (strcmp(mode, "exclusive_conditional") == 0)
	{
		m = LW_EXCLUSIVE;
		conditional = 1;
	}
	else if (strcmp(mode, "exclusive_conditional_twice") == 0)
	{
		m = LW_EXCLUSIVE;
		conditional = 2;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lock mode \"%s\"", mode),
				 errhint("Valid modes are \"shared\", \"exclusive\", \"exclusive_conditional\" and \"exclusive_conditional_twice\".")));
	check_hold_ms(hold_ms);

	locks = test_locks();
	if (test_lock_read_biased)
		LWLockSetTrancheReadBiased(locks->tranche_id);
	if (!conditional)
		LWLockAcquire(&locks->test.lock, m);
	else if (!LWLockConditionalAcquire(&locks->test.lock, m) &&
			 (conditional == 1 || !LWLockConditionalAcquire(&locks->test.lock, m)))
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("the test lock is not free")));
	if (hold_ms > 0)
		pg_usleep(hold_ms * 1000L);
	/* a test can hold the lock here for as long as it needs */
	INJECTION_POINT("flexlock-test-lwlock-held", NULL);
	LWLockRelease(&locks->test.lock);
	PG_RETURN_VOID();
}

/*
 * flexlock_test_lwlock_nested(hold_ms): for the hold-time tests, a hold that
 * contains a wait and locks released out of order: acquire the outer lock
 * (tranche flexlock_test_outer) exclusively, then the test lock of
 * flexlock_test_lwlock() exclusively, sleeping if another session holds it,
 * hold both for hold_ms milliseconds, and release the outer lock first.
 */
PG_FUNCTION_INFO_V1(flexlock_test_lwlock_nested);
Datum
flexlock_test_lwlock_nested(PG_FUNCTION_ARGS)
{
	int32		hold_ms = PG_GETARG_INT32(0);
	TestLocks  *locks;

	check_hold_ms(hold_ms);
	locks = test_locks();

	LWLockAcquire(&locks->outer.lock, LW_EXCLUSIVE);
	LWLockAcquire(&locks->test.lock, LW_EXCLUSIVE);
	if (hold_ms > 0)
		pg_usleep(hold_ms * 1000L);
	LWLockRelease(&locks->outer.lock);
	LWLockRelease(&locks->test.lock);
	PG_RETURN_VOID();
}

/*
 * flexlock_test_procarray(hold_ms, through): for tests of ProcArrayLock's
 * waiters with lwlock_read_biased: hold ProcArrayLock in shared mode for
 * hold_ms milliseconds, through the state word ('word': right after an
 * exclusive acquisition, which takes any bias away) or through a slot
 * ('slot': acquire and release until an acquisition goes through a slot,
 * which needs the bias to come back, at most 10 s).  Logs when it holds
 * the lock and when it has released it.  A test can hold the lock for as
 * long as it needs at the injection point flexlock-test-procarray-word or
 * flexlock-test-procarray-slot, after hold_ms.
 */
PG_FUNCTION_INFO_V1(flexlock_test_procarray);
Datum
flexlock_test_procarray(PG_FUNCTION_ARGS)
{
	int32		hold_ms = PG_GETARG_INT32(0);
	char	   *through = text_to_cstring(PG_GETARG_TEXT_PP(1));
	uint64		biased;

	check_hold_ms(hold_ms);
	if (strcmp(through, "word") == 0)
	{
		LWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);
		LWLockRelease(ProcArrayLock);
		biased = MyLockStats->counters[LSC_RB_ACQUIRES];
		LWLockAcquire(ProcArrayLock, LW_SHARED);
		if (MyLockStats->counters[LSC_RB_ACQUIRES] != biased)
		{
			LWLockRelease(ProcArrayLock);
			elog(ERROR, "ProcArrayLock was biased again at once");
		}
	}
	else if (strcmp(through, "slot") == 0)
	{
		int			tries = 0;

		for (;;)
		{
			biased = MyLockStats->counters[LSC_RB_ACQUIRES];
			LWLockAcquire(ProcArrayLock, LW_SHARED);
			if (MyLockStats->counters[LSC_RB_ACQUIRES] != biased)
				break;
			LWLockRelease(ProcArrayLock);
			if (++tries > 100000)
				ereport(ERROR,
						(errmsg("ProcArrayLock did not become read-biased"),
						 errhint("Set lwlock_read_biased to include ProcArray.")));
			pg_usleep(100);
		}
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for through: \"%s\"", through),
				 errhint("Valid values are \"word\" and \"slot\".")));
	elog(LOG, "flexlock_test_procarray: holding ProcArrayLock through the %s", through);
	if (hold_ms > 0)
		pg_usleep(hold_ms * 1000L);
	if (strcmp(through, "word") == 0)
		INJECTION_POINT("flexlock-test-procarray-word", NULL);
	else
		INJECTION_POINT("flexlock-test-procarray-slot", NULL);
	LWLockRelease(ProcArrayLock);
	elog(LOG, "flexlock_test_procarray: released ProcArrayLock held through the %s", through);
	PG_RETURN_VOID();
}

/*
 * This process's entry for spin site name, or -1.
 */
static int
own_spin_site(const char *name)
{
	int			j;

	for (j = 0; j < LOCKSTATS_SPIN_SITES; j++)
		if (strncmp(MyLockStats->spin[j].func, name,
					LOCKSTATS_SPIN_SITE_NAMELEN - 1) == 0)
			return j;
	return -1;
}

/*
 * flexlock_test_spin_delay(site, spins, delays): for tests, count a
 * contended spinlock acquisition at the named call site in this process, by
 * calling finish_spin_delay() as s_lock() does when it got the lock after
 * spinning (it also adjusts this process's spin estimate the same way).
 * Returns whether finish_spin_delay() itself attributed the event to the
 * site's entry in the slot: it must not for a site this process has not
 * attributed before, since real callers hold the spinlock then.
 */
PG_FUNCTION_INFO_V1(flexlock_test_spin_delay);
Datum
flexlock_test_spin_delay(PG_FUNCTION_ARGS)
{
	static const char *interned[LOCKSTATS_SPIN_SITES * 2];
	static int	ninterned = 0;
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		spins = PG_GETARG_INT32(1);
	int32		delays = PG_GETARG_INT32(2);
	const char *func = NULL;
	SpinDelayStatus status;
	uint64		before = 0;
	int			j,
				k;

	if (name[0] == '\0' || strlen(name) >= LOCKSTATS_SPIN_SITE_NAMELEN)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("spin site name must have 1 to %d bytes",
						LOCKSTATS_SPIN_SITE_NAMELEN - 1)));
	if (spins < 1 || delays < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("spins must be at least 1 and delays at least 0")));

	/* a call site is a pointer that stays the same: intern the name */
	for (k = 0; k < ninterned; k++)
		if (strcmp(interned[k], name) == 0)
			func = interned[k];
	if (func == NULL)
	{
		if (ninterned == lengthof(interned))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many test spin sites in one session")));
		func = interned[ninterned++] = MemoryContextStrdup(TopMemoryContext, name);
	}

	j = own_spin_site(func);
	if (j >= 0)
		before = MyLockStats->spin[j].contended;

	init_spin_delay(&status, __FILE__, __LINE__, func);
	status.spins = spins;
	status.delays = delays;
	status.cur_delay = delays > 0 ? 1000 : 0;
	finish_spin_delay(&status);

	j = own_spin_site(func);
	PG_RETURN_BOOL(j >= 0 && MyLockStats->spin[j].contended != before);
}
