"""Display names (issue 11, point 5; docs/names.md): a model name, team, institution or authors
with an invisible, control or bidi character is refused with the field, the character and its
position; names are stored NFKC-normalised with their spaces tidied; a published model name
may not look the same as another published entry's (Unicode TR39 confusables), case aside.

Every refusal goes through both channels, the web form (signed in) and the API (a token), and
asserts the exact message and that no submission, no run and no file was stored; the writers
refuse the same when called directly (the shell's path), and the admin's edit too."""

import csv
import io
import re
from html import unescape

import pytest
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import create_api_token
from core.exceptions import InvalidName
from core.text import confusable_key, normalise_display_name, one_line
from submissions import maintenance
from submissions.models import Evaluation, Notification, NotificationKind, Submission
from submissions.notifications import notify
from submissions.services import SubmissionDetails, create_submission, import_published_result
from tests.accounts.factories import UserFactory

from .factories import SubmissionFactory, scored_entry

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

FIELDS = {
    "model_name": "MyModel",
    "institution": "Lab",
    "contact_email": "author@example.org",
    "model_url": "https://example.org/model",
}
# A challenge entry, so that the team and the authors are kept.
CHALLENGE = {"is_challenge_entry": "true", "team_name": "Team", "authors": "A. Author, B. Author"}
# The published entries the look-alikes are refused next to.
PUBLISHED = ["MedGemma", "Llama-3.1-70B", "Fine-Tuned Net", "Med Gemma Pro"]


# --- the two channels ---------------------------------------------------------------------------


def web(benchmark, predictions, fields):
    """POST the submit form signed in; (status, {field: [messages]}, created model name)."""
    client = Client()
    client.force_login(UserFactory())
    response = client.post(
        reverse("submissions:submit", args=[benchmark.slug]),
        {**fields, "predictions": SimpleUploadedFile("p.json", predictions)},
    )
    page = response.content.decode()
    errors = {
        field: [unescape(item) for item in re.findall(r"<li>(.*?)</li>", items, re.S)]
        for field, items in re.findall(
            r'<ul class="errorlist" id="id_(\w+)_error">(.*?)</ul>', page, re.S
        )
    }
    return response.status_code, errors


def api(benchmark, predictions, fields):
    """POST to the API with a token; (status, {field: [messages]})."""
    _, raw = create_api_token(UserFactory(), name="script")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.post(
        reverse("api:submit", args=[benchmark.slug]),
        {**fields, "predictions": SimpleUploadedFile("p.json", predictions)},
        format="multipart",
    )
    return response.status_code, response.json().get("errors", {})


CHANNELS = {"web": web, "api": api}
REFUSED_STATUS = {"web": 200, "api": 400}
ACCEPTED_STATUS = {"web": 302, "api": 201}


def stored_files(private_dir):
    folder = private_dir / "predictions"
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


@pytest.fixture(params=sorted(CHANNELS))
def channel(request):
    return request.param


@pytest.fixture
def published(benchmark):
    return [scored_entry(benchmark, name, {}) for name in PUBLISHED]


def assert_refused(channel, benchmark, predictions, private_dir, fields, field, message):
    submissions, runs = Submission.objects.count(), Evaluation.objects.count()

    status, errors = CHANNELS[channel](benchmark, predictions, {**FIELDS, **CHALLENGE, **fields})

    assert (status, errors) == (REFUSED_STATUS[channel], {field: [message]})
    assert (Submission.objects.count(), Evaluation.objects.count()) == (submissions, runs)
    assert stored_files(private_dir) == []


# --- invisible, control and bidi characters --------------------------------------------------

