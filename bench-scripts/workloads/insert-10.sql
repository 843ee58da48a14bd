-- 10 rows per transaction into one logged table: small OLTP-like commits.
INSERT INTO foo SELECT generate_series(1, 10);
