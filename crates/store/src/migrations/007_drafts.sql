CREATE TABLE drafts (
        page_id TEXT NOT NULL,
        author TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('rule', 'policy', 'assertion')),
        item TEXT NOT NULL,
        text TEXT NOT NULL,
        infix INTEGER NOT NULL DEFAULT 0,
        base_json TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (page_id, author, kind, item)
    );