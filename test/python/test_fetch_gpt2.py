#!/usr/bin/env python3
"""scripts/fetch-gpt2.py against a hub of our own on 127.0.0.1 (standard library only).

The hub serves a generated checkpoint as the Hugging Face hub serves a model:
HEAD on /REPO/resolve/REV/FILE gives the ETag (the git blob SHA-1 of config.json)
or, for the LFS file model.safetensors, a redirect to its storage with
X-Linked-Etag (the SHA-256) and X-Linked-Size; the storage honours Range.
Faults are switched on per case: a connection cut mid-file, a server that
ignores Range, a wrong advertised checksum, no server at all, an unknown revision.

Checked: the downloaded files are byte-identical to the served ones, a cut
transfer resumes from where it stopped (a Range request from that offset), the
destination never holds a partial or unverified file, a mismatch leaves nothing
behind, errors say what failed; and tinymlir-gpt2 runs on the fetched directory.
"""

import argparse
import hashlib
import http.server
import os
import socket
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "fetch-gpt2.py")
REPO, REV = "openai-community/gpt2", "607a30d783dfa663caf39e06633721c8d4cfcd7e"
failures = []


def check(condition, message):
    print(("ok   " if condition else "FAIL ") + message, flush=True)
    if not condition:
        failures.append(message)


class Hub(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, files):
        super().__init__(("127.0.0.1", 0), Handler)
        self.files = files  # name -> bytes
        self.reset()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def reset(self, cut_at=None, cuts=0, ignore_range=False, wrong_sha=False):
        self.cut_at, self.cuts, self.ignore_range, self.wrong_sha = (
            cut_at,
            cuts,
            ignore_range,
            wrong_sha,
        )
        self.ranges = []  # Range headers the storage saw, in order
        self.gets = 0

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _resolve(self, head):
        hub = self.server
        prefix = f"/{REPO}/resolve/{REV}/"
        if self.path.startswith("/storage/"):
            return self._storage(self.path.removeprefix("/storage/"), head)
        if not self.path.startswith(prefix) or self.path[len(prefix) :] not in hub.files:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        name = self.path[len(prefix) :]
        data = hub.files[name]
        if name.endswith(".safetensors"):  # LFS: a redirect to storage
            sha = hashlib.sha256(data).hexdigest()
            if hub.wrong_sha:
                sha = hashlib.sha256(data + b"x").hexdigest()
            self.send_response(302)
            self.send_header("Location", f"/storage/{name}")
            self.send_header("X-Linked-Etag", f'"{sha}"')
            self.send_header("X-Linked-Size", str(len(data)))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        self.send_response(200)
        self.send_header("ETag", f'"{blob}"')
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _storage(self, name, head):
        hub = self.server
        data = hub.files[name]
        start = 0
        requested = self.headers.get("Range")
        if not head:
            hub.ranges.append(requested)
            hub.gets += 1
        if requested and not hub.ignore_range:
            start = int(requested.removeprefix("bytes=").split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        if head:
            return
        body = data[start:]
        if hub.cuts > 0:  # send cut_at bytes, then cut the connection
            hub.cuts -= 1
            self.wfile.write(body[: hub.cut_at])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)  # the connection cut mid-file
            self.close_connection = True
            return
        self.wfile.write(body)

    def do_HEAD(self):
        self._resolve(head=True)

    def do_GET(self):
        self._resolve(head=False)


