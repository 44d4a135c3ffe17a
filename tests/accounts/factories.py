import factory

from accounts.models import User

# Every factory user has this password, so a test can sign in with it.
PASSWORD = "correct-horse-battery-staple"


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"person{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.org")
    password = factory.django.Password(PASSWORD)


def maintainer_user(**fields):
    """A maintainer as docs/accounts.md makes one: staff, in the Maintainers group (created
    again if a transactional test flushed it)."""
    from accounts.roles import ensure_maintainers_group

    user = UserFactory(**{"is_staff": True, **fields})
    user.groups.add(ensure_maintainers_group())
    return user
