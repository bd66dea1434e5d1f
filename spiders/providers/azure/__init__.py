"""Microsoft Azure GPU virtual machines (prices.azure.com), provider ``azure``: everything
gpurent knows of it, in this folder.

``spider.py`` (the Scrapy spider), ``parser.py`` (pure parsing and the answer's contract),
``vm_sizes.toml`` with ``sizes.py`` (which card and how many of them each VM size rents, from
Microsoft's VM size pages), ``billing_facts.toml`` (its billing facts with their sources),
``recordings/`` (its answers in the default replay scene, with PROVENANCE) and ``fixtures/``
(its parser fixture cases). This module imports nothing, so the folder's data can be read
without Scrapy.
"""
