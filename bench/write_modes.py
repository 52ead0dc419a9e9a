#!/usr/bin/env python3
"""What a commit of many small files costs the filesystem, by how it writes them (issue 34's
session revert): the journal's way against writing in place, without staged, so that the
filesystem's share of a revert can be told from staged's own.

  temps     each file's new bytes in a new temp file beside it (O_CREAT|O_EXCL), written and
            fsynced, then renamed over the file: the journal's protocol today (16 threads,
            as `crates/journal/src/par.rs` runs them)
  serial    the same, the temps created and written on one thread, then fsynced and renamed
            on 16 (whether the creates contend on the folder and the inode bitmap)
  in-place  each file opened O_TRUNC, written and fdatasynced where it is (16 threads): no
            new inode, no rename; what a journal holding the new bytes itself (its redo) would
            leave to do after its commit point

Every round starts from a fresh copy of FOLDER (made untimed, by `cp -a`), as bench/session.py
does, so each round's inode allocations follow the same churn. Prints each mode's CPU time
(user + system of this process, whose threads do the writes) and wall time, p50 over ROUNDS.

Usage: bench/write_modes.py FOLDER [ROUNDS] [FILES]   (defaults 7, 300)
       FOLDER: a workspace whose `src/` holds at least FILES files named f000.ts, f001.ts, ...
       (bench/session.py's, kept with STAGED_BENCH_KEEP=FOLDER); the copies are made beside it.
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

THREADS = 16
DATA = b"const x = 1; // written by bench/write_modes.py\n" * 32


def temps(src, n):
    def one(i):
        temp = f"{src}/.f{i:03}.ts.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, DATA)
        os.fsync(fd)
        os.close(fd)
        os.rename(temp, f"{src}/f{i:03}.ts")
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, range(n)))
    sync_dir(src)


def serial(src, n):
    fds = []
    for i in range(n):
        fd = os.open(f"{src}/.f{i:03}.ts.tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, DATA)
        fds.append(fd)

    def one(i):
        os.fsync(fds[i])
        os.close(fds[i])
        os.rename(f"{src}/.f{i:03}.ts.tmp", f"{src}/f{i:03}.ts")
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, range(n)))
    sync_dir(src)


def in_place(src, n):
    def one(i):
        fd = os.open(f"{src}/f{i:03}.ts", os.O_WRONLY | os.O_TRUNC)
        os.write(fd, DATA)
        os.fdatasync(fd)
        os.close(fd)
    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, range(n)))


def sync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(fd)
    os.close(fd)


def main():
    folder = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    copy = folder.rstrip("/") + ".write_modes"
    modes = {"temps": temps, "serial": serial, "in-place": in_place}
    cpu = {m: [] for m in modes}
    wall = {m: [] for m in modes}
    try:
        for _ in range(rounds):
            for name, write in modes.items():
                shutil.rmtree(copy, ignore_errors=True)
                subprocess.run(["cp", "-a", folder, copy], check=True)
                before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
                write(f"{copy}/src", n)
                elapsed = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_SELF)
                wall[name].append(elapsed)
                cpu[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    for name in modes:
        print(f"{name:<9} CPU p50 {statistics.median(cpu[name]) * 1000:7.1f} ms   "
              f"wall p50 {statistics.median(wall[name]) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
