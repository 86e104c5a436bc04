DROP TRIGGER row_log_insert;
    DROP TRIGGER row_log_update;
    DROP TRIGGER row_log_delete;
    ALTER TABLE dataset_rows ADD COLUMN revision INTEGER;
