CREATE TABLE copy_target (id int4, v text);
-- The file every client copies in: 10000 rows of about 60 bytes.
COPY (SELECT g, repeat('x', 50) FROM generate_series(1, 10000) g) TO '{datadir}/flexbench_copy.data';
