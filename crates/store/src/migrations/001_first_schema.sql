CREATE TABLE pages (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        description TEXT,
        organization_json TEXT,
        source_json TEXT NOT NULL,
        target_json TEXT NOT NULL,
        device_policy_json TEXT NOT NULL,
        selection_policy_json TEXT NOT NULL,
        revision INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE dataset_rows (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        side TEXT NOT NULL CHECK (side IN ('source', 'target')),
        ord INTEGER NOT NULL,
        row_key TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        row_json TEXT NOT NULL,
        PRIMARY KEY (page_id, side, ord),
        UNIQUE (page_id, side, key_hash)
    );
    CREATE TABLE rules (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        organization_id TEXT NOT NULL,
        id TEXT NOT NULL,
        ord INTEGER NOT NULL,
        name TEXT NOT NULL,
        required INTEGER NOT NULL,
        weight REAL NOT NULL,
        category TEXT NOT NULL,
        description TEXT,
        logic_json TEXT NOT NULL,
        PRIMARY KEY (page_id, id)
    );
    CREATE TABLE overrides (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        source_key_hash TEXT NOT NULL,
        target_key_hash TEXT NOT NULL,
        source_key TEXT,
        target_key TEXT,
        value INTEGER NOT NULL,
        note TEXT,
        ord INTEGER NOT NULL,
        PRIMARY KEY (page_id, source_key_hash, target_key_hash)
    );
    CREATE TABLE revisions (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        change TEXT NOT NULL,
        PRIMARY KEY (page_id, revision)
    );
    CREATE TABLE rule_history (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        rule_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        rule_json TEXT,
        PRIMARY KEY (page_id, rule_id, revision)
    );
    CREATE TABLE compat_results (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        selection_hash TEXT NOT NULL,
        revision_id INTEGER NOT NULL,
        page_num INTEGER NOT NULL,
        payload_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (page_id, selection_hash, revision_id, page_num)
    );