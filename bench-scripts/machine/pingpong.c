/*
 * pingpong.c — the machine figures a model of PostgreSQL's locks needs:
 * what moving one cache line between two cores costs, what an atomic
 * operation costs when the line stays put, and how long a process woken
 * through a POSIX semaphore takes to run (PGSemaphore on Linux is an unnamed
 * POSIX semaphore in shared memory, sem_init(pshared = 1)).
 *
 * Usage (one measurement per call; the driver, flexbench.py machine-profile,
 * repeats them and takes medians):
 *
 *   pingpong handoff CPU_A CPU_B ITERATIONS
 *       Two processes pinned to CPU_A and CPU_B (sched_setaffinity) pass a
 *       counter in one shared cache line back and forth: each spins reading
 *       the line until the counter is its turn, then advances it with a
 *       compare-and-exchange, the way an LWLock acquisition reads the state
 *       word and swaps it.  ns = elapsed / (2 * ITERATIONS): the time of one
 *       one-way hand-off, a read miss that fetches the line from the other
 *       core and the compare-and-exchange that takes it exclusively.
 *   pingpong contended CPU_A CPU_B MILLISECONDS
 *       Both processes run compare-and-exchange increments of one line as
 *       fast as they can (read, swap, retry on failure), as LWLock
 *       acquisitions of one lock do under contention, then the same with
 *       fetch-and-add.  cas_ns = elapsed / successful swaps of both;
 *       faa_ns = elapsed / fetch-and-adds of both.
 *   pingpong uncontended CPU ITERATIONS
 *       One process, one line that no other core touches: ns per
 *       read-and-compare-and-exchange (cas_ns) and per fetch-and-add (faa_ns).
 *   pingpong sem CPU_A CPU_B ITERATIONS
 *       Two processes pinned to CPU_A and CPU_B (the same CPU for the
 *       same-core figure) wake each other through two POSIX unnamed
 *       semaphores in shared memory: A posts a, waits on b; B waits on a,
 *       posts b.  ns = elapsed / (2 * ITERATIONS): one post, the wake-up of
 *       the sleeping waiter and its return from sem_wait().
 *   pingpong ring CPU K WORKSET_KB ITERATIONS
 *       K processes pinned to one CPU pass a token around a ring of POSIX
 *       semaphores, as K backends sharing a core take turns; on each turn a
 *       process walks its own working set of WORKSET_KB (one read and one
 *       write per 64-byte line), then posts the next.  ns = elapsed / turns:
 *       one turn, work and switch; work_ns = the walk alone, timed inside
 *       the turn (its cache refill when the other K - 1 working sets have
 *       evicted it).  K = 1 posts itself: the walk and a semaphore round
 *       trip with no switch, the base the others are compared with.
 *   pingpong slice CPU K MILLISECONDS
 *       K processes pinned to one CPU spin reading the clock; a gap of more
 *       than 20 us between two reads is a time the process did not run.
 *       slice_ns = the median length of a run between two such gaps: the
 *       time slice the scheduler gives a CPU-bound process among K.
 *   pingpong lone CPU_A CPU_B WORKSET_KB ITERATIONS
 *       The round trip of one client and one backend on an otherwise idle
 *       machine: two processes on two CPUs wake each other through
 *       semaphores, each walking its working set on every wake-up (timed
 *       inside: wake_work_ns), against the same walk repeated back to back
 *       in one busy process first (hot_work_ns).  ns = elapsed / (2 *
 *       ITERATIONS): one wake-up and one walk.
 *   pingpong wakepreempt CPU ITERATIONS
 *       Two processes pinned to one CPU: A posts B's semaphore (B has slept
 *       since its last turn), then runs on for 200 us reading the clock; a
 *       gap of more than 20 us means B took the CPU from A.  B, once it
 *       runs, works 10 us and posts A's semaphore, which A waits on after
 *       its 200 us.  share = the share of the posts after which A lost the
 *       CPU (the scheduler's wake-up preemption: a lock holder that wakes a
 *       waiter on its own CPU and is descheduled for it); delay_ns = the
 *       median time from the post to the preemption.
 *
 * Output: one line of key=value pairs on stdout (mode=... ns=... ...), or a
 * message on stderr and exit status 1 (2 for bad arguments).
 *
 * Build: gcc -O2 -Wall -o pingpong pingpong.c (-static for a bundle).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LINE 128				/* two 64-byte lines: no adjacent-line prefetch */

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("isb" ::: "memory")
#else
#define cpu_relax() ((void) 0)
#endif

