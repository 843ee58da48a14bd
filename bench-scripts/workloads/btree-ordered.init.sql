CREATE UNLOGGED TABLE ordered_ins (id serial PRIMARY KEY, v int4);
