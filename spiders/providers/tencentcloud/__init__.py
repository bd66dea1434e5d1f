"""腾讯云 Tencent Cloud CVM GPU instances, provider ``tencentcloud``: everything gpurent knows
of it, in this folder.

``spider.py`` (the Scrapy spider), ``parser.py`` (pure parsing and the answer's contract),
``tc3.py`` (the TC3-HMAC-SHA256 request signature of Tencent Cloud API 3.0),
``families.py`` (which card each GPU instance family carries, from Tencent's instance-type
documentation), ``billing_facts.toml`` (its billing facts with their sources),
``recordings/`` (its answers in the default replay scene, with PROVENANCE) and ``fixtures/``
(its parser fixture cases). This module imports nothing, so the folder's data can be read
without Scrapy.
"""
