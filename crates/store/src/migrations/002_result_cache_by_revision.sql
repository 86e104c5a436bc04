CREATE INDEX compat_results_by_revision ON compat_results (page_id, revision_id);
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);