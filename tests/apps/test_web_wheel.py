"""``racko web`` from a plain package install: the page ships in the wheel, onnxruntime-web is
fetched by ``racko web --fetch-ort`` (checked against web/package-lock.json), and a wheel installed
in a fresh venv serves the page from an empty folder."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import urllib.request
from pathlib import Path

import pytest

from racko_apps.play import web

ROOT = Path(__file__).resolve().parents[2]


def test_the_pinned_onnxruntime_web_is_the_lock_files() -> None:
    lock = json.loads((ROOT / "web" / "package-lock.json").read_text())
    entry = lock["packages"]["node_modules/onnxruntime-web"]
    assert (entry["version"], entry["integrity"]) == (web.ORT_VERSION, web.ORT_INTEGRITY)
    assert entry["license"] == "MIT"


def fake_package(tmp_path: Path) -> tuple[str, str]:
    """An npm tarball laid out like onnxruntime-web's, as a file:// URL and its integrity."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in (*[f"dist/{f}" for f in web.ORT_FILES], "package.json", "dist/other.mjs"):
            data = f"// {name}\n".encode()
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path = tmp_path / "ort.tgz"
    path.write_bytes(buf.getvalue())
    digest = base64.b64encode(hashlib.sha512(buf.getvalue()).digest()).decode()
    return path.as_uri(), f"sha512-{digest}"


def test_fetch_ort_keeps_the_checked_files_in_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    url, integrity = fake_package(tmp_path)
    bad = "sha512-" + base64.b64encode(b"\0" * 64).decode()
    with pytest.raises(web.SetupError, match="does not match"):
        web.fetch_ort(url, bad)
    assert not web.ort_cache_dir().exists()
    target = web.fetch_ort(url, integrity)
    assert target == web.ort_cache_dir()
    assert sorted(p.name for p in target.iterdir()) == sorted([*web.ORT_FILES, "package.json"])


def test_racko_help_offers_only_commands_that_exist() -> None:
    from racko_apps.cli import SUBCOMMANDS, _usage

    usage = _usage()
    for name, (target, _) in SUBCOMMANDS.items():
        module = target.partition(":")[0]
        assert f"  {name}" in usage and (ROOT / (module.replace(".", "/") + ".py")).is_file()


@pytest.mark.slow
def test_the_wheel_installed_in_a_fresh_venv_serves_the_page(tmp_path) -> None:
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)]
    try:
        import setuptools  # noqa: F401

        build.insert(4, "--no-build-isolation")  # no download of setuptools
    except ImportError:
        pass
    leftovers = [ROOT / "build", *ROOT.glob("*.egg-info")]
    existed = {p for p in leftovers if p.exists()}
    try:
        subprocess.run(build, check=True, timeout=600, capture_output=True)
    finally:  # setuptools builds in the source tree: leave the checkout as it was
        for p in leftovers:
            if p not in existed:
                shutil.rmtree(p, ignore_errors=True)
    (wheel,) = wheels.glob("racko-*.whl")
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300
    )
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    pip = [str(bindir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall"]
    subprocess.run([*pip, str(wheel)], check=True, timeout=600, capture_output=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    where = subprocess.run(
        [str(bindir / "python"), "-c", "import racko_apps.play.web as w; print(w.WEB_DIR)"],
        cwd=empty,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the wheel's, not ours
    racko = [str(bindir / "racko"), "web", "--port", "0"]
    refused = subprocess.run(racko, cwd=empty, env=env, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 1 and "racko web --fetch-ort" in refused.stderr
    # what --fetch-ort leaves (its download is tested above, without the network)
    cache = Path(env["XDG_CACHE_HOME"]) / "racko" / f"onnxruntime-web-{web.ORT_VERSION}"
    cache.mkdir(parents=True)
    for name in web.ORT_FILES:
        (cache / name).write_text(f"// {name}\n")
    proc = subprocess.Popen(
        racko,
        cwd=empty,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # stopped by SIGTERM: at its default, whatever a caller (nohup, a CI runner) ignores
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    try:
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + proc.stderr.read()
        base = line.split("http://", 1)[1].split("/", 1)[0]
        for path, words in [
            ("/", b"Rack-O"),
            ("/js/app.js", b"import"),
            ("/bots/racko_2p.json", b"racko-bot"),
            ("/vendor/ort/ort.wasm.min.mjs", b"ort.wasm.min.mjs"),
        ]:
            with urllib.request.urlopen(f"http://{base}{path}", timeout=30) as resp:
                assert resp.status == 200 and words in resp.read(), path
    finally:
        proc.terminate()
        proc.wait(timeout=30)