INVISIBLE = [
    (
        "model_name",
        "Med\u200bGemma",
        "Model name: character 4 is U+200B ZERO WIDTH SPACE, an invisible formatting "
        "character; remove it.",
    ),
    (
        "team_name",
        "Team\u200dA",
        "Team name: character 5 is U+200D ZERO WIDTH JOINER, an invisible formatting "
        "character; remove it.",
    ),
    (
        "institution",
        "Uni\u200cversity",
        "Institution: character 4 is U+200C ZERO WIDTH NON-JOINER, an invisible formatting "
        "character; remove it.",
    ),
    (
        "model_name",
        "\ufeffMyModel",
        "Model name: character 1 is U+FEFF ZERO WIDTH NO-BREAK SPACE, an invisible "
        "formatting character; remove it.",
    ),
    (
        "authors",
        "A. Author,\u2060B. Author",
        "Authors: character 11 is U+2060 WORD JOINER, an invisible formatting character; "
        "remove it.",
    ),
    (
        "model_name",
        "Med\u00adGemma",
        "Model name: character 4 is U+00AD SOFT HYPHEN, an invisible formatting character; "
        "remove it.",
    ),
    (
        "model_name",
        "MyModel\U000e0041",
        "Model name: character 8 is U+E0041 TAG LATIN CAPITAL LETTER A, an invisible "
        "formatting character; remove it.",
    ),
    (
        "model_name",
        "\u3164",
        "Model name: character 1 is U+3164 HANGUL FILLER, an invisible character, which "
        "displays as nothing; remove it.",
    ),
    (
        "team_name",
        "Team\u115f",
        "Team name: character 5 is U+115F HANGUL CHOSEONG FILLER, an invisible character, "
        "which displays as nothing; remove it.",
    ),
    (
        "model_name",
        "My\u034fModel",
        "Model name: character 3 is U+034F COMBINING GRAPHEME JOINER, an invisible "
        "character, which displays as nothing; remove it.",
    ),
    (
        "institution",
        "Lab\u2800",
        "Institution: character 4 is U+2800 BRAILLE PATTERN BLANK, a blank braille pattern, "
        "which displays as an empty space; remove it.",
    ),
    (
        "model_name",
        "My\ufffdModel",
        "Model name: character 3 is U+FFFD REPLACEMENT CHARACTER, the replacement character, "
        "which usually means the text was not valid UTF-8; remove it.",
    ),
    (
        "model_name",
        "My\ue000Model",
        "Model name: character 3 is U+E000 <private use>, a private-use character, which has "
        "no agreed appearance; remove it.",
    ),
    (
        "model_name",
        "My\u0378Model",
        "Model name: character 3 is U+0378 <unassigned>, not an assigned character in "
        "Unicode 15.1.0 (the version this server knows); remove it.",
    ),
    (
        "model_name",
        "\u200b\u200bMy\u200bModel",
        "Model name: character 1 is U+200B ZERO WIDTH SPACE, an invisible formatting "
        "character; remove it (3 such characters in all).",
    ),
]
BIDI = [
    (
        "model_name",
        "Model\u202eamme",
        "Model name: character 6 is U+202E RIGHT-TO-LEFT OVERRIDE, a bidirectional-text "
        "control, which makes a name display in another order than it is stored; remove it.",
    ),
    (
        "team_name",
        "\u2066Team\u2069",
        "Team name: character 1 is U+2066 LEFT-TO-RIGHT ISOLATE, a bidirectional-text "
        "control, which makes a name display in another order than it is stored; remove it "
        "(2 such characters in all).",
    ),
    (
        "institution",
        "Lab\u200e",
        "Institution: character 4 is U+200E LEFT-TO-RIGHT MARK, a bidirectional-text "
        "control, which makes a name display in another order than it is stored; remove it.",
    ),
    (
        "authors",
        "A. Author, \u202bB. Author",
        "Authors: character 12 is U+202B RIGHT-TO-LEFT EMBEDDING, a bidirectional-text "
        "control, which makes a name display in another order than it is stored; remove it.",
    ),
]
CONTROLS = [
    (
        "model_name",
        "Med\nGemma",
        "Model name: character 4 is U+000A LINE FEED, a line break or tab (a name is one "
        "line); remove it.",
    ),
    (
        "model_name",
        "Med\r\nGemma",
        "Model name: character 4 is U+000D CARRIAGE RETURN, a line break or tab (a name is "
        "one line); remove it (2 such characters in all).",
    ),
    (
        "team_name",
        "Team\tA",
        "Team name: character 5 is U+0009 CHARACTER TABULATION, a line break or tab (a name "
        "is one line); remove it.",
    ),
    (
        "authors",
        "A. Author\nB. Author",
        "Authors: character 10 is U+000A LINE FEED, a line break or tab (a name is one line: "
        "separate authors with commas); remove it.",
    ),
    (
        "institution",
        "Lab\u2028Two",
        "Institution: character 4 is U+2028 LINE SEPARATOR, a line break or tab (a name is "
        "one line); remove it.",
    ),
    (
        "model_name",
        "My\x85Model",
        "Model name: character 3 is U+0085 NEXT LINE, a line break or tab (a name is one "
        "line); remove it.",
    ),
    (
        "model_name",
        "Med\x00Gemma",
        "Model name: character 4 is U+0000 NULL, a control character; remove it.",
    ),
    (
        "model_name",
        "My\x1b[31mModel",
        "Model name: character 3 is U+001B ESCAPE, a control character; remove it.",
    ),
    (
        "team_name",
        "Team\x7f",
        "Team name: character 5 is U+007F DELETE, a control character; remove it.",
    ),
    (
        "model_name",
        "My\x9bModel",
        "Model name: character 3 is U+009B <control>, a control character; remove it.",
    ),
]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    INVISIBLE + BIDI + CONTROLS,
    ids=[f"{field}-U+{ord(next(c for c in value if not c.isascii() or not c.isprintable())):04X}"
         for field, value, _ in INVISIBLE + BIDI + CONTROLS],
)  # fmt: skip
def test_an_invisible_control_or_bidi_character_is_refused_with_its_position(
    channel, benchmark, perfect_predictions, private_dir, field, value, message
):
    assert_refused(
        channel, benchmark, perfect_predictions, private_dir, {field: value}, field, message
    )


