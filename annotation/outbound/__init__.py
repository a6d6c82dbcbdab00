"""What every request the product sends out shares, whichever workflow sends it: the line
that bounds each exchange (lines.py) and the hosts a user who is not staff may reach
(hosts.py). Served models (evaluation) and webhooks (annotation/webhooks/) use both."""
