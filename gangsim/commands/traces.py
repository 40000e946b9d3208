"""Commands registered on the gangsim Typer app (filled in by the traces work)."""

import typer


def register(app: typer.Typer) -> None:
    return None
