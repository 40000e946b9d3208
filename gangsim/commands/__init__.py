"""Typer sub-commands kept out of ``gangsim.cli`` by topic; each module has ``register(app)``."""
