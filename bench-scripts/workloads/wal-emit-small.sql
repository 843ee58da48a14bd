-- Pure WAL insertion: a small logical message, no heap or index work.
SELECT pg_logical_emit_message(false, 'x', repeat('x', :len));
