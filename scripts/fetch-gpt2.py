#!/usr/bin/env python3
"""Downloads a GPT-2 checkpoint (model.safetensors + config.json) from the Hugging Face hub.

    scripts/fetch-gpt2.sh [gpt2|distilgpt2|gpt2-medium|gpt2-large|gpt2-xl] DIR
    build/tools/tinymlir-gpt2 --model DIR --prompt "..." --tokens 20

- Each model is pinned to one commit of its hub repository (REVISIONS), so the same
  name always gives the same bytes; --revision picks another.
- Each file is checked against the checksum the hub advertises for it: the SHA-256
  in the ETag of LFS files (model.safetensors), the git blob SHA-1 in the ETag of
  small files (config.json). A file with no checksum advertised is refused.
- A transfer goes to DIR/NAME.incomplete and is renamed to DIR/NAME only once its
  checksum matches, so DIR/NAME is never a partial file. A cut connection is
  resumed with an HTTP Range request (--retries times in the same run; a later run
  resumes what an earlier one left). A checksum mismatch removes the download.
- HF_ENDPOINT moves the hub (https://huggingface.co by default; the tests serve a
  generated checkpoint on 127.0.0.1), HF_TOKEN is sent as a bearer token if set.

Standard library only.
"""

import argparse
import hashlib
import http.client
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# name -> (hub repository, pinned commit)
REVISIONS = {
    "gpt2": ("openai-community/gpt2", "607a30d783dfa663caf39e06633721c8d4cfcd7e"),
    "distilgpt2": ("distilbert/distilgpt2", "2290a62682d06624634c1f46a6ad5be0f47f38aa"),
    "gpt2-medium": ("openai-community/gpt2-medium", "6dcaa7a952f72f9298047fd5137cd6e4f05f41da"),
    "gpt2-large": ("openai-community/gpt2-large", "32b71b12589c2f8d625668d2335a01cac3249519"),
    "gpt2-xl": ("openai-community/gpt2-xl", "15ea56dee5df4983c59b2538573817e1667135e2"),
}
FILES = ["config.json", "model.safetensors"]
CHUNK = 1 << 20


