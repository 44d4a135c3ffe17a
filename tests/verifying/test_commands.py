"""`manage.py rerun` in the foreground, `make_demo_testset --frames`, and
`rotate_endpoint_keys`."""

import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from plugins.medvidbench import rerun as frames
from plugins.medvidbench.scoring import load_ground_truth
from submissions.enums import VerificationStatus
from verifying import services
from verifying.endpoints import register_endpoint
from verifying.enums import RerunStatus
from verifying.models import RerunJob


@pytest.mark.integration
@pytest.mark.django_db
def test_rerun_runs_in_the_foreground_and_prints_the_report(
    access_granted, endpoint, django_capture_on_commit_callbacks
):
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("rerun", str(access_granted.pk), stdout=out)

    text = out.getvalue()
    assert RerunJob.objects.get().state == RerunStatus.DONE
    assert "Done in" in text
    assert "CVS_acc          0.6667   0.6667   0.0000  within" in text
    assert "DVC_llm         pending  pending  pending  pending" in text
    assert "all within ±0.01" in text
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFYING


@pytest.mark.integration
@pytest.mark.django_db
def test_rerun_refuses_an_entry_without_access(entry):
    with pytest.raises(CommandError, match="Register the model's endpoint"):
        call_command("rerun", str(entry.pk), stdout=io.StringIO())


@pytest.mark.integration
def test_the_demo_generator_writes_every_frame_a_rerun_sends(tmp_path):
    call_command("make_demo_testset", output=tmp_path, frames=True, stdout=io.StringIO())

    test_set = load_ground_truth(tmp_path / "ground_truth.json")
    assert all(sample.frames for sample in test_set.samples)
    assert frames.rerun.missing_media(test_set, tmp_path / "frames", 8) == []
    sizes = [path.stat().st_size for path in (tmp_path / "frames").rglob("*.jpg")]
    assert max(sizes) < 200


@pytest.mark.integration
@pytest.mark.django_db
def test_verify_from_the_shell_applies_the_same_evidence_rule(
    access_granted, endpoint, django_capture_on_commit_callbacks
):
    job = services.start_rerun(access_granted, actor=None, enqueue=False)
    with pytest.raises(CommandError, match=rf"Re-run {job.pk} is queued .*wait for re-run"):
        call_command("verify", str(access_granted.pk), stdout=io.StringIO())
    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFYING

    with django_capture_on_commit_callbacks(execute=True):
        services.run_job(job.pk)
    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("verify", str(access_granted.pk), stdout=out)

    access_granted.refresh_from_db()
    assert access_granted.verification_status == VerificationStatus.VERIFIED
    assert out.getvalue() == "'SurgVLM' is verified: on the Official board.\n"


@pytest.mark.integration
@pytest.mark.django_db
def test_verify_from_the_shell_refuses_an_upload_outside_the_workflow(entry):
    with pytest.raises(CommandError, match="Next step: nominate it"):
        call_command("verify", str(entry.pk), stdout=io.StringIO())
    with pytest.raises(CommandError, match="There is no submission 999999"):
        call_command("verify", "999999", stdout=io.StringIO())


@pytest.mark.integration
@pytest.mark.django_db
def test_rotate_endpoint_keys_re_encrypts_under_the_first_key(access_granted, settings):
    endpoint = register_endpoint(
        access_granted, actor=None, base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-1"
    )
    (old,) = settings.PODIUM_FIELD_ENCRYPTION_KEYS
    new = Fernet.generate_key().decode()
    settings.PODIUM_FIELD_ENCRYPTION_KEYS = [new, old]
    out = io.StringIO()

    call_command("rotate_endpoint_keys", stdout=out)

    assert out.getvalue() == "Re-encrypted 1 model endpoint key.\n"
    endpoint.refresh_from_db()
    assert Fernet(new).decrypt(endpoint.api_key_encrypted.encode()) == b"sk-1"
    settings.PODIUM_FIELD_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(CommandError, match=r"cannot be decrypted.*Nothing was changed"):
        call_command("rotate_endpoint_keys", stdout=out)
    endpoint.refresh_from_db()
    assert Fernet(new).decrypt(endpoint.api_key_encrypted.encode()) == b"sk-1"
