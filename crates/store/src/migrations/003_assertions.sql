CREATE TABLE assertions (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        ord INTEGER NOT NULL,
        id TEXT NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (page_id, id)
    );
    CREATE TABLE assertion_results (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        assertion_id TEXT NOT NULL,
        passed INTEGER NOT NULL,
        message TEXT,
        actual_json TEXT NOT NULL,
        actual_sha256 TEXT,
        truncated INTEGER NOT NULL,
        run_at TEXT NOT NULL,
        PRIMARY KEY (page_id, revision, assertion_id)
    );