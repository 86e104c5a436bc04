ALTER TABLE rules ADD COLUMN family_json TEXT;
    ALTER TABLE rule_log ADD COLUMN family_json TEXT;
    DROP TRIGGER rule_log_insert;
    DROP TRIGGER rule_log_update;
    DROP TRIGGER rule_log_delete;
    CREATE TRIGGER rule_log_insert AFTER INSERT ON rules BEGIN
        INSERT OR REPLACE INTO rule_log SELECT NEW.page_id, NEW.id, p.revision,
            NEW.organization_id, NEW.ord, NEW.name, NEW.required, NEW.weight, NEW.category,
            NEW.description, NEW.logic_json, NEW.expression, NEW.warning_json,
            NEW.applies_when_json, NEW.family_json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER rule_log_update AFTER UPDATE ON rules WHEN OLD.page_id = NEW.page_id BEGIN
        INSERT OR REPLACE INTO rule_log SELECT OLD.page_id, OLD.id, p.revision,
            NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM pages p
            WHERE p.id = OLD.page_id AND OLD.id IS NOT NEW.id;
        INSERT OR REPLACE INTO rule_log SELECT NEW.page_id, NEW.id, p.revision,
            NEW.organization_id, NEW.ord, NEW.name, NEW.required, NEW.weight, NEW.category,
            NEW.description, NEW.logic_json, NEW.expression, NEW.warning_json,
            NEW.applies_when_json, NEW.family_json FROM pages p WHERE p.id = NEW.page_id;
    END;
    CREATE TRIGGER rule_log_delete AFTER DELETE ON rules BEGIN
        INSERT OR REPLACE INTO rule_log SELECT OLD.page_id, OLD.id, p.revision,
            NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM pages p WHERE p.id = OLD.page_id;
    END;
