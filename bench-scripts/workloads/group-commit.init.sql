-- One narrow logged table without indexes: the commit, not the insert, is the work.
CREATE TABLE gc (client int, at timestamptz DEFAULT now());
