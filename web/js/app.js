/**
 * The page: a person (seat 0) plays a game to the target score against 1-3 bots.
 *
 * The person sees only what seat 0 may know: the table view below reads the own rack, the held card
 * on the own turn, the discard top, the draw pile's size, the cards others were seen taking from the
 * discard pile, and the moves of the table. Every rack is shown only at the round-end reveal. Moves
 * go through RackoGame.apply, which refuses anything illegal, and bot moves are checked against the
 * mask before they are played, so no click and no bot can put the game in an impossible state.
 */

import { DISCARD, DRAW_PILE, KEEP, Phase, TAKE_DISCARD } from "./actions.js";
import { RulesConfig, SMALL_GAME_BOTS, requireRuleBookSizes } from "./config.js";
import { RULE_OPTIONS } from "./rules_options.js";
import { describeAction, describeTurn, explainScore, slotName } from "./describe.js";
import { hintProbabilities, percent, rankedMoves } from "./hint.js";
import { RackoGame, RandomChance } from "./engine.js";
import { HeuristicBot, RandomBot } from "./bots.js";
import { BotFileError } from "./manifest.js";
import { actionMask, encode } from "./observation.js";
import { IllegalBotActionError, OnnxBot, loadOnnxBot } from "./onnx_bot.js";
import { RACK_SIZE } from "./rules.js";

const HUMAN = 0;
const params = new URLSearchParams(location.search);
const BOT_DELAY_MS = params.get("fast") ? 0 : 450;
const $ = (id) => document.getElementById(id);

const state = {
  game: null,
  bots: [],
  names: [],
  hintBot: null,
  running: false,
  halted: false,
  userFiles: { onnx: null, json: null },
};

// Read by the browser test: every ONNX decision and hint with the observation it was made on.
window.racko = { decisions: [], hints: [], ready: false };

// ------------------------------------------------------------------ messages

function showError(text) {
  const box = $("message");
  box.textContent = text;
  box.hidden = false;
}

function clearError() {
  $("message").hidden = true;
  $("message").textContent = "";
}

function setStatus(text) {
  $("status").textContent = text;
}

// ------------------------------------------------------------------ setup

function seatChoices() {
  const n = Number($("num-players").value);
  const box = $("seat-choices");
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  for (let seat = 1; seat < n; seat++) {
    const label = document.createElement("label");
    label.textContent = `Seat ${seat} `;
    const select = document.createElement("select");
    select.id = `seat-${seat}`;
    for (const [value, text] of [
      ["shipped", `shipped bot (racko_${n}p.onnx)`],
      ["heuristic", "heuristic"],
      ["random", "random"],
      ["file", "your bot file"],
    ]) {
      const opt = document.createElement("option");
      opt.value = value;
      opt.textContent = text;
      select.append(opt);
    }
    select.value = old[seat - 1] ?? "shipped";
    label.append(select);
    box.append(label);
  }
}

/** The form's id of a rules option: ``turn_limit`` -> ``turn-limit``. */
const optionId = (name) => name.replaceAll("_", "-");

/**
 * One control per rules option, from the declaration RulesConfig holds (rules_options.js): a
 * checkbox for a bool, a list for choices or a short range, a number box otherwise.
 */
// Options this page's JS engine plays at their defaults only (readRules refuses others).
const FIXED_OPTIONS = ["rack_size", "deck_size"];

function rulesForm() {
  const box = $("rules-options");
  for (const o of RULE_OPTIONS) {
    if (FIXED_OPTIONS.includes(o.name)) continue;
    const label = document.createElement("label");
    label.title = o.help;
    let control;
    if (o.type === "bool") {
      control = document.createElement("input");
      control.type = "checkbox";
      control.checked = o.default;
      label.append(control, ` ${o.label}`);
    } else {
      const values = o.choices ?? (o.maximum === null ? null : []);
      if (values !== null && o.choices === null) {
        if (o.off !== null) values.push(o.off);
        // solitaire (1 player) is not played here: the players start at 2
        const low = o.name === "num_players" ? Math.max(o.minimum, 2) : o.minimum;
        for (let v = low; v <= o.maximum; v++) values.push(v);
      }
      if (values === null) {
        control = document.createElement("input");
        control.type = "number";
        if (o.minimum !== null) control.min = String(o.minimum);
        control.value = String(o.default);
      } else {
        control = document.createElement("select");
        for (const v of values) {
          const item = new Option(v === o.off ? `${v} (${o.off_means})` : String(v), String(v));
          item.selected = v === o.default;
          control.append(item);
        }
      }
      label.append(`${o.label} `, control);
    }
    control.id = optionId(o.name);
    box.append(label);
  }
}

