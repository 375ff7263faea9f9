#!/usr/bin/python3
"""The memory of a first real task, as a user runs it.

Starts `marsfs up --mount MNT` from BIN, writes a ROWS x COLS float64 matrix
(1.6 GB by default) with NumPy, copies it into a session's tensors with
shutil, submits column statistics, then the Gram matrix x.T @ x, reads it
back with numpy.load, closes the session, and prints each step's time and
the peak resident memory of every marsfs process and of /dev/shm, sampled
from /proc every 100 ms, then what stays 5 s after the close beside what
the idle server held.

    go build -o /tmp/marsfs ./cmd/marsfs
    /usr/bin/python3 bench/realtask.py /tmp/marsfs /mnt/marsfs-bench
"""
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np

bin_, mnt = sys.argv[1], sys.argv[2]
rows, cols = int(os.environ.get("ROWS", 20000)), int(os.environ.get("COLS", 10000))
os.makedirs(mnt, exist_ok=True)
up = subprocess.Popen([bin_, "up", "--listen", "127.0.0.1:5690", "--socket", "/tmp/marsfs-realtask.sock", "--mount", mnt],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def procs():
    """The resident bytes of up and each of its workers."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline").read().split("\0")
            if cmd[0] != bin_:
                continue
            kind = "up" if cmd[1] == "up" else f"{cmd[1]}:{p}"
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmRSS"):
                    out[kind] = int(line.split()[1]) * 1024
        except (OSError, IndexError):
            pass
    return out


def shm():
    st = os.statvfs("/dev/shm")
    return (st.f_blocks - st.f_bfree) * st.f_frsize


peak, stop = {}, False


def watch():
    while not stop:
        for k, v in procs().items():
            peak[k] = max(peak.get(k, 0), v)
        peak["shm"] = max(peak.get("shm", 0), shm())
        time.sleep(0.1)


def mb(d):
    return {k: f"{v / 1e6:.0f}MB" for k, v in sorted(d.items())}


try:
    for _ in range(300):
        if os.path.exists(mnt + "/sessions/clone"):
            break
        time.sleep(0.1)
    time.sleep(1)
    idle, idle_shm = procs(), shm()
    threading.Thread(target=watch, daemon=True).start()
    src = f"/tmp/marsfs-realtask-{rows}x{cols}.npy"
    if not os.path.exists(src):
        np.save(src, np.random.default_rng(1).standard_normal((rows, cols)))
    x = np.load(src, mmap_mode="r")
    s = mnt + "/sessions/" + open(mnt + "/sessions/clone").read().strip()

    def step(name, f):
        t = time.time()
        r = f()
        print(f"{name}: {time.time() - t:.2f}s, peaks so far {mb(peak)}", flush=True)
        return r

    def submit(spec):
        with open(s + "/submit", "w") as f:
            f.write(spec)
        status = open(s + "/graphs/last/wait").read()
        if not status.startswith("SUCCEEDED"):
            sys.exit("graph: " + status)

    step("upload", lambda: shutil.copyfile(src, s + "/tensors/x.npy"))
    step("stats", lambda: submit("m = x.mean(axis=0)\nsd = x.std(axis=0)\nfetch m, sd\n"))
    m = np.load(s + "/tensors/m/npy")
    print("mean right:", np.allclose(m, x.mean(axis=0)))
    step("gram", lambda: submit("g = x.T @ x\n"))
    g = step("read g", lambda: np.load(s + "/tensors/g/npy"))
    print("gram right:", np.allclose(g[:50, :50], x[:, :50].T @ x[:, :50]))
    del g
    with open(s + "/ctl", "w") as f:
        f.write("close")
    time.sleep(5)
    stop = True
    print("idle ", mb(idle), f"shm {idle_shm / 1e6:.0f}MB")
    print("after", mb(procs()), f"shm {shm() / 1e6:.0f}MB")
    print("peak ", mb(peak))
    print(f"input {rows * cols * 8 / 1e6:.0f}MB")
finally:
    up.terminate()
    up.wait()
