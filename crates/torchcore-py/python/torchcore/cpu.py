"""``torch.cpu``: the CPU device module."""


def is_available():
    """``torch.cpu.is_available()``: always ``True``."""
    return True


def device_count():
    """``torch.cpu.device_count()``: ``1``."""
    return 1
