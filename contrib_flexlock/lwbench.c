/*-------------------------------------------------------------------------
 *
 * lwbench.c
 *		Hammer one LWLock from many background workers: a torture test
 *		that checks the lock's invariants, and a micro-benchmark.
 *
 * The lock lives in the main shared memory segment, at the same address in
 * every process (lock types such as read-biased LWLocks identify a lock by
 * its address across processes, which a DSM segment does not give), in a
 * tranche of its own ("flexlock_lwbench"), so that nothing else in the
 * server touches it; the rest of a run's state is in a DSM segment made for
 * the run.  Runs at the same time share the lock, which is safe.  Each
 * worker loops until the run's end time: it picks an operation from the
 * configured mix (shared, exclusive, conditional, or wait-until-free
 * acquisition), performs it, and releases.
 *
 * Torture mode checks, on every acquisition, that no exclusive holder
 * coexists with a shared one and that there is at most one exclusive holder:
 * holders announce themselves in two atomic counters after acquiring and
 * withdraw before releasing; since every update is a full barrier, of two
 * holders that overlap at least one sees the other.  Exclusive holders also
 * write two words that shared holders must find equal.  Every acquisition
 * is timed; the longest wait is reported.  A waiter that is never woken
 * cannot report anything, so the leader gives the workers a bound after the
 * end of the run and fails the run if any worker has not finished by then.
 * A lost wakeup seldom lasts under load, though: whoever takes and releases
 * the lock next wakes the waiters.  So the torture run is cut into rounds
 * of LWBENCH_ROUND_US, and at the end of each round every worker waits for
 * all the others without touching the lock: a waiter whose wakeup was lost
 * then stays asleep, the round never completes, and the run fails.
 *
 * The algorithm for shared acquisitions is chosen per worker by setting
 * lwlock_shared_add in the worker: "exchange" (off, stock), "fetch_add"
 * (on), or "mixed" (even workers one, odd workers the other), which tests
 * that both are safe side by side.  "readbiased" makes the run's tranche
 * read-biased in every worker (lwlock_read_biased, for a tranche that
 * setting cannot name).
 *
 * flexlock_bench_lwlock_writer() measures what an exclusive acquisition
 * costs while readers hammer the lock: one worker of the run is a writer
 * that takes the lock exclusively every interval_us and times it.
 *
 * Copyright (c) 2026, flexlock authors
 *
 * IDENTIFICATION
 *	  contrib_flexlock/lwbench.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/pg_prng.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/dsm_registry.h"
#include "storage/latch.h"
#include "storage/lockstats.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#include "flexlock.h"

#define LWBENCH_MAX_WORKERS		1024
#define LWBENCH_ROUND_US		20000

typedef enum LWBenchAlgorithm
{
	LWBENCH_EXCHANGE,
	LWBENCH_FETCH_ADD,
	LWBENCH_MIXED,
	LWBENCH_READ_BIASED,
}			LWBenchAlgorithm;

static const char *const lwbench_algorithm_names[] = {
	"exchange", "fetch_add", "mixed", "readbiased"
};

/* What one worker did; written by the worker only, read after it is done */
typedef struct LWBenchResult
{
	uint64		shared;
	uint64		exclusive;
	uint64		cond_acquired;
	uint64		cond_failed;
	uint64		until_free;
	uint64		max_wait_ns;
	uint64		elapsed_ns;
	uint64		cas_retries;
	uint64		sleeps;
	uint64		backouts;
	uint64		backout_wakeups;
	uint64		exclusive_ns;	/* the writer's: time in its acquisitions */
	pg_atomic_uint32 done;
}			LWBenchResult;

typedef struct LWBenchShared
{
	LWLock	   *lock;			/* the lock under test (main shared memory) */
	int			nworkers;
	int			pct_shared;		/* the mix, in percent (sums to 100) */
	int			pct_exclusive;
	int			pct_conditional;
	int			pct_until_free;
	LWBenchAlgorithm algorithm;
	bool		torture;		/* check invariants and time every wait */
	int			writer_interval_us; /* > 0: the last worker is a writer */
	int64		duration_us;
	pg_atomic_uint32 ready;		/* workers attached and waiting to start */
	pg_atomic_uint64 end_time_us;	/* 0 until started */
	pg_atomic_uint32 shared_holders;
	pg_atomic_uint32 exclusive_holders;
	pg_atomic_uint64 violations;
	pg_atomic_uint32 barrier;	/* arrivals at round ends (torture) */
	uint64		word1;			/* written by exclusive holders */
	uint64		word2;
	LWBenchResult results[FLEXIBLE_ARRAY_MEMBER];
}			LWBenchShared;