class FetchError(Exception):
    pass


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def _headers():
    token = os.environ.get("HF_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}


def _reach_error(url, e):
    return FetchError(
        f"cannot reach {url}: {getattr(e, 'reason', e)} (offline? HF_ENDPOINT moves the hub)"
    )


def describe(url, timeout):
    """(size, kind, checksum) of the file behind `url`, from a HEAD request.

    The hub answers an LFS file with a redirect to its storage carrying
    X-Linked-Etag (the SHA-256) and X-Linked-Size; a small file with ETag (the git
    blob SHA-1). Redirects within the hub (a renamed repository) are followed,
    redirects elsewhere are not: their headers are the hub's answer.
    """
    opener = urllib.request.build_opener(_NoRedirect)
    host = urllib.parse.urlsplit(url).netloc
    for _ in range(5):
        request = urllib.request.Request(url, method="HEAD", headers=_headers())
        try:
            response = opener.open(request, timeout=timeout)
            headers, status = response.headers, response.status
        except urllib.error.HTTPError as e:
            headers, status = e.headers, e.code
        except (urllib.error.URLError, OSError) as e:
            raise _reach_error(url, e) from None
        location = headers.get("Location")
        if status in (301, 302, 303, 307, 308) and location and not headers.get("X-Linked-Etag"):
            target = urllib.parse.urljoin(url, location)
            if urllib.parse.urlsplit(target).netloc == host:
                url = target
                continue
        if status >= 400:
            raise FetchError(f"{url}: HTTP {status} (unknown model, revision or file?)")
        etag = (headers.get("X-Linked-Etag") or headers.get("ETag") or "").strip()
        etag = etag.removeprefix("W/").strip('"').lower()
        size = headers.get("X-Linked-Size") or headers.get("Content-Length")
        if size is None or not size.isdigit():
            raise FetchError(f"{url}: the hub gave no size")
        if len(etag) == 64 and all(c in "0123456789abcdef" for c in etag):
            return int(size), "sha256", etag
        if len(etag) == 40 and all(c in "0123456789abcdef" for c in etag):
            return int(size), "git-sha1", etag
        raise FetchError(
            f"{url}: the hub advertises no SHA-256 or git SHA-1 (ETag {etag!r}); "
            "refusing an unverifiable file"
        )
    raise FetchError(f"{url}: too many redirects")


def checksum(path, kind):
    h = hashlib.sha256() if kind == "sha256" else hashlib.sha1()
    if kind == "git-sha1":
        h.update(b"blob %d\0" % os.path.getsize(path))
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def transfer(url, part, size, timeout):
    """Appends the rest of `url` to `part` (a Range request from its size)."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    if have > size:
        os.remove(part)
        have = 0
    if have == size:
        return
    headers = _headers()
    if have:
        headers["Range"] = f"bytes={have}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise FetchError(f"{url}: HTTP {e.code}") from None
    except (urllib.error.URLError, OSError) as e:
        raise _reach_error(url, e) from None
    with response:
        mode = "ab"
        if have and response.status != 206:  # the server ignored the range: start over
            mode, have = "wb", 0
        elif have:
            first = response.headers.get("Content-Range", "").removeprefix("bytes ").split("-")[0]
            if first != str(have):
                raise FetchError(
                    f"{url}: asked for bytes from {have}, got Content-Range "
                    f"{response.headers.get('Content-Range')!r}"
                )
        with open(part, mode) as out:
            while chunk := response.read(CHUNK):
                out.write(chunk)
    got = os.path.getsize(part)
    if got < size:
        raise ConnectionError(f"the connection closed after {got} of {size} bytes")


def fetch_file(endpoint, repo, revision, name, out_dir, retries, timeout, log):
    url = f"{endpoint.rstrip('/')}/{repo}/resolve/{revision}/{name}"
    dest = os.path.join(out_dir, name)
    size, kind, expected = describe(url, timeout)
    if os.path.exists(dest) and os.path.getsize(dest) == size and checksum(dest, kind) == expected:
        log(f"{name}: already there, {kind} verified")
        return
    part = dest + ".incomplete"
    for attempt in range(retries + 1):
        try:
            resumed = os.path.getsize(part) if os.path.exists(part) else 0
            log(
                f"{name}: {size} bytes from {url}" + (f", resuming at {resumed}" if resumed else "")
            )
            transfer(url, part, size, timeout)
            break
        except (ConnectionError, TimeoutError, http.client.HTTPException) as e:
            have = os.path.getsize(part) if os.path.exists(part) else 0
            if attempt == retries:
                raise FetchError(
                    f"{name}: transfer cut after {have} of {size} bytes ({e}); "
                    f"{part} is kept and the next run resumes it"
                ) from None
            log(f"{name}: transfer cut after {have} of {size} bytes ({e}); retrying")
            time.sleep(min(2**attempt, 10) * 0.1)
    got = checksum(part, kind)
    if got != expected:
        os.remove(part)
        raise FetchError(
            f"{name}: {kind} mismatch: the hub advertises {expected}, the download "
            f"has {got}; removed it"
        )
    os.replace(part, dest)
    log(f"{name}: {kind} {expected} verified")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(REVISIONS))
    parser.add_argument("dir", help="directory for model.safetensors and config.json")
    parser.add_argument("--revision", help="a commit, branch or tag (default: the pinned commit)")
    parser.add_argument("--retries", type=int, default=5, help="resumptions of a cut transfer")
    parser.add_argument("--timeout", type=float, default=60, help="seconds without data")
    args = parser.parse_args(argv)
    repo, pinned = REVISIONS[args.model]
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    os.makedirs(args.dir, exist_ok=True)
    log = lambda message: print(f"fetch-gpt2: {message}", file=sys.stderr, flush=True)
    try:
        for name in FILES:
            fetch_file(
                endpoint,
                repo,
                args.revision or pinned,
                name,
                args.dir,
                args.retries,
                args.timeout,
                log,
            )
    except FetchError as e:
        log(f"error: {e}")
        return 1
    print(os.path.abspath(args.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
