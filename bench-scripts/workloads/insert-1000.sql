-- 1000 rows per transaction into one logged table: WAL insertion heavy.
INSERT INTO foo SELECT generate_series(1, 1000);
