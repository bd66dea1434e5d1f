"""The front door: thin Typer commands over flows, warehouse and sizing."""