def test_a_name_is_limited_to_its_length_once_normalised(
    channel, benchmark, perfect_predictions, private_dir
):
    # U+FDFA is one character that NFKC spells in 18: 6 of them are 108 characters.
    assert_refused(
        channel,
        benchmark,
        perfect_predictions,
        private_dir,
        {"model_name": "\ufdfa" * 6},
        "model_name",
        "Model name is 108 characters long once normalised; at most 100 are allowed.",
    )


def test_a_huge_name_is_refused_before_it_is_looked_at(
    channel, benchmark, perfect_predictions, private_dir
):
    assert_refused(
        channel,
        benchmark,
        perfect_predictions,
        private_dir,
        {"authors": "A. Author, " * 100_000},
        "authors",
        "Authors is 1,099,999 characters long; at most 500 are allowed.",  # its last space stripped
    )


# --- look-alikes of a published name ---------------------------------------------------------

LOOKALIKES = [
    pytest.param("M\u0435dGemma", "MedGemma", id="cyrillic-ie"),
    pytest.param("\u041c\u0415DG\u0415\u041c\u041cA", "MedGemma", id="cyrillic-capitals"),
    pytest.param("\u039cedGemma", "MedGemma", id="greek-mu"),
    pytest.param("MedGernrna", "MedGemma", id="rn-for-m"),
    pytest.param("Llama-3.1-7OB", "Llama-3.1-70B", id="letter-o-for-zero"),
    pytest.param("LIama-3.1-70B", "Llama-3.1-70B", id="capital-i-for-l"),
    pytest.param("Ll\u0430ma-3.1-70B", "Llama-3.1-70B", id="mixed-script-cyrillic-a"),
    pytest.param("Fine-Tuned N\u0435t", "Fine-Tuned Net", id="mixed-script-in-a-word"),
]


@pytest.mark.parametrize(("name", "existing"), LOOKALIKES)
def test_a_look_alike_of_a_published_name_is_refused_naming_it(
    channel, benchmark, perfect_predictions, private_dir, published, name, existing
):
    assert_refused(
        channel,
        benchmark,
        perfect_predictions,
        private_dir,
        {"model_name": name},
        "model_name",
        f"{name!r} looks the same as the published entry {existing!r} on {benchmark.name} "
        "(Unicode look-alike characters); choose another model name.",
    )


@pytest.mark.parametrize(
    ("name", "normalised"),
    [
        pytest.param("\uff2d\uff45\uff44\uff27\uff45\uff4d\uff4d\uff41", "MedGemma", id="full-width"),
        pytest.param("MEDGEMMA", "MEDGEMMA", id="upper-case"),
        pytest.param("medgemma", "medgemma", id="lower-case"),
        pytest.param("\ufb01ne-Tuned Net", "fine-Tuned Net", id="nfkc-ligature-fi"),
        pytest.param("MedGe\u217f\u217fa", "MedGemma", id="roman-numeral-m"),
        pytest.param("  Med  Gemma\u00a0Pro   ", "Med Gemma Pro", id="spaces-and-nbsp"),
        pytest.param("Med\u3000Gemma\u2002Pro", "Med Gemma Pro", id="ideographic-en-space"),
    ],
)  # fmt: skip
def test_a_published_name_in_another_form_or_case_is_refused(
    channel, benchmark, perfect_predictions, private_dir, published, name, normalised
):
    assert_refused(
        channel,
        benchmark,
        perfect_predictions,
        private_dir,
        {"model_name": name},
        "model_name",
        f"A published entry named {normalised!r} already exists on {benchmark.name}; "
        "choose another model name.",
    )


