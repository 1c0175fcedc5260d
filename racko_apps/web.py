"""``racko web``: serve the browser game (``web/``) on 127.0.0.1.

The page runs the rules engine in JS (``web/js``, kept equal to ``racko_env`` by a differential test)
and the exported bots with onnxruntime-web, so the server only hands out files: the page itself,
the shipped bots (``agents/pretrained/racko_{2,3,4}p.onnx`` + ``.json``) under ``/bots/``, and the
three onnxruntime-web files from ``web/node_modules`` under ``/vendor/ort/``. Nothing else is
reachable: paths are resolved and must stay inside those roots. No COOP/COEP headers are sent, so
the page runs onnxruntime-web's wasm on one thread (``docs/web.md``).

    racko web --port 8000
    python -m racko_apps.web --port 8000
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
WEB_DIR = ROOT / "web"
BOTS_DIR = ROOT / "agents" / "pretrained"
ORT_DIR = WEB_DIR / "node_modules" / "onnxruntime-web" / "dist"
# The onnxruntime-web files the page loads (the wasm-only build and its runtime).
ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
BOT_FILES = tuple(f"racko_{n}p.{ext}" for n in (2, 3, 4) for ext in ("onnx", "json"))
# Served from web/: the page and its modules; never node_modules, tests or anything else.
WEB_FILES = ("index.html", "style.css")
WEB_DIRS = ("js",)
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".wasm": "application/wasm",
    ".onnx": "application/octet-stream",
}


class SetupError(RuntimeError):
    """Something the server needs is missing (a one-line message for the user)."""


def resolve(url_path: str) -> Path | None:
    """The file a URL path names, or None when it is outside what the server serves."""
    path = unquote(urlsplit(url_path).path)
    if path in ("", "/"):
        path = "/index.html"
    parts = path.lstrip("/").split("/")
    if any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
        return None
    if len(parts) == 2 and parts[0] == "bots" and parts[1] in BOT_FILES:
        return BOTS_DIR / parts[1]
    if len(parts) == 3 and parts[:2] == ["vendor", "ort"] and parts[2] in ORT_FILES:
        return ORT_DIR / parts[2]
    if len(parts) == 1 and parts[0] in WEB_FILES:
        return WEB_DIR / parts[0]
    if len(parts) >= 2 and parts[0] in WEB_DIRS and Path(parts[-1]).suffix == ".js":
        target = (WEB_DIR / Path(*parts)).resolve()
        base = (WEB_DIR / parts[0]).resolve()
        if target.is_relative_to(base):
            return target
    return None


class Handler(SimpleHTTPRequestHandler):
    """GET/HEAD of the files ``resolve`` allows; 404 for anything else (no directory listings)."""

    server_version = "racko-web"

    def send_head(self):  # type: ignore[no-untyped-def]
        target = resolve(self.path)
        if target is None or not target.is_file():
            self.send_error(HTTPStatus.NOT_FOUND, "not served")
            return None
        data = target.read_bytes()
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", TYPES.get(target.suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        return BytesIO(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        if self.server.verbose:  # type: ignore[attr-defined]
            super().log_message(format, *args)


def check_setup() -> None:
    """Refuse to start without the page or onnxruntime-web (a one-line reason, no traceback)."""
    if not (WEB_DIR / "index.html").is_file():
        raise SetupError(f"the page is missing: {WEB_DIR / 'index.html'}")
    missing = [name for name in ORT_FILES if not (ORT_DIR / name).is_file()]
    if missing:
        raise SetupError(
            f"onnxruntime-web is not installed ({', '.join(missing)} missing under {ORT_DIR}); "
            "run: npm ci --prefix web"
        )


def make_server(port: int, verbose: bool = False) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1:port (0 picks a free port)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(Handler, directory=str(WEB_DIR)))
    server.verbose = verbose  # type: ignore[attr-defined]
    server.daemon_threads = True
    return server


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="racko web", description="Serve the browser game on 127.0.0.1 (see docs/web.md)."
    )
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        print(f"racko web: --port must be 0..65535, got {args.port}", file=sys.stderr)
        return 2
    try:
        check_setup()
        server = make_server(args.port, args.verbose)
    except SetupError as exc:
        print(f"racko web: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"racko web: cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 1
    host, port = server.server_address[:2]
    print(f"Rack-O in the browser: http://{host}:{port}/  (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
