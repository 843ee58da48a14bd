--
-- The server under test: the cassert build of PostgreSQL 18, started with one
-- of variants/*.conf appended to its configuration, with the modules the
-- later tests need installed.
--
SELECT current_setting('server_version_num')::int / 10000 AS major_version;
SHOW debug_assertions;

-- The variant file reached the server (it sets flexlock_test.variant).
SELECT current_setting('flexlock_test.variant', true) IS NOT NULL AS variant_config_applied;

-- The variant config under test reached the server: with stock.conf no
-- variant differs from stock (every GUC's default is stock), with any
-- other at least one does.  (Here, not in flexlock.sql: only make check's
-- servers have a variant config.)
CREATE EXTENSION flexlock;
SELECT (count(*) = 0) = (current_setting('flexlock_test.variant') = 'stock')
       AS variant_config_in_effect
  FROM flexlock_variants WHERE current_setting <> stock_setting;
DROP EXTENSION flexlock;

SELECT name FROM pg_available_extensions
 WHERE name IN ('amcheck', 'injection_points', 'pageinspect', 'pg_walinspect')
 ORDER BY name;

-- Injection points are compiled in (--enable-injection-points).
CREATE EXTENSION injection_points;
SELECT injection_points_attach('flexlock-build-check', 'error');
SELECT injection_points_run('flexlock-build-check');
SELECT injection_points_detach('flexlock-build-check');
DROP EXTENSION injection_points;
