CREATE TABLE views (
        page_id TEXT NOT NULL,
        author TEXT NOT NULL,
        view_json TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (page_id, author)
    );
