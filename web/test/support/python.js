/**
 * Files the Python side writes for the JS tests (racko_apps/play/web_traces.py): taken from an
 * environment variable when pytest made them, else written now by running Python.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

function fromPython(envVar, name, args) {
  let path = process.env[envVar];
  if (!path) {
    path = join(mkdtempSync(join(tmpdir(), "racko-web-")), name);
    const python = process.env.PYTHON ?? "python3";
    execFileSync(python, ["-m", "racko_apps.play.web_traces", ...args(path)], { cwd: ROOT, stdio: "inherit" });
  }
  return readFileSync(path, "utf8");
}

export function loadTraces() {
  const text = fromPython("RACKO_WEB_TRACES", "traces.jsonl", (p) => ["--out", p, "--episodes", "300"]);
  const [header, ...lines] = text.trim().split("\n");
  return { header: JSON.parse(header), episodes: lines.map((l) => JSON.parse(l)) };
}

export function loadManifestCases() {
  return JSON.parse(fromPython("RACKO_MANIFEST_CASES", "manifests.json", (p) => ["--manifest-cases", p]));
}