/* The tranche of every run's lock, assigned once per server */
typedef struct LWBenchTranche
{
	int			tranche_id;
}			LWBenchTranche;

PGDLLEXPORT void flexlock_lwbench_main(Datum main_arg);

PG_FUNCTION_INFO_V1(flexlock_torture_lwlock);
PG_FUNCTION_INFO_V1(flexlock_bench_lwlock);
PG_FUNCTION_INFO_V1(flexlock_bench_lwlock_writer);

static void
lwbench_init_tranche(void *ptr)
{
	((LWBenchTranche *) ptr)->tranche_id = LWLockNewTrancheId();
}

static int
lwbench_tranche(void)
{
	bool		found;
	LWBenchTranche *t;

	t = GetNamedDSMSegment("flexlock_lwbench", sizeof(LWBenchTranche),
						   lwbench_init_tranche, &found);
	LWLockRegisterTranche(t->tranche_id, "flexlock_lwbench");
	return t->tranche_id;
}

/*
 * The benchmark's lock, in the main shared memory segment, allocated from
 * its spare space on first use.
 */
typedef struct LWBenchLocks
{
	LWLockPadded bench;
}			LWBenchLocks;

static LWBenchLocks *
lwbench_locks(void)
{
	static LWBenchLocks *locks = NULL;
	bool		found;

	if (locks == NULL)
	{
		int			tranche_id = lwbench_tranche();

		LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
		locks = ShmemInitStruct("flexlock lwbench locks",
								sizeof(LWBenchLocks), &found);
		if (!found)
		{
			LWLockInitialize(&locks->bench.lock, tranche_id);
		}
		LWLockRelease(AddinShmemInitLock);
	}
	return locks;
}

static uint64
now_us(void)
{
	instr_time	t;

	INSTR_TIME_SET_CURRENT(t);
	return INSTR_TIME_GET_MICROSEC(t);
}

