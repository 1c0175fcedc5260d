/**
 * Generated from racko_env/observation.py by `python -m racko_apps.web_traces --layout`; do not edit.
 */

export const LAYOUT = Object.freeze({
  "obs_version": 1,
  "obs_size": 177,
  "num_actions": 14,
  "max_opponents": 3,
  "max_cards": 60,
  "pieces": {
    "rack": [
      0,
      10
    ],
    "opp_slots": [
      10,
      40
    ],
    "held": [
      40,
      41
    ],
    "discard_top": [
      41,
      42
    ],
    "draw_top_known": [
      42,
      43
    ],
    "draw_size": [
      43,
      44
    ],
    "card_scaled": [
      0,
      44
    ],
    "phase": [
      44,
      47
    ],
    "held_from_discard": [
      47,
      48
    ],
    "turn": [
      48,
      49
    ],
    "own_score": [
      49,
      50
    ],
    "opp_scores": [
      50,
      53
    ],
    "opp_present": [
      53,
      56
    ],
    "partners": [
      56,
      57
    ],
    "in_discard": [
      57,
      117
    ],
    "unseen": [
      117,
      177
    ]
  }
});
