-- manifest is what a script version may do, as the analysis that validated
-- it named it (sandbox.Manifest, JSON): its connector methods with their
-- phases, the hosts its literal URLs name, its topics. The engine holds
-- every call of the running version against it. Versions stored before
-- have none (''): the engine names theirs from the source when it loads
-- them.
ALTER TABLE script_versions ADD COLUMN manifest TEXT NOT NULL DEFAULT '';
