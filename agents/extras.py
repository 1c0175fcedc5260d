"""Optional dependencies, imported with one clear line when missing: the extra and the command.

racko's core install is the environment (numpy, gymnasium, pettingzoo); playing ONNX bots, the
terminal table and evaluation need extras. A bare ``ModuleNotFoundError: onnxruntime`` does not
say which extra brings it or how to install it; ``require`` does, for every optional import in
``agents`` and ``racko_apps``.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType


class MissingExtraError(ImportError):
    """An optional dependency is not installed; the message names the extra and the command."""


def install_hint(extra: str) -> str:
    """How to install an extra, from PyPI and in a checkout."""
    return f"pip install 'racko[{extra}]' (in a checkout: pip install -e \".[{extra}]\")"


def _missing(err: ModuleNotFoundError, module: str, extra: str, purpose: str) -> MissingExtraError:
    top = module.split(".")[0]
    if err.name is None or err.name.split(".")[0] != top:
        raise err  # something else is missing: not this extra's business
    return MissingExtraError(
        f"{purpose} needs {top}, which is not installed (the '{extra}' extra): "
        f"{install_hint(extra)}"
    )


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module``, or raise ``MissingExtraError`` saying that ``purpose`` needs the
    ``extra`` and how to install it. Only a missing ``module`` itself is reported this way; an
    installed package that fails to import raises its own error."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise _missing(err, module, extra, purpose) from None


@contextmanager
def needs_extra(module: str, extra: str, purpose: str) -> Iterator[None]:
    """``require`` for a block of ``from module... import ...`` statements."""
    try:
        yield
    except ModuleNotFoundError as err:
        raise _missing(err, module, extra, purpose) from None