function readRules() {
  const options = {};
  for (const o of RULE_OPTIONS) {
    if (FIXED_OPTIONS.includes(o.name)) continue;
    const control = $(optionId(o.name));
    if (o.type === "bool") options[o.name] = control.checked;
    else if (o.type === "int") options[o.name] = Number.parseInt(control.value, 10);
    else options[o.name] = control.value;
  }
  const rules = new RulesConfig(options);
  requireRuleBookSizes(rules, "the web page (its JS engine)", SMALL_GAME_BOTS);
  return rules;
}

function onBotFiles() {
  clearError();
  state.userFiles = { onnx: null, json: null };
  for (const file of $("bot-files").files) {
    if (file.name.endsWith(".onnx")) state.userFiles.onnx = file;
    else if (file.name.endsWith(".json")) state.userFiles.json = file;
    else {
      showError(`${file.name} is neither a .onnx bot file nor its .json manifest`);
      $("bot-file-name").textContent = "";
      state.userFiles = { onnx: null, json: null };
      return;
    }
  }
  const { onnx, json } = state.userFiles;
  $("bot-file-name").textContent = [onnx?.name, json?.name].filter(Boolean).join(" + ");
  for (const select of $("seat-choices").querySelectorAll("select")) {
    if (onnx) select.value = "file";
  }
}

async function shippedBot(rules) {
  const n = rules.num_players;
  const source = `racko_${n}p.onnx`;
  const [onnx, json] = await Promise.all([fetch(`bots/${source}`), fetch(`bots/racko_${n}p.json`)]);
  if (!onnx.ok || !json.ok) throw new BotFileError(`the shipped bot ${source} is not served`);
  return loadOnnxBot({
    onnxBytes: await onnx.arrayBuffer(),
    manifestText: await json.text(),
    source,
    numPlayers: n,
    rules: rules.toDict(),
  });
}

async function fileBot(rules) {
  const { onnx, json } = state.userFiles;
  if (!onnx) throw new BotFileError("choose your bot file first: open bot.onnx and bot.json together");
  if (!json) throw new BotFileError(`${onnx.name}: open its .json manifest together with it`);
  return loadOnnxBot({
    onnxBytes: await onnx.arrayBuffer(),
    manifestText: await json.text(),
    source: onnx.name,
    numPlayers: rules.num_players,
    rules: rules.toDict(),
  });
}

async function startGame(event) {
  event?.preventDefault();
  clearError();
  let rules;
  try {
    rules = readRules();
  } catch (exc) {
    showError(`Rules: ${exc.message}`);
    return;
  }
  const seedText = $("seed").value.trim();
  const seed = seedText === "" ? null : Number.parseInt(seedText, 10);
  $("start").disabled = true;
  setStatus("Loading the bots…");
  const bots = [null];
  const names = ["You"];
  let shipped = null;
  try {
    for (let seat = 1; seat < rules.num_players; seat++) {
      const choice = $(`seat-${seat}`).value;
      let bot;
      if (choice === "shipped") bot = shipped ??= await shippedBot(rules);
      else if (choice === "file") bot = await fileBot(rules);
      else if (choice === "random") bot = new RandomBot(seed === null ? null : seed + seat);
      else bot = new HeuristicBot();
      bots.push(bot);
      names.push(`Seat ${seat} (${bot.name})`);
    }
  } catch (exc) {
    showError(exc instanceof BotFileError ? exc.message : `could not load a bot: ${exc.message}`);
    setStatus("");
    $("start").disabled = false;
    return;
  }
  let hintBot = bots.find((b) => b instanceof OnnxBot) ?? null;
  if (!hintBot) {
    try {
      hintBot = await shippedBot(rules);
    } catch {
      hintBot = new HeuristicBot(); // no exported bot fits these rules: hint with the heuristic
    }
  }
  $("start").disabled = false;
  Object.assign(state, { bots, names, hintBot, halted: false });
  state.game = new RackoGame(rules, new RandomChance(seed));
  state.game.newGame();
  window.racko.decisions = [];
  window.racko.hints = [];
  $("setup").hidden = true;
  $("reveal").hidden = true;
  $("table").hidden = false;
  $("log").replaceChildren();
  logLine(`Round 1: ${names[state.game.dealer]} dealt.`);
  render();
  runBots();
}

