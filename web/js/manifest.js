/**
 * Twin of agents/onnx_bot.py's manifest checks: format, versions, player count, rules, SHA-256.
 *
 * The messages are Python's, word for word, so a bot file is refused for the same reason (and in
 * the same words) in the browser as in `racko play`.
 */

import { LAYOUT } from "./layout.js";
import { pyRepr } from "./pyrepr.js";
import { RulesConfig } from "./config.js";

export const FORMAT = "racko-bot";
export const SUPPORTED_FORMAT_VERSIONS = [1];

/** A bot file that is corrupt, of an unknown format, or made for another game. */
export class BotFileError extends Error {}

/** Parse a manifest's text (the .json beside the .onnx). */
export function readManifest(text, source) {
  let manifest;
  try {
    manifest = JSON.parse(text);
  } catch (exc) {
    throw new BotFileError(`bot manifest ${source} is not valid JSON: ${exc.message}`);
  }
  if (manifest === null || typeof manifest !== "object" || Array.isArray(manifest) || manifest.format !== FORMAT) {
    throw new BotFileError(`${source} is not a racko bot manifest (format != '${FORMAT}')`);
  }
  return manifest;
}

/** Throw BotFileError naming the first way the manifest does not fit the requested game. */
export function checkManifest(manifest, source, numPlayers, rulesOptions = {}) {
  const version = manifest.format_version;
  if (!SUPPORTED_FORMAT_VERSIONS.includes(version)) {
    throw new BotFileError(
      `${source}: bot format version ${pyRepr(version)} is not supported ` +
        `(supported: (${SUPPORTED_FORMAT_VERSIONS.join(", ")},))`,
    );
  }
  const layout = manifest.observation_version;
  const sizes = LAYOUT.obs_sizes;
  if (!Number.isInteger(layout) || !(String(layout) in sizes)) {
    throw new BotFileError(
      `${source}: trained on observation layout version ${pyRepr(layout)}, which this env does ` +
        `not know (it knows versions ${Object.keys(sizes).join(", ")})`,
    );
  }
  if (manifest.observation_size !== sizes[String(layout)]) {
    throw new BotFileError(
      `${source}: the manifest's observation_size is ${pyRepr(manifest.observation_size)}, ` +
        `layout version ${layout} has ${sizes[String(layout)]}`,
    );
  }
  if (manifest.num_players !== numPlayers) {
    throw new BotFileError(
      `${source}: trained for ${pyRepr(manifest.num_players)} players, asked to play with ${numPlayers}`,
    );
  }
  const wanted = new RulesConfig({ num_players: numPlayers, ...rulesOptions }).toDict();
  let trained;
  try {
    trained = new RulesConfig({ num_players: numPlayers, ...(manifest.rules ?? {}) }).toDict();
  } catch (exc) {
    throw new BotFileError(`${source}: the manifest's rules are invalid: ${exc.message}`);
  }
  const diff = Object.keys(wanted).filter((k) => trained[k] !== wanted[k]);
  if (diff.length) {
    const detail = diff
      .map((k) => `${k}: trained ${pyRepr(trained[k])}, asked ${pyRepr(wanted[k])}`)
      .join(", ");
    throw new BotFileError(`${source}: trained for other rules options (${detail})`);
  }
}

/** Lower-case hex SHA-256 of bytes, with WebCrypto (browsers and Node alike). */
export async function sha256Hex(bytes) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The whole check of agents/onnx_bot.load_onnx_bot before the graph is loaded. */
export async function checkBotFile(onnxBytes, manifestText, source, numPlayers, rulesOptions) {
  const manifest = readManifest(manifestText, source.replace(/\.onnx$/, ".json"));
  checkManifest(manifest, source, numPlayers, rulesOptions);
  const digest = manifest.onnx_sha256;
  if (digest !== undefined && digest !== null && (await sha256Hex(onnxBytes)) !== digest) {
    throw new BotFileError(`${source}: the file does not match its manifest's onnx_sha256 (corrupt?)`);
  }
  return manifest;
}