# --- accepted names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "stored"),
    [
        pytest.param({"model_name": "深度求索-医学视频"}, {"model_name": "深度求索-医学视频"}, id="chinese"),
        pytest.param({"model_name": "医療モデル", "team_name": "東京大学チーム"},
                     {"model_name": "医療モデル", "team_name": "東京大学チーム"}, id="japanese"),
        pytest.param({"model_name": "의료 모델"}, {"model_name": "의료 모델"}, id="korean"),
        pytest.param({"model_name": "نموذج طبي", "institution": "جامعة القاهرة"},
                     {"model_name": "نموذج طبي", "institution": "جامعة القاهرة"}, id="arabic"),
        pytest.param({"model_name": "चिकित्सा मॉडल"}, {"model_name": "चिकित्सा मॉडल"}, id="devanagari"),
        pytest.param({"model_name": "Μοντέλο Ιατρικής"}, {"model_name": "Μοντέλο Ιατρικής"}, id="greek"),
        pytest.param({"model_name": "Медицинская модель", "institution": "МГУ"},
                     {"model_name": "Медицинская модель", "institution": "МГУ"}, id="cyrillic"),
        pytest.param({"model_name": "מודל רפואי"}, {"model_name": "מודל רפואי"}, id="hebrew"),
        pytest.param({"model_name": "Modèle évalué", "authors": "José Núñez, Zoë Ødegård"},
                     {"model_name": "Modèle évalué", "authors": "José Núñez, Zoë Ødegård"},
                     id="accented"),
        pytest.param({"model_name": "Mode\u0300le e\u0301value\u0301"}, {"model_name": "Modèle évalué"},
                     id="decomposed-accents-composed"),
        pytest.param({"model_name": "\uff2d\uff59\uff2d\uff4f\uff44\uff45\uff4c"}, {"model_name": "MyModel"},
                     id="full-width-normalised"),
        pytest.param({"model_name": "  My   Model  ", "team_name": "\u00a0Team\u00a0 A "},
                     {"model_name": "My Model", "team_name": "Team A"}, id="spaces-tidied"),
        pytest.param({"model_name": "\ufb01ne Model"}, {"model_name": "fine Model"}, id="ligature"),
        pytest.param({"model_name": "🩺 SurgiBot-7B"}, {"model_name": "🩺 SurgiBot-7B"}, id="emoji"),
        pytest.param({"model_name": "x" * 100, "authors": "a" * 500},
                     {"model_name": "x" * 100, "authors": "a" * 500}, id="at-the-limits"),
    ],
)  # fmt: skip
def test_legitimate_names_are_accepted_and_stored_normalised(
    channel, benchmark, perfect_predictions, private_dir, published, fields, stored
):
    status, errors = CHANNELS[channel](
        benchmark, perfect_predictions, {**FIELDS, **CHALLENGE, **fields}
    )

    assert (status, errors) == (ACCEPTED_STATUS[channel], {})
    assert Submission.objects.count() == len(published) + 1
    submission = Submission.objects.order_by("-pk").first()
    assert {field: getattr(submission, field) for field in stored} == stored
    assert submission.model_name_skeleton == confusable_key(submission.model_name)
    assert len(stored_files(private_dir)) == 1


def test_an_evaluate_only_entry_may_look_like_a_published_one(
    channel, benchmark, perfect_predictions, published
):
    fields = {**FIELDS, "model_name": "M\u0435dGemma"}
    fields["evaluate_only" if channel == "web" else "publish"] = (
        "on" if channel == "web" else "false"
    )

    status, errors = CHANNELS[channel](benchmark, perfect_predictions, fields)

    assert (status, errors) == (ACCEPTED_STATUS[channel], {})
    assert Submission.objects.get(publish=False).model_name == "M\u0435dGemma"


# --- the writers, called directly (the shell's path) ----------------------------------------


