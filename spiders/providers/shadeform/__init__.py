"""Shadeform (shadeform.ai), provider ``shadeform``: everything gpurent knows of it, in this folder.

A GPU marketplace over many clouds: each offer is one instance type at one underlying cloud
in one region. ``spider.py`` (the Scrapy spider), ``parser.py`` (pure parsing and the
answer's contracts), ``billing_facts.toml`` (its billing facts with their sources),
``recordings/`` (its answers in the default replay scene, with PROVENANCE) and ``fixtures/``
(its parser fixture cases). This module imports nothing, so the folder's data can be read
without Scrapy.
"""
