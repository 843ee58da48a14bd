--
-- The LWLock torture test and micro-benchmark: bad input is refused
-- clearly, and short runs of both algorithms, and of both side by side,
-- keep the lock's invariants.  (Runs with millions of acquisitions are in
-- t/006_lwlock_shared_add.pl.)
--
CREATE EXTENSION flexlock;

-- Bad input
SELECT * FROM flexlock_bench_lwlock(0, 1, 100);
SELECT * FROM flexlock_bench_lwlock(2000, 1, 100);
SELECT * FROM flexlock_bench_lwlock(1000, 1, 100);
SELECT * FROM flexlock_bench_lwlock(2, 0, 100);
SELECT * FROM flexlock_bench_lwlock(2, 'NaN', 100);
SELECT * FROM flexlock_bench_lwlock(2, 1, 101);
SELECT * FROM flexlock_bench_lwlock(2, 1, 100, 'cmpxchg');
SELECT * FROM flexlock_torture_lwlock(2, 1, 50, 50, 50, 0);
SELECT * FROM flexlock_torture_lwlock(2, 1, algorithm => 'both');
SELECT * FROM flexlock_torture_lwlock(2, 1, wait_bound_ms => 0);

-- Only superusers run them.
CREATE ROLE regress_lwbench;
GRANT EXECUTE ON FUNCTION flexlock_bench_lwlock(int4, float8, int4, text),
  flexlock_torture_lwlock(int4, float8, int4, int4, int4, int4, text, int4)
  TO regress_lwbench;
SET ROLE regress_lwbench;
SELECT * FROM flexlock_bench_lwlock(1, 0.1, 100);
SELECT * FROM flexlock_torture_lwlock(1, 0.1);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION flexlock_bench_lwlock(int4, float8, int4, text),
  flexlock_torture_lwlock(int4, float8, int4, int4, int4, int4, text, int4)
  FROM regress_lwbench;
DROP ROLE regress_lwbench;

-- Short runs: every algorithm, the whole mix, no violation, every worker done.
SELECT a AS algorithm, acquisitions > 0 AS worked,
       shared > 0 AND exclusive > 0 AND conditional_acquired + conditional_failed > 0
         AND wait_until_free > 0 AS whole_mix,
       violations, max_wait_ms < 10000 AS bounded_wait,
       a <> 'exchange' OR backouts = 0 AS no_backouts_without_fetch_add
  FROM unnest(ARRAY['exchange', 'fetch_add', 'mixed']) a,
       LATERAL flexlock_torture_lwlock(4, 0.3, algorithm => a);

-- The benchmark: one row per algorithm; back-outs only with fetch_add, and
-- only if exclusive acquisitions are in the mix.
SELECT shared_algorithm, acquisitions > 0 AS worked,
       acquisitions_per_sec > 0 AND ns_per_acquisition > 0 AS rates,
       backouts = 0 AS no_backouts
  FROM flexlock_bench_lwlock(3, 0.2, 100, 'both');
SELECT shared_algorithm, backouts = 0 AS no_backouts
  FROM flexlock_bench_lwlock(2, 0.2, 0, 'exchange');

DROP EXTENSION flexlock;