typedef struct Shared
{
	_Alignas(LINE) uint64_t counter;	/* the line that moves */
	_Alignas(LINE) uint32_t ready;	/* start barrier */
	uint32_t	go;
	uint64_t	ops[2];			/* per process: successful operations */
	uint64_t	fails[2];		/* failed compare-and-exchanges */
	_Alignas(LINE) sem_t sem_a;
	_Alignas(LINE) sem_t sem_b;
} Shared;

static Shared *sh;

/* ring, slice and lone: K processes, each with its semaphore and its figures */
#define MAXK 64
#define MAXRUNS 4096
#define GAP_NS 20000.0

typedef struct Many
{
	_Alignas(LINE) uint32_t ready;
	uint32_t	go;
	_Alignas(LINE) sem_t sem[MAXK];
	double		work_ns[MAXK];	/* per process: summed walk time */
	uint64_t	walks[MAXK];
	uint32_t	nruns[MAXK];
	double		runs[MAXK][MAXRUNS];	/* slice: run lengths */
} Many;

static Many *many;

static void
die(const char *fmt, const char *arg)
{
	fprintf(stderr, "pingpong: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(1);
}

static void
usage(void)
{
	fprintf(stderr,
			"usage: pingpong handoff CPU_A CPU_B ITERATIONS\n"
			"       pingpong contended CPU_A CPU_B MILLISECONDS\n"
			"       pingpong uncontended CPU ITERATIONS\n"
			"       pingpong sem CPU_A CPU_B ITERATIONS\n"
			"       pingpong ring CPU K WORKSET_KB ITERATIONS\n"
			"       pingpong slice CPU K MILLISECONDS\n"
			"       pingpong lone CPU_A CPU_B WORKSET_KB ITERATIONS\n"
			"       pingpong wakepreempt CPU ITERATIONS\n");
	exit(2);
}

static long
arg_long(const char *s, const char *what, long min, long max)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
	{
		fprintf(stderr, "pingpong: %s must be an integer from %ld to %ld, got \"%s\"\n",
				what, min, max, s);
		exit(2);
	}
	return v;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void
pin(int cpu)
{
	cpu_set_t	set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
	{
		char		buf[64];

		snprintf(buf, sizeof(buf), "%d: %s", cpu, strerror(errno));
		die("cannot pin to CPU %s", buf);
	}
}

/* Both processes arrive, then both leave: neither is timed while the other forks. */
static void
barrier(int who)
{
	__atomic_fetch_add(&sh->ready, 1, __ATOMIC_SEQ_CST);
	if (who == 0)
	{
		while (__atomic_load_n(&sh->ready, __ATOMIC_ACQUIRE) < 2)
			cpu_relax();
		__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	}
	else
		while (__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE) == 0)
			cpu_relax();
}

/* Run body(1) in a child pinned to cpu_b, body(0) here pinned to cpu_a. */
static void
two(int cpu_a, int cpu_b, void (*body) (int who, long arg), long arg)
{
	pid_t		pid;
	int			status;

	sh->ready = 0;
	sh->go = 0;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork failed: %s", strerror(errno));
	if (pid == 0)
	{
		pin(cpu_b);
		body(1, arg);
		_exit(0);
	}
	pin(cpu_a);
	body(0, arg);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the second process failed%s", "");
}

static double elapsed;

