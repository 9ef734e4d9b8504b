#!/usr/bin/env python3
"""Differential check of torchcore's CUDA caching allocator against PyTorch's,
and the timings the docs promise, on the same GPU (part of the CUDA test
bundle; see docs/cuda.md).

Subcommands (run.sh calls them; each needs only python3, and torch for the
torch side):

  replay BIN_DIR OUT_DIR [--fake]
      Writes the allocation traces to OUT_DIR/traces/, replays each through
      our allocator (BIN_DIR/alloc-cuda-replay, on device 0, or on the fake
      device with --fake or without a GPU) and, when torch.cuda is available,
      through torch.cuda in a fresh process per trace (its allocator
      configuration must be set before CUDA starts), then compares the
      segment layout (sizes, blocks and their states, streams, expandable)
      and every statistic both report after each `check` step. Prints
      `replay: N passed, M failed, K skipped` and writes OUT_DIR/replay.json.
  torch-trace TRACE OUT
      (internal) replays one trace through torch.cuda.
  timings OUT
      torch's numbers for the same measurements as our `timings` test:
      torch.empty+del (cached malloc+free), H2D/D2H 256 MiB pageable and
      pinned, and `contiguous()` of a transposed 4096x4096 f32.
  report OUR_TIMINGS TORCH_TIMINGS OUT
      Compares them with the targets: cached malloc+free at least 50x faster
      than raw cuMemAlloc+cuMemFree; our strided copy no slower than torch's
      (within 5 % for noise). Prints `targets: N met, M missed`.

Exit status: 0 when everything compared equal / met, 1 otherwise, 3 when the
torch side could not run (no torch, or no GPU): that is reported, never
counted as a pass.
"""

import json
import os
import random
import subprocess
import sys
import time

MIB = 1 << 20


def traces():
    """The allocation traces: (name, allocator conf, ops)."""
    out = []

    def t(name, conf, ops):
        out.append({"name": name, "conf": conf, "ops": ops})

    # Small pool: sizes up to 1 MiB share 2 MiB segments, 512-byte rounding.
    ops, i = [], 0
    for size in [1, 511, 512, 513, 4000, 65536, 100000, 1 << 20, 700000, 3]:
        i += 1
        ops.append({"op": "malloc", "id": i, "size": size, "stream": 0})
    ops += [{"op": "check"}]
    ops += [{"op": "free", "id": k} for k in (2, 4, 6, 8)]
    ops += [{"op": "check"}, {"op": "malloc", "id": 20, "size": 1500, "stream": 0}, {"op": "check"}]
    t("small_pool", "", ops)

    # Large pool: 20 MiB segments, splitting, coalescing, empty_cache.
    sizes = [int(1.5 * MIB), 3 * MIB, 12 * MIB, 25 * MIB, 10 * MIB + 1, 2 * MIB]
    ops = [{"op": "malloc", "id": k, "size": s, "stream": 0} for k, s in enumerate(sizes, 1)]
    ops += [{"op": "check"}, {"op": "free", "id": 2}, {"op": "free", "id": 3}, {"op": "check"}]
    ops += [{"op": "malloc", "id": 10, "size": 14 * MIB, "stream": 0}, {"op": "check"}]
    ops += [{"op": "free", "id": k} for k in (1, 4, 5, 6, 10)]
    ops += [{"op": "check"}, {"op": "empty_cache"}, {"op": "check"}]
    t("large_split_coalesce", "", ops)

    # Streams: per-stream pools, no reuse across streams.
    ops = []
    for k in range(1, 10):
        ops.append({"op": "malloc", "id": k, "size": (k * 700 * 1024) % (6 * MIB) + 1, "stream": k % 3})
    ops += [{"op": "check"}] + [{"op": "free", "id": k} for k in range(1, 10, 2)] + [{"op": "check"}]
    ops += [{"op": "malloc", "id": 20 + k, "size": 300000, "stream": k} for k in range(3)]
    ops += [{"op": "check"}, {"op": "empty_cache"}, {"op": "check"}]
    t("streams", "", ops)

    # max_split_size_mb: oversize blocks are not split; reuse within
    # max_non_split_rounding.
    ops = [
        {"op": "malloc", "id": 1, "size": 100 * MIB, "stream": 0},
        {"op": "malloc", "id": 2, "size": 70 * MIB, "stream": 0},
        {"op": "malloc", "id": 3, "size": 30 * MIB, "stream": 0},
        {"op": "check"},
        {"op": "free", "id": 1}, {"op": "free", "id": 2},
        {"op": "malloc", "id": 4, "size": 80 * MIB, "stream": 0},
        {"op": "malloc", "id": 5, "size": 65 * MIB, "stream": 0},
        {"op": "check"},
        {"op": "free", "id": 3}, {"op": "free", "id": 4}, {"op": "free", "id": 5},
        {"op": "check"}, {"op": "empty_cache"}, {"op": "check"},
    ]
    t("max_split_size", "max_split_size_mb:64", ops)

    # roundup_power2_divisions.
    ops = [{"op": "malloc", "id": k, "size": s, "stream": 0}
           for k, s in enumerate([int(1.1 * MIB), 5 * MIB + 1, 33 * MIB, 300 * MIB + 7], 1)]
    ops += [{"op": "check"}] + [{"op": "free", "id": k} for k in (1, 2, 3, 4)] + [{"op": "check"}]
    t("roundup_power2", "roundup_power2_divisions:4", ops)

    # Expandable segments: one growing segment per stream and pool.
    ops = []
    for k, (s, st) in enumerate([(30 * MIB, 0), (50 * MIB, 0), (5 * MIB, 0), (40 * MIB, 1), (3000, 0)], 1):
        ops.append({"op": "malloc", "id": k, "size": s, "stream": st})
    ops += [{"op": "check"}, {"op": "free", "id": 2}, {"op": "check"}]
    ops += [{"op": "malloc", "id": 10, "size": 45 * MIB, "stream": 0}, {"op": "check"}]
    ops += [{"op": "free", "id": k} for k in (1, 3, 4, 5, 10)]
    ops += [{"op": "check"}, {"op": "empty_cache"}, {"op": "check"}]
    t("expandable_segments", "expandable_segments:True", ops)

    # A seeded random trace, with and without max_split_size.
    for conf in ["", "max_split_size_mb:100"]:
        rng = random.Random(18)
        ops, live, nxt = [], [], 1
        for step in range(400):
            if live and rng.random() < 0.45:
                ops.append({"op": "free", "id": live.pop(rng.randrange(len(live)))})
            else:
                size = int(2 ** rng.uniform(0, 28))  # 1 B .. 256 MiB
                ops.append({"op": "malloc", "id": nxt, "size": max(size, 1), "stream": rng.choice([0, 0, 1, 2])})
                live.append(nxt)
                nxt += 1
            if step % 97 == 96:
                ops.append({"op": "empty_cache"})
            if step % 50 == 49:
                ops.append({"op": "check"})
        ops.append({"op": "check"})
        t("random" + ("_max_split" if conf else ""), conf, ops)
    return out


