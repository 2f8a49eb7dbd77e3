-- A workflow may wait for the user to sign in to an account again
-- (block_kind 'auth', DESIGN.md §14). Widening a CHECK changes no row, so
-- the table's definition is edited in place, the procedure SQLite
-- documents for loosening a constraint (ALTER TABLE, "other kinds of table
-- schema changes"); rebuilding the table would trip the foreign keys that
-- refer to it. RESET makes every connection read the new definition.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
	SET sql = replace(sql, '''transient'', ''internal'')', '''transient'', ''internal'', ''auth'')')
	WHERE type = 'table' AND name = 'workflows';
PRAGMA writable_schema = RESET;
