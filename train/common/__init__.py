"""What every trainer shares: config loading (``config``), atomic files and run-folder errors
(``files``), progress and the run log (``progress``), the numpy snapshot of a policy
(``snapshot``), ONNX export of a bot (``onnx_export``) and the planner's cost tables over
afterstates (``afterstate``)."""
