"""spiders/providers."""
