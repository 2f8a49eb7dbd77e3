-- keep:no-transaction
-- Retention (keep gc) deletes old traces and runs; with auto_vacuum
-- INCREMENTAL the freed pages can be given back to the file system by
-- PRAGMA incremental_vacuum. An existing file only switches mode through
-- one VACUUM, which cannot run inside a transaction (both are idempotent).
PRAGMA auto_vacuum = INCREMENTAL;
VACUUM;
