"""One module per plugin, named like the upstream folders."""
