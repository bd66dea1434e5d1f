"""gpurent's Scrapy project: one spider per provider, feeds of offer records, run reports.

* `spiders.settings`: project settings and the GPURENT_* settings (documented there);
* `spiders.base.ProviderSpider`: base URL, run id, record builders, run notes;
* `spiders.providers.<provider>`: one folder per provider (`gpurent_core.providers`): its thin
  spider (`.spider`; `scrapy list` names them all), its pure parser (`.parser`: response ->
  OfferRecord / QuarantineRecord), billing facts, recordings and parser fixture cases;
* `spiders.parsers`: the parsing helpers the providers share (records, contracts, envelopes,
  fees, page tables);
* `spiders.middlewares`: Retry-After waits, per-attempt accounting;
* `spiders.extensions.RunReport` + `spiders.ledger`: the JSON run report the flow classifies.

Spiders import nothing from warehouse, flows or sizing.
"""
