CREATE UNLOGGED TABLE random_ins (id int8, v int4);
CREATE INDEX random_ins_id ON random_ins (id);
