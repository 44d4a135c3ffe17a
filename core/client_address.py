"""The client's address, as every per-client limit counts it: the sign-in lockouts (axes), the
API's throttles (DRF) and allauth's own limits all ask this one function, so they agree, and a
deployment behind proxies sets one number (``PODIUM_TRUSTED_PROXY_COUNT``; docs/deployment.md,
"Reverse proxy").

Why not each library's own: DRF's default (``NUM_PROXIES = None``) takes the whole
``X-Forwarded-For`` header, which the client writes, so every forged value was a new client with a
fresh allowance; axes (without django-ipware) and DRF count IPv6 clients per address, and whoever
holds an IPv6 /64 (the usual smallest allocation) holds 2^64 of them; allauth raises
ImproperlyConfigured (a 500) when the header has fewer entries than its proxy count.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest

# An IPv6 client is its /64: one site's or one subscriber's network, as allauth's own limits
# count it (ALLAUTH_RATE_LIMIT_IPV6_PREFIX's default).
IPV6_PREFIX = 64


def client_address(request: HttpRequest) -> str:
    """``REMOTE_ADDR``, or behind N trusted proxies the N-th address from the right of
    ``X-Forwarded-For`` (the one the outermost trusted proxy saw; what stands further left was
    written by the client); an IPv6 address as its /64 network. A value that is no IP address
    (a misconfigured proxy count letting the client's text through) falls back to REMOTE_ADDR."""
    remote = request.META.get("REMOTE_ADDR", "") or ""
    address = remote
    proxies = settings.PODIUM_TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR")
    if proxies and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",")]
        address = hops[-min(proxies, len(hops))]
    return _as_client(address) or _as_client(remote) or remote


def _as_client(address: str) -> str | None:
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{parsed}/{IPV6_PREFIX}", strict=False).network_address)
    return str(parsed)
