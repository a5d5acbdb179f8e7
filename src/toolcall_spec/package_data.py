"""The data folders that ship with the package: ``schemas``, ``spec``, ``examples`` and ``data``.

``data`` is what the runtime itself reads (the reference host's discovery document, the
conformance fixtures, the templates of ``toolcall-spec new``): it lives inside the package
(src/toolcall_spec/data), so it is the same folder in a checkout and in a wheel. The other three
are the repository's top-level folders, their single source. A wheel carries copies inside the
package (the build force-includes them, for the sdist and the wheel alike); a source checkout (an
editable install, or ``src`` on ``sys.path``) reads the top-level folders themselves, so an edit
to a schema is seen without reinstalling. Every reader of package data goes through here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

DataFolder = str
"""One of ``schemas``, ``spec``, ``examples``, ``data``."""

CHECKOUT_FOLDERS: dict[DataFolder, str] = {
    "schemas": "schemas",
    "spec": "spec",
    "examples": "examples",
    "data": "src/toolcall_spec/data",
}
"""Where each data folder lives in a source checkout, relative to the repository root."""


class MissingPackageDataError(FileNotFoundError):
    """The package was installed without its data (a broken build); says which folder."""


@cache
def data_folder(name: DataFolder) -> Traversable:
    """The folder ``name`` inside the installed package, else the checkout's top-level folder."""
    if name not in CHECKOUT_FOLDERS:
        known = ", ".join(CHECKOUT_FOLDERS)
        raise MissingPackageDataError(f"toolcall-spec: no package data folder {name!r} ({known})")
    packaged = resources.files("toolcall_spec").joinpath(name)
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / CHECKOUT_FOLDERS[name]
    if checkout.is_dir():
        return checkout
    raise MissingPackageDataError(
        f"toolcall-spec: the package data folder {name!r} is missing from "
        f"{resources.files('toolcall_spec')}; reinstall the package from a wheel or an sdist"
    )


def data_file(relative: str) -> Traversable:
    """A file below a data folder, named ``<folder>/<path>`` (``examples/index.json``)."""
    folder, _, rest = relative.partition("/")
    entry = data_folder(folder)
    for part in rest.split("/"):
        entry = entry.joinpath(part)
    return entry


def read_text(relative: str) -> str:
    """The UTF-8 text of ``<folder>/<path>``."""
    return data_file(relative).read_text(encoding="utf-8")
