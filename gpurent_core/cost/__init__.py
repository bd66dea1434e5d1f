"""The cost engine: what renting an offer really costs, per hour and per month, add-ons
included, in any currency.

Everything is computed with exact ``Fraction`` arithmetic (money in as ``Decimal``, never
float) and rounded once, at the end, to 6 decimal places with ROUND_HALF_EVEN. A month is
730 hours (``gpurent_core.units``). One module per concern, each with its rules:

* ``usage``: the usage profile a cost is for (hours, sessions, boot, storage, traffic, cards);
* ``offer``: what of an offer the engine reads, whether it fits, its headline per hour;
* ``stock``: whether an offer can be rented now for the cards needed;
* ``money``: rounding, currency conversion, and how a number is written;
* ``fees``: which add-on fees count, on what quantity, per hour and per month; storage;
* ``metering``: the hours a metered price is paid for (granularity, minimum, boot);
* ``plans``: the ways of renting the month (metered, packages, a year) and their cost;
* ``engine``: ``true_cost``, which puts them together, and the ranking key;
* ``explanation``: the breakdown a reader can recompute by hand, built only when asked for.
* ``ownership``: buy or rent: owning a card over years against renting it by the hour, and
  the hours a day at which the two cost the same.

The package re-exports nothing: import from the module that holds the name.
"""
