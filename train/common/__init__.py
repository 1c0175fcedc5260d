"""What every trainer shares: the config schema, the run-folder contract, atomic files, the run
log, the evaluation and its record, snapshots and the export of bot files."""