def torch_trace(trace_path, out_path):
    import torch

    with open(trace_path) as f:
        trace = json.load(f)
    torch.cuda.init()
    streams = {0: torch.cuda.default_stream(0)}
    index = {0: 0, streams[0].cuda_stream: 0}
    live = {}
    checks = []

    def stream(k):
        if k not in streams:
            s = torch.cuda.Stream(0)
            streams[k] = s
            index[s.cuda_stream] = k
        return streams[k]

    def normalize(segs):
        out = []
        for s in segs:
            out.append({
                "total_size": s["total_size"],
                "segment_type": s["segment_type"],
                "stream": index.get(s["stream"], -1),
                "is_expandable": bool(s.get("is_expandable", False)),
                "blocks": [[b["size"], b["state"]] for b in s["blocks"]],
            })
        out.sort(key=lambda v: json.dumps(v, separators=(",", ":")))
        return out

    for i, op in enumerate(trace["ops"]):
        kind = op["op"]
        if kind == "malloc":
            with torch.cuda.stream(stream(op.get("stream", 0))):
                live[op["id"]] = torch.empty(op["size"], dtype=torch.uint8, device="cuda")
        elif kind == "free":
            live.pop(op["id"], None)
        elif kind == "empty_cache":
            torch.cuda.empty_cache()
        elif kind == "check":
            torch.cuda.synchronize()
            stats = {k: int(v) for k, v in torch.cuda.memory_stats(0).items() if isinstance(v, (int, float))}
            checks.append({"op": i, "segments": normalize(torch.cuda.memory_snapshot()), "stats": stats})
    live.clear()
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "checks": checks}
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1)


def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def compare(ours, theirs):
    """Differences between two replay outputs (a list of strings)."""
    diffs = []
    a, b = ours.get("checks", []), theirs.get("checks", [])
    if len(a) != len(b):
        return [f"{len(a)} checks here, {len(b)} in torch"]
    for ca, cb in zip(a, b):
        where = f"check at op {ca.get('op')}"
        sa = sorted(ca["segments"], key=canon)
        sb = sorted(cb["segments"], key=canon)
        if canon(sa) != canon(sb):
            diffs.append(f"{where}: segments differ:\n  ours:  {canon(sa)}\n  torch: {canon(sb)}")
        shared = sorted(set(ca["stats"]) & set(cb["stats"]))
        for k in shared:
            if ca["stats"][k] != cb["stats"][k]:
                diffs.append(f"{where}: {k}: ours {ca['stats'][k]}, torch {cb['stats'][k]}")
    return diffs


