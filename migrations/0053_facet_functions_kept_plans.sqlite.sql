-- 0053: PostgreSQL's facet count functions in PL/pgSQL (0053_...postgresql.sql). SQLite
-- keeps its counts in triggers, which it plans with their statement: nothing to change.
SELECT 1;
