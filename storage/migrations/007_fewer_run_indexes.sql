-- Every run enters and leaves each partial index of open runs once: two
-- pages written per run each. runs_open holds the same runs, by workflow;
-- every open run of every workflow is read through it, sorted (they are
-- few).
DROP INDEX runs_open_ids;
