"""The private store's settings (config/storage.py, docs/storage.md): the local folder by
default, S3 when PODIUM_S3_BUCKET is set, credentials never in the settings, the retired
folder variables refused when they point elsewhere."""

import json
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.storage import FILESYSTEM_BACKEND, S3_BACKEND, private_storage

VARIABLES = (
    "PODIUM_S3_BUCKET",
    "PODIUM_S3_ENDPOINT_URL",
    "PODIUM_S3_REGION",
    "PODIUM_S3_PREFIX",
    "PODIUM_TESTSET_DIR",
    "PODIUM_FRAMES_DIR",
    "PODIUM_PRIVATE_DIR",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
)


@pytest.mark.unit
def test_without_a_bucket_the_store_is_the_private_folder():
    assert private_storage() == {"BACKEND": FILESYSTEM_BACKEND, "OPTIONS": {}}


@pytest.mark.unit
def test_a_bucket_makes_the_store_s3_under_the_prefix():
    assert private_storage(
        bucket=" podium ", endpoint_url="http://127.0.0.1:9000", region="eu-west-1"
    ) == {
        "BACKEND": S3_BACKEND,
        "OPTIONS": {
            "bucket_name": "podium",
            "endpoint_url": "http://127.0.0.1:9000",
            "region_name": "eu-west-1",
            "location": "private",
        },
    }
    assert private_storage(bucket="b", prefix="/a/b/")["OPTIONS"]["location"] == "a/b"
    assert private_storage(bucket="b", prefix="")["OPTIONS"]["endpoint_url"] is None


@pytest.mark.unit
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"endpoint_url": "127.0.0.1:9000"}, "PODIUM_S3_ENDPOINT_URL must be an http"),
        ({"prefix": "a/../b"}, "PODIUM_S3_PREFIX must not contain"),
    ],
)
def test_a_bad_s3_setting_stops_the_start(options, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        private_storage(bucket="podium", **options)


def load_settings(repo_root, **env):
    clean = {key: value for key, value in os.environ.items() if key not in VARIABLES}
    clean |= {"DJANGO_SETTINGS_MODULE": "config.settings.test", **env}
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps({'private': settings.STORAGES['private'], "
        "'names': sorted(name for name in dir(settings) if 'AWS' in name)}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=repo_root,
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.integration
def test_the_settings_read_the_bucket_and_never_the_credentials(repo_root):
    result = load_settings(
        repo_root,
        PODIUM_S3_BUCKET="podium",
        PODIUM_S3_ENDPOINT_URL="http://127.0.0.1:9000",
        AWS_ACCESS_KEY_ID="an-access-key",
        AWS_SECRET_ACCESS_KEY="a-secret-key",
    )

    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout)
    assert loaded["private"]["BACKEND"] == S3_BACKEND
    assert loaded["private"]["OPTIONS"]["location"] == "private"
    assert loaded["names"] == []
    assert "a-secret-key" not in result.stdout


@pytest.mark.integration
def test_a_retired_folder_variable_pointing_elsewhere_stops_the_start(repo_root, tmp_path):
    private = tmp_path / "private"
    same = load_settings(
        repo_root, PODIUM_PRIVATE_DIR=str(private), PODIUM_FRAMES_DIR=str(private / "frames")
    )
    elsewhere = load_settings(
        repo_root, PODIUM_PRIVATE_DIR=str(private), PODIUM_TESTSET_DIR=str(tmp_path / "sets")
    )

    assert same.returncode == 0, same.stderr
    assert elsewhere.returncode == 1
    assert (
        "ImproperlyConfigured: PODIUM_TESTSET_DIR is retired: the files are under "
        "PODIUM_PRIVATE_DIR/testsets/ (or the S3 bucket's testsets/). Move them there and "
        "unset PODIUM_TESTSET_DIR (docs/storage.md)."
    ) in elsewhere.stderr
