CREATE TABLE foo (id int4);
