"""The crowd's writes: study links and participants' arrival (studies), and a failed
validator's retest (qualification). The gold answers are written in the vote's own transaction
(annotation.crowd.gates, gold_answer)."""