/* Sleep on our latch for a few milliseconds, then check for interrupts */
static void
lwbench_nap(long ms)
{
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* Torture checks around the critical section */
static inline void
check_shared(LWBenchShared * sh)
{
	pg_atomic_fetch_add_u32(&sh->shared_holders, 1);
	if (pg_atomic_read_u32(&sh->exclusive_holders) != 0 ||
		sh->word1 != sh->word2)
		pg_atomic_fetch_add_u64(&sh->violations, 1);
	pg_atomic_fetch_sub_u32(&sh->shared_holders, 1);
}

static inline void
check_exclusive(LWBenchShared * sh)
{
	if (pg_atomic_fetch_add_u32(&sh->exclusive_holders, 1) != 0 ||
		pg_atomic_read_u32(&sh->shared_holders) != 0)
		pg_atomic_fetch_add_u64(&sh->violations, 1);
	sh->word1++;
	pg_compiler_barrier();
	sh->word2 = sh->word1;
	pg_atomic_fetch_sub_u32(&sh->exclusive_holders, 1);
}

void
flexlock_lwbench_main(Datum main_arg)
{
	dsm_segment *seg;
	LWBenchShared *sh;
	LWBenchResult *res;
	int			me;
	bool		fetch_add;
	pg_prng_state prng;
	LockStatsLWLock *st;
	LockStatsLWLock st0;
	uint64		backouts0,
				wakeups0;
	uint64		end_us;
	uint64		next_round_us;
	uint32		round = 0;
	instr_time	t_start,
				t_end;
	uint64		n = 0;
	bool		is_writer;

	BackgroundWorkerUnblockSignals();

	seg = dsm_attach(DatumGetUInt32(main_arg));
	if (seg == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("flexlock_lwbench: could not attach to the run's shared memory")));
	sh = (LWBenchShared *) dsm_segment_address(seg);
	memcpy(&me, MyBgworkerEntry->bgw_extra, sizeof(int));
	res = &sh->results[me];
	is_writer = sh->writer_interval_us > 0 && me == sh->nworkers - 1;

	fetch_add = sh->algorithm == LWBENCH_FETCH_ADD ||
		(sh->algorithm == LWBENCH_MIXED && me % 2 == 1);
	/* a worker has no user to check privileges of: not a client setting */
	SetConfigOption("lwlock_shared_add", fetch_add ? "on" : "off",
					PGC_SUSET, PGC_S_OVERRIDE);
	if (sh->algorithm == LWBENCH_READ_BIASED)
		LWLockSetTrancheReadBiased(sh->lock->tranche);
	pg_prng_seed(&prng, (uint64) me * 7919 + 17);

	st = &MyLockStats->lwlock[LockStatsTrancheIndex(sh->lock->tranche)];
	st0 = *st;
	backouts0 = MyLockStats->counters[LSC_SHAREDADD_BACKOUTS];
	wakeups0 = MyLockStats->counters[LSC_SHAREDADD_BACKOUT_WAKEUPS];

	/* Wait for the leader's start signal */
	pg_atomic_fetch_add_u32(&sh->ready, 1);
	while ((end_us = pg_atomic_read_u64(&sh->end_time_us)) == 0)
	{
		lwbench_nap(1);
	}

	INSTR_TIME_SET_CURRENT(t_start);
	next_round_us = now_us() + LWBENCH_ROUND_US;

	/* the writer of flexlock_bench_lwlock_writer() */
	while (is_writer)
	{
		instr_time	w0,
					w1;
		uint64		took;

		CHECK_FOR_INTERRUPTS();
		if (now_us() >= end_us)
			break;
		pg_usleep(sh->writer_interval_us);
		INSTR_TIME_SET_CURRENT(w0);
		LWLockAcquire(sh->lock, LW_EXCLUSIVE);
		INSTR_TIME_SET_CURRENT(w1);
		sh->word1++;
		LWLockRelease(sh->lock);
		INSTR_TIME_SUBTRACT(w1, w0);
		took = INSTR_TIME_GET_NANOSEC(w1);
		res->exclusive++;
		res->exclusive_ns += took;
		res->max_wait_ns = Max(res->max_wait_ns, took);
	}

	while (!is_writer)
	{
		uint32		r;
		instr_time	w0,
					w1;

		/* look at the clock every 64 operations */
		if ((n++ & 63) == 0)
		{
			uint64		now = now_us();

			CHECK_FOR_INTERRUPTS();
			if (now >= end_us)
				break;
			if (sh->torture && now >= next_round_us)
			{
				/* end of a round: wait for everyone, away from the lock */
				round++;
				pg_atomic_fetch_add_u32(&sh->barrier, 1);
				while (pg_atomic_read_u32(&sh->barrier) < round * sh->nworkers &&
					   now_us() < end_us)
				{
					CHECK_FOR_INTERRUPTS();
					pg_usleep(100);
				}
				/* past the end: leave a stuck waiter stuck */
				if (now_us() >= end_us)
					break;
				next_round_us = now_us() + LWBENCH_ROUND_US;
			}
		}

		r = pg_prng_uint32(&prng) % 100;
		if (sh->torture)
			INSTR_TIME_SET_CURRENT(w0);

		if (r < sh->pct_shared)
		{
			LWLockAcquire(sh->lock, LW_SHARED);
			res->shared++;
			if (sh->torture)
				check_shared(sh);
			LWLockRelease(sh->lock);
		}
		else if (r < sh->pct_shared + sh->pct_exclusive)
		{
			LWLockAcquire(sh->lock, LW_EXCLUSIVE);
			res->exclusive++;
			if (sh->torture)
				check_exclusive(sh);
			else
				sh->word1++;
			LWLockRelease(sh->lock);
		}
		else if (r < sh->pct_shared + sh->pct_exclusive + sh->pct_conditional)
		{
			LWLockMode	mode = (r & 1) ? LW_SHARED : LW_EXCLUSIVE;

			if (LWLockConditionalAcquire(sh->lock, mode))
			{
				res->cond_acquired++;
				if (sh->torture)
				{
					if (mode == LW_SHARED)
						check_shared(sh);
					else
						check_exclusive(sh);
				}
				LWLockRelease(sh->lock);
			}
			else
				res->cond_failed++;
		}
		else
		{
			/* wait until the lock is free, or take it if it is */
			if (LWLockAcquireOrWait(sh->lock, LW_EXCLUSIVE))
			{
				if (sh->torture)
					check_exclusive(sh);
				LWLockRelease(sh->lock);
			}
			res->until_free++;
		}

		if (sh->torture)
		{
			uint64		waited;

			INSTR_TIME_SET_CURRENT(w1);
			INSTR_TIME_SUBTRACT(w1, w0);
			waited = INSTR_TIME_GET_NANOSEC(w1);
			if (waited > res->max_wait_ns)
				res->max_wait_ns = waited;
		}
	}
	INSTR_TIME_SET_CURRENT(t_end);
	INSTR_TIME_SUBTRACT(t_end, t_start);
	res->elapsed_ns = INSTR_TIME_GET_NANOSEC(t_end);

	res->cas_retries = st->cas_retries - st0.cas_retries;
	res->sleeps = (st->block[LW_EXCLUSIVE] - st0.block[LW_EXCLUSIVE]) +
		(st->block[LW_SHARED] - st0.block[LW_SHARED]) +
		(st->block[LW_WAIT_UNTIL_FREE] - st0.block[LW_WAIT_UNTIL_FREE]);
	res->backouts = MyLockStats->counters[LSC_SHAREDADD_BACKOUTS] - backouts0;
	res->backout_wakeups =
		MyLockStats->counters[LSC_SHAREDADD_BACKOUT_WAKEUPS] - wakeups0;
	pg_atomic_write_u32(&res->done, 1);

	dsm_detach(seg);
}