// ------------------------------------------------------------------ play

function logLine(text) {
  const li = document.createElement("li");
  li.textContent = text;
  $("log").append(li);
  li.scrollIntoView({ block: "nearest" });
}

function play(seat, action) {
  const game = state.game;
  const before = game.log.length;
  game.apply(action); // throws on anything illegal, before changing the game
  if (game.log.length > before) {
    const who = seat === HUMAN ? "You" : state.names[seat];
    logLine(describeTurn(game.log[game.log.length - 1], who, seat === HUMAN));
  }
  $("hint-text").textContent = "";
}

function humanCanAct() {
  const g = state.game;
  return g && !state.running && !state.halted && !g.roundOver && g.current === HUMAN;
}

function humanPlay(action) {
  if (!humanCanAct() || !state.game.isLegal(action)) return;
  play(HUMAN, action);
  render();
  if (state.game.roundOver) showReveal();
  else runBots();
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runBots() {
  if (state.running) return;
  state.running = true;
  const game = state.game;
  let seat = null;
  try {
    while (!game.roundOver && game.current !== HUMAN && !state.halted) {
      render();
      await delay(BOT_DELAY_MS);
      seat = game.current;
      const bot = state.bots[seat];
      const observation = encode(game, seat, true);
      const mask = actionMask(game, seat);
      let action;
      if (bot instanceof OnnxBot) {
        const { action: a, logits } = await bot.decide(observation, mask);
        action = a;
        window.racko.decisions.push({
          seat,
          observation: Array.from(observation),
          mask: Array.from(mask),
          action,
          logits,
        });
      } else {
        action = bot.act(observation, mask);
      }
      if (!game.isLegal(action)) {
        throw new IllegalBotActionError(`${bot.name} returned action ${action}, which is not legal now`);
      }
      play(seat, action);
    }
  } catch (exc) {
    state.halted = true;
    showError(
      `${state.names[seat] ?? "A bot"}: ${exc.message}. The game is paused; start a new game with another bot.`,
    );
    $("setup").hidden = false;
  } finally {
    state.running = false;
    render();
  }
  if (game.roundOver && !state.halted) showReveal();
}

async function showHint() {
  if (!humanCanAct()) return;
  const game = state.game;
  const observation = encode(game, HUMAN, true);
  const mask = actionMask(game, HUMAN);
  const bot = state.hintBot;
  const box = $("hint-text");
  try {
    let action;
    let why;
    let odds = null;
    const moment = `${game.roundNumber}/${game.turn}/${game.phase}`;
    if (bot instanceof OnnxBot) {
      const { logits } = await bot.decide(observation, mask);
      if (moment !== `${game.roundNumber}/${game.turn}/${game.phase}` || state.game !== game) return;
      const legal = Array.from(mask).flatMap((m, a) => (m ? [a] : []));
      action = legal.reduce((best, a) => (logits[a] > logits[best] ? a : best), legal[0]);
      // how sure the bot is: the softmax of its masked logits over the legal moves
      odds = rankedMoves(hintProbabilities(logits, mask));
      why = `${bot.name}'s odds: ${odds.map(([a, p]) => `${describeAction(a)} ${percent(p)}`).join("; ")}`;
    } else {
      action = bot.act(observation, mask);
      why = "the heuristic bot (no exported bot fits these rules)";
    }
    box.textContent = `Hint: ${describeAction(action, game.held)} (${why})`;
    window.racko.hints.push({
      observation: Array.from(observation),
      mask: Array.from(mask),
      action,
      odds,
      text: box.textContent,
    });
    box.dataset.action = String(action);
  } catch (exc) {
    box.textContent = `No hint: ${exc.message}`;
  }
}

// ------------------------------------------------------------------ the table, seen from seat 0

function card(value, cls = "") {
  const el = document.createElement("div");
  el.className = `card ${cls}`.trim();
  el.textContent = value ? String(value) : "";
  return el;
}

function render() {
  const game = state.game;
  if (!game) return;
  const n = game.numPlayers;
  const mine = humanCanAct();
  const phase = mine ? game.phase : null;

  const opp = $("opponents");
  opp.replaceChildren();
  for (let k = 1; k < n; k++) {
    const seat = k;
    const box = document.createElement("div");
    box.className = `opponent${game.current === seat && !game.roundOver ? " on-turn" : ""}`;
    box.dataset.seat = String(seat);
    const partner = game.config.partners && seat === 2 ? " · your partner" : "";
    const h = document.createElement("h3");
    h.textContent = `${state.names[seat]}${partner}`;
    const rack = document.createElement("div");
    rack.className = "rack";
    for (let s = 0; s < RACK_SIZE; s++) {
      const known = game.publicSlots[seat][s];
      rack.append(known ? card(known) : card(0, "back"));
    }
    box.append(h, rack);
    opp.append(box);
  }

  const drawKnown = game.drawKnown && game.draw.length ? game.draw[game.draw.length - 1] : 0;
  const drawBtn = $("draw-pile");
  drawBtn.textContent = drawKnown ? String(drawKnown) : "";
  drawBtn.className = `card ${drawKnown ? "" : "back"} ${phase === Phase.DRAW ? "legal" : ""}`;
  drawBtn.disabled = phase !== Phase.DRAW;
  $("draw-count").textContent = `${game.draw.length} cards${drawKnown ? " (order known)" : ""}`;
  const discBtn = $("discard-pile");
  discBtn.textContent = game.discardTop ? String(game.discardTop) : "";
  discBtn.className = `card ${game.discardTop ? "" : "empty"} ${phase === Phase.DRAW && game.discardTop ? "legal" : ""}`;
  discBtn.disabled = !(phase === Phase.DRAW && game.isLegal(TAKE_DISCARD) && game.discardTop);
  $("discard-note").textContent = `${game.discard.length} face up`;

  const held = mine && game.held !== null ? game.held : null;
  const heldEl = $("held");
  heldEl.textContent = held ? String(held) : "";
  heldEl.className = `card ${held ? "" : "empty"}`;
  $("held-note").textContent = held && game.heldFromDiscard ? "from the discard pile: it must go into your rack" : "";

  $("keep").disabled = phase !== Phase.KEEP_OR_DISCARD;
  $("discard").disabled = phase !== Phase.KEEP_OR_DISCARD;
  $("hint").disabled = !mine;
  const prompts = {
    [Phase.DRAW]: "Your turn: take the discard or draw from the draw pile.",
    [Phase.KEEP_OR_DISCARD]: `You drew the ${held}: keep it or discard it.`,
    [Phase.PLACE]: `Click the slot where the ${held} goes; the card there is discarded.`,
  };
  let prompt = prompts[phase] ?? "";
  if (!mine && !game.roundOver) prompt = state.halted ? "Game paused." : `${state.names[game.current]} is playing…`;
  $("prompt").textContent = prompt;

  const rackEl = $("my-rack");
  rackEl.replaceChildren();
  game.racks[HUMAN].forEach((value, s) => {
    const slot = document.createElement("div");
    slot.className = "slot";
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = `card ${phase === Phase.PLACE ? "legal" : ""}`;
    btn.textContent = String(value);
    btn.dataset.slot = String(s);
    btn.disabled = phase !== Phase.PLACE;
    btn.addEventListener("click", () => humanPlay(s));
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = slotName(s);
    slot.append(btn, name);
    rackEl.append(slot);
  });
  $("me").className = game.current === HUMAN && !game.roundOver ? "on-turn" : "";
  $("my-name").textContent = game.config.partners ? "You (partner: seat 2)" : "You";

  renderScores($("scores"));
  const turnText = game.roundOver
    ? `Round ${game.roundNumber} over after ${game.turn} turns`
    : `Round ${game.roundNumber} · turn ${game.turn + 1} of at most ${game.config.turn_limit}`;
  setStatus(`${turnText} · playing to ${game.config.target_score}`);
  window.racko.ready = mine;
}

function renderScores(table) {
  const game = state.game;
  table.replaceChildren();
  const cfg = game.config;
  const rows = cfg.partners
    ? [["You + seat 2", game.totals[0]], ["Seats 1 + 3", game.totals[1]]]
    : state.names.map((name, p) => [name, game.totals[p]]);
  for (const [name, total] of rows) {
    const tr = document.createElement("tr");
    for (const text of [name, String(total)]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.append(td);
    }
    table.append(tr);
  }
}

// ------------------------------------------------------------------ round end: every rack revealed

function showReveal() {
  const game = state.game;
  window.racko.ready = false;
  const racko = game.rackoPlayer;
  const cut = game.truncated ? ` was cut off after ${game.turn} turns (the turn limit)` : "";
  let title = `Round ${game.roundNumber}${cut}`;
  if (racko !== null) title += `: ${state.names[racko]} went Rack-O!`;
  if (game.gameOver) {
    const w = game.gameWinner;
    const who = game.config.partners ? (w === 0 ? "You and seat 2" : "Seats 1 and 3") : state.names[w];
    title += ` Game over: ${who} won with ${game.totals[w]} points.`;
  }
  $("reveal-title").textContent = title;
  const box = $("reveal-racks");
  box.replaceChildren();
  game.racks.forEach((rack, p) => {
    const pts = game.lastRoundPoints[p];
    const { counted, text } = explainScore(rack, p === racko, game.config.bonus, pts);
    const seatBox = document.createElement("div");
    seatBox.className = "reveal-seat";
    seatBox.dataset.seat = String(p);
    const h = document.createElement("h3");
    h.textContent = `${state.names[p]}: ${pts} points`;
    const row = document.createElement("div");
    row.className = "rack";
    rack.forEach((c, s) => {
      const slot = document.createElement("div");
      slot.className = "slot";
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = slotName(s);
      slot.append(card(c, s < counted ? "counts" : ""), name);
      row.append(slot);
    });
    const explain = document.createElement("div");
    explain.className = "explain";
    explain.textContent = text;
    seatBox.append(h, row, explain);
    box.append(seatBox);
  });
  renderScores($("reveal-scores"));
  if (game.config.partners) {
    const [a, b] = [0, 1].map((t) => game.roundTeamPoints[t]);
    const note = document.createElement("p");
    note.textContent = `Partners add their points: you + seat 2 scored ${a}, seats 1 + 3 scored ${b}.`;
    box.append(note);
  }
  $("next-round").hidden = game.gameOver;
  $("reveal").hidden = false;
  logLine(title);
  render();
}

function nextRound() {
  const game = state.game;
  if (!game || !game.roundOver || game.gameOver || state.running) return;
  game.startRound();
  $("reveal").hidden = true;
  logLine(`Round ${game.roundNumber}: ${state.names[game.dealer]} dealt.`);
  render();
  runBots();
}

function newGame() {
  if (state.running) return;
  $("reveal").hidden = true;
  $("table").hidden = true;
  $("setup").hidden = false;
  state.game = null;
}

// ------------------------------------------------------------------ wiring

rulesForm();
$("num-players").addEventListener("change", seatChoices);
$("bot-files").addEventListener("change", onBotFiles);
$("setup-form").addEventListener("submit", startGame);
$("draw-pile").addEventListener("click", () => humanPlay(DRAW_PILE));
$("discard-pile").addEventListener("click", () => humanPlay(TAKE_DISCARD));
$("keep").addEventListener("click", () => humanPlay(KEEP));
$("discard").addEventListener("click", () => humanPlay(DISCARD));
$("hint").addEventListener("click", showHint);
$("next-round").addEventListener("click", nextRound);
$("new-game").addEventListener("click", newGame);
if (params.get("seed")) $("seed").value = params.get("seed");
seatChoices();
document.body.dataset.loaded = "1";