def details(**fields):
    return SubmissionDetails(**{"model_name": "MyModel", "institution": "Lab", **fields})


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        (
            {"model_name": "Med\u202eGemma"},
            "model_name",
            "Model name: character 4 is U+202E RIGHT-TO-LEFT OVERRIDE, a bidirectional-text "
            "control, which makes a name display in another order than it is stored; remove it.",
        ),
        (
            {"model_name": "Med\ud800Gemma"},
            "model_name",
            "Model name: character 4 is U+D800 <surrogate>, a lone surrogate, which is not a "
            "character (the text was not valid Unicode); remove it.",
        ),
        (
            {"team_name": "Team\nA"},
            "team_name",
            "Team name: character 5 is U+000A LINE FEED, a line break or tab (a name is one "
            "line); remove it.",
        ),
        ({"model_name": " \u00a0 "}, "model_name", "Model name is empty; it is required."),
        (
            {"institution": "\n  Lab\u200b\n"},
            "institution",
            "Institution: character 4 is U+200B ZERO WIDTH SPACE, an invisible formatting "
            "character; remove it.",
        ),
        (
            {"model_name": "x" * 101},
            "model_name",
            "Model name is 101 characters long once normalised; at most 100 are allowed.",
        ),
    ],
)
def test_create_submission_refuses_a_bad_name_itself_and_stores_nothing(
    benchmark, perfect_predictions, private_dir, fields, field, message
):
    with pytest.raises(InvalidName) as refused:
        create_submission(
            benchmark,
            owner=UserFactory(),
            details=details(**fields),
            predictions=perfect_predictions,
        )

    assert (str(refused.value), refused.value.field) == (message, field)
    assert (Submission.objects.count(), Evaluation.objects.count()) == (0, 0)
    assert stored_files(private_dir) == []


def test_create_submission_refuses_a_look_alike_itself(
    benchmark, perfect_predictions, private_dir, published
):
    with pytest.raises(InvalidName) as refused:
        create_submission(
            benchmark,
            owner=UserFactory(),
            details=details(model_name="M\u0435dGemma"),
            predictions=perfect_predictions,
        )

    assert str(refused.value) == (
        f"'M\u0435dGemma' looks the same as the published entry 'MedGemma' on {benchmark.name} "
        "(Unicode look-alike characters); choose another model name."
    )
    assert Submission.objects.count() == len(PUBLISHED)
    assert stored_files(private_dir) == []


def test_create_submission_stores_the_normalised_names_and_their_skeleton(
    benchmark, perfect_predictions
):
    submission = create_submission(
        benchmark,
        owner=UserFactory(),
        details=details(
            model_name=" \uff2d\uff59  \ufb01ne Model ",
            institution="Lab\u00a0One",
            team_name="Team  A",
            authors=" A. Author ,  B. Author ",
            is_challenge_entry=True,
        ),
        predictions=perfect_predictions,
    )

    submission.refresh_from_db()
    assert (
        submission.model_name,
        submission.institution,
        submission.team_name,
        submission.authors,
        submission.model_name_skeleton,
    ) == ("My fine Model", "Lab One", "Team A", "A. Author , B. Author", "rny fine rnodel")


def test_importing_a_published_result_refuses_a_look_alike_and_a_bidi_name(medvidbench):
    from django.utils import timezone

    import_published_result(medvidbench, model_name="GPT-4o", values={}, verified_at=timezone.now())

    with pytest.raises(InvalidName) as refused:
        import_published_result(
            medvidbench, model_name="GPT-4\u043e", values={}, verified_at=timezone.now()
        )
    assert str(refused.value) == (
        "'GPT-4\u043e' looks the same as the published entry 'GPT-4o' on MedVidBench "
        "(Unicode look-alike characters); choose another model name."
    )
    with pytest.raises(InvalidName, match=r"^Institution: character 4 is U\+202E "):
        import_published_result(
            medvidbench,
            model_name="Other",
            institution="Lab\u202e",
            values={},
            verified_at=timezone.now(),
        )
    assert list(Submission.objects.values_list("model_name", flat=True)) == ["GPT-4o"]


def test_the_database_refuses_two_published_look_alikes_whatever_the_path(benchmark):
    SubmissionFactory(benchmark=benchmark, model_name="MedGemma", publish=True)
    SubmissionFactory(benchmark=benchmark, model_name="M\u0435dGemma", publish=False)

    with pytest.raises(IntegrityError), transaction.atomic():
        SubmissionFactory(benchmark=benchmark, model_name="\u041cedGemma", publish=True)