static LWBenchAlgorithm
parse_algorithm(const char *s, bool allow_both, bool *both)
{
	*both = false;
	if (strcmp(s, "exchange") == 0)
		return LWBENCH_EXCHANGE;
	if (strcmp(s, "fetch_add") == 0)
		return LWBENCH_FETCH_ADD;
	if (strcmp(s, "mixed") == 0)
		return LWBENCH_MIXED;
	if (strcmp(s, "readbiased") == 0)
		return LWBENCH_READ_BIASED;
	if (allow_both && strcmp(s, "both") == 0)
	{
		*both = true;
		return LWBENCH_EXCHANGE;
	}
	if (allow_both && strcmp(s, "all") == 0)
	{
		*both = true;
		return LWBENCH_READ_BIASED;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid algorithm \"%s\"", s),
			 errhint(allow_both ?
					 "Valid algorithms are \"exchange\", \"fetch_add\", \"mixed\", \"readbiased\", \"both\" and \"all\"." :
					 "Valid algorithms are \"exchange\", \"fetch_add\", \"mixed\" and \"readbiased\".")));
	pg_unreachable();
}

static void
check_args(const char *fn, int workers, double seconds)
{
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be superuser to run %s", fn)));
	if (workers < 1 || workers > LWBENCH_MAX_WORKERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("workers must be between 1 and %d", LWBENCH_MAX_WORKERS)));
	if (workers > max_worker_processes)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("workers (%d) exceeds \"max_worker_processes\" (%d)",
						workers, max_worker_processes),
				 errhint("Raise \"max_worker_processes\" and restart the server.")));
	if (!(seconds > 0 && seconds <= 3600))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("seconds must be greater than 0 and at most 3600")));
}

static void
check_percent(const char *name, int v)
{
	if (v < 0 || v > 100)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be between 0 and 100", name)));
}

