"""Per-token prices of serverless APIs serving open models, read by a spider: OpenRouter's
public model list (``openrouter_prices``). Not a GPU provider: no line in
``gpurent_core/providers.py``, no offers, no warehouse rows.

``spider.py`` (the Scrapy spider), ``parser.py`` (pure parsing, the answer's contract) and
``recordings/`` (an answer in OpenRouter's shape with invented values, for the tests and a
replay server of one's own, with PROVENANCE). ``gpurent api-prices refresh``
(``gpurent.api.api_prices``) runs the spider in a process of its own, places each model in
gpurent's model catalog and writes the refreshed list beside the warehouse. This module
imports nothing, so the folder's data can be read without Scrapy.
"""
