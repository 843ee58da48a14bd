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
			"       pingpong sem CPU_A CPU_B ITERATIONS\n");
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
	else
		usage();
	return 0;
}