/* The leader's part of a run; fills sh->results, or errors out */
static void
lwbench_run(LWBenchShared * sh, dsm_segment *seg, int wait_bound_ms)
{
	BackgroundWorkerHandle **handles;
	volatile int started = 0;
	int			i;
	uint64		deadline;

	handles = palloc0(sizeof(BackgroundWorkerHandle *) * sh->nworkers);

	PG_TRY();
	{
		for (i = 0; i < sh->nworkers; i++)
		{
			BackgroundWorker w = {0};

			w.bgw_flags = BGWORKER_SHMEM_ACCESS;
			w.bgw_start_time = BgWorkerStart_ConsistentState;
			w.bgw_restart_time = BGW_NEVER_RESTART;
			snprintf(w.bgw_library_name, BGW_MAXLEN, "flexlock");
			snprintf(w.bgw_function_name, BGW_MAXLEN, "flexlock_lwbench_main");
			snprintf(w.bgw_name, BGW_MAXLEN, "flexlock lwbench worker %d", i);
			snprintf(w.bgw_type, BGW_MAXLEN, "flexlock lwbench worker");
			w.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(seg));
			memcpy(w.bgw_extra, &i, sizeof(int));
			w.bgw_notify_pid = MyProcPid;
			if (!RegisterDynamicBackgroundWorker(&w, &handles[i]))
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
						 errmsg("could not start background worker %d of %d", i + 1, sh->nworkers),
						 errhint("Free background worker slots or raise \"max_worker_processes\".")));
			started++;
		}

		/* all attached: start them at once */
		deadline = now_us() + 60 * USECS_PER_SEC;
		while (pg_atomic_read_u32(&sh->ready) < (uint32) sh->nworkers)
		{
			for (i = 0; i < sh->nworkers; i++)
			{
				pid_t		pid;

				if (GetBackgroundWorkerPid(handles[i], &pid) == BGWH_STOPPED &&
					pg_atomic_read_u32(&sh->results[i].done) == 0)
					ereport(ERROR,
							(errmsg("background worker %d exited before the run started", i)));
			}
			if (now_us() > deadline)
				ereport(ERROR,
						(errmsg("background workers did not start within 60 s")));
			lwbench_nap(10);
		}
		pg_atomic_write_u64(&sh->end_time_us, now_us() + sh->duration_us);

		/* wait for the end, then at most wait_bound_ms for every worker */
		deadline = now_us() + sh->duration_us + (uint64) wait_bound_ms * 1000;
		for (;;)
		{
			int			done = 0;

			for (i = 0; i < sh->nworkers; i++)
			{
				pid_t		pid;

				if (pg_atomic_read_u32(&sh->results[i].done))
					done++;
				else if (GetBackgroundWorkerPid(handles[i], &pid) == BGWH_STOPPED)
					ereport(ERROR,
							(errmsg("background worker %d exited before finishing its run", i),
							 errhint("See the server log.")));
			}
			if (done == sh->nworkers)
				break;
			if (now_us() > deadline)
				ereport(ERROR,
						(errmsg("%d of %d workers did not finish within %d ms after the end of the run",
								sh->nworkers - done, sh->nworkers, wait_bound_ms),
						 errdetail("A worker waiting for the lock was never woken: a lost wakeup.")));
			lwbench_nap(10);
		}
	}
	PG_CATCH();
	{
		/*
		 * End the run now, give the workers that still run a moment to
		 * finish, and only then terminate those that have not: they are
		 * asleep on the lock (SIGTERM makes a worker exit at once, which is
		 * harmless once nobody else touches the lock, but not while others
		 * do).  The DSM segment goes away when the last of them detaches.
		 */
		pg_atomic_write_u64(&sh->end_time_us, 1);
		deadline = now_us() + 5 * USECS_PER_SEC;
		for (;;)
		{
			int			done = 0;

			for (i = 0; i < started; i++)
				done += pg_atomic_read_u32(&sh->results[i].done);
			if (done == started || now_us() > deadline)
				break;
			pg_usleep(10000);
		}
		for (i = 0; i < started; i++)
			if (!pg_atomic_read_u32(&sh->results[i].done))
				TerminateBackgroundWorker(handles[i]);
		PG_RE_THROW();
	}
	PG_END_TRY();

	/* let the workers exit, so that the next run finds their slots free */
	for (i = 0; i < sh->nworkers; i++)
		(void) WaitForBackgroundWorkerShutdown(handles[i]);
}

static LWBenchShared *
lwbench_setup(dsm_segment **seg, int workers, double seconds, bool torture,
			  LWBenchAlgorithm algorithm, int pct_shared, int pct_exclusive,
			  int pct_conditional, int pct_until_free)
{
	Size		size = add_size(offsetof(LWBenchShared, results),
								mul_size(sizeof(LWBenchResult), workers));
	LWBenchShared *sh;
	int			i;

	*seg = dsm_create(size, 0);
	sh = (LWBenchShared *) dsm_segment_address(*seg);
	memset(sh, 0, size);
	sh->lock = &lwbench_locks()->bench.lock;
	sh->nworkers = workers;
	sh->pct_shared = pct_shared;
	sh->pct_exclusive = pct_exclusive;
	sh->pct_conditional = pct_conditional;
	sh->pct_until_free = pct_until_free;
	sh->algorithm = algorithm;
	sh->torture = torture;
	sh->duration_us = (int64) (seconds * USECS_PER_SEC);
	pg_atomic_init_u32(&sh->ready, 0);
	pg_atomic_init_u64(&sh->end_time_us, 0);
	pg_atomic_init_u32(&sh->shared_holders, 0);
	pg_atomic_init_u32(&sh->exclusive_holders, 0);
	pg_atomic_init_u64(&sh->violations, 0);
	pg_atomic_init_u32(&sh->barrier, 0);
	for (i = 0; i < workers; i++)
		pg_atomic_init_u32(&sh->results[i].done, 0);
	return sh;
}

