"""Short copies and fills run with the GIL held, but never wait for a storage
lock with it: when another thread holds the lock (and will need the GIL
before it lets go), they run again with the GIL released.

Each case runs in a child process with a time limit, so that a regression
(a wait for the lock with the GIL held, which deadlocks) fails the test
instead of hanging the suite.
"""

import subprocess
import sys
import textwrap

import torchcore as tc

CHILD = textwrap.dedent(
    """
    import threading
    import torchcore as tc
    from torchcore._testing import _hold_storage_lock, _short_op_retries

    def base():
        return tc.arange(12, dtype=tc.float32).reshape(3, 4)

    def other(t):
        return tc.full((3, 4), 7.0)

    # name, what the other thread locks (for writing or reading), the op,
    # and the values it must give. `t` is the locked tensor.
    CASES = [
        ("clone", True, lambda t: t.clone(), base().tolist()),
        ("contiguous", True, lambda t: t.t().contiguous(), base().t().tolist()),
        ("reshape (copies)", True, lambda t: t.t().reshape(-1), base().t().reshape(-1).tolist()),
        ("flatten (copies)", True, lambda t: t.t().flatten(), base().t().flatten().tolist()),
        ("to(float64)", True, lambda t: t.to(tc.float64), base().tolist()),
        ("tensor(t)", True, lambda t: tc.tensor(t), base().tolist()),
        ("copy_ into", False, lambda t: t.copy_(other(t)), [[7.0] * 4] * 3),
        ("copy_ from", True, lambda t: tc.zeros(3, 4).copy_(t), base().tolist()),
        ("fill_", False, lambda t: t.fill_(3.0), [[3.0] * 4] * 3),
        ("zero_", False, lambda t: t.zero_(), [[0.0] * 4] * 3),
        ("t[1] = 5", False, lambda t: setitem(t, 1, 5.0), [[0.0, 1, 2, 3], [5.0] * 4, [8.0, 9, 10, 11]]),
        ("t[1] = row", False, lambda t: setitem(t, 1, tc.full((4,), 6.0)), [[0.0, 1, 2, 3], [6.0] * 4, [8.0, 9, 10, 11]]),
        ("tolist", True, lambda t: t.tolist(), base().tolist()),
        ("equal", True, lambda t: [tc.equal(t, base())], [True]),
    ]

    def setitem(t, key, value):
        t[key] = value
        return t

    for name, write, op, want in CASES:
        t = base()
        locked = threading.Event()
        holder = threading.Thread(
            target=_hold_storage_lock, args=(t, write, 0.05, locked.set)
        )
        holder.start()
        assert locked.wait(10), name
        before = _short_op_retries()
        r = op(t)
        retries = _short_op_retries() - before
        holder.join()
        got = r if isinstance(r, list) else r.tolist()
        assert got == want, (name, got, want)
        assert retries == 1, (name, retries)
        # With the lock free, the same op runs at once, without a retry.
        before = _short_op_retries()
        r = op(base())
        assert (r if isinstance(r, list) else r.tolist()) == want, name
        assert _short_op_retries() == before, name
        print("ok", name)
    """
)


def test_short_ops_retry_without_the_gil_when_a_lock_is_held_elsewhere():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ok ") == 14, done.stdout


def test_long_copies_and_short_ones_give_the_same_values():
    # Either side of the GIL-held limit (64 KiB): the same results.
    for n in (16, 16 * 1024, 16 * 1024 + 1, 100_000):
        t = tc.arange(n, dtype=tc.float32)
        assert tc.equal(t.clone(), t)
        v = t[1::2]
        assert tc.equal(v.contiguous(), v)
        z = tc.zeros(n)
        z.copy_(t)
        assert tc.equal(z, t)
        z.fill_(2.0)
        assert set(z.tolist()) == {2.0}
