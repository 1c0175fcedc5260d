/**
 * The JS side of the records' differential test (tests/apps/test_record_replay.py): replays each
 * record file named on the command line through web/js/replay.js and prints one JSON object,
 * file -> { states } or { error } (the RecordError's one line).
 *
 *   node web/test/support/replay_records.js a.json b.json > states.json
 */

import { readFileSync, writeFileSync } from "node:fs";

import { RecordError, openRecord } from "../../js/replay.js";

const out = {};
for (const file of process.argv.slice(2)) {
  try {
    out[file] = { states: openRecord(readFileSync(file, "utf8")).states };
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    out[file] = { error: err.message };
  }
}
writeFileSync(1, JSON.stringify(out));