/* Sum of the workers' results */
static LWBenchResult
lwbench_sum(LWBenchShared * sh)
{
	LWBenchResult s = {0};
	int			i;

	for (i = 0; i < sh->nworkers; i++)
	{
		LWBenchResult *r = &sh->results[i];

		s.shared += r->shared;
		s.exclusive += r->exclusive;
		s.cond_acquired += r->cond_acquired;
		s.cond_failed += r->cond_failed;
		s.until_free += r->until_free;
		s.max_wait_ns = Max(s.max_wait_ns, r->max_wait_ns);
		s.elapsed_ns += r->elapsed_ns;
		s.cas_retries += r->cas_retries;
		s.sleeps += r->sleeps;
		s.backouts += r->backouts;
		s.backout_wakeups += r->backout_wakeups;
		s.exclusive_ns += r->exclusive_ns;
	}
	return s;
}

/*
 * flexlock_torture_lwlock(workers, seconds, shared_percent, exclusive_percent,
 *     conditional_percent, wait_until_free_percent, algorithm, wait_bound_ms)
 */
Datum
flexlock_torture_lwlock(PG_FUNCTION_ARGS)
{
	int			workers = PG_GETARG_INT32(0);
	double		seconds = PG_GETARG_FLOAT8(1);
	int			pct_shared = PG_GETARG_INT32(2);
	int			pct_exclusive = PG_GETARG_INT32(3);
	int			pct_conditional = PG_GETARG_INT32(4);
	int			pct_until_free = PG_GETARG_INT32(5);
	char	   *alg = text_to_cstring(PG_GETARG_TEXT_PP(6));
	int			wait_bound_ms = PG_GETARG_INT32(7);
	bool		both;
	LWBenchAlgorithm algorithm;
	dsm_segment *seg;
	LWBenchShared *sh;
	LWBenchResult s;
	TupleDesc	tupdesc;
	Datum		values[12];
	bool		nulls[12] = {0};

	check_args("flexlock_torture_lwlock", workers, seconds);
	check_percent("shared_percent", pct_shared);
	check_percent("exclusive_percent", pct_exclusive);
	check_percent("conditional_percent", pct_conditional);
	check_percent("wait_until_free_percent", pct_until_free);
	if (pct_shared + pct_exclusive + pct_conditional + pct_until_free != 100)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the four percentages must add up to 100")));
	if (wait_bound_ms < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("wait_bound_ms must be at least 1")));
	algorithm = parse_algorithm(alg, false, &both);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	sh = lwbench_setup(&seg, workers, seconds, true, algorithm, pct_shared,
					   pct_exclusive, pct_conditional, pct_until_free);
	lwbench_run(sh, seg, wait_bound_ms);
	s = lwbench_sum(sh);

	values[0] = Int64GetDatum(s.shared + s.exclusive + s.cond_acquired + s.until_free);
	values[1] = Int64GetDatum(s.shared);
	values[2] = Int64GetDatum(s.exclusive);
	values[3] = Int64GetDatum(s.cond_acquired);
	values[4] = Int64GetDatum(s.cond_failed);
	values[5] = Int64GetDatum(s.until_free);
	values[6] = Int64GetDatum(pg_atomic_read_u64(&sh->violations));
	values[7] = Float8GetDatum(s.max_wait_ns / 1e6);
	values[8] = Int64GetDatum(s.sleeps);
	values[9] = Int64GetDatum(s.cas_retries);
	values[10] = Int64GetDatum(s.backouts);
	values[11] = Int64GetDatum(s.backout_wakeups);
	dsm_detach(seg);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * flexlock_bench_lwlock(workers, seconds, shared_percent, algorithm): the
 * rest of the mix is exclusive.  "both" runs exchange, then fetch_add, each
 * for the given seconds, and returns a row for each; "all" runs exchange,
 * fetch_add and readbiased.
 */
