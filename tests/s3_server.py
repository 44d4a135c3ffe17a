"""A real S3-compatible server for the tests of the S3 private store (docs/storage.md): moto in
server mode (`moto_server`, from the dev requirements), never a mock inside the process.

`PODIUM_TEST_S3_ENDPOINT_URL` names a running server to use (moto, MinIO: anything that speaks
S3; `.ci/run` may start one for the whole run). Without it, `s3_endpoint()` starts
`moto_server` on a free loopback port, waits until it answers and stops it at the end. Either
way each `new_bucket` is a fresh bucket with a unique name, so runs and tests sharing one
server never see each other's objects.

The credentials: the environment's AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY when set (a real
MinIO needs its own), else fixed test values moto accepts (`credentials()`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config.storage import private_storage
from tests.processes import stop_process_group

ENDPOINT_VARIABLE = "PODIUM_TEST_S3_ENDPOINT_URL"
REGION = "us-east-1"
PREFIX = "private/"


def credentials() -> dict[str, str]:
    """The credentials the tests' S3 clients and subprocesses use."""
    return {
        "AWS_ACCESS_KEY_ID": os.environ.get("AWS_ACCESS_KEY_ID", "podium-test"),
        "AWS_SECRET_ACCESS_KEY": os.environ.get("AWS_SECRET_ACCESS_KEY", "podium-test"),
        "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION", REGION),
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(endpoint_url: str) -> bool:
    try:
        with urllib.request.urlopen(endpoint_url, timeout=0.5):
            return True
    except urllib.error.HTTPError:
        return True  # it answered, if only to refuse
    except OSError:
        return False


class S3Server:
    """A `moto_server` process on a loopback port, which a test may stop and start again (the
    store going down mid-request)."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.endpoint_url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 30) -> S3Server:
        program = Path(sys.executable).with_name("moto_server")
        if not program.exists():
            raise RuntimeError(
                f"These tests need moto's S3 server ({program}): install the dev requirements "
                f"(moto[server]) or set {ENDPOINT_VARIABLE} to a running S3-compatible server."
            )
        self.process = subprocess.Popen(
            [str(program), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while not answers(self.endpoint_url):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"moto_server did not start on port {self.port}")
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process is not None:
            stop_process_group(self.process, timeout=5)
            self.process = None


@contextmanager
def s3_endpoint() -> Iterator[str]:
    """The URL of an S3 server the tests may use: PODIUM_TEST_S3_ENDPOINT_URL, else a
    moto_server started for the duration."""
    named = os.environ.get(ENDPOINT_VARIABLE, "").strip()
    if named:
        yield named.rstrip("/")
        return
    server = S3Server().start()
    try:
        yield server.endpoint_url
    finally:
        server.stop()


def client(endpoint_url: str) -> Any:
    import boto3  # imported here: only the S3 tests need it

    values = credentials()
    return boto3.client(
        "s3",
        endpoint_url=endpoint_url,
        region_name=values["AWS_DEFAULT_REGION"],
        aws_access_key_id=values["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=values["AWS_SECRET_ACCESS_KEY"],
    )


@dataclass(frozen=True)
class S3Bucket:
    """One fresh bucket on the test server, and how to point Podium at it."""

    endpoint_url: str
    name: str
    prefix: str = PREFIX

    def storage(self) -> dict[str, Any]:
        """The `STORAGES["private"]` entry for this bucket (config/storage.py)."""
        return private_storage(
            bucket=self.name, endpoint_url=self.endpoint_url, region=REGION, prefix=self.prefix
        )

    def env(self) -> dict[str, str]:
        """The environment a subprocess (a worker, `manage.py`) needs to use this bucket."""
        return {
            "PODIUM_S3_BUCKET": self.name,
            "PODIUM_S3_ENDPOINT_URL": self.endpoint_url,
            "PODIUM_S3_REGION": REGION,
            "PODIUM_S3_PREFIX": self.prefix,
            **credentials(),
        }

    def object_keys(self) -> list[str]:
        """Every object key in the bucket, sorted."""
        pages = (
            client(self.endpoint_url).get_paginator("list_objects_v2").paginate(Bucket=self.name)
        )
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def get(self, key: str) -> bytes:
        return client(self.endpoint_url).get_object(Bucket=self.name, Key=key)["Body"].read()

    def put(self, key: str, content: bytes) -> None:
        client(self.endpoint_url).put_object(Bucket=self.name, Key=key, Body=content)

    def acl_grants(self, key: str) -> list[dict[str, Any]]:
        return client(self.endpoint_url).get_object_acl(Bucket=self.name, Key=key)["Grants"]


def new_bucket(endpoint_url: str, *, prefix: str = PREFIX) -> S3Bucket:
    """A new empty bucket with a unique name on the server at `endpoint_url`."""
    name = f"podium-test-{uuid.uuid4().hex[:16]}"
    client(endpoint_url).create_bucket(Bucket=name)
    return S3Bucket(endpoint_url, name, prefix)
