#!/usr/bin/env python3
"""tinymlir-gpt2 --serve on 127.0.0.1, checked from outside (standard library only).

1. Bad requests get a 400 naming the fault; /health and /metrics answer.
2. A load test: CLIENTS concurrent clients send REQUESTS requests of mixed
   prompt lengths, token counts and sampling settings, some streamed and some
   cancelled by their client. Every request that completes gets exactly the
   token ids the same prompt and settings get alone (the CLI, a batch of one);
   none is lost or left hanging (the finish reasons in /metrics add up); the
   server's memory returns to its baseline; the server still answers.
3. A full queue answers 503, and the server goes on serving.
4. The listen backlog holds a burst of 64 connections made while the server
   cannot accept (SIGSTOP), and a second server on a port in use is refused.

Run by CTest; bench/server_bench.py reuses load() on a larger model.
"""

import argparse
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time


class Server:
    """tinymlir-gpt2 --serve --port 0, its port read from its first line on stderr."""

    def __init__(self, binary, model, env, *flags):
        self.proc = subprocess.Popen(
            [binary, "--model", model, "--serve", "--port", "0", *flags],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        line = self.proc.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if not match:
            self.proc.kill()
            raise SystemExit(f"FAIL: the server did not start: {line!r}")
        self.port = int(match.group(1))
        self.log = []
        threading.Thread(target=lambda: self.log.extend(self.proc.stderr), daemon=True).start()

    def request(self, method, path, body=None, timeout=120, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.request(
            method,
            path,
            body=None
            if body is None
            else (body if isinstance(body, (str, bytes)) else json.dumps(body)),
        )
        response = conn.getresponse()
        data = response.read()
        conn.close()
        if headers is not None:
            headers.update({k.lower(): v for k, v in response.getheaders()})
        return response.status, data

    def complete(self, body, timeout=120):
        status, data = self.request("POST", "/v1/completions", body, timeout)
        return status, json.loads(data)

    def metrics(self):
        status, data = self.request("GET", "/metrics")
        assert status == 200, status
        out = {}
        for line in data.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def wait_idle(self, seconds=30):
        deadline = time.time() + seconds
        while time.time() < deadline:
            m = self.metrics()
            if m["tinymlir_active_sequences"] == 0 and m["tinymlir_queue_length"] == 0:
                return m
            time.sleep(0.05)
        raise AssertionError(f"the server is not idle after {seconds} s: {m}")

    def wait_warm(self, seconds=600):
        """Waits for the start's compilations (every step and prompt of the first
        128 positions); returns the kernels made ready so far."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            m = self.metrics()
            if m["tinymlir_warming_up"] == 0:
                return m["tinymlir_kernels_total"]
            time.sleep(0.1)
        raise AssertionError(f"the server still compiles after {seconds} s: {m}")

    def stop(self):
        self.proc.terminate()
        try:
            code = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("the server did not stop within 30 s of SIGTERM") from None
        assert code == 0, f"the server exited with {code}: {''.join(self.log)[-2000:]}"


def sse_events(response):
    """The data of each server-sent event, with the time it arrived."""
    buffer = b""
    while True:
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(1)
        if not chunk:
            return
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            for line in event.split(b"\n"):
                if line.startswith(b"data: "):
                    yield line[6:].decode(), time.perf_counter()


def one_request(port, body, cancel_after):
    """Sends a completion; returns (status, ids, finish, token times). With
    cancel_after (seconds, or tokens when streaming) the client goes away early."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    start = time.perf_counter()
    conn.request("POST", "/v1/completions", json.dumps(body))
    response = conn.getresponse()
    if response.status != 200:
        data = json.loads(response.read())
        conn.close()
        return response.status, data, None, []
    ids, times, finish = [], [], None
    if body.get("stream"):
        for data, t in sse_events(response):
            if data == "[DONE]":
                break
            choice = json.loads(data)["choices"][0]
            ids += choice["token_ids"]
            times += [t] * len(choice["token_ids"])
            finish = choice["finish_reason"] or finish
            if cancel_after is not None and len(ids) >= cancel_after:
                conn.sock.close()  # the client goes away mid-stream
                conn.close()
                return "cancelled", ids, None, times
    else:
        if cancel_after is not None:
            time.sleep(cancel_after)
            conn.sock.close()
            conn.close()
            return "cancelled", [], None, []
        choice = json.loads(response.read())["choices"][0]
        ids, finish = choice["token_ids"], choice["finish_reason"]
        times = [time.perf_counter()]
    conn.close()
    return 200, ids, finish, [start] + times


SETTINGS = [
    {},
    {"temperature": 0.9, "top_k": 50, "seed": 1},
    {"temperature": 1.2, "top_p": 0.9, "seed": 2, "repeat_penalty": 1.3},
]


def cli_flags(settings):
    flags = []
    for key, flag in (
        ("temperature", "--temperature"),
        ("top_k", "--top-k"),
        ("top_p", "--top-p"),
        ("seed", "--seed"),
        ("repeat_penalty", "--repeat-penalty"),
    ):
        if key in settings:
            flags += [flag, str(settings[key])]
    return flags


def expected_ids(binary, model, env, prompts, most):
    """What each prompt and setting gives alone: the CLI (a batch of one)."""
    out = {}
    for p, prompt in enumerate(prompts):
        for s, settings in enumerate(SETTINGS):
            run = subprocess.run(
                [
                    binary,
                    "--model",
                    model,
                    "--prompt-ids",
                    ",".join(map(str, prompt)),
                    "--tokens",
                    str(most),
                    "--json",
                    *cli_flags(settings),
                ],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            out[p, s] = json.loads(run.stdout)["output_ids"]
    return out


def load(server, prompts, expected, clients, requests, most, seed=0, cancel_share=0.15):
    """The load test; returns (completed, cancelled, rejected, per-token gaps in s)."""
    rng = random.Random(seed)
    plan = []
    for _ in range(requests):
        p, s = rng.randrange(len(prompts)), rng.randrange(len(SETTINGS))
        body = {
            "prompt": prompts[p],
            "max_tokens": rng.randint(1, most),
            "stream": rng.random() < 0.5,
            **SETTINGS[s],
        }
        cancel = None
        if rng.random() < cancel_share:
            cancel = rng.randint(1, 3) if body["stream"] else rng.uniform(0.01, 0.2)
        plan.append((p, s, body, cancel))
    results = [None] * requests
    next_index = iter(range(requests))
    lock = threading.Lock()
    failures = []

    def client():
        while True:
            with lock:
                i = next(next_index, None)
            if i is None:
                return
            p, s, body, cancel = plan[i]
            try:
                results[i] = one_request(server.port, body, cancel)
            except Exception as e:  # noqa: BLE001 -- any failure is reported
                failures.append(f"request {i} ({body}): {type(e).__name__}: {e}")

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a client is still waiting: a request hangs"
    assert not failures, "\n".join(failures[:5])
    completed = cancelled = rejected = 0
    gaps = []
    for i, (p, s, body, _) in enumerate(plan):
        status, ids, finish, times = results[i]
        want = expected[p, s][: body["max_tokens"]]
        if status == "cancelled":
            cancelled += 1
            assert ids == want[: len(ids)], f"request {i}: cancelled after {ids}, alone {want}"
            continue
        if status == 503:
            rejected += 1
            continue
        assert status == 200, f"request {i}: status {status}: {ids}"
        completed += 1
        assert ids == want, f"request {i} ({body}): got {ids}, alone {want}"
        assert finish == ("length" if len(ids) == body["max_tokens"] else "stop"), (i, finish)
        if body["stream"]:
            gaps += [b - a for a, b in zip(times[1:], times[2:])]
    return completed, cancelled, rejected, gaps


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q / 100 * len(values)))] if values else float("nan")


