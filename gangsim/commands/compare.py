"""Commands registered on the gangsim Typer app (filled in by the compare work)."""

import typer


def register(app: typer.Typer) -> None:
    return None
