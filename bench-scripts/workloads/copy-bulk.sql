-- Bulk COPY into one table from every client: the relation extension lock.
COPY copy_target FROM '{datadir}/flexbench_copy.data';
