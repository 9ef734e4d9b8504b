"""Writes `crates/torchcore-pt/tests/fixtures/torch-legacy-storage-slices.pt`:
a checkpoint in the legacy (pre-1.0) layout whose value is a tuple of bare
storage views, `(v1, v2, v1)`, over one float32 root storage `'0'` holding
1.0, 2.0, 3.0, 4.0: view `'v1'` is element 0, view `'v2'` elements 1..4.

torch 2.15 cannot write storage views any more (its legacy writer always
sets `view_metadata` to None), so the pickles are made here with the
standard library alone: no torch import. A stand-in module named `torch`
gives the pickler the global `torch.FloatStorage` to name.

Usage: python tools/gen_legacy_storage_slices.py [OUT]
"""

import io
import pickle
import struct
import sys
import types

MAGIC = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
SYS_INFO = {
    "protocol_version": PROTOCOL_VERSION,
    "little_endian": True,
    "type_sizes": {"short": 2, "int": 4, "long": 4},
}


class _View:
    def __init__(self, key, offset, size):
        self.key, self.offset, self.size = key, offset, size


def main(out):
    fake = types.ModuleType("torch")

    class FloatStorage:
        pass

    FloatStorage.__module__ = "torch"
    FloatStorage.__qualname__ = "FloatStorage"
    fake.FloatStorage = FloatStorage
    saved = sys.modules.get("torch")
    sys.modules["torch"] = fake
    try:
        root = [1.0, 2.0, 3.0, 4.0]

        class Writer(pickle.Pickler):
            def persistent_id(self, obj):
                if isinstance(obj, _View):
                    return ("storage", FloatStorage, "0", "cpu", len(root),
                            (obj.key, obj.offset, obj.size))
                return None

        v1, v2 = _View("v1", 0, 1), _View("v2", 1, 3)
        buf = io.BytesIO()
        for header in (MAGIC, PROTOCOL_VERSION, SYS_INFO):
            pickle.dump(header, buf, protocol=2)
        Writer(buf, protocol=2).dump((v1, v2, v1))
        pickle.dump(["0"], buf, protocol=2)
        buf.write(struct.pack("<q", len(root)))
        buf.write(struct.pack(f"<{len(root)}f", *root))
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    with open(out, "wb") as f:
        f.write(buf.getvalue())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         "crates/torchcore-pt/tests/fixtures/torch-legacy-storage-slices.pt")
