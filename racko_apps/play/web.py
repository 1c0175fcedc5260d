"""``racko web``: serve the browser game (``web/``) on 127.0.0.1.

The page runs the rules engine in JS and the exported bots with onnxruntime-web, so the server
only hands out files: the page, the shipped bots under ``/bots/`` and onnxruntime-web under
``/vendor/ort/``; nothing else is reachable. onnxruntime-web is not in the wheel: in a checkout
it is ``web/node_modules`` (``npm ci --prefix web``); elsewhere ``racko web --fetch-ort``
downloads the version web/package-lock.json pins, checked against its sha512, into the user's
cache (docs/bots/play-web.md).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from urllib.parse import unquote, urlsplit

from racko_env.cli import OneLineParser

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# the package's copy (a link to web/ in a checkout); web/ itself where links are not checked out
WEB_DIR = HERE / "web_static" if (HERE / "web_static" / "index.html").is_file() else ROOT / "web"
BOTS_DIR = ROOT / "agents" / "pretrained"
# The onnxruntime-web files the page loads (the wasm-only build and its runtime).
ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
# What web/package-lock.json pins (a test keeps these equal to it).
ORT_VERSION = "1.30.0"
ORT_INTEGRITY = "sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAfKYQ=="
ORT_URL = f"https://registry.npmjs.org/onnxruntime-web/-/onnxruntime-web-{ORT_VERSION}.tgz"
FETCH_ORT = "racko web --fetch-ort"


def ort_cache_dir() -> Path:
    """Where ``--fetch-ort`` keeps onnxruntime-web: the user's cache folder, per version."""
    base = os.environ.get("XDG_CACHE_HOME") or os.environ.get("LOCALAPPDATA")
    root = Path(base) if base else Path.home() / ".cache"
    return root / "racko" / f"onnxruntime-web-{ORT_VERSION}"


def ort_dir() -> Path:
    """The checkout's npm copy where it is complete, else the cache (fetched or not yet)."""
    npm = ROOT / "web" / "node_modules" / "onnxruntime-web" / "dist"
    if all((npm / name).is_file() for name in ORT_FILES):
        return npm
    return ort_cache_dir()


def fetch_ort(url: str = ORT_URL, integrity: str = ORT_INTEGRITY) -> Path:
    """Download onnxruntime-web, check it against the lock file's sha512, and keep the files
    the page loads and its package.json (its license) in ``ort_cache_dir()``, all or nothing."""
    import base64
    import hashlib
    import io
    import shutil
    import tarfile
    import tempfile
    import urllib.request

    with urllib.request.urlopen(url, timeout=120) as response:  # noqa: S310 - a fixed https URL
        data = response.read()
    algo, _, expected = integrity.partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != expected:
        raise SetupError(f"{url} does not match the {algo} of web/package-lock.json; not kept")
    target = ort_cache_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".ort-", dir=target.parent))
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for name in (*ORT_FILES, "package.json"):  # package.json: its version and license
                member = f"package/dist/{name}" if name in ORT_FILES else f"package/{name}"
                try:
                    source = tar.extractfile(member)
                except KeyError:
                    source = None
                if source is None:
                    raise SetupError(f"{url} holds no {member}")
                (staging / name).write_bytes(source.read())
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


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
        return ort_dir() / parts[2]
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
    where = ort_dir()
    missing = [name for name in ORT_FILES if not (where / name).is_file()]
    if missing:
        raise SetupError(
            f"onnxruntime-web is not here ({', '.join(missing)} missing under {where}); "
            f"run: {FETCH_ORT} (or in a checkout: npm ci --prefix web)"
        )


def make_server(port: int, verbose: bool = False) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1:port (0 picks a free port)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), partial(Handler, directory=str(WEB_DIR)))
    server.verbose = verbose  # type: ignore[attr-defined]
    server.daemon_threads = True
    return server


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(
        prog="racko web",
        description="Serve the browser game on 127.0.0.1 (see docs/bots/play-web.md).",
    )
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    parser.add_argument(
        "--fetch-ort",
        action="store_true",
        help=f"download onnxruntime-web {ORT_VERSION} (MIT) from the npm registry into the "
        "user's cache, checked against web/package-lock.json, and exit",
    )
    args = parser.parse_args(argv)
    if args.fetch_ort:
        try:
            print(f"onnxruntime-web {ORT_VERSION} is in {fetch_ort()}")
        except (OSError, SetupError) as exc:
            print(f"racko web: cannot fetch onnxruntime-web from {ORT_URL}: {exc}", file=sys.stderr)
            return 1
        return 0
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
