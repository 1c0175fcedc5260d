"""What every trainer shares: config loading (``config``), the run-folder contract (``runs``),
atomic JSON/YAML files and run-folder errors (``files``), progress and the run log
(``progress``), the one evaluation of every trainer (``evaluation``) and its record (``eval_record``), the fitting loop (``fitting``), the numpy
snapshot of a policy (``snapshot``), ONNX export of a bot (``onnx_export``) and the planner's
cost tables over afterstates (``afterstate``)."""
