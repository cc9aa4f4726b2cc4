-- 006: the tamper-evident log, the counterpart of SQLite's 005 (see it for what each table
-- holds). Every gateway process appends to one tree: the accept transaction locks audit_tree's
-- one row (FOR UPDATE) only for the append at its end, so leaves are numbered in commit order,
-- without gaps or forks. Never edit after it lands.

CREATE TABLE audit_leaves (
  seq       bigint PRIMARY KEY,
  event_id  text   NOT NULL UNIQUE,
  hash      bytea  NOT NULL
);

CREATE TABLE audit_nodes (
  level  smallint NOT NULL,
  idx    bigint   NOT NULL,
  hash   bytea    NOT NULL,
  PRIMARY KEY (level, idx)
);

CREATE TABLE audit_tree (
  id        integer PRIMARY KEY CHECK (id = 1),
  size      bigint  NOT NULL,
  frontier  bytea   NOT NULL
);
INSERT INTO audit_tree (id, size, frontier) VALUES (1, 0, '\x');

CREATE TABLE audit_heads (
  size        bigint NOT NULL,
  root        bytea  NOT NULL,
  signed_at   bigint NOT NULL,
  public_key  text   NOT NULL,
  signature   bytea  NOT NULL,
  PRIMARY KEY (size, signed_at)
);
