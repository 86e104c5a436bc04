ALTER TABLE pages ADD COLUMN expectations_json TEXT;
    ALTER TABLE page_log ADD COLUMN expectations_json TEXT;
    DROP TRIGGER page_log_insert;
    DROP TRIGGER page_log_update;
    CREATE TRIGGER page_log_insert AFTER INSERT ON pages BEGIN
        INSERT OR REPLACE INTO page_log VALUES (NEW.id, NEW.revision, NEW.name, NEW.description,
            NEW.organization_json, NEW.source_json, NEW.target_json, NEW.device_policy_json,
            NEW.selection_policy_json, NEW.expectations_json);
    END;
    CREATE TRIGGER page_log_update AFTER UPDATE OF name, description, organization_json,
        source_json, target_json, device_policy_json, selection_policy_json, expectations_json
        ON pages BEGIN
        INSERT OR REPLACE INTO page_log VALUES (NEW.id, NEW.revision, NEW.name, NEW.description,
            NEW.organization_json, NEW.source_json, NEW.target_json, NEW.device_policy_json,
            NEW.selection_policy_json, NEW.expectations_json);
    END;
