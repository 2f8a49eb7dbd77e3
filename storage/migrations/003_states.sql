-- approved is a mutation status (the user said yes; not sent yet); a refused
-- credential (auth) and a refused permission are block kinds of their own.
-- Only CHECK constraints widen, and every existing row satisfies the wider
-- ones, so the stored schema is edited in place (SQLite "ALTER TABLE", §7:
-- "making other kinds of table schema changes") instead of copying tables.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, '''repair'', ''transient'', ''internal'')', '''repair'', ''transient'', ''internal'', ''auth'', ''permission'')')
 WHERE type = 'table' AND name = 'workflows';
UPDATE sqlite_schema
   SET sql = replace(sql, '(''awaiting_approval'', ''in_flight'',', '(''awaiting_approval'', ''approved'', ''in_flight'',')
 WHERE type = 'table' AND name = 'mutations';
PRAGMA writable_schema = OFF;
