"""A market over time: a simulated market served by the replay server, polled for real, with
gpurent's answers held against the simulation's truth after every poll.

Modules, one concern each:

* ``adapters``: per provider, how N offers (key, GPU, price, stock) are written into its real
  request and answer shapes, and what gpurent should read back;
* ``truth``: the seeded market (offers appear, vanish, sell out, restock, change price) and
  the answers each poll loses (a page, a request, a whole provider);
* ``scene``: the market as a replay recordings folder, one step per poll;
* ``crawl_child``: one poll's spiders in one Scrapy process;
* ``oracle``: what the rules of truth say gpurent should show after each poll (rules 7, 10,
  11), from the truth alone;
* ``checks``: gpurent's answers against the oracle's, violations and opportunities per check;
* ``run``: the poll loop (crawl, load, evaluate watches, ask, check).

``python -m benchmarks.market_over_time`` runs it; ``tests/e2e/test_market_over_time.py``
runs a short version.
"""
