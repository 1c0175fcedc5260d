"""Untrusted bots in child processes: ``SandboxedBot`` (``bot``), the wire protocol, the child,
the isolations (bubblewrap, a user of its own), the process tree, the staged toolkit.
May import ``racko_env``, ``agents`` and the standard library; no other part of ``racko_apps``.
Free of imports: the sandbox stages every package ``__init__`` above the child's modules."""