static void
handoff_body(int who, long iters)
{
	double		t0 = 0;

	barrier(who);
	if (who == 0)
		t0 = now_ns();
	for (long i = 0; i < iters; i++)
	{
		uint64_t	mine = 2 * (uint64_t) i + who;
		uint64_t	expected;

		for (;;)
		{
			expected = __atomic_load_n(&sh->counter, __ATOMIC_RELAXED);
			if (expected == mine &&
				__atomic_compare_exchange_n(&sh->counter, &expected, mine + 1, false,
											__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				break;
			cpu_relax();
		}
	}
	if (who == 0)
	{
		/* the last hand-off back: B's final swap */
		while (__atomic_load_n(&sh->counter, __ATOMIC_ACQUIRE) != 2 * (uint64_t) iters)
			cpu_relax();
		elapsed = now_ns() - t0;
	}
}

static void
contended_cas_body(int who, long ms)
{
	uint64_t	ok = 0,
				fail = 0;
	double		end;

	barrier(who);
	end = now_ns() + ms * 1e6;
	while (true)
	{
		for (int k = 0; k < 256; k++)
		{
			uint64_t	v = __atomic_load_n(&sh->counter, __ATOMIC_RELAXED);

			if (__atomic_compare_exchange_n(&sh->counter, &v, v + 1, false,
											__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				ok++;
			else
				fail++;
		}
		if (now_ns() >= end)
			break;
	}
	sh->ops[who] = ok;
	sh->fails[who] = fail;
}

static void
contended_faa_body(int who, long ms)
{
	uint64_t	n = 0;
	double		end;

	barrier(who);
	end = now_ns() + ms * 1e6;
	while (true)
	{
		for (int k = 0; k < 256; k++)
			__atomic_fetch_add(&sh->counter, 1, __ATOMIC_ACQ_REL);
		n += 256;
		if (now_ns() >= end)
			break;
	}
	sh->ops[who] = n;
}

static void
sem_body(int who, long iters)
{
	double		t0 = 0;

	barrier(who);
	if (who == 0)
		t0 = now_ns();
	for (long i = 0; i < iters; i++)
	{
		if (who == 0)
		{
			if (sem_post(&sh->sem_a) != 0)
				die("sem_post failed: %s", strerror(errno));
			while (sem_wait(&sh->sem_b) != 0)
				if (errno != EINTR)
					die("sem_wait failed: %s", strerror(errno));
		}
		else
		{
			while (sem_wait(&sh->sem_a) != 0)
				if (errno != EINTR)
					die("sem_wait failed: %s", strerror(errno));
			if (sem_post(&sh->sem_b) != 0)
				die("sem_post failed: %s", strerror(errno));
		}
	}
	if (who == 0)
		elapsed = now_ns() - t0;
}

/* K processes arrive, then all leave together. */
static void
barrier_k(int who, int k)
{
	__atomic_fetch_add(&many->ready, 1, __ATOMIC_SEQ_CST);
	if (who == 0)
	{
		while (__atomic_load_n(&many->ready, __ATOMIC_ACQUIRE) < (uint32_t) k)
			sched_yield();		/* they may share this CPU */
		__atomic_store_n(&many->go, 1, __ATOMIC_RELEASE);
	}
	else
		while (__atomic_load_n(&many->go, __ATOMIC_ACQUIRE) == 0)
			sched_yield();
}

/*
 * Run body(i) for i = 1 .. k - 1 in children pinned to cpus[i], body(0) here
 * pinned to cpus[0].
 */
static void
run_k(const int *cpus, int k, void (*body) (int who, int k, long arg), long arg)
{
	pid_t		pids[MAXK];
	int			status;

	many->ready = 0;
	many->go = 0;
	fflush(stdout);
	for (int i = 1; i < k; i++)
	{
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork failed: %s", strerror(errno));
		if (pids[i] == 0)
		{
			pin(cpus[i]);
			body(i, k, arg);
			_exit(0);
		}
	}
	pin(cpus[0]);
	body(0, k, arg);
	for (int i = 1; i < k; i++)
		if (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			die("a child process failed%s", "");
}

static long workset_lines;

/* One walk of this process's working set: a read and a write per line. */
static double
walk(volatile unsigned char *ws)
{
	double		t0 = now_ns();

	for (long i = 0; i < workset_lines; i++)
		ws[i * 64]++;
	return now_ns() - t0;
}

static unsigned char *
new_workset(void)
{
	unsigned char *ws = malloc(workset_lines * 64);

	if (ws == NULL)
		die("cannot allocate the working set%s", "");
	memset(ws, 1, workset_lines * 64);
	return ws;
}

static void
sem_wait_one(sem_t *s)
{
	while (sem_wait(s) != 0)
		if (errno != EINTR)
			die("sem_wait failed: %s", strerror(errno));
}

static void
sem_post_one(sem_t *s)
{
	if (sem_post(s) != 0)
		die("sem_post failed: %s", strerror(errno));
}

static void
ring_body(int who, int k, long iters)
{
	unsigned char *ws = new_workset();
	double		t0 = 0,
				sum = 0;

	walk(ws);					/* its pages mapped before the clock starts */
	barrier_k(who, k);
	if (who == 0)
	{
		t0 = now_ns();
		sem_post_one(&many->sem[0]);
	}
	for (long i = 0; i < iters; i++)
	{
		sem_wait_one(&many->sem[who]);
		sum += walk(ws);
		sem_post_one(&many->sem[(who + 1) % k]);
	}
	if (who == 0)
	{
		/* the last turn, the last process's post back to the first */
		sem_wait_one(&many->sem[0]);
		elapsed = now_ns() - t0;
	}
	many->work_ns[who] = sum;
	many->walks[who] = iters;
	free(ws);
}

static void
slice_body(int who, int k, long ms)
{
	double		end,
				last,
				start;
	uint32_t	n = 0;

	barrier_k(who, k);
	start = last = now_ns();
	end = start + ms * 1e6;
	while (last < end)
	{
		double		t = now_ns();

		if (t - last > GAP_NS)
		{
			/* descheduled between last and t: a run ended at last */
			if (n < MAXRUNS)
				many->runs[who][n++] = last - start;
			start = t;
		}
		last = t;
	}
	many->nruns[who] = n;
}

static void
lone_body(int who, int k, long iters)
{
	unsigned char *ws = new_workset();
	double		t0 = 0,
				sum = 0;

	(void) k;
	if (who == 0)
	{
		/* the same walk in a busy process, warm: the base */
		double		hot = 0;

		walk(ws);
		for (int i = 0; i < 1000; i++)
			hot += walk(ws);
		many->work_ns[MAXK - 1] = hot / 1000;
	}
	else
		walk(ws);
	barrier_k(who, 2);
	if (who == 0)
		t0 = now_ns();
	for (long i = 0; i < iters; i++)
	{
		if (who == 0)
		{
			sem_post_one(&many->sem[1]);
			sem_wait_one(&many->sem[0]);
			sum += walk(ws);
		}
		else
		{
			sem_wait_one(&many->sem[1]);
			sum += walk(ws);
			sem_post_one(&many->sem[0]);
		}
	}
	if (who == 0)
		elapsed = now_ns() - t0;
	many->work_ns[who] = sum;
	many->walks[who] = iters;
	free(ws);
}

static void
wakepreempt_body(int who, int k, long iters)
{
	(void) k;
	barrier_k(who, 2);
	for (long i = 0; i < iters; i++)
	{
		if (who == 0)
		{
			double		t0,
						last,
						t;
			bool		lost = false;

			sem_post_one(&many->sem[1]);
			t0 = last = now_ns();
			while ((t = now_ns()) - t0 < 200000.0)
			{
				if (!lost && t - last > GAP_NS)
				{
					lost = true;
					many->runs[0][many->nruns[0]++ % MAXRUNS] = last - t0;
				}
				last = t;
			}
			sem_wait_one(&many->sem[0]);
		}
		else
		{
			double		t0;

			sem_wait_one(&many->sem[1]);
			t0 = now_ns();
			while (now_ns() - t0 < 10000.0)
				cpu_relax();
			sem_post_one(&many->sem[0]);
		}
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
init_sems(int k)
{
	for (int i = 0; i < k; i++)
		if (sem_init(&many->sem[i], 1, 0) != 0)
			die("sem_init(pshared = 1) failed: %s", strerror(errno));
}

int
main(int argc, char **argv)
{
	long		ncpu = sysconf(_SC_NPROCESSORS_CONF);
	const char *mode;

	if (argc < 2)
		usage();
	mode = argv[1];
	sh = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap failed: %s", strerror(errno));
	memset(sh, 0, sizeof(Shared));
	many = mmap(NULL, sizeof(Many), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (many == MAP_FAILED)
		die("mmap failed: %s", strerror(errno));

	if (strcmp(mode, "handoff") == 0 && argc == 5)
	{
		int			a = arg_long(argv[2], "CPU_A", 0, ncpu - 1);
		int			b = arg_long(argv[3], "CPU_B", 0, ncpu - 1);
		long		iters = arg_long(argv[4], "ITERATIONS", 1, 1000000000);

		if (a == b)
			die("handoff needs two different CPUs (a process spinning on one CPU would wait for "
				"its partner's time slice)%s", "");
		two(a, b, handoff_body, iters);
		printf("mode=handoff cpu_a=%d cpu_b=%d iterations=%ld ns=%.2f\n",
			   a, b, iters, elapsed / (2.0 * iters));
	}
	else if (strcmp(mode, "contended") == 0 && argc == 5)
	{
		int			a = arg_long(argv[2], "CPU_A", 0, ncpu - 1);
		int			b = arg_long(argv[3], "CPU_B", 0, ncpu - 1);
		long		ms = arg_long(argv[4], "MILLISECONDS", 1, 600000);
		double		cas_ns,
					faa_ns;
		uint64_t	ok,
					fail;

		if (a == b)
			die("contended needs two different CPUs%s", "");
		two(a, b, contended_cas_body, ms);
		ok = sh->ops[0] + sh->ops[1];
		fail = sh->fails[0] + sh->fails[1];
		cas_ns = ms * 1e6 / (double) ok;
		sh->counter = 0;
		two(a, b, contended_faa_body, ms);
		faa_ns = ms * 1e6 / (double) (sh->ops[0] + sh->ops[1]);
		printf("mode=contended cpu_a=%d cpu_b=%d ms=%ld cas_ns=%.2f cas_fail_per_success=%.3f faa_ns=%.2f\n",
			   a, b, ms, cas_ns, (double) fail / (double) ok, faa_ns);
	}
	else if (strcmp(mode, "uncontended") == 0 && argc == 4)
	{
		int			a = arg_long(argv[2], "CPU", 0, ncpu - 1);
		long		iters = arg_long(argv[3], "ITERATIONS", 1, 10000000000L);
		double		t0,
					cas_ns,
					faa_ns;

		pin(a);
		t0 = now_ns();
		for (long i = 0; i < iters; i++)
		{
			uint64_t	v = __atomic_load_n(&sh->counter, __ATOMIC_RELAXED);

			if (!__atomic_compare_exchange_n(&sh->counter, &v, v + 1, false,
											 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				die("a compare-and-exchange failed with no other process%s", "");
		}
		cas_ns = (now_ns() - t0) / iters;
		t0 = now_ns();
		for (long i = 0; i < iters; i++)
			__atomic_fetch_add(&sh->counter, 1, __ATOMIC_ACQ_REL);
		faa_ns = (now_ns() - t0) / iters;
		printf("mode=uncontended cpu=%d iterations=%ld cas_ns=%.2f faa_ns=%.2f\n",
			   a, iters, cas_ns, faa_ns);
	}
	else if (strcmp(mode, "sem") == 0 && argc == 5)
	{
		int			a = arg_long(argv[2], "CPU_A", 0, ncpu - 1);
		int			b = arg_long(argv[3], "CPU_B", 0, ncpu - 1);
		long		iters = arg_long(argv[4], "ITERATIONS", 1, 100000000);

		if (sem_init(&sh->sem_a, 1, 0) != 0 || sem_init(&sh->sem_b, 1, 0) != 0)
			die("sem_init(pshared = 1) failed: %s", strerror(errno));
		two(a, b, sem_body, iters);
		printf("mode=sem cpu_a=%d cpu_b=%d iterations=%ld ns=%.2f\n",
			   a, b, iters, elapsed / (2.0 * iters));
		sem_destroy(&sh->sem_a);
		sem_destroy(&sh->sem_b);
	}
	else if (strcmp(mode, "ring") == 0 && argc == 6)
	{
		int			cpu = arg_long(argv[2], "CPU", 0, ncpu - 1);
		int			k = arg_long(argv[3], "K", 1, MAXK);
		long		kb = arg_long(argv[4], "WORKSET_KB", 1, 1048576);
		long		iters = arg_long(argv[5], "ITERATIONS", 1, 100000000);
		int			cpus[MAXK];
		double		work = 0;

		workset_lines = kb * 1024 / 64;
		for (int i = 0; i < k; i++)
			cpus[i] = cpu;
		init_sems(k);
		run_k(cpus, k, ring_body, iters);
		for (int i = 0; i < k; i++)
			work += many->work_ns[i];
		printf("mode=ring cpu=%d k=%d workset_kb=%ld iterations=%ld ns=%.2f work_ns=%.2f\n",
			   cpu, k, kb, iters, elapsed / ((double) k * iters), work / ((double) k * iters));
	}
	else if (strcmp(mode, "slice") == 0 && argc == 5)
	{
		int			cpu = arg_long(argv[2], "CPU", 0, ncpu - 1);
		int			k = arg_long(argv[3], "K", 2, MAXK);
		long		ms = arg_long(argv[4], "MILLISECONDS", 10, 600000);
		int			cpus[MAXK];
		static double all[MAXK * MAXRUNS];
		long		n = 0;

		for (int i = 0; i < k; i++)
			cpus[i] = cpu;
		run_k(cpus, k, slice_body, ms);
		for (int i = 0; i < k; i++)
			for (uint32_t j = 0; j < many->nruns[i]; j++)
				all[n++] = many->runs[i][j];
		if (n == 0)
			die("no process was ever descheduled: is CPU %s shared?", argv[2]);
		qsort(all, n, sizeof(double), cmp_double);
		printf("mode=slice cpu=%d k=%d ms=%ld runs=%ld slice_ns=%.0f p10_ns=%.0f p90_ns=%.0f\n",
			   cpu, k, ms, n, all[n / 2], all[n / 10], all[n * 9 / 10]);
	}
	else if (strcmp(mode, "lone") == 0 && argc == 6)
	{
		int			cpus[2];
		long		kb = arg_long(argv[4], "WORKSET_KB", 1, 1048576);
		long		iters = arg_long(argv[5], "ITERATIONS", 1, 100000000);

		cpus[0] = arg_long(argv[2], "CPU_A", 0, ncpu - 1);
		cpus[1] = arg_long(argv[3], "CPU_B", 0, ncpu - 1);
		if (cpus[0] == cpus[1])
			die("lone needs two different CPUs%s", "");
		workset_lines = kb * 1024 / 64;
		init_sems(2);
		run_k(cpus, 2, lone_body, iters);
		printf("mode=lone cpu_a=%d cpu_b=%d workset_kb=%ld iterations=%ld ns=%.2f wake_work_ns=%.2f "
			   "hot_work_ns=%.2f\n", cpus[0], cpus[1], kb, iters, elapsed / (2.0 * iters),
			   (many->work_ns[0] + many->work_ns[1]) / (2.0 * iters), many->work_ns[MAXK - 1]);
	}
	else if (strcmp(mode, "wakepreempt") == 0 && argc == 4)
	{
		int			cpus[2];
		long		iters = arg_long(argv[3], "ITERATIONS", 1, 1000000);
		uint32_t	n;
		double		delay = 0;

		cpus[0] = cpus[1] = arg_long(argv[2], "CPU", 0, ncpu - 1);
		init_sems(2);
		run_k(cpus, 2, wakepreempt_body, iters);
		n = many->nruns[0];
		if (n > 0)
		{
			uint32_t	m = n < MAXRUNS ? n : MAXRUNS;

			qsort(many->runs[0], m, sizeof(double), cmp_double);
			delay = many->runs[0][m / 2];
		}
		printf("mode=wakepreempt cpu=%s iterations=%ld preempted=%u share=%.4f delay_ns=%.0f\n",
			   argv[2], iters, n, (double) n / iters, delay);
	}
	else
		usage();
	return 0;
}
