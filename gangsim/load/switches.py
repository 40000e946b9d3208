"""The loader's speed shortcuts' switch: ``GANGSIM_REFERENCE_LOADER=1`` in the environment keeps
the loader to its reference paths where a shortcut gives the same result faster: the SWF
importer parses line by line (``importers.swf_columns`` off) and the streaming loader decodes
every document (``load.shared`` off). Reports are the same either way (tested)."""

from __future__ import annotations

import os

REFERENCE_LOADER = "GANGSIM_REFERENCE_LOADER"


def reference_loader() -> bool:
    """Whether ``GANGSIM_REFERENCE_LOADER=1`` switches the loader's shortcuts off."""
    return os.environ.get(REFERENCE_LOADER) == "1"
