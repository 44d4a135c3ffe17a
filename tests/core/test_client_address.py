"""The client's address as every per-client limit counts it (core/client_address.py)."""

import pytest
from django.test import RequestFactory

from core.client_address import client_address

pytestmark = pytest.mark.unit


def address(settings, *, proxies: int, remote: str, forwarded: str | None = None) -> str:
    settings.PODIUM_TRUSTED_PROXY_COUNT = proxies
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded is not None else {}
    return client_address(RequestFactory().get("/", REMOTE_ADDR=remote, **headers))


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        # No trusted proxy: whatever the client wrote in X-Forwarded-For is ignored.
        (0, None, "10.0.0.1"),
        (0, "203.0.113.9", "10.0.0.1"),
        # One proxy: the address it appended, the last; the client may prepend anything.
        (1, "203.0.113.9", "203.0.113.9"),
        (1, "198.51.100.1, 203.0.113.9", "203.0.113.9"),
        # Two: the one the outer proxy appended, second from the right.
        (2, "198.51.100.1, 203.0.113.9, 10.0.0.2", "203.0.113.9"),
        # Fewer entries than proxies (a request that skipped the outer one): the leftmost.
        (2, "203.0.113.9", "203.0.113.9"),
        # No header at all: the direct peer.
        (1, None, "10.0.0.1"),
        # Not an address where the proxy's entry should be (too high a count): REMOTE_ADDR, not
        # the client's text, which would be a fresh key per request (and no valid inet value).
        (2, "anything-at-all, 10.0.0.2", "10.0.0.1"),
    ],
)
def test_the_trusted_proxies_entry_of_x_forwarded_for_or_remote_addr(
    settings, proxies, forwarded, expected
):
    assert address(settings, proxies=proxies, remote="10.0.0.1", forwarded=forwarded) == expected


@pytest.mark.parametrize(
    ("remote", "expected"),
    [
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::"),
        ("2001:db8:1:2::1", "2001:db8:1:2::"),
        ("2001:db8:1:3::1", "2001:db8:1:3::"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("192.0.2.7", "192.0.2.7"),
    ],
)
def test_an_ipv6_client_is_its_64_network(settings, remote, expected):
    """Whoever holds a /64 holds 2^64 addresses: counted per address, each one would be a new
    client for the lockouts and the throttles."""
    assert address(settings, proxies=0, remote=remote) == expected
