--
-- Sampled LWLock hold times (flexlock 1.1, lock_stats_hold_sample)
--
-- The update from 1.0 gives the views their hold-time columns.
CREATE EXTENSION flexlock VERSION '1.0';
-- The test functions (flexlock_test_*) are the test module's
-- (t/modules/flexlock_inject), in a schema of their own: flexlock before
-- 1.5 had functions of the same names, which now say they moved.
CREATE SCHEMA regress_inject;
CREATE EXTENSION flexlock_inject SCHEMA regress_inject;
SELECT count(*) AS columns_1_0 FROM information_schema.columns
 WHERE table_name = 'flexlock_lwlocks';
ALTER EXTENSION flexlock UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) AS added
  FROM information_schema.columns
 WHERE table_name = 'flexlock_lwlocks' AND (column_name LIKE '%hold%' OR column_name = 'stats_reset');

-- The setting: off by default, a range
SELECT boot_val AS hold_sample_default FROM pg_settings WHERE name = 'lock_stats_hold_sample';
SET lock_stats_hold_sample = -1;
SET lock_stats_hold_sample = 1000001;

-- Off: nothing timed (set here: a server may sample by default, as make
-- server's does, one hold in 100)
SET lock_stats_hold_sample = 0;
SELECT flexlock_reset() IS NOT NULL AS reset;
SELECT regress_inject.flexlock_test_lwlock('exclusive');
SELECT holds_timed, hold_exclusive_ms, avg_hold_exclusive_us
  FROM flexlock_backends(pg_backend_pid()) WHERE tranche = 'flexlock_test';

-- Every hold timed: one exclusive hold of 20 ms and more
SET lock_stats_hold_sample = 1;
SELECT regress_inject.flexlock_test_lwlock('exclusive', 20);
SELECT holds_timed, hold_exclusive_ms >= 20 AS long_enough,
       avg_hold_exclusive_us >= 20000 AS avg_long_enough,
       avg_hold_shared_us IS NULL AS no_shared
  FROM flexlock_backends(pg_backend_pid()) WHERE tranche = 'flexlock_test';
-- the load view and the caps see it (this backend's tranche names)
SELECT tranche, instances IS NULL AS instances_unknown, utilization IS NULL AS no_utilization
  FROM flexlock_lock_load WHERE tranche = 'flexlock_test';
SELECT count(*) > 0 AS caps FROM flexlock_lock_caps(100);
SELECT count(*) AS no_caps_for_no_transactions FROM flexlock_lock_caps(0);
-- tranches whose number of locks the server fixes
SELECT tranche, instances FROM flexlock_tranche_instances()
 WHERE tranche IN ('ProcArray', 'WALWrite', 'BufferMapping', 'LockManager');
SELECT instances = current_setting('wal_insert_locks')::int8 AS walinsert_instances
  FROM flexlock_tranche_instances() WHERE tranche = 'WALInsert';
SELECT instances = (SELECT setting::int8 FROM pg_settings WHERE name = 'shared_buffers')
       AS buffer_content_instances
  FROM flexlock_tranche_instances() WHERE tranche = 'BufferContent';
RESET lock_stats_hold_sample;

-- Reading is for monitoring roles
CREATE ROLE regress_holds_reader;
SET ROLE regress_holds_reader;
SELECT count(*) FROM flexlock_lock_load;
SELECT count(*) FROM flexlock_lock_caps(1);
RESET ROLE;
GRANT pg_monitor TO regress_holds_reader;
SET ROLE regress_holds_reader;
SELECT count(*) >= 0 AS monitor_reads FROM flexlock_lock_load;
RESET ROLE;
DROP ROLE regress_holds_reader;
DROP EXTENSION flexlock;
DROP EXTENSION flexlock_inject;
DROP SCHEMA regress_inject;
