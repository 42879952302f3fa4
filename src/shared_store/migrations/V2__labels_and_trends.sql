-- perflab's shared store, schema version 2: labels (--label KEY=VALUE) and the figures a
-- trend reads, as columns so that a trend over many runs reads no records.
ALTER TABLE perflab_runs
    ADD COLUMN labels jsonb NOT NULL DEFAULT '{}'::jsonb,
    ADD COLUMN headline_mean double precision,
    ADD COLUMN headline_low double precision,
    ADD COLUMN headline_high double precision,
    ADD COLUMN headline_n integer,
    ADD COLUMN higher_is_better boolean NOT NULL DEFAULT true;
UPDATE perflab_runs SET higher_is_better = (record -> 'headline' ->> 'higher_is_better')::boolean
    WHERE record -> 'headline' ->> 'higher_is_better' IS NOT NULL;

-- Runs sent by a perflab of schema 1 carry no labels (there were none then); their figures
-- are left for the next upload of the same run, and 'perflab trend' skips a run without.
UPDATE perflab_runs SET labels = record -> 'labels' WHERE record ? 'labels';

CREATE INDEX perflab_runs_labels ON perflab_runs USING gin (labels jsonb_path_ops);
CREATE INDEX perflab_runs_trend ON perflab_runs (headline_metric, started_at DESC);
