"""The providers, one folder each: ``spiders/providers/<folder>/``.

Each folder holds the provider's ``spider.py``, ``parser.py``, ``billing_facts.toml``,
``recordings/`` (the default replay scene) and ``fixtures/`` (parser cases); its line in
``gpurent_core/providers.py`` registers it. Scrapy finds the spiders by walking this package
(``SPIDER_MODULES``), so nothing here lists them.
"""
