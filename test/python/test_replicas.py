#!/usr/bin/env python3
"""Two tinymlir-gpt2 replicas behind nginx (scripts/serve-replicas.sh), on
127.0.0.1 only, checked from outside:

1. A load of REQUESTS requests from CLIENTS clients (half streamed, 10%
   cancelled by their client): every completed answer has the tokens the
   prompt gets alone (the CLI), both replicas serve, and requests with the same
   X-Session-Id go to the same replica.
2. kill -9 of one replica under load: every non-streamed request still
   succeeds (nginx retries it on the other), a stream cut in the middle ends
   with an error the client sees, nothing hangs; the replica, started again by
   the script, takes traffic again.
3. A rolling restart (SIGHUP to the script) under load loses no request,
   streamed or not.
Then SIGTERM stops everything (exit 0, no process left). Skipped (exit 77) when
nginx is not installed.
"""

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_server import SETTINGS, expected_ids, one_request  # noqa: E402


def free_ports(n):
    """A port p with p..p+n-1 free now (bound and released)."""
    for _ in range(100):
        base = random.randrange(20000, 60000)
        socks = []
        try:
            for k in range(n):
                s = socket.socket()
                s.bind(("127.0.0.1", base + k))
                socks.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError("no free ports")


class Replicas:
    def __init__(self, script, env, port, model):
        self.port = port
        self.proc = subprocess.Popen(
            [script, "2", str(port), "--model", model, "--slots", "8"],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.log = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for("ready: ", 300)

    def _read(self):
        for line in self.proc.stderr:
            with self.changed:
                self.log.append(line)
                self.changed.notify_all()

    def wait_for(self, text, seconds, after=0):
        deadline = time.time() + seconds
        with self.changed:
            while not any(text in line for line in self.log[after:]):
                left = deadline - time.time()
                assert left > 0 and self.proc.poll() is None, (
                    f"no {text!r} from serve-replicas.sh: {''.join(self.log)[-3000:]}"
                )
                self.changed.wait(left)

    def pids(self, replica):
        return [
            int(m.group(1)) for line in self.log if (m := re.search(rf"{replica}: pid (\d+)", line))
        ]


def request(port, body, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/v1/completions", json.dumps(body), headers or {})
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, response.getheader("X-Replica"), data


def load(port, prompts, expected, clients, requests=None, until=None, seed=0, most=40):
    """Clients send requests (a fixed number, or until `until` is set); returns
    per request (body, outcome), outcome "ok", "cancelled", "cut" (a stream
    that ended without its last event) or an error message."""
    rng = random.Random(seed)
    lock = threading.Lock()
    done = []
    count = [0]

    def plan():
        with lock:
            if (requests is not None and count[0] >= requests) or (until and until.is_set()):
                return None
            count[0] += 1
            p, s = rng.randrange(len(prompts)), rng.randrange(len(SETTINGS))
            body = {
                "prompt": prompts[p],
                "max_tokens": rng.randint(1, most),
                "stream": rng.random() < 0.5,
                **SETTINGS[s],
            }
            cancel = None
            if rng.random() < 0.1:
                cancel = rng.randint(1, 3) if body["stream"] else rng.uniform(0.01, 0.2)
            return p, s, body, cancel

    def client():
        while (item := plan()) is not None:
            p, s, body, cancel = item
            want = expected[p, s][: body["max_tokens"]]
            try:
                status, ids, finish, _ = one_request(port, body, cancel)
                if status == "cancelled":
                    outcome = "cancelled" if ids == want[: len(ids)] else f"cancelled at {ids}"
                elif status != 200:
                    outcome = f"status {status}: {ids}"
                elif body["stream"] and finish is None:
                    outcome = "cut" if ids == want[: len(ids)] else f"cut at wrong ids {ids}"
                else:
                    outcome = "ok" if ids == want else f"got {ids}, alone {want}"
            except (ConnectionError, http.client.HTTPException) as e:
                outcome = "cut" if body["stream"] else f"{type(e).__name__}: {e}"
            except Exception as e:  # noqa: BLE001 -- e.g. an error page that is not JSON
                outcome = f"{type(e).__name__}: {e}"
            with lock:
                done.append((body, outcome))

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a client is still waiting: a request hangs"
    return done


def summary(done):
    out = {}
    for _, outcome in done:
        key = outcome if outcome in ("ok", "cancelled", "cut") else "wrong"
        out[key] = out.get(key, 0) + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--maker", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=200)
    a = ap.parse_args()
    nginx = shutil.which("nginx") or (
        "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None
    )
    if not nginx:
        print("SKIP: nginx is not installed (scripts/install-deps.sh installs nginx-light)")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="tinymlir-replicas-") as tmp:
        env = dict(
            os.environ,
            HOME=tmp,
            XDG_CACHE_HOME=os.path.join(tmp, "cache"),
            TINYMLIR_CACHE_DIR=os.path.join(tmp, "kernels"),
            TINYMLIR_GPT2=a.binary,
            NGINX=nginx,
            RUN_DIR=os.path.join(tmp, "run"),
        )
        model = os.path.join(tmp, "model")
        subprocess.run(
            [a.maker, "--preset", "tiny", "--out", model, "--seed", "3"],
            check=True,
            capture_output=True,
            env=env,
        )
        rng = random.Random(1)
        prompts = [[rng.randrange(50257) for _ in range(n)] for n in (1, 3, 7, 12, 20, 33, 60, 80)]
        expected = expected_ids(a.binary, model, env, prompts, 40)
        replicas = Replicas(a.script, env, free_ports(3), model)
        port = replicas.port
        try:
            # 1. Load: every answer exact, both replicas serve, sessions stick.
            t0 = time.time()
            done = load(port, prompts, expected, a.clients, a.requests)
            counts = summary(done)
            wrong = [d for d in done if d[1] not in ("ok", "cancelled")]
            assert not wrong, wrong[:5]
            print(f"load: {a.requests} requests in {time.time() - t0:.1f} s: {counts}")
            seen = {request(port, {"prompt": prompts[1], "max_tokens": 2})[1] for _ in range(8)}
            assert seen == {"replica1", "replica2"}, seen
            for session in ("alice", "bob", "carol"):
                served = {
                    request(
                        port, {"prompt": prompts[2], "max_tokens": 2}, {"X-Session-Id": session}
                    )[1]
                    for _ in range(6)
                }
                assert len(served) == 1, (session, served)
            # 2. kill -9 of replica1 in the middle of a load.
            victim = replicas.pids("replica1")[-1]
            stop = threading.Event()
            result = []
            worker = threading.Thread(
                target=lambda: result.append(
                    load(port, prompts, expected, a.clients, until=stop, seed=1)
                )
            )
            worker.start()
            time.sleep(2)
            os.kill(victim, signal.SIGKILL)
            time.sleep(2)
            stop.set()
            worker.join(timeout=600)
            assert not worker.is_alive(), "the load under a kill hangs"
            done = result[0]
            counts = summary(done)
            plain_failed = [
                d for d in done if not d[0]["stream"] and d[1] not in ("ok", "cancelled")
            ]
            wrong = [d for d in done if d[1] not in ("ok", "cancelled", "cut")]
            assert not plain_failed and not wrong, (plain_failed + wrong)[:5]
            print(
                f"kill -9 of replica1 under load: {len(done)} requests: {counts} "
                f"(cut: streams that replica1 was sending)"
            )
            # The script starts it again, and it takes traffic again.
            deadline = time.time() + 120
            while len(replicas.pids("replica1")) < 2:
                assert time.time() < deadline, "replica1 was not started again"
                time.sleep(0.1)
            served = set()
            while "replica1" not in served:
                assert time.time() < deadline, f"the restarted replica1 takes no traffic: {served}"
                status, replica, _ = request(port, {"prompt": prompts[1], "max_tokens": 2})
                assert status == 200
                served.add(replica)
                time.sleep(0.05)
            # 3. A rolling restart under load loses nothing.
            mark = len(replicas.log)
            stop = threading.Event()
            result = []
            worker = threading.Thread(
                target=lambda: result.append(
                    load(port, prompts, expected, a.clients, until=stop, seed=2)
                )
            )
            worker.start()
            time.sleep(1)
            replicas.proc.send_signal(signal.SIGHUP)
            replicas.wait_for("rolling restart done", 300, mark)
            time.sleep(1)
            stop.set()
            worker.join(timeout=600)
            assert not worker.is_alive(), "the load under a rolling restart hangs"
            done = result[0]
            lost = [d for d in done if d[1] not in ("ok", "cancelled")]
            assert not lost, lost[:5]
            assert len(replicas.pids("replica1")) == 3 and len(replicas.pids("replica2")) == 2
            print(f"rolling restart under load: {len(done)} requests: {summary(done)}")
        finally:
            replicas.proc.send_signal(signal.SIGTERM)
            try:
                code = replicas.proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                replicas.proc.kill()
                raise AssertionError(
                    "serve-replicas.sh did not stop within 120 s of SIGTERM"
                ) from None
        assert code == 0, f"serve-replicas.sh exited {code}: {''.join(replicas.log)[-3000:]}"
        left = [
            pid
            for r in ("replica1", "replica2")
            for pid in replicas.pids(r)
            if os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2] != "Z"
        ]
        assert not left, f"processes left running: {left}"
    print("OK")


if __name__ == "__main__":
    main()
