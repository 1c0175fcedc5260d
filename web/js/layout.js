/**
 * Generated from racko_env/observation.py by `python -m racko_apps.play.web_traces --layout`; do not edit.
 */

export const LAYOUT = Object.freeze({
  "obs_version": 2,
  "obs_size": 270,
  "obs_sizes": {
    "1": 177,
    "2": 270
  },
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
    ],
    "opp_slot_drawn": [
      177,
      207
    ],
    "opp_slot_changed": [
      207,
      237
    ],
    "opp_slot_out": [
      237,
      267
    ],
    "opp_declined": [
      267,
      270
    ],
    "card_scaled": [
      0,
      44
    ]
  }
});