def test_editing_an_entry_normalises_and_refuses_its_names(benchmark):
    entry = SubmissionFactory(benchmark=benchmark, team_name="Team")

    with pytest.raises(InvalidName) as refused:
        maintenance.update_entry_details(entry, actor=None, authors="A. Author\nB. Author")
    assert str(refused.value) == (
        "Authors: character 10 is U+000A LINE FEED, a line break or tab (a name is one line: "
        "separate authors with commas); remove it."
    )
    entry.refresh_from_db()
    assert entry.authors == ""

    maintenance.update_entry_details(entry, actor=None, team_name="\uff34eam  B ")
    entry.refresh_from_db()
    assert entry.team_name == "Team B"


def test_the_admin_shows_a_refused_name_on_its_field_and_changes_nothing(client, benchmark):
    from django.contrib.auth.models import Group

    from accounts import roles

    maintainer = UserFactory(is_staff=True)
    maintainer.groups.add(Group.objects.get(name=roles.MAINTAINERS_GROUP))
    client.force_login(maintainer)
    entry = SubmissionFactory(benchmark=benchmark, team_name="Team")
    url = reverse("admin:submissions_submission_change", args=[entry.pk])

    response = client.post(
        url,
        {
            "team_name": "Team\u202eA",
            "institution": "Test University",
            "authors": "",
            "model_url": "",
            "paper_url": "",
            "code_url": "",
            "_save": "Save",
        },
    )

    assert response.status_code == 200
    assert (
        "Team name: character 5 is U+202E RIGHT-TO-LEFT OVERRIDE, a bidirectional-text "
        "control, which makes a name display in another order than it is stored; remove it."
    ) in unescape(response.content.decode())
    entry.refresh_from_db()
    assert entry.team_name == "Team"


# --- defence in depth: names stored before the rule --------------------------------------------


def test_a_notification_email_is_sent_whatever_the_stored_name_holds(benchmark):
    # Stored before names were checked (a factory writes what it is given).
    entry = SubmissionFactory(benchmark=benchmark, model_name="Med\r\nBcc: x@example.org\u202e")

    notification = notify(entry, NotificationKind.VERIFIED, message="Verified.")

    notification.refresh_from_db()
    assert (notification.email_error, notification.emailed_at is not None) == ("", True)
    assert [message.subject for message in mail.outbox] == [
        f"Verified: Med Bcc: x@example.org on {benchmark.name}"
    ]
    assert Notification.objects.get().subject == mail.outbox[0].subject


def test_a_stored_line_break_cannot_split_a_rankings_csv_row(client, medvidbench):
    from submissions.services import recompute_board

    scored_entry(medvidbench, 'Two\nLines, "quoted"', {"CVS_acc": 0.5}, team_name="Team\r\nB")
    scored_entry(medvidbench, "Plain", {"CVS_acc": 0.4})
    recompute_board(medvidbench)

    response = client.get(reverse("api:rankings-csv", args=[medvidbench.slug]) + "?board=all")

    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert response.status_code == 200, response.content
    assert sorted((row[1], row[2]) for row in rows[1:]) == [
        ("Plain", "Test University"),
        ('Two\nLines, "quoted"', "Team\r\nB"),
    ]


# --- the pure rule ---------------------------------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("MedGemma", "M\u0435dGemma"),
        ("MedGemma", "MEDGEMMA"),
        ("MedGemma", "\u041c\u0415DG\u0415\u041c\u041cA"),
        ("MedGemma", "\uff2d\uff45\uff44\uff27\uff45\uff4d\uff4d\uff41"),
        ("fine", "\ufb01ne"),
        ("Strasse", "Stra\u00dfe"),
        ("paypal", "\u0440\u0430yp\u0430l"),
    ],
)
def test_look_alikes_share_a_key(one, other):
    assert confusable_key(one) == confusable_key(other)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("José", "Jose"),
        ("Model-A", "Model-B"),
        ("深度求索", "深度求素"),
        ("Qwen2-VL", "Qwen2.5-VL"),
    ],
)
def test_different_names_have_different_keys(one, other):
    assert confusable_key(one) != confusable_key(other)


@pytest.mark.unit
def test_one_line_makes_any_text_a_header():
    assert one_line("a\r\nb\tc\u2028d\x00e\u202ef", max_length=8) == "a b c d…"


