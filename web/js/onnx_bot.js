/**
 * Twin of agents/onnx_bot.py for the browser: an exported bot (bot.onnx + bot.json) played with
 * onnxruntime-web, after the manifest checks of manifest.js. It plays the graph's `action` (the
 * masked argmax) and also returns `masked_logits`, which the hint button shows. A bot of an older
 * observation layout version reads that version's view (a prefix) of the page's observation.
 */

import { LAYOUT } from "./layout.js";
import { BotFileError, checkBotFile } from "./manifest.js";

export const LOAD_TIMEOUT_MS = 30000;

/** A bot answered with an action the mask does not allow (never applied to the game). */
export class IllegalBotActionError extends Error {}

let ortPromise = null;

/** onnxruntime-web, loaded once from the server's /vendor/ort/ on one wasm thread. */
export function loadOrt(base = "/vendor/ort/") {
  if (!ortPromise) {
    ortPromise = import(`${base}ort.wasm.min.mjs`).then((ort) => {
      ort.env.wasm.wasmPaths = base;
      // No COOP/COEP headers are served, so SharedArrayBuffer (and threads) are unavailable.
      ort.env.wasm.numThreads = 1;
      ort.env.logLevel = "error";
      return ort;
    });
    ortPromise.catch(() => {
      ortPromise = null;
    });
  }
  return ortPromise;
}

function withTimeout(promise, ms, message) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new BotFileError(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class OnnxBot {
  constructor(ort, session, manifest, name) {
    this.ort = ort;
    this.session = session;
    this.manifest = manifest;
    this.name = name;
    // The bot reads its own layout version: the first obsSize entries of a newer observation
    // (layouts only append), as agents/onnx_bot.py does. The shipped bots read version 2.
    this.obsSize = LAYOUT.obs_sizes[String(manifest.observation_version)];
  }

  /** {action, logits} for one observation; an action the mask forbids throws. */
  async decide(observation, mask) {
    const { Tensor } = this.ort;
    const view = Float32Array.from(observation).slice(0, this.obsSize); // the bot's layout version
    const feeds = {
      observation: new Tensor("float32", view, [1, this.obsSize]),
      action_mask: new Tensor("bool", Uint8Array.from(mask, (m) => (m ? 1 : 0)), [1, LAYOUT.num_actions]),
    };
    const out = await this.session.run(feeds);
    const action = Number(out.action.data[0]);
    const logits = Array.from(out.masked_logits.data);
    if (!Number.isInteger(action) || action < 0 || action >= LAYOUT.num_actions || !mask[action]) {
      throw new IllegalBotActionError(
        `${this.name} returned action ${action}, which is not legal now (legal: ` +
          `${Array.from(mask).flatMap((m, a) => (m ? [a] : [])).join(", ")}); the move was not played`,
      );
    }
    return { action, logits };
  }

  async act(observation, mask) {
    return (await this.decide(observation, mask)).action;
  }
}

/** Check and load a bot file for this game; every failure is a BotFileError with one clear line. */
export async function loadOnnxBot({ onnxBytes, manifestText, source, numPlayers, rules }) {
  const manifest = await checkBotFile(onnxBytes, manifestText, source, numPlayers, rules);
  let ort;
  try {
    ort = await loadOrt();
  } catch (exc) {
    throw new BotFileError(`onnxruntime-web could not be loaded (${exc.message}); is racko web serving it?`);
  }
  let session;
  try {
    session = await withTimeout(
      ort.InferenceSession.create(new Uint8Array(onnxBytes), { executionProviders: ["wasm"] }),
      LOAD_TIMEOUT_MS,
      `${source}: onnxruntime did not load it within ${LOAD_TIMEOUT_MS / 1000} s`,
    );
  } catch (exc) {
    if (exc instanceof BotFileError) throw exc;
    throw new BotFileError(`${source}: onnxruntime cannot load it: ${exc.message ?? exc}`);
  }
  const names = [...session.inputNames].sort();
  if (names.join(",") !== "action_mask,observation") {
    throw new BotFileError(
      `${source}: graph inputs are [${names.map((n) => `'${n}'`).join(", ")}], expected observation, action_mask`,
    );
  }
  if (!session.outputNames.includes("action") || !session.outputNames.includes("masked_logits")) {
    throw new BotFileError(`${source}: graph outputs must include action and masked_logits`);
  }
  return new OnnxBot(ort, session, manifest, source.replace(/\.onnx$/, ""));
}
