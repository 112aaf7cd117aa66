-- locks: schema for MySQL 8+ and MariaDB 10.6+ (InnoDB). ${prefix} is the table prefix (default locks_).
-- Paths and tenants are VARBINARY (UTF-8 bytes): comparisons are exact and byte-ordered, with no
-- PAD SPACE and no collation folding. Index prefixes stay under InnoDB's 3072-byte key limit.

-- One row per granted path. The id is the fencing token: InnoDB's auto-increment is persistent.
CREATE TABLE IF NOT EXISTS ${prefix}held (
  id BIGINT NOT NULL AUTO_INCREMENT,
  grant_id CHAR(32) CHARACTER SET ascii NOT NULL,
  owner_token CHAR(32) CHARACTER SET ascii NOT NULL,
  kind CHAR(1) CHARACTER SET ascii NOT NULL,
  tenant VARBINARY(760) NOT NULL,
  path VARBINARY(16000) NOT NULL,
  lock_key BINARY(32) NOT NULL,
  scope_key BINARY(32) NOT NULL,
  lock_mode CHAR(1) CHARACTER SET ascii NOT NULL,
  permits INT NOT NULL,
  node VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL,
  thread VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL,
  acquired_at DATETIME(6) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  PRIMARY KEY (id),
  KEY ${prefix}held_key (lock_key, expires_at),
  KEY ${prefix}held_subtree (scope_key, path(3000)),
  KEY ${prefix}held_grant (grant_id),
  KEY ${prefix}held_expiry (expires_at)
) ENGINE=InnoDB ROW_FORMAT=DYNAMIC;

-- Serialisation points: grant transactions lock the rows of a path's ancestors (shared) and of the
-- path itself (exclusive). Rows are created on first use and may be purged at any time.
CREATE TABLE IF NOT EXISTS ${prefix}node (
  lock_key BINARY(32) NOT NULL,
  created_at DATETIME(6) NOT NULL,
  PRIMARY KEY (lock_key),
  KEY ${prefix}node_created (created_at)
) ENGINE=InnoDB;

-- Waiting requests, one row per path, with a short lease renewed while they wait. The id is the
-- ticket: a waiter blocks later conflicting requests (first come, first served, no writer starvation).
CREATE TABLE IF NOT EXISTS ${prefix}wait LIKE ${prefix}held;