def torch_available():
    """(True, description) when torch with a usable CUDA device imports."""
    code = ("import torch,sys; ok=torch.cuda.is_available(); "
            "print(torch.__version__, torch.version.cuda, ok, torch.cuda.get_device_name(0) if ok else ''); "
            "sys.exit(0 if ok else 3)")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except Exception as e:  # noqa: BLE001 - reported, not fatal
        return False, f"could not run python: {e}"
    if r.returncode == 0:
        return True, "torch " + r.stdout.strip()
    if r.returncode == 3:
        return False, "torch " + r.stdout.strip() + ": torch.cuda.is_available() is False (no GPU)"
    return False, "torch not importable: " + (r.stderr.strip().splitlines() or ["?"])[-1]


def replay(bin_dir, out_dir, fake):
    os.makedirs(os.path.join(out_dir, "traces"), exist_ok=True)
    has_torch, why = torch_available()
    print(f"replay: torch side: {why}")
    binary = os.path.join(bin_dir, "alloc-cuda-replay")
    results, passed, failed, skipped = [], 0, 0, 0
    for tr in traces():
        name = tr["name"]
        tpath = os.path.join(out_dir, "traces", name + ".json")
        with open(tpath, "w") as f:
            json.dump(tr, f)
        ours_path = os.path.join(out_dir, name + ".ours.json")
        env = dict(os.environ, ALLOC_CUDA_REPLAY_IN=tpath, ALLOC_CUDA_REPLAY_OUT=ours_path)
        if fake:
            env["ALLOC_CUDA_REPLAY_FAKE"] = "1"
        r = subprocess.run([binary, "--exact", "replay_trace", "--nocapture", "--test-threads=1"],
                           env=env, capture_output=True, text=True, timeout=300)
        entry = {"trace": name, "conf": tr["conf"]}
        if r.returncode != 0 or not os.path.exists(ours_path):
            entry["result"] = "failed"
            entry["error"] = "our replay failed: " + (r.stdout + r.stderr)[-2000:]
            failed += 1
            results.append(entry)
            print(f"replay {name}: FAILED (our side)\n{entry['error']}")
            continue
        with open(ours_path) as f:
            ours = json.load(f)
        if "error" in ours:
            entry.update(result="failed", error="our replay: " + ours["error"])
            failed += 1
            results.append(entry)
            print(f"replay {name}: FAILED: {ours['error']}")
            continue
        entry["our_device"] = ours.get("device")
        if not has_torch or str(ours.get("device", "")).lower().startswith("fake"):
            entry["result"] = "skipped"
            skipped += 1
            results.append(entry)
            print(f"replay {name}: ours ok on {ours.get('device')}; torch side skipped")
            continue
        torch_path = os.path.join(out_dir, name + ".torch.json")
        tenv = dict(os.environ, PYTORCH_ALLOC_CONF=tr["conf"], PYTORCH_CUDA_ALLOC_CONF=tr["conf"])
        if not tr["conf"]:
            tenv.pop("PYTORCH_ALLOC_CONF")
            tenv.pop("PYTORCH_CUDA_ALLOC_CONF")
        t = subprocess.run([sys.executable, os.path.abspath(__file__), "torch-trace", tpath, torch_path],
                           env=tenv, capture_output=True, text=True, timeout=300)
        if t.returncode != 0:
            entry.update(result="failed", error="torch replay failed: " + t.stderr[-2000:])
            failed += 1
            results.append(entry)
            print(f"replay {name}: FAILED (torch side)\n{entry['error']}")
            continue
        with open(torch_path) as f:
            theirs = json.load(f)
        diffs = compare(ours, theirs)
        entry["result"] = "passed" if not diffs else "failed"
        entry["differences"] = diffs
        if diffs:
            failed += 1
            print(f"replay {name}: FAILED, {len(diffs)} differences:")
            for d in diffs[:20]:
                print("  " + d)
        else:
            passed += 1
            print(f"replay {name}: same segments, blocks and statistics as torch "
                  f"({len(ours['checks'])} checks)")
        results.append(entry)
    with open(os.path.join(out_dir, "replay.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"replay: {passed} passed, {failed} failed, {skipped} skipped")
    if failed:
        return 1
    return 0 if passed else 3


def timings(out_path):
    import torch

    lines = []

    def emit(name, value, unit):
        line = f"TORCH_TIMING {name} {value:.3f} {unit}"
        print(line)
        lines.append(line)

    dev = torch.device("cuda", 0)
    emit_name = torch.cuda.get_device_name(0).replace(" ", "_")
    lines.append(f"TORCH_TIMING device {emit_name} -")
    for size in [512, MIB, 64 * MIB]:
        x = torch.empty(size, dtype=torch.uint8, device=dev)
        del x
        n = 20000
        t0 = time.perf_counter()
        for _ in range(n):
            x = torch.empty(size, dtype=torch.uint8, device=dev)
            del x
        emit(f"alloc_free_cached_{size}B", (time.perf_counter() - t0) / n * 1e9, "ns")
    nbytes = 256 * MIB
    h = torch.ones(nbytes // 4, dtype=torch.float32)
    hp = h.pin_memory()
    d = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)

    def bw(f, reps=5):
        f()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        torch.cuda.synchronize()
        return nbytes / ((time.perf_counter() - t0) / reps) / 1e9

    emit("h2d_pageable_256MiB", bw(lambda: d.copy_(h)), "GB/s")
    emit("h2d_pinned_256MiB", bw(lambda: d.copy_(hp)), "GB/s")
    emit("d2h_pageable_256MiB", bw(lambda: h.copy_(d)), "GB/s")
    emit("d2h_pinned_256MiB", bw(lambda: hp.copy_(d)), "GB/s")
    for n in [4096, 8192]:
        x = torch.randn(n, n, device=dev)
        for _ in range(3):
            x.t().contiguous()
        torch.cuda.synchronize()
        reps = 50
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            x.t().contiguous()
        end.record()
        torch.cuda.synchronize()
        emit(f"contiguous_transpose_{n}x{n}_f32", start.elapsed_time(end) / reps * 1000, "us")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def parse_timings(path, prefix):
    vals = {}
    if not os.path.exists(path):
        return vals
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[0] == prefix:
                try:
                    vals[p[1]] = float(p[2])
                except ValueError:
                    pass
    return vals


def report(ours_path, torch_path, out_path):
    ours = parse_timings(ours_path, "TIMING")
    torch_t = parse_timings(torch_path, "TORCH_TIMING")
    lines, met, missed = [], 0, 0

    def check(what, ok, detail):
        nonlocal met, missed
        if ok is None:
            lines.append(f"  n/a    {what}: {detail}")
            return
        met += ok
        missed += not ok
        lines.append(f"  {'MET   ' if ok else 'MISSED'} {what}: {detail}")

    for size in [512, MIB, 64 * MIB]:
        c = ours.get(f"alloc_free_cached_{size}B")
        r = ours.get(f"alloc_free_raw_cuMemAlloc_cuMemFree_{size}B")
        t = torch_t.get(f"alloc_free_cached_{size}B")
        if c and r:
            check(f"cached malloc+free {size} B >= 50x faster than cuMemAlloc+cuMemFree", r / c >= 50,
                  f"{c:.0f} ns vs {r:.0f} ns = {r / c:.0f}x" + (f" (torch.empty+del: {t:.0f} ns)" if t else ""))
        else:
            check(f"cached malloc+free {size} B", None, "not measured")
    for n in [4096, 8192]:
        name = f"contiguous_transpose_{n}x{n}_f32"
        o, t = ours.get(name), torch_t.get(name)
        if o and t:
            check(f"{name} no slower than torch (5 % noise allowed)", o <= t * 1.05,
                  f"ours {o:.1f} us, torch {t:.1f} us ({t / o:.2f}x torch's speed)")
        else:
            check(name, None, f"ours {o}, torch {t}")
    for k in ["h2d_pageable_256MiB", "h2d_pinned_256MiB", "d2h_pageable_256MiB", "d2h_pinned_256MiB"]:
        lines.append(f"  info   {k}: ours {ours.get(k)} GB/s, torch {torch_t.get(k)} GB/s")
    text = "timing targets:\n" + "\n".join(lines) + f"\ntargets: {met} met, {missed} missed\n"
    print(text, end="")
    with open(out_path, "w") as f:
        f.write(text)
    return 0 if missed == 0 and met > 0 else (1 if missed else 3)


def main(argv):
    if len(argv) >= 3 and argv[0] == "replay":
        return replay(argv[1], argv[2], "--fake" in argv[3:])
    if len(argv) == 3 and argv[0] == "torch-trace":
        torch_trace(argv[1], argv[2])
        return 0
    if len(argv) == 2 and argv[0] == "timings":
        return timings(argv[1])
    if len(argv) == 4 and argv[0] == "report":
        return report(argv[1], argv[2], argv[3])
    if len(argv) == 2 and argv[0] == "traces":
        os.makedirs(argv[1], exist_ok=True)
        for tr in traces():
            with open(os.path.join(argv[1], tr["name"] + ".json"), "w") as f:
                json.dump(tr, f)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