def fetch(endpoint, out, *flags):
    env = dict(os.environ, HF_ENDPOINT=endpoint)
    env.pop("HF_TOKEN", None)
    run = subprocess.run(
        [sys.executable, SCRIPT, "gpt2", out, *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return run.returncode, run.stderr


def files_in(out):
    return sorted(os.listdir(out)) if os.path.isdir(out) else []


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--maker", required=True, help="tinymlir-make-gpt2")
    parser.add_argument("--binary", required=True, help="tinymlir-gpt2")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="tinymlir-fetch-")
    source = os.path.join(tmp, "served")
    subprocess.run(
        [
            args.maker,
            "--out",
            source,
            "--layers",
            "1",
            "--heads",
            "2",
            "--embd",
            "32",
            "--vocab",
            "300",
            "--positions",
            "32",
            "--seed",
            "5",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    files = {
        name: open(os.path.join(source, name), "rb").read()
        for name in ("config.json", "model.safetensors")
    }
    size = len(files["model.safetensors"])
    hub = Hub(files)

    def identical(out):
        return all(open(os.path.join(out, n), "rb").read() == files[n] for n in files)

    # 1. A clean download, then a second run that finds the files verified.
    out = os.path.join(tmp, "clean")
    rc, err = fetch(hub.url, out)
    check(rc == 0 and identical(out), f"clean download is byte-identical (rc {rc}) {err[-300:]}")
    check(
        files_in(out) == ["config.json", "model.safetensors"],
        f"only the two files: {files_in(out)}",
    )
    check("sha256" in err and "git-sha1" in err, "both checksums verified")
    hub.reset()
    rc, err = fetch(hub.url, out)
    check(
        rc == 0 and hub.gets == 0 and "already there" in err,
        f"a second run downloads nothing (gets {hub.gets})",
    )

    # tinymlir-gpt2 runs on what was fetched.
    run = subprocess.run(
        [
            args.binary,
            "--model",
            out,
            "--prompt-ids",
            "1,2,3",
            "--tokens",
            "3",
            "--no-disk-cache",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    check(
        run.returncode == 0 and "output_ids" in run.stdout,
        f"tinymlir-gpt2 runs on the fetched checkpoint: {run.stderr[-300:]}",
    )

    # 2. A connection cut mid-file, resumed in the same run from the offset it reached.
    out = os.path.join(tmp, "cut")
    hub.reset(cut_at=size // 3, cuts=2)
    rc, err = fetch(hub.url, out)
    check(
        rc == 0 and identical(out),
        f"cut twice, resumed twice, byte-identical (rc {rc}) {err[-300:]}",
    )
    check(
        hub.ranges == [None, f"bytes={size // 3}-", f"bytes={2 * (size // 3)}-"],
        f"the resumption asks for the rest only: {hub.ranges}",
    )
    check(
        files_in(out) == ["config.json", "model.safetensors"],
        f"no partial file left: {files_in(out)}",
    )

    # 3. Cut with no retries: a clear error, the partial kept aside, a second run resumes it.
    out = os.path.join(tmp, "cut-later")
    hub.reset(cut_at=size // 2, cuts=1)
    rc, err = fetch(hub.url, out, "--retries", "0")
    check(
        rc == 1 and f"cut after {size // 2} of {size} bytes" in err and "resumes" in err,
        f"a cut without retries fails naming the bytes: {err.strip().splitlines()[-1:]}",
    )
    check(
        "model.safetensors" not in files_in(out)
        and "model.safetensors.incomplete" in files_in(out),
        f"no model.safetensors, the partial kept for resuming: {files_in(out)}",
    )
    hub.ranges = []
    rc, err = fetch(hub.url, out)
    check(
        rc == 0 and identical(out) and hub.ranges == [f"bytes={size // 2}-"],
        f"the next run resumes at {size // 2}: {hub.ranges}",
    )

    # 4. A server that ignores Range: the download starts over, still correct.
    out = os.path.join(tmp, "no-range")
    hub.reset(cut_at=size // 4, cuts=1, ignore_range=True)
    rc, err = fetch(hub.url, out)
    check(
        rc == 0 and identical(out) and len(hub.ranges) == 2,
        f"a server ignoring Range: restarted, byte-identical (rc {rc}, {hub.ranges})",
    )

    # 5. A wrong advertised SHA-256: an error with both sums, nothing left behind.
    out = os.path.join(tmp, "wrong")
    hub.reset(wrong_sha=True)
    rc, err = fetch(hub.url, out)
    check(
        rc == 1
        and "sha256 mismatch" in err
        and hashlib.sha256(files["model.safetensors"]).hexdigest() in err,
        f"a mismatch is an error naming the sums: {err.strip().splitlines()[-1:]}",
    )
    check(
        not any(n.startswith("model.safetensors") for n in files_in(out)),
        f"a mismatch leaves no model file: {files_in(out)}",
    )
    # A stale file in the destination that fails the check is replaced, not trusted.
    hub.reset()
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(files["model.safetensors"][:-1] + b"\0")
    rc, err = fetch(hub.url, out)
    check(rc == 0 and identical(out), "a corrupt file already in place is downloaded again")

    # 6. Offline: no server listening.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    out = os.path.join(tmp, "offline")
    rc, err = fetch(closed, out)
    check(
        rc == 1 and "cannot reach" in err and files_in(out) == [],
        f"offline: a clear error and no file: {err.strip().splitlines()[-1:]} {files_in(out)}",
    )

    # 7. An unknown revision.
    out = os.path.join(tmp, "unknown")
    rc, err = fetch(hub.url, out, "--revision", "0" * 40)
    check(
        rc == 1 and "HTTP 404" in err and files_in(out) == [],
        f"an unknown revision: {err.strip().splitlines()[-1:]}",
    )

    hub.shutdown()
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all fetch checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
