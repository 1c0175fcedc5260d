/**
 * Generated from racko_env/config.py by `python -m racko_apps.web_traces --layout`; do not edit.
 */

export const RULE_OPTIONS = Object.freeze([
  {
    "name": "num_players",
    "type": "int",
    "default": 2,
    "label": "Players",
    "help": "players; the deck is 1-40, 1-50 or 1-60",
    "choices": null,
    "minimum": 2,
    "maximum": 4,
    "off": null,
    "needs": null
  },
  {
    "name": "empty_pile",
    "type": "str",
    "default": "shuffle",
    "label": "Empty draw pile",
    "help": "when the draw pile runs out, shuffle the discards or turn them over",
    "choices": [
      "shuffle",
      "flip"
    ],
    "minimum": null,
    "maximum": null,
    "off": null,
    "needs": null
  },
  {
    "name": "turn_limit",
    "type": "int",
    "default": 400,
    "label": "Turn limit",
    "help": "turns (all players together) after which a round without Rack-O is cut off",
    "choices": null,
    "minimum": 1,
    "maximum": null,
    "off": null,
    "needs": null
  },
  {
    "name": "min_run",
    "type": "int",
    "default": 0,
    "label": "Rack-O needs a run of",
    "help": "2 players: Rack-O also needs a run of this many consecutive numbers (0: off)",
    "choices": null,
    "minimum": 3,
    "maximum": 10,
    "off": 0,
    "needs": [
      "num_players",
      2,
      "(the run variant) is for 2 players only"
    ]
  },
  {
    "name": "bonus",
    "type": "bool",
    "default": false,
    "label": "Bonus Rack-O",
    "help": "Bonus Rack-O: the player going Rack-O scores its longest run",
    "choices": null,
    "minimum": null,
    "maximum": null,
    "off": null,
    "needs": null
  },
  {
    "name": "partners",
    "type": "bool",
    "default": false,
    "label": "Partners",
    "help": "4 players in two teams (seats 0+2 against 1+3) adding their scores",
    "choices": null,
    "minimum": null,
    "maximum": null,
    "off": null,
    "needs": [
      "num_players",
      4,
      "needs exactly 4 players"
    ]
  },
  {
    "name": "target_score",
    "type": "int",
    "default": 500,
    "label": "Play to",
    "help": "points that win the game",
    "choices": null,
    "minimum": 1,
    "maximum": null,
    "off": null,
    "needs": null
  }
]);
