"""Verdicts: the checkers that judge a device's results against the prescribed results,
the NaN rules and the reference (``checker`` for element-wise built-ins, ``geometric`` for
whole vectors, ``conversions`` for explicit conversions), and what they return
(``findings``)."""
