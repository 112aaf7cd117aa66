CREATE TABLE IF NOT EXISTS file_entry (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  customer VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  path VARCHAR(500) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  parent VARCHAR(500) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  folder BOOLEAN NOT NULL,
  content LONGBLOB,
  size BIGINT NOT NULL,
  modified DATETIME(6) NOT NULL,
  deleted_at DATETIME(6),
  KEY file_entry_path (customer, path(250)),
  KEY file_entry_parent (customer, parent(250))
) ENGINE=InnoDB;
CREATE TABLE IF NOT EXISTS usage_report (
  fire_time DATETIME(6) NOT NULL,
  customer VARCHAR(100) NOT NULL,
  files BIGINT NOT NULL,
  bytes BIGINT NOT NULL
) ENGINE=InnoDB;
