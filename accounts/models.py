from django.contrib.auth.models import AbstractUser


class User(AbstractUser):
    """A person on Podium: a submitter, a maintainer, or both.

    Nothing beyond Django's user yet. It exists from the first migration so fields (and GitHub
    sign-in) can be added later without swapping ``AUTH_USER_MODEL``, which Django cannot migrate.
    """
