"""gpurent's Scrapy project: one spider per provider, feeds of offer records, run reports.

* `spiders.settings`: project settings and the GPURENT_* settings (documented there);
* `spiders.base.ProviderSpider`: base URL, run id, record builders, run notes;
* `spiders.parsers.<provider>`: pure functions, response -> OfferRecord / QuarantineRecord;
* `spiders.providers.<provider>`: the thin spiders (`scrapy list` names them all);
* `spiders.middlewares`: Retry-After waits, per-attempt accounting;
* `spiders.extensions.RunReport` + `spiders.ledger`: the JSON run report the flow classifies.

Spiders import nothing from warehouse, flows or sizing.
"""