@pytest.mark.unit
def test_the_rule_alone_names_label_and_position():
    with pytest.raises(InvalidName, match=r"^Thing: character 2 is U\+200B ZERO WIDTH SPACE, "):
        normalise_display_name("a\u200b", label="Thing", max_length=10)
    assert normalise_display_name(" \uff41  b ", label="Thing", max_length=3) == "a b"


# --- after an upgrade of the confusables data ----------------------------------------------------


def test_refresh_name_skeletons_recomputes_stale_keys_even_when_two_trade_them(benchmark):
    from django.core.management import call_command

    one = SubmissionFactory(benchmark=benchmark, model_name="One", model_name_skeleton="two")
    two = SubmissionFactory(benchmark=benchmark, model_name="Two", model_name_skeleton="one")
    fresh = SubmissionFactory(benchmark=benchmark, model_name="Fresh")
    out = io.StringIO()

    call_command("refresh_name_skeletons", "--dry-run", stdout=out)
    assert out.getvalue() == "2 look-alike keys would change.\n"
    assert Submission.objects.get(pk=one.pk).model_name_skeleton == "two"

    call_command("refresh_name_skeletons", stdout=out)
    keys = dict(Submission.objects.values_list("pk", "model_name_skeleton"))
    assert keys == {one.pk: "one", two.pk: "two", fresh.pk: "fresh"}


def test_refresh_name_skeletons_writes_nothing_while_published_names_would_clash(benchmark):
    from django.core.management import CommandError, call_command

    # As if a new confusables table made these two look the same: their stored keys differ.
    kept = SubmissionFactory(benchmark=benchmark, model_name="MedGemma", publish=True)
    other = SubmissionFactory(
        benchmark=benchmark, model_name="M\u0435dGemma", model_name_skeleton="old", publish=True
    )

    with pytest.raises(CommandError) as refused:
        call_command("refresh_name_skeletons", stdout=io.StringIO())

    assert str(refused.value) == (
        "Published entries whose model names would look the same on one benchmark (id, name): "
        f"{kept.pk} 'MedGemma', {other.pk} 'M\u0435dGemma'. Rename or unpublish all but one of "
        "each group; nothing was written."
    )
    assert Submission.objects.get(pk=other.pk).model_name_skeleton == "old"


def test_the_official_result_command_refuses_a_bidi_name(medvidbench):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as refused:
        call_command(
            "add_official_result",
            "--model",
            "GPT\u202e-4o",
            "--values",
            "{}",
            "--source",
            "a paper",
        )

    assert str(refused.value) == (
        "Model name: character 4 is U+202E RIGHT-TO-LEFT OVERRIDE, a bidirectional-text "
        "control, which makes a name display in another order than it is stored; remove it."
    )
    assert not Submission.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_look_alikes_submitted_at_once_are_settled_by_the_unique_index(
    benchmark, perfect_predictions, private_dir
):
    """Another transaction publishes "MedGemma" and has not committed when this upload of its
    look-alike (a Cyrillic e) checks the name, so the check cannot see it: the upload's insert
    waits on the unique index, and once the other commits it is refused with the same message."""
    import threading
    import time

    from django.db import connection

    # The other transaction holds its write while this one inserts: SQLite locks the whole
    # table for that ("database table is locked"), so the unique index's wait is PostgreSQL's.
    if connection.vendor != "postgresql":
        pytest.skip("a writer waiting on another's uncommitted row needs PostgreSQL")
    inserted, failures = threading.Event(), []

    def publish_first():
        try:
            with transaction.atomic():
                SubmissionFactory(benchmark=benchmark, model_name="MedGemma", publish=True)
                inserted.set()
                time.sleep(1.0)  # the upload below checks the name meanwhile, and waits
        except Exception as error:  # reported by the main thread
            failures.append(error)
        finally:
            connection.close()

    first = threading.Thread(target=publish_first)
    first.start()
    assert inserted.wait(10)
    try:
        with pytest.raises(InvalidName) as refused:
            create_submission(
                benchmark,
                owner=UserFactory(),
                details=details(model_name="M\u0435dGemma"),
                predictions=perfect_predictions,
            )
    finally:
        first.join(10)

    assert failures == []
    assert str(refused.value) == (
        f"'M\u0435dGemma' looks the same as the published entry 'MedGemma' on {benchmark.name} "
        "(Unicode look-alike characters); choose another model name."
    )
    assert list(Submission.objects.values_list("model_name", flat=True)) == ["MedGemma"]
    assert stored_files(private_dir) == []
