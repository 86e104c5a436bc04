CREATE TABLE dataset_rows_v4 (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        side TEXT NOT NULL CHECK (side IN ('source', 'target')),
        ord INTEGER NOT NULL,
        row_key TEXT NOT NULL,
        key_hash TEXT NOT NULL,
        row_json TEXT NOT NULL,
        PRIMARY KEY (page_id, side, ord)
    ) WITHOUT ROWID;
    INSERT INTO dataset_rows_v4 (page_id, side, ord, row_key, key_hash, row_json)
        SELECT page_id, side, ord, row_key, key_hash, row_json FROM dataset_rows;
    DROP TABLE dataset_rows;
    ALTER TABLE dataset_rows_v4 RENAME TO dataset_rows;