"""Validation's writes: the queue (opening items, leasing), votes (check, then cast),
quality (agreement counters, unqualifying, recounts, send-backs) and adjudication."""
