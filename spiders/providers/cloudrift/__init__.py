"""CloudRift (cloudrift.ai), provider ``cloudrift``: everything gpurent knows of it, in this folder.

A GPU cloud whose machines sit in its partners' data centres: each offer is one instance
variant (a machine size of an instance type) in one data centre. ``spider.py`` (the Scrapy
spider), ``parser.py`` (pure parsing and the answer's contracts), ``billing_facts.toml`` (its
billing facts with their sources), ``recordings/`` (its answers in the default replay scene,
with PROVENANCE) and ``fixtures/`` (its parser fixture cases). This module imports nothing,
so the folder's data can be read without Scrapy.
"""
