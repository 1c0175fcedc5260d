/**
 * Loads the Python traces (racko_apps/web_traces.py): from $RACKO_WEB_TRACES, or written now by
 * running the Python writer, so `node --test` alone checks the JS twins against Python.
 */

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

export function loadTraces() {
  let path = process.env.RACKO_WEB_TRACES;
  if (!path) {
    path = join(mkdtempSync(join(tmpdir(), "racko-traces-")), "traces.jsonl");
    const python = process.env.PYTHON ?? "python3";
    execFileSync(python, ["-m", "racko_apps.web_traces", "--out", path, "--episodes", "300"], {
      cwd: ROOT,
      stdio: "inherit",
    });
  }
  const [header, ...lines] = readFileSync(path, "utf8").trim().split("\n");
  return { header: JSON.parse(header), episodes: lines.map((l) => JSON.parse(l)) };
}
