-- One row per transaction; every commit waits for its WAL flush.
INSERT INTO gc (client) VALUES (:client_id);
