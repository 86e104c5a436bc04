CREATE TABLE overrides_v13 (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        source_key_hash TEXT NOT NULL,
        target_key_hash TEXT NOT NULL,
        source_key TEXT,
        target_key TEXT,
        value INTEGER NOT NULL,
        note TEXT,
        ord INTEGER NOT NULL,
        PRIMARY KEY (page_id, source_key_hash, target_key_hash)
    ) WITHOUT ROWID;
    INSERT INTO overrides_v13 (page_id, source_key_hash, target_key_hash, source_key,
            target_key, value, note, ord)
        SELECT page_id, source_key_hash, target_key_hash, source_key, target_key, value,
            note, ord FROM overrides;
    DROP TABLE overrides;
    ALTER TABLE overrides_v13 RENAME TO overrides;
    CREATE TRIGGER override_log_insert AFTER INSERT ON overrides BEGIN
        INSERT OR REPLACE INTO override_log SELECT NEW.page_id, NEW.source_key_hash,
            NEW.target_key_hash, p.revision, NEW.source_key, NEW.target_key, NEW.value, NEW.note,
            NEW.ord FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER override_log_update AFTER UPDATE ON overrides WHEN OLD.page_id = NEW.page_id BEGIN
        INSERT OR REPLACE INTO override_log SELECT OLD.page_id, OLD.source_key_hash,
            OLD.target_key_hash, p.revision, NULL, NULL, NULL, NULL, NULL FROM pages p
            WHERE p.id = OLD.page_id AND (OLD.source_key_hash IS NOT NEW.source_key_hash
                OR OLD.target_key_hash IS NOT NEW.target_key_hash);
        INSERT OR REPLACE INTO override_log SELECT NEW.page_id, NEW.source_key_hash,
            NEW.target_key_hash, p.revision, NEW.source_key, NEW.target_key, NEW.value, NEW.note,
            NEW.ord FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER override_log_delete AFTER DELETE ON overrides BEGIN
        INSERT OR REPLACE INTO override_log SELECT OLD.page_id, OLD.source_key_hash,
            OLD.target_key_hash, p.revision, NULL, NULL, NULL, NULL, NULL FROM pages p
            WHERE p.id = OLD.page_id;
    END;
