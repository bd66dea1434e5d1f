"""Vultr Cloud GPU and bare-metal GPU servers (vultr.com), provider ``vultr``: everything
gpurent knows of it, in this folder.

``spider.py`` (the Scrapy spider), ``parser.py`` (pure parsing and the answers' contracts),
``billing_facts.toml`` (its billing facts with their sources), ``recordings/`` (its answers in
the default replay scene, with PROVENANCE) and ``fixtures/`` (its parser fixture cases).
This module imports nothing, so the folder's data can be read without Scrapy.
"""
