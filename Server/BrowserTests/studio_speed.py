#!/usr/bin/env python3
"""Times ModelStore Studio's pages over HTTP on a large SQLite store.

usage: studio_speed.py BIN_DIR MODELS [STORE_PATH]

Writes MODELS people with `studio-fixture bulk` (or reuses STORE_PATH if it exists), starts the real
`modelstore-studio` on loopback, and times requests as a browser makes them (cookie, no cache):
the entity list, the first page of the entity and the pages after it by following the `next`
links, the same sorted by an indexed attribute and descending, and a filtered list. Prints the
median of each and each page's access path, and fails if a page misses its goal (first page
<= 200 ms, next pages <= 50 ms) or reads the table by a scan.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

FIRST_GOAL_MS = 200
NEXT_GOAL_MS = 50
REPEATS = 7
NEXT_PAGES = 10


def fetch(base, token, path):
    request = urllib.request.Request(base + path, headers={"Cookie": f"modelstore_studio={token}"})
    started = time.perf_counter()
    with urllib.request.urlopen(request) as response:
        body = response.read().decode()
    return (time.perf_counter() - started) * 1000, body


def access_path(body):
    match = re.search(r"<dt>access path</dt><dd>([^<]*)</dd>", body)
    return match.group(1) if match else "none"


def next_link(body):
    match = re.search(r'<a id="next" href="([^"]+)"', body)
    return match.group(1).replace("&amp;", "&") if match else None


def main():
    bin_dir, models = sys.argv[1], int(sys.argv[2])
    path = sys.argv[3] if len(sys.argv) > 3 else os.path.join(tempfile.mkdtemp(prefix="studio-speed-"), "big.sqlite")
    url = f"sqlite:{path}"
    if not os.path.exists(path):
        started = time.perf_counter()
        subprocess.run([os.path.join(bin_dir, "studio-fixture"), "bulk", url, str(models)], check=True)
        print(f"wrote {models} people in {time.perf_counter() - started:.1f} s")
    process = subprocess.Popen([os.path.join(bin_dir, "modelstore-studio"), url, "--port", "0"],
                               stdout=subprocess.PIPE, text=True)
    match = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)", process.stdout.readline())
    base, token = match.group(1), match.group(2)
    failures = []
    try:
        fetch(base, token, "/")  # warm the connection and the store's statement cache
        lists = [
            ("default order (unique name)", "/entities/Person"),
            ("sorted by indexed age, descending", "/entities/Person?sort=age&order=desc"),
            ("filter age >= 65, by name", "/entities/Person?filter=" + urllib.parse.quote("age >= 65")),
        ]
        times, _ = zip(*[fetch(base, token, "/") for _ in range(REPEATS)])
        print(f"entity list (bounded counts)     median {statistics.median(times):7.1f} ms")
        if statistics.median(times) > FIRST_GOAL_MS:
            failures.append("entity list")
        for name, first_path in lists:
            first_times, next_times, paths = [], [], set()
            for _ in range(REPEATS):
                elapsed, body = fetch(base, token, first_path)
                first_times.append(elapsed)
                paths.add(access_path(body))
                for _ in range(NEXT_PAGES):
                    link = next_link(body)
                    if not link:
                        break
                    elapsed, body = fetch(base, token, link)
                    next_times.append(elapsed)
                    paths.add(access_path(body))
            first_median = statistics.median(first_times)
            next_median = statistics.median(next_times)
            print(f"{name:33s} first page median {first_median:7.1f} ms, next pages median {next_median:6.1f} ms "
                  f"(max {max(next_times):6.1f}, {len(next_times)} pages); access {sorted(paths)}")
            if first_median > FIRST_GOAL_MS or next_median > NEXT_GOAL_MS:
                failures.append(name)
            if any(p.startswith("scan") for p in paths):
                failures.append(name + " scans the table")
        elapsed, body = fetch(base, token, "/entities/Person?count=exact")
        print(f"exact count on request            {elapsed:7.1f} ms (reads the whole table, as asked)")
    finally:
        process.terminate()
        process.wait(timeout=10)
    if failures:
        print("MISSED: " + ", ".join(failures))
        sys.exit(1)
    print("every goal met")


if __name__ == "__main__":
    main()