def check_bad_requests(server, context):
    cases = [
        ("{\"prompt\": ", "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
        ({"prompt": "hi", "max_tokens": 4, "frobnicate": 1}, "unknown field 'frobnicate'"),
        ({"max_tokens": 4}, "'prompt' is missing"),
        ({"prompt": "hi", "max_tokens": "4"}, "'max_tokens' must be an integer, not \"4\""),
        ({"prompt": "hi", "max_tokens": 0}, "'max_tokens' must be 1 to"),
        ({"prompt": "hi", "max_tokens": context + 1}, f"'max_tokens' must be 1 to {context}"),
        ({"prompt": [1] * (context + 1), "max_tokens": 1}, f"exceed the context of {context}"),
        ({"prompt": [1] * (context - 2), "max_tokens": 5}, "plus 5 new tokens exceeds the context"),
        ({"prompt": [], "max_tokens": 5}, "the prompt is empty"),
        ({"prompt": [1, 99999999], "max_tokens": 5}, "token id 99999999 is outside the vocabulary"),
        ({"prompt": {"a": 1}, "max_tokens": 5}, "'prompt' must be a string"),
        ({"prompt": "hi", "temperature": -1}, "temperature must be a finite number >= 0"),
        ({"prompt": "hi", "top_p": 0}, "top_p must be in (0, 1]"),
        ({"prompt": "hi", "seed": -3}, "'seed' must be a non-negative integer"),
        ({"prompt": "hi", "n": 2}, "'n' must be 1"),
        ({"prompt": "hi", "stream": "yes"}, "'stream' must be true or false"),
    ]
    for body, reason in cases:
        status, answer = server.complete(body)
        message = answer.get("error", {}).get("message", "")
        assert status == 400 and reason in message, f"{body!r}: {status} {answer}"
    assert server.request("GET", "/nowhere")[0] == 404
    # Readiness: 503 with Retry-After while the warm-up compiles (it has just
    # started: a model's start compiles for seconds), 200 once it is done.
    headers = {}
    status, data = server.request("GET", "/health", headers=headers)
    state = json.loads(data)
    if state["warming_up"]:
        assert status == 503 and state["status"] == "warming_up" and "retry-after" in headers, (
            status,
            data,
            headers,
        )
    else:
        assert status == 200 and state["status"] == "ok", (status, data)
    assert headers["x-replica"] == f"127.0.0.1:{server.port}", headers
    assert server.request("GET", "/live") == (200, b'{"status":"alive"}')
    m = server.metrics()
    assert m['tinymlir_rejected_total{reason="bad_request"}'] == len(cases), m


def check_backlog(server, burst=64):
    """Connections made while the server is stopped wait in the listen backlog:
    the kernel completes each handshake, so every connect returns at once, and
    each request is answered when the server runs again. (httplib's compiled-in
    backlog of 5 left the 7th connect unanswered, and a burst under load got
    SYN cookies and connection resets.)"""
    socks = []
    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        for i in range(burst):
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=2)
            except OSError as e:
                raise AssertionError(
                    f"connection {i + 1} of a burst of {burst} was not accepted "
                    f"into the listen backlog within 2 s: {e}"
                ) from None
            socks.append(s)
            s.sendall(b"GET /live HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)
    for i, s in enumerate(socks):
        s.settimeout(60)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        s.close()
        assert data.startswith(b"HTTP/1.1 200"), f"connection {i + 1} of {burst}: {data[:200]!r}"


def check_port_in_use(binary, model, env, port):
    proc = subprocess.Popen(
        [binary, "--model", model, "--serve", "--port", str(port)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        err = proc.stderr.readline()  # the error, or "serving ..." if it bound the port too
    finally:
        proc.kill()
        err += proc.communicate()[1]
    want = f"cannot listen on 127.0.0.1:{port} (in use"
    assert want in err and proc.returncode != 0, (
        f"a second server on port {port} in use: exit {proc.returncode}, {err[-1000:]!r}"
    )


def check_answers_come_whole(server, prompt):
    """A non-streamed answer's status line and headers come with its body, once
    it is done (a balancer can then retry it elsewhere while it is not): the
    time to the headers is nearly all of the time to the end of the body."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    t0 = time.perf_counter()
    conn.request(
        "POST",
        "/v1/completions",
        json.dumps({"prompt": prompt, "max_tokens": 100, "ignore_eos": True}),
    )
    response = conn.getresponse()
    t1 = time.perf_counter()
    answer = json.loads(response.read())
    t2 = time.perf_counter()
    conn.close()
    assert response.status == 200 and len(answer["choices"][0]["token_ids"]) == 100, answer
    assert t1 - t0 >= 0.8 * (t2 - t0), (
        f"headers after {t1 - t0:.3f} s, the body's end after {t2 - t0:.3f} s: the headers "
        f"were sent before the answer was done"
    )


def check_drain(binary, model, env, prompt, want):
    """SIGTERM drains: new requests and /health get 503 with Retry-After, the
    requests in flight (decoding and waiting) all finish with their tokens, then
    the server exits 0. The signal is sent while the server is stopped
    (SIGSTOP), once all 4 requests of 100 tokens are admitted to its one slot (or, the
    first, done), so it finds them in flight."""
    server = Server(binary, model, env, "--slots", "1", "--drain-timeout", "120")
    server.wait_warm()
    body = {"prompt": prompt, "max_tokens": 100, "ignore_eos": True}
    results = []
    threads = [
        threading.Thread(
            target=lambda s=stream: results.append(
                one_request(server.port, {**body, "stream": s}, None)
            )
        )
        for stream in (False, True) * 2
    ]
    for t in threads:
        t.start()
    # All four admitted: in flight, or (the first, on a slow machine) done. The
    # others wait for the one slot, 100 tokens each. `results` is read before the
    # metric: a request finishing between the two reads is then counted in
    # neither, never in both, so a 4th request not yet sent is never presumed
    # admitted (it would rightly get 503 from the drain).
    deadline = time.time() + 60
    while len(results) + server.metrics()["tinymlir_requests_in_flight"] < 4:
        assert time.time() < deadline, "the requests were not admitted"
        time.sleep(0.005)
    os.kill(server.proc.pid, signal.SIGSTOP)
    os.kill(server.proc.pid, signal.SIGTERM)
    os.kill(server.proc.pid, signal.SIGCONT)
    deadline = time.time() + 10
    while server.metrics()["tinymlir_draining"] == 0:
        assert time.time() < deadline, "SIGTERM did not start a drain"
        time.sleep(0.005)
    assert server.metrics()["tinymlir_requests_in_flight"] >= 1
    headers = {}
    status, data = server.request("GET", "/health", headers=headers)
    assert status == 503 and json.loads(data)["status"] == "draining", (status, data)
    assert headers["retry-after"] == "5", headers
    status, answer = server.complete(body)
    assert status == 503 and "shutting down" in answer["error"]["message"], (status, answer)
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 4 and all(r[0] == 200 and r[1] == want for r in results), results
    code = server.proc.wait(timeout=60)
    assert code == 0, f"exit {code} after a drain: {''.join(server.log)[-2000:]}"
    log = "".join(server.log)
    assert "SIGTERM: draining" in log and "with requests in flight" not in log, log[-2000:]
    print("drain: 4 requests in flight finished, new ones got 503, exit 0")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--maker", required=True)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument(
        "--no-rss-check",
        action="store_true",
        help="sanitized builds: AddressSanitizer's quarantine keeps freed memory "
        "resident, so RSS does not return; LeakSanitizer checks leaks at exit "
        "instead (the server must exit 0)",
    )
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tinymlir-server-") as tmp:
        env = dict(
            os.environ,
            HOME=tmp,
            XDG_CACHE_HOME=os.path.join(tmp, "cache"),
            TINYMLIR_CACHE_DIR=os.path.join(tmp, "kernels"),
        )
        model = os.path.join(tmp, "model")
        # The real vocabulary (so that end-of-text exists), 2 layers, 128 positions.
        subprocess.run(
            [a.maker, "--preset", "tiny", "--out", model, "--seed", "3"],
            check=True,
            capture_output=True,
            env=env,
        )
        context, most = 128, 40
        rng = random.Random(1)
        prompts = [[rng.randrange(50257) for _ in range(n)] for n in (1, 3, 7, 12, 20, 33, 60, 80)]
        t0 = time.time()
        expected = expected_ids(a.binary, model, env, prompts, most)
        print(f"expected ids from the CLI: {len(expected)} runs in {time.time() - t0:.1f} s")
        server = Server(a.binary, model, env, "--slots", "8", "--queue", "64")
        try:
            check_bad_requests(server, context)
            check_backlog(server)
            check_port_in_use(a.binary, model, env, server.port)
            # After the start's compilations, no request compiles anything (every
            # prompt and step here stays within the first 128 positions).
            kernels = server.wait_warm()
            headers = {}
            status, data = server.request("GET", "/health", headers=headers)
            assert status == 200 and json.loads(data)["status"] == "ok", (status, data)
            # Warm up (the weights' and buffers' pages), then the baseline memory, idle.
            load(server, prompts, expected, 8, 24, most, seed=99, cancel_share=0)
            server.wait_idle()
            time.sleep(0.3)
            baseline = server.rss_kib()
            t0 = time.time()
            completed, cancelled, rejected, gaps = load(
                server, prompts, expected, a.clients, a.requests, most
            )
            seconds = time.time() - t0
            m = server.wait_idle()
            time.sleep(0.3)
            after = server.rss_kib()
            finished = sum(
                m[f'tinymlir_requests_total{{finish_reason="{r}"}}']
                for r in ("length", "stop", "cancelled", "error")
            )
            print(
                f"load: {a.requests} requests from {a.clients} clients in {seconds:.1f} s: "
                f"{completed} completed, {cancelled} cancelled by their client, {rejected} "
                f"rejected (503); per token p50 {percentile(gaps, 50) * 1e3:.1f} ms, "
                f"p99 {percentile(gaps, 99) * 1e3:.1f} ms; RSS {baseline} KiB before, "
                f"{after} KiB after"
            )
            assert rejected == 0, "the queue holds 64, more than the 32 clients"
            assert completed + cancelled == a.requests
            assert m['tinymlir_requests_total{finish_reason="error"}'] == 0, m
            # Every request admitted finished: the warm-up's 24 and the load's.
            assert finished == 24 + a.requests, (finished, m)
            assert m['tinymlir_requests_total{finish_reason="cancelled"}'] >= 1, m
            # Repeated prompts started from the prefix cache (their tokens checked
            # above), and every request admitted has its time to first token.
            assert m["tinymlir_prefix_cache_hits_total"] >= 1, m
            assert (
                m["tinymlir_prefix_cache_tokens_saved_total"]
                >= m["tinymlir_prefix_cache_hits_total"]
            )
            first = m["tinymlir_time_to_first_token_seconds_count"]
            assert m['tinymlir_time_to_first_token_seconds_bucket{le="+Inf"}'] == first
            assert 0 < first <= 24 + a.requests, m
            assert m["tinymlir_kernels_total"] == kernels, (
                f"requests waited for {m['tinymlir_kernels_total'] - kernels:.0f} compilations "
                f"the warm-up at start did not make"
            )
            # Memory back to the baseline: the caches go when idle; a leak of
            # a request's state (or a thread) would show over 200 requests.
            if a.no_rss_check:
                print(
                    "RSS check skipped (--no-rss-check: a sanitized build; LeakSanitizer "
                    "checks for leaks when the server exits)"
                )
            else:
                assert after <= baseline + 16 * 1024, f"RSS grew from {baseline} to {after} KiB"
            status, answer = server.complete({"prompt": prompts[2], "max_tokens": 10})
            assert status == 200 and answer["choices"][0]["token_ids"] == expected[2, 0][:10], (
                answer
            )
            check_answers_come_whole(server, prompts[3])
        finally:
            server.stop()
        # A full queue: one slot, one waiting request; a burst of 16 gets 503s.
        server = Server(a.binary, model, env, "--slots", "1", "--queue", "1")
        try:
            body = {"prompt": prompts[0], "max_tokens": 100, "ignore_eos": True}
            results, errors = [], []

            def send():
                try:
                    results.append(server.complete(body))
                except Exception as e:  # noqa: BLE001 -- reported below
                    errors.append(f"{type(e).__name__}: {e}")

            threads = [threading.Thread(target=send) for _ in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
            assert not errors, errors
            statuses = sorted(s for s, _ in results)
            busy = [answer for s, answer in results if s == 503]
            assert len(results) == 16 and set(statuses) == {200, 503}, statuses
            assert all(
                "the queue is full (1 requests waiting)" in b["error"]["message"] for b in busy
            )
            ok = [answer for s, answer in results if s == 200]
            assert all(len(o["choices"][0]["token_ids"]) == 100 for o in ok)
            assert len({tuple(o["choices"][0]["token_ids"]) for o in ok}) == 1
            status, _ = server.complete({"prompt": prompts[1], "max_tokens": 3})
            assert status == 200
            print(
                f"full queue: {statuses.count(503)} of 16 got 503, {statuses.count(200)} completed"
            )
        finally:
            server.stop()
        # A model of fewer positions than the decoder's first capacity (128) serves, with
        # and without the warm-up (its caches made 128 positions long: a 500, and before
        # that the request left hanging).
        short = os.path.join(tmp, "short")
        subprocess.run(
            [a.maker, "--preset", "tiny", "--positions", "64", "--out", short, "--seed", "4"],
            check=True,
            capture_output=True,
            env=env,
        )
        want = expected_ids(a.binary, short, env, [prompts[3]], 20)[0, 0]
        for flags in ((), ("--no-warm-up",)):
            server = Server(a.binary, short, env, "--slots", "2", *flags)
            try:
                server.wait_warm()
                status, answer = server.complete(
                    {"prompt": prompts[3], "max_tokens": 20, **SETTINGS[0]}, timeout=60
                )
                assert status == 200 and answer["choices"][0]["token_ids"] == want, (flags, answer)
            finally:
                server.stop()
        print("a 64-position model serves")
        want = subprocess.run(
            [
                a.binary,
                "--model",
                model,
                "--prompt-ids",
                ",".join(map(str, prompts[4])),
                "--tokens",
                "100",
                "--json",
                "--ignore-eos",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        check_drain(a.binary, model, env, prompts[4], json.loads(want.stdout)["output_ids"])
        # Stopped while the warm-up compiles on its threads: a clean exit (under
        # AddressSanitizer the first compile thread to write the disk cache
        # owned LLVM's alternate signal stack, and its exit failed: exit 1).
        for seconds in (0.5, 2):
            server = Server(a.binary, model, env, "--slots", "2")
            time.sleep(seconds)
            server.stop()  # asserts exit code 0
    print("OK")


if __name__ == "__main__":
    main()
