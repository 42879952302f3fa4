-- perflab's shared store, schema version 1: runs and tags (docs/shared-store.md).
-- Applied by perflab through refinery; never edit a migration that has shipped (its
-- checksum is recorded in perflab_schema_history): add the next one instead.

-- The two group roles: members of perflab_writer upload runs and tag them, members of
-- perflab_reader (what 'perflab serve' connects as) only read. Login roles join them:
--   CREATE ROLE ci LOGIN PASSWORD '...' IN ROLE perflab_writer;
-- An administrator may make them beforehand; else the store's owner needs CREATEROLE.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'perflab_writer') THEN
        CREATE ROLE perflab_writer NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'perflab_reader') THEN
        CREATE ROLE perflab_reader NOLOGIN;
    END IF;
END
$$;

CREATE TABLE perflab_runs (
    -- The run's id as its machine named it, or with '-HOST-MACHINE' added when another
    -- host's run took it first (as 'perflab import' does). "C" collation: a prefix
    -- (LIKE 'x%') is a range of the primary key's index.
    id text COLLATE "C" PRIMARY KEY,
    host text NOT NULL,
    machine text,
    started_at timestamptz NOT NULL,
    status text NOT NULL,
    workload text NOT NULL,
    target text NOT NULL,
    suite text,
    steps integer NOT NULL,
    -- The headline figure's name and its best step's mean (what 'perflab runs' shows).
    headline_metric text NOT NULL,
    peak_value double precision,
    command text NOT NULL,
    settings text NOT NULL,
    -- The whole record, as run.json holds it.
    record jsonb NOT NULL,
    uploaded_at timestamptz NOT NULL DEFAULT now(),
    uploaded_by text NOT NULL DEFAULT current_user
);
CREATE INDEX perflab_runs_newest ON perflab_runs (started_at DESC, id DESC);
CREATE INDEX perflab_runs_host_newest ON perflab_runs (host, started_at DESC, id DESC);

CREATE TABLE perflab_tags (
    name text COLLATE "C" PRIMARY KEY,
    run_id text COLLATE "C" NOT NULL REFERENCES perflab_runs (id),
    tagged_at timestamptz NOT NULL DEFAULT now(),
    tagged_by text NOT NULL DEFAULT current_user
);

GRANT SELECT ON perflab_runs, perflab_tags, perflab_schema_history
    TO perflab_reader, perflab_writer;
-- UPDATE: a machine sending a newer version of its own run (same id, host and machine).
GRANT INSERT, UPDATE ON perflab_runs, perflab_tags TO perflab_writer;