Datum
flexlock_bench_lwlock(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			workers = PG_GETARG_INT32(0);
	double		seconds = PG_GETARG_FLOAT8(1);
	int			pct_shared = PG_GETARG_INT32(2);
	char	   *alg = text_to_cstring(PG_GETARG_TEXT_PP(3));
	bool		both;
	LWBenchAlgorithm first;
	LWBenchAlgorithm runs[3];
	int			nruns;
	int			run;

	check_args("flexlock_bench_lwlock", workers, seconds);
	check_percent("shared_percent", pct_shared);
	first = parse_algorithm(alg, true, &both);
	runs[0] = both ? LWBENCH_EXCHANGE : first;
	runs[1] = LWBENCH_FETCH_ADD;
	runs[2] = LWBENCH_READ_BIASED;
	nruns = !both ? 1 : first == LWBENCH_READ_BIASED ? 3 : 2;

	InitMaterializedSRF(fcinfo, 0);

	for (run = 0; run < nruns; run++)
	{
		LWBenchAlgorithm algorithm = runs[run];
		dsm_segment *seg;
		LWBenchShared *sh;
		LWBenchResult s;
		uint64		acquisitions;
		Datum		values[7];
		bool		nulls[7] = {0};

		sh = lwbench_setup(&seg, workers, seconds, false, algorithm,
						   pct_shared, 100 - pct_shared, 0, 0);
		lwbench_run(sh, seg, 10000);
		s = lwbench_sum(sh);
		acquisitions = s.shared + s.exclusive;

		values[0] = CStringGetTextDatum(lwbench_algorithm_names[algorithm]);
		values[1] = Int64GetDatum(acquisitions);
		values[2] = Float8GetDatum(acquisitions / seconds);
		values[3] = Float8GetDatum(acquisitions > 0 ? (double) s.elapsed_ns / acquisitions : 0);
		values[4] = Int64GetDatum(s.cas_retries);
		values[5] = Int64GetDatum(s.backouts);
		values[6] = Int64GetDatum(s.sleeps);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		dsm_detach(seg);
	}
	return (Datum) 0;
}

/*
 * flexlock_bench_lwlock_writer(readers, seconds, algorithm, interval_us):
 * readers workers take the lock in shared mode as fast as they can, and one
 * more takes it exclusively every interval_us microseconds and times each
 * acquisition: the writer's price of a read-optimized lock.
 */
Datum
flexlock_bench_lwlock_writer(PG_FUNCTION_ARGS)
{
	int			readers = PG_GETARG_INT32(0);
	double		seconds = PG_GETARG_FLOAT8(1);
	char	   *alg = text_to_cstring(PG_GETARG_TEXT_PP(2));
	int			interval_us = PG_GETARG_INT32(3);
	bool		both;
	LWBenchAlgorithm algorithm;
	dsm_segment *seg;
	LWBenchShared *sh;
	LWBenchResult s;
	LWBenchResult *w;
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {0};

	if (readers < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("readers must not be negative")));
	check_args("flexlock_bench_lwlock_writer", readers + 1, seconds);
	if (interval_us < 0 || interval_us > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("interval_us must be between 0 and 1000000")));
	algorithm = parse_algorithm(alg, false, &both);
	if (algorithm == LWBENCH_MIXED)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("algorithm \"mixed\" is not supported here")));

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	sh = lwbench_setup(&seg, readers + 1, seconds, false, algorithm, 100, 0, 0, 0);
	/* pg_usleep(0) returns at once: 1 us is the shortest pause */
	sh->writer_interval_us = Max(interval_us, 1);
	lwbench_run(sh, seg, 10000);
	s = lwbench_sum(sh);
	w = &sh->results[readers];

	values[0] = CStringGetTextDatum(lwbench_algorithm_names[algorithm]);
	values[1] = Int64GetDatum(s.shared);
	values[2] = Float8GetDatum(s.shared / seconds);
	values[3] = Int64GetDatum(w->exclusive);
	values[4] = Float8GetDatum(w->exclusive > 0 ? w->exclusive_ns / 1e3 / w->exclusive : 0);
	values[5] = Float8GetDatum(w->max_wait_ns / 1e3);
	dsm_detach(seg);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
