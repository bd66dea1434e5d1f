"""Pure parsers: provider response -> offer and quarantine records (unit-tested)."""
