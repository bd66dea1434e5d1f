"""Watches and their alerts (rule of truth 7): what users asked to hear about, the per-offer
alert state machine, and the outbox of notifications waiting to be sent.

Modules: ``machine`` (the pure state machine), ``criteria`` (a watch and how an observed
offer reads for it), ``store`` (watches in the warehouse), ``runs`` (the good runs a watch
has not seen yet), ``evaluate`` (state changes and outbox rows in one transaction),
``message`` (what a notification says), ``outbox`` (delivery with retries and backoff).
Nothing here talks to the network: the sender is handed in by the caller.
"""
