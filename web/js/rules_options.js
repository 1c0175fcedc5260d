/**
 * Generated from racko_env/config.py by `python -m racko_apps.play.web_traces --layout`; do not edit.
 */

export const RULE_OPTIONS = Object.freeze([
  {
    "name": "num_players",
    "type": "int",
    "default": 2,
    "label": "Players",
    "help": "players (1: solitaire, Rack-O in as few turns as possible); the deck is 1-40, 1-50 or 1-60 unless deck_size says otherwise",
    "choices": null,
    "minimum": 1,
    "maximum": 4,
    "off": null,
    "off_means": "off",
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
    "off_means": "off",
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
    "off_means": "off",
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
    "off_means": "off",
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
    "off_means": "off",
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
    "off_means": "off",
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
    "off_means": "off",
    "needs": null
  },
  {
    "name": "rack_size",
    "type": "int",
    "default": 10,
    "label": "Rack slots",
    "help": "slots of a rack (k): smaller racks make smaller games",
    "choices": null,
    "minimum": 3,
    "maximum": 10,
    "off": null,
    "off_means": "off",
    "needs": null
  },
  {
    "name": "deck_size",
    "type": "int",
    "default": 0,
    "label": "Deck",
    "help": "cards 1..N in play (0: 40, 50 or 60 from the players); the deal must leave a discard top and a draw pile: at least players x rack_size + 2",
    "choices": null,
    "minimum": 5,
    "maximum": 60,
    "off": 0,
    "off_means": "from the players",
    "needs": null
  }
]);
