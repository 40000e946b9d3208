"""Write a set of named files (``diff.json``, figures, ``report.html`` …) into a directory, all or
nothing, like ``write.py`` does for the report tables (INTERFACE rule 1).

Every file is written into a temporary directory next to DIR first; then each is moved in with
``os.replace`` (an earlier file of the same name is moved aside and put back if a later move
fails). DIR is created when needed and removed again if this call created it and failed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from gangsim.errors import InputError

__all__ = ["write_files"]


def write_files(out_dir: str | Path, files: Mapping[str, bytes]) -> None:
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a directory")
    absolute = Path(os.path.abspath(out))
    for name in files:
        if (absolute / name).is_dir():
            raise InputError(f"--out {out}: {name} exists and is a directory")
    try:
        absolute.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create {absolute.parent}: {exc.strerror or exc}") from None
    tmp = Path(tempfile.mkdtemp(prefix=f".{absolute.name or 'out'}.tmp-", dir=absolute.parent))
    staging, backup = tmp / "new", tmp / "old"
    staging.mkdir()
    backup.mkdir()
    created = not absolute.is_dir()
    moved: list[tuple[str, bool]] = []
    ok = False
    try:
        for name, data in files.items():
            (staging / name).write_bytes(data)
        absolute.mkdir(exist_ok=True)
        for name in files:
            target = absolute / name
            had_old = target.exists()
            if had_old:
                os.replace(target, backup / name)
            moved.append((name, had_old))
            os.replace(staging / name, target)
        ok = True
    finally:
        if not ok:
            for name, had_old in reversed(moved):
                target = absolute / name
                if had_old:
                    os.replace(backup / name, target)
                else:
                    target.unlink(missing_ok=True)
            if created:
                try:
                    absolute.rmdir()
                except OSError:
                    pass
        shutil.rmtree(tmp, ignore_errors=True)
