--
-- Hold-time histograms, distinct locks per tranche and the hottest locks
-- (flexlock 1.2, issue 27).  Assertions are relations, not numbers, and
-- hold under every variant config.
--
-- The update from 1.1 adds the hold columns and the hot-lock view.
CREATE EXTENSION flexlock VERSION '1.1';
-- The test functions (flexlock_test_*) are the test module's
-- (t/modules/flexlock_inject), in a schema of their own: flexlock before
-- 1.5 had functions of the same names, which now say they moved.
CREATE SCHEMA regress_inject;
CREATE EXTENSION flexlock_inject SCHEMA regress_inject;
ALTER EXTENSION flexlock UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
SELECT table_name, string_agg(column_name, ', ' ORDER BY ordinal_position) AS columns
  FROM information_schema.columns
 WHERE table_name IN ('flexlock_lwlock_waits', 'flexlock_lwlock_wait_histogram',
                      'flexlock_hot_lwlocks', 'flexlock_lock_load')
 GROUP BY table_name ORDER BY table_name;

-- Off: nothing sampled, so no hold rows, no instances, no hot test lock
-- (this session's; the server's other processes sample as it says)
SET lock_stats_hold_sample = 0;
SELECT flexlock_reset() IS NOT NULL AS reset;
SELECT regress_inject.flexlock_test_lwlock('exclusive', 5);
SELECT count(*) AS hold_rows FROM flexlock_lwlock_waits
 WHERE holds_timed > 0 AND tranche = 'flexlock_test';
SELECT count(*) AS hold_buckets FROM flexlock_lwlock_wait_histogram
 WHERE holds > 0 AND tranche = 'flexlock_test';
SELECT count(*) AS instances FROM flexlock_lock_instances() WHERE tranche = 'flexlock_test';
SELECT count(*) AS hot_test_lock FROM flexlock_hot_lwlocks WHERE tranche = 'flexlock_test';

-- Every hold timed: three holds of the test lock of 20 ms and more
SET lock_stats_hold_sample = 1;
SELECT regress_inject.flexlock_test_lwlock('exclusive', 20) FROM generate_series(1, 3);
-- percentiles beside the sleeps' (this backend knows the tranche's name)
SELECT mode, sleeps, p50_us IS NULL AS no_sleep_p50, holds_timed,
       hold_p50_us >= 16384 AS p50_in_20ms_bucket,
       hold_p50_us <= hold_p90_us AND hold_p90_us <= hold_p99_us
         AND hold_p99_us <= hold_max_us AS ordered,
       hold_max_us < 20000000 AS max_sane
  FROM flexlock_lwlock_waits WHERE tranche = 'flexlock_test';
SELECT mode, sum(holds) AS holds, sum(sleeps) AS sleeps,
       bool_and(lower_us < 1e6) AS buckets_sane,
       max(upper_us) FILTER (WHERE holds > 0) >= 20000 AS reaches_20ms
  FROM flexlock_lwlock_wait_histogram WHERE tranche = 'flexlock_test' GROUP BY mode;
SELECT count(*) > 0 AS by_type
  FROM flexlock_lwlock_waits_by_type
 WHERE backend_type = 'client backend' AND tranche = 'flexlock_test' AND holds_timed = 3;
-- one lock in the tranche
SELECT instances, bits_set, saturated FROM flexlock_lock_instances()
 WHERE tranche = 'flexlock_test';
SELECT instances, instances_configured, utilization IS NOT NULL AS utilization
  FROM flexlock_lock_load WHERE tranche = 'flexlock_test';
-- the test lock in the hot table, with all of its tranche's hold time (a
-- server that samples holds in its other processes may have hotter locks)
-- (the test lock is in the main shared memory, named by its offset there)
SELECT tranche, lock ~ '^flexlock_test \+[0-9]+$' AS named_by_offset,
       hold_ms >= 60 AS hold_long_enough, hold_ms < 60000 AS hold_sane,
       round(hold_share::numeric, 2) AS hold_share, wait_ms, relation
  FROM flexlock_hot_lwlocks WHERE tranche = 'flexlock_test' ORDER BY hold_ms DESC LIMIT 1;
