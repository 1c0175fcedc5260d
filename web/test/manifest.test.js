/**
 * The JS manifest check accepts and refuses the manifests agents/onnx_bot.py does, in its words,
 * and the SHA-256 check catches a changed byte of a shipped bot.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { BotFileError, checkBotFile, checkManifest, readManifest } from "../js/manifest.js";
import { ROOT, loadManifestCases } from "./support/python.js";

const cases = loadManifestCases();

test(`${cases.length} manifests are accepted or refused as Python does`, () => {
  assert.ok(cases.some((c) => c.error === null) && cases.some((c) => c.error !== null));
  for (const c of cases) {
    let error = null;
    try {
      checkManifest(c.manifest, "bot.onnx", c.num_players, c.rules);
    } catch (exc) {
      assert.ok(exc instanceof BotFileError, `not a BotFileError: ${exc}`);
      error = exc.message;
    }
    assert.equal(error, c.error, JSON.stringify({ players: c.num_players, rules: c.rules }));
  }
});

test("a manifest that is not JSON, or not a racko bot manifest, is refused", () => {
  assert.throws(() => readManifest("{oops", "bot.json"), /bot manifest bot\.json is not valid JSON/);
  assert.throws(() => readManifest('{"format": "other"}', "bot.json"), /not a racko bot manifest/);
  assert.throws(() => readManifest("[1]", "bot.json"), /not a racko bot manifest/);
});

for (const n of [2, 3, 4]) {
  test(`the shipped ${n}-player bot passes its SHA-256 check and a changed byte fails it`, async () => {
    const dir = join(ROOT, "agents", "pretrained");
    const onnx = readFileSync(join(dir, `racko_${n}p.onnx`));
    const json = readFileSync(join(dir, `racko_${n}p.json`), "utf8");
    const manifest = await checkBotFile(onnx, json, `racko_${n}p.onnx`, n, {});
    assert.equal(manifest.num_players, n);
    const bad = Uint8Array.from(onnx);
    bad[bad.length >> 1] ^= 1;
    await assert.rejects(
      checkBotFile(bad, json, `racko_${n}p.onnx`, n, {}),
      /does not match its manifest's onnx_sha256 \(corrupt\?\)/,
    );
  });
}
