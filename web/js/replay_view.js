/**
 * The page's replay of a recorded game (racko-record/1, written by `--record` of racko play,
 * evaluate, grade and league): open a record file, step forward and back, every rack face up.
 *
 * The states come from web/js/replay.js, which plays the record's moves through the JS engine and
 * checks them against the record's result; a file that is not a record, or does not replay,
 * shows one line in the message box. The new-game form and the table are hidden while a replay
 * is shown; "Close replay" brings the form back.
 */

import { DRAW_PILE, TAKE_DISCARD } from "./actions.js";
import { describeAction, slotName } from "./describe.js";
import { RecordError, openRecord } from "./replay.js";
import { ascendingPrefix } from "./rules.js";

const $ = (id) => document.getElementById(id);
const view = { record: null, states: [], k: 0 };

// Read by the browser test: the step shown and the state behind it.
window.rackoReplay = view;

function who(seat) {
  return `player_${seat} (${view.record.seats[seat].bot})`;
}

function showError(text) {
  $("message").textContent = text;
  $("message").hidden = false;
}

function cardEl(value, cls = "") {
  const el = document.createElement("div");
  el.className = `card ${cls}`.trim();
  el.textContent = value ? String(value) : "";
  return el;
}

/** A bot's 1-10 slot numbers as the page's slot labels, 'slot 7' -> 'slot 35' (as the terminal
 * game's label_bot_slots does), so a move and its explanation use one numbering. */
function labelBotSlots(text) {
  return text.replace(/\bslot (10|[1-9])\b/g, (_, k) => `slot ${slotName(Number(k) - 1)}`);
}

function moveText(k) {
  const move = view.record.moves[k - 1];
  const before = view.states[k - 1];
  let card = null;
  if (move.action === TAKE_DISCARD) card = before.discard.at(-1) ?? null;
  else if (move.action !== DRAW_PILE) card = before.held;
  return `${who(move.seat)}: ${describeAction(move.action, card)}`;
}

function render() {
  const { record, states, k } = view;
  const s = states[k];
  const last = states.length - 1;
  $("replay-step").textContent = `move ${k} of ${last} · round ${s.round}, turn ${s.turn}, dealer player_${s.dealer}`;
  const racks = $("replay-racks");
  racks.replaceChildren();
  const lastMove = k ? record.moves[k - 1] : null;
  s.racks.forEach((rack, seat) => {
    const box = document.createElement("div");
    box.className = `replay-seat${seat === s.current && !s.round_over ? " on-turn" : ""}`;
    box.dataset.seat = String(seat);
    const h = document.createElement("h3");
    h.textContent = `${who(seat)} · score ${s.totals[seat]}`;
    const row = document.createElement("div");
    row.className = "rack";
    const good = ascendingPrefix(rack);
    rack.forEach((c, slot) => {
      const el = document.createElement("div");
      el.className = "slot";
      const name = document.createElement("div");
      name.className = "name";
      name.textContent = slotName(slot);
      let cls = slot < good ? "counts" : "";
      if (lastMove && lastMove.seat === seat && lastMove.action === slot) cls += " moved";
      el.append(name, cardEl(c, cls));
      row.append(el);
    });
    box.append(h, row);
    racks.append(box);
  });
  const top = s.discard.length ? s.discard.at(-1) : "empty";
  let piles = `Discard pile: ${top} · Draw pile: ${s.draw.length} cards`;
  if (s.held !== null) piles += ` · In hand: ${s.held} (from the ${s.held_from_discard ? "discard" : "draw"} pile)`;
  $("replay-piles").textContent = piles;
  $("replay-move").textContent = k ? moveText(k) : "The first deal.";
  const why = lastMove?.explain;
  $("replay-why").textContent = why ? `Why: ${labelBotSlots(why)}` : "";
  let status;
  if (s.round_over) {
    const how = s.racko_player !== null ? `${who(s.racko_player)} went Rack-O` : "cut off at the turn limit";
    status = `Round ${s.round} over: ${how}; round points ${s.round_points.join(", ")}.`;
  } else {
    status = `${who(s.current)} to play (${s.phase}).`;
  }
  if (k === last) {
    const f = record.result.forfeit;
    status += f ? ` End of record: ${f.seat !== null && f.seat !== undefined ? who(f.seat) : f.bot} forfeited: ${f.reason}` : " End of record.";
  }
  $("replay-status").textContent = status;
  $("replay-first").disabled = $("replay-back").disabled = k === 0;
  $("replay-next").disabled = $("replay-last").disabled = k === last;
  document.body.dataset.replayStep = String(k);
}

function go(k) {
  if (!view.record) return;
  view.k = Math.max(0, Math.min(view.states.length - 1, k));
  render();
}

async function openFile() {
  const file = $("record-file").files[0];
  if (!file) return;
  $("message").hidden = true;
  try {
    const { record, states } = openRecord(await file.text());
    Object.assign(view, { record, states, k: 0 });
  } catch (err) {
    if (!(err instanceof RecordError)) throw err;
    showError(`${file.name}: ${err.message}`);
    return;
  }
  const r = view.record.rules;
  $("replay-title").textContent = `Replay of ${file.name}: ${r.num_players} players, one ${view.record.episode}` +
    (Number.isSafeInteger(view.record.seed) ? `, seed ${view.record.seed}` : "");
  $("setup").hidden = true;
  $("table").hidden = true;
  $("reveal").hidden = true;
  $("replay").hidden = false;
  render();
}

function close() {
  Object.assign(view, { record: null, states: [], k: 0 });
  $("replay").hidden = true;
  $("setup").hidden = false;
  $("record-file").value = "";
}

$("record-file").addEventListener("change", openFile);
$("replay-first").addEventListener("click", () => go(0));
$("replay-back").addEventListener("click", () => go(view.k - 1));
$("replay-next").addEventListener("click", () => go(view.k + 1));
$("replay-last").addEventListener("click", () => go(view.states.length - 1));
$("replay-close").addEventListener("click", close);
document.addEventListener("keydown", (event) => {
  if ($("replay").hidden || event.target.tagName === "INPUT") return;
  if (event.key === "ArrowRight") go(view.k + 1);
  else if (event.key === "ArrowLeft") go(view.k - 1);
  else if (event.key === "Home") go(0);
  else if (event.key === "End") go(view.states.length - 1);
});