-- an individual lock: one instance
SELECT txid_current() > 0 AS xid;
SELECT instances FROM flexlock_lock_instances() WHERE tranche = 'XidGen';
-- in the hot table, named by its name: after a reset, 5000 statements that
-- take a snapshot each and no other LWLock make ProcArrayLock this
-- backend's hottest lock
SELECT flexlock_reset() IS NOT NULL AS reset;
DO $$ BEGIN FOR i IN 1..5000 LOOP PERFORM 1; END LOOP; END $$;
SELECT count(*) FILTER (WHERE h.tranche = 'ProcArray') AS procarray_rows,
       bool_and(h.lock = h.tranche AND h.lock_offset % 128 = 0) AS individuals_named
  FROM flexlock_hot_lwlocks() h JOIN flexlock_tranche_instances() i USING (tranche_id)
 WHERE i.instances = 1 AND h.tranche <> 'WALInsert';
-- a buffer content lock names its page: a page read 2000 times
CREATE TABLE regress_hot (a int);
INSERT INTO regress_hot SELECT generate_series(1, 10);
DO $$ BEGIN FOR i IN 1..2000 LOOP PERFORM count(*) FROM regress_hot; END LOOP; END $$;
SELECT relation, fork, block, lock LIKE 'buffer %' AS lock_named, relfilenode > 0 AS relfilenode,
       hold_ms > 0 AS held, hold_share > 0 AND hold_share <= 1.0001 AS share_sane
  FROM flexlock_hot_lwlocks WHERE relation = 'regress_hot'::regclass;
-- a process's fast-path lock by its process number, taken 2000 times
-- (unless lock_fastpath is off)
SELECT count(*) > 0 OR current_setting('lock_fastpath') = 'off' AS fastpath_named
  FROM flexlock_hot_lwlocks WHERE tranche = 'LockFastPath' AND lock ~ '^LockFastPath proc [0-9]+$';
-- a partition of the main array by tranche and number
SELECT count(*) > 0 AS partition_named
  FROM flexlock_hot_lwlocks WHERE tranche = 'BufferMapping' AND lock ~ '^BufferMapping [0-9]+$';
-- a reset clears them
SELECT flexlock_reset() IS NOT NULL AS reset;
SELECT count(*) AS hot_after_reset FROM flexlock_hot_lwlocks
 WHERE tranche = 'flexlock_test' OR relation = 'regress_hot'::regclass;
SELECT count(*) AS holds_after_reset FROM flexlock_lwlock_waits WHERE tranche = 'flexlock_test';
SELECT count(*) AS instances_after_reset FROM flexlock_lock_instances() WHERE tranche = 'flexlock_test';
RESET lock_stats_hold_sample;
DROP TABLE regress_hot;

-- Bad input: NULL gives nothing; an unknown test lock mode is refused
SELECT count(*) FROM flexlock_wait_stats(NULL);
SELECT count(*) FROM flexlock_wait_histogram(NULL);
SELECT regress_inject.flexlock_test_lwlock('neither', 1);

-- Reading is for monitoring roles
CREATE ROLE regress_hot_reader;
SET ROLE regress_hot_reader;
SELECT count(*) FROM flexlock_hot_lwlocks;
SELECT count(*) FROM flexlock_lock_instances();
RESET ROLE;
GRANT pg_monitor TO regress_hot_reader;
SET ROLE regress_hot_reader;
SELECT count(*) >= 0 AS monitor_reads FROM flexlock_hot_lwlocks;
SELECT count(*) >= 0 AS monitor_reads FROM flexlock_lock_instances();
SELECT count(*) >= 0 AS monitor_reads FROM flexlock_lwlock_wait_histogram;
RESET ROLE;
DROP ROLE regress_hot_reader;
DROP EXTENSION flexlock;
DROP EXTENSION flexlock_inject;
DROP SCHEMA regress_inject;
