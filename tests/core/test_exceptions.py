import pytest

from core.exceptions import (
    DomainError,
    DuplicatePredictions,
    InvalidName,
    InvalidPredictions,
    InvalidTestSet,
    InvalidTransition,
    JudgeUnavailable,
    NotYourEntry,
    QuotaExceeded,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    "error_class",
    [
        InvalidTransition,
        QuotaExceeded,
        InvalidPredictions,
        InvalidTestSet,
        JudgeUnavailable,
        InvalidName,
        DuplicatePredictions,
        NotYourEntry,
    ],
)
def test_every_domain_error_is_caught_as_domain_error(error_class):
    with pytest.raises(DomainError):
        raise error_class("refused")


def test_domain_error_is_an_exception_not_a_base_exception():
    assert DomainError.__mro__[1:] == (Exception, BaseException, object)


def test_the_domain_errors_are_siblings():
    subclasses = {cls.__name__ for cls in DomainError.__subclasses__()}

    assert subclasses == {
        "InvalidTransition",
        "QuotaExceeded",
        "InvalidPredictions",
        "InvalidTestSet",
        "JudgeUnavailable",
        "InvalidRubric",
        "InvalidName",
        "DuplicatePredictions",
        "NotYourEntry",
        "InvalidOption",
        "InvalidRankingPolicy",
        "InvalidRatings",
        "InvalidFact",
        "InvalidEndpoint",
        "StorageUnavailable",
    }


def test_invalid_predictions_carries_every_message():
    error = InvalidPredictions(["row 3: id mismatch", "row 7: qa_type mismatch"])

    assert error.messages == ["row 3: id mismatch", "row 7: qa_type mismatch"]
    assert str(error) == "row 3: id mismatch; row 7: qa_type mismatch"


def test_invalid_predictions_accepts_a_single_message():
    error = InvalidPredictions("expected 6245 rows, got 12")

    assert error.messages == ["expected 6245 rows, got 12"]
    assert str(error) == "expected 6245 rows, got 12"


def test_invalid_predictions_copies_the_list_it_is_given():
    messages = ["row 1: bad"]
    error = InvalidPredictions(messages)
    messages.append("row 2: bad")

    assert error.messages == ["row 1: bad"]
