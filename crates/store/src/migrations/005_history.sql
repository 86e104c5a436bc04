ALTER TABLE revisions ADD COLUMN author TEXT;
    CREATE TABLE page_log (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        name TEXT NOT NULL,
        description TEXT,
        organization_json TEXT,
        source_json TEXT NOT NULL,
        target_json TEXT NOT NULL,
        device_policy_json TEXT NOT NULL,
        selection_policy_json TEXT NOT NULL,
        PRIMARY KEY (page_id, revision)
    ) WITHOUT ROWID;
    CREATE TABLE row_log (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        side TEXT NOT NULL,
        ord INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        row_key TEXT,
        key_hash TEXT,
        row_json TEXT,
        PRIMARY KEY (page_id, side, ord, revision)
    ) WITHOUT ROWID;
    CREATE TABLE rule_log (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        organization_id TEXT,
        ord INTEGER,
        name TEXT,
        required INTEGER,
        weight REAL,
        category TEXT,
        description TEXT,
        logic_json TEXT,
        PRIMARY KEY (page_id, id, revision)
    ) WITHOUT ROWID;
    CREATE TABLE override_log (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        source_key_hash TEXT NOT NULL,
        target_key_hash TEXT NOT NULL,
        revision INTEGER NOT NULL,
        source_key TEXT,
        target_key TEXT,
        value INTEGER,
        note TEXT,
        ord INTEGER,
        PRIMARY KEY (page_id, source_key_hash, target_key_hash, revision)
    ) WITHOUT ROWID;
    CREATE TABLE assertion_log (
        page_id TEXT NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        ord INTEGER,
        json TEXT,
        PRIMARY KEY (page_id, id, revision)
    ) WITHOUT ROWID;

    INSERT INTO page_log SELECT id, revision, name, description, organization_json, source_json,
        target_json, device_policy_json, selection_policy_json FROM pages;
    INSERT INTO row_log SELECT d.page_id, d.side, d.ord, p.revision, d.row_key, d.key_hash, d.row_json
        FROM dataset_rows d JOIN pages p ON p.id = d.page_id;
    INSERT INTO rule_log SELECT r.page_id, r.id, p.revision, r.organization_id, r.ord, r.name,
        r.required, r.weight, r.category, r.description, r.logic_json
        FROM rules r JOIN pages p ON p.id = r.page_id;
    INSERT INTO override_log SELECT o.page_id, o.source_key_hash, o.target_key_hash, p.revision,
        o.source_key, o.target_key, o.value, o.note, o.ord
        FROM overrides o JOIN pages p ON p.id = o.page_id;
    INSERT INTO assertion_log SELECT a.page_id, a.id, p.revision, a.ord, a.json
        FROM assertions a JOIN pages p ON p.id = a.page_id;

    CREATE TRIGGER page_log_insert AFTER INSERT ON pages BEGIN
        INSERT OR REPLACE INTO page_log VALUES (NEW.id, NEW.revision, NEW.name, NEW.description,
            NEW.organization_json, NEW.source_json, NEW.target_json, NEW.device_policy_json,
            NEW.selection_policy_json);
    END;
    CREATE TRIGGER page_log_update AFTER UPDATE OF name, description, organization_json,
        source_json, target_json, device_policy_json, selection_policy_json ON pages BEGIN
        INSERT OR REPLACE INTO page_log VALUES (NEW.id, NEW.revision, NEW.name, NEW.description,
            NEW.organization_json, NEW.source_json, NEW.target_json, NEW.device_policy_json,
            NEW.selection_policy_json);
    END;

    CREATE TRIGGER row_log_insert AFTER INSERT ON dataset_rows BEGIN
        INSERT OR REPLACE INTO row_log SELECT NEW.page_id, NEW.side, NEW.ord, p.revision,
            NEW.row_key, NEW.key_hash, NEW.row_json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER row_log_update AFTER UPDATE ON dataset_rows WHEN OLD.page_id = NEW.page_id BEGIN
        INSERT OR REPLACE INTO row_log SELECT OLD.page_id, OLD.side, OLD.ord, p.revision,
            NULL, NULL, NULL FROM pages p WHERE p.id = OLD.page_id
            AND (OLD.side IS NOT NEW.side OR OLD.ord IS NOT NEW.ord);
        INSERT OR REPLACE INTO row_log SELECT NEW.page_id, NEW.side, NEW.ord, p.revision,
            NEW.row_key, NEW.key_hash, NEW.row_json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER row_log_delete AFTER DELETE ON dataset_rows BEGIN
        INSERT OR REPLACE INTO row_log SELECT OLD.page_id, OLD.side, OLD.ord, p.revision,
            NULL, NULL, NULL FROM pages p WHERE p.id = OLD.page_id;
    END;

    CREATE TRIGGER rule_log_insert AFTER INSERT ON rules BEGIN
        INSERT OR REPLACE INTO rule_log SELECT NEW.page_id, NEW.id, p.revision,
            NEW.organization_id, NEW.ord, NEW.name, NEW.required, NEW.weight, NEW.category,
            NEW.description, NEW.logic_json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER rule_log_update AFTER UPDATE ON rules WHEN OLD.page_id = NEW.page_id BEGIN
        INSERT OR REPLACE INTO rule_log SELECT OLD.page_id, OLD.id, p.revision,
            NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM pages p
            WHERE p.id = OLD.page_id AND OLD.id IS NOT NEW.id;
        INSERT OR REPLACE INTO rule_log SELECT NEW.page_id, NEW.id, p.revision,
            NEW.organization_id, NEW.ord, NEW.name, NEW.required, NEW.weight, NEW.category,
            NEW.description, NEW.logic_json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER rule_log_delete AFTER DELETE ON rules BEGIN
        INSERT OR REPLACE INTO rule_log SELECT OLD.page_id, OLD.id, p.revision,
            NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM pages p WHERE p.id = OLD.page_id;
    END;

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

    CREATE TRIGGER assertion_log_insert AFTER INSERT ON assertions BEGIN
        INSERT OR REPLACE INTO assertion_log SELECT NEW.page_id, NEW.id, p.revision, NEW.ord,
            NEW.json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER assertion_log_update AFTER UPDATE ON assertions WHEN OLD.page_id = NEW.page_id BEGIN
        INSERT OR REPLACE INTO assertion_log SELECT OLD.page_id, OLD.id, p.revision, NULL, NULL
            FROM pages p WHERE p.id = OLD.page_id AND OLD.id IS NOT NEW.id;
        INSERT OR REPLACE INTO assertion_log SELECT NEW.page_id, NEW.id, p.revision, NEW.ord,
            NEW.json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER assertion_log_delete AFTER DELETE ON assertions BEGIN
        INSERT OR REPLACE INTO assertion_log SELECT OLD.page_id, OLD.id, p.revision, NULL, NULL
            FROM pages p WHERE p.id = OLD.page_id;
    END;