"""``torch.autograd`` as far as this package goes: only the deprecated
``Variable`` wrapper (autograd itself is out of scope; see docs/python.md)."""

from ._legacy import Variable  # noqa: F401
