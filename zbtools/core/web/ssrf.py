"""Server-side request forgery protection for web_fetch: which addresses may be connected to.

The check happens at connection time, on addresses, not on names (zkit's "transport-level IP
dial guard", docs/internals/sources.md#zkit; docs/media-and-web.md#fetching-a-web-page). ``vet``
resolves the host itself, refuses every address that is not globally routable (loopback,
private, link-local, multicast, reserved, unspecified, shared/CGNAT, documentation ranges, cloud
metadata such as 169.254.169.254 and fd00:ec2::254), looks through IPv6 forms that embed an IPv4
address (IPv4-mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``, 6to4, Teredo) and returns
the vetted addresses; the caller then connects to one of those very addresses, so a DNS answer
that changes between check and use (DNS rebinding) cannot swap in another one. Every redirect
hop opens its connection through the same check.

The allow-list (``[web] allow`` in the config file, or ``ZBTOOLS_WEB_ALLOW``) names hosts
(``intranet.example``, ``*.corp.example``: any address they resolve to is allowed), IP addresses
and CIDR networks (``127.0.0.1``, ``10.0.0.0/8``: those addresses are allowed whatever the name).

Failure mode: ``BlockedAddress`` (turned into the ``blocked_address`` error by the web code).
"""

from __future__ import annotations

import ipaddress
import socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    IP = ipaddress.IPv4Address | ipaddress.IPv6Address
    Network = ipaddress.IPv4Network | ipaddress.IPv6Network

METADATA = {
    "169.254.169.254": "cloud metadata service",
    "169.254.170.2": "cloud metadata service (ECS)",
    "100.100.100.200": "cloud metadata service (Alibaba)",
    "192.0.0.192": "cloud metadata service (Oracle)",
    "fd00:ec2::254": "cloud metadata service (AWS IPv6)",
}
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class BlockedAddress(Exception):
    def __init__(self, host: str, address: str, reason: str) -> None:
        super().__init__(f"{host} resolves to {address} ({reason})")
        self.host = host
        self.address = address
        self.reason = reason


class Policy:
    """The allow-list: exact hosts, ``*.suffix`` hosts, and networks."""

    def __init__(self, allow: Iterable[str] = ()) -> None:
        self.hosts: set[str] = set()
        self.suffixes: list[str] = []
        self.networks: list[Network] = []
        for raw in allow:
            entry = raw.strip().lower().rstrip(".")
            if not entry:
                continue
            if entry.startswith("[") and entry.endswith("]"):
                entry = entry[1:-1]
            try:
                self.networks.append(ipaddress.ip_network(entry, strict=False))
                continue
            except ValueError:
                pass
            if entry.startswith("*."):
                self.suffixes.append(entry[1:])
            elif entry.startswith("."):
                self.suffixes.append(entry)
            else:
                self.hosts.add(entry)

    def host_allowed(self, host: str) -> bool:
        name = normalise_host(host)
        return name in self.hosts or any(name.endswith(s) for s in self.suffixes)

    def address_allowed(self, ip: IP) -> bool:
        return any(ip.version == net.version and ip in net for net in self.networks)


def normalise_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host


def blocked_reason(ip: IP) -> str | None:
    """Why connecting to ``ip`` is refused, or None when it is a public address."""
    text = str(ip)
    if text in METADATA:
        return METADATA[text]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.scope_id:
            return "scoped IPv6 address"
        embedded = ip.ipv4_mapped
        if embedded is None and ip in NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is None and ip.sixtofour is not None:
            embedded = ip.sixtofour
        if embedded is None and ip.teredo is not None:
            embedded = ip.teredo[1]
        if embedded is not None:
            inner = blocked_reason(embedded)
            return f"IPv6 form of {embedded}: {inner}" if inner else None
    for attribute, reason in (("is_unspecified", "unspecified address"),
                              ("is_loopback", "loopback address"),
                              ("is_link_local", "link-local address"),
                              ("is_multicast", "multicast address"),
                              ("is_private", "private network address"),
                              ("is_reserved", "reserved address")):
        if getattr(ip, attribute):
            return reason
    if not ip.is_global:
        return "not a globally routable address"
    return None


def resolve(host: str, port: int, resolver: Callable[..., list[tuple[Any, ...]]] | None = None
            ) -> list[IP]:
    """The addresses of ``host`` (an IP literal resolves to itself), in resolver order."""
    name = normalise_host(host)
    try:
        return [ipaddress.ip_address(name)]
    except ValueError:
        pass
    lookup = resolver or socket.getaddrinfo
    infos = lookup(name, port, 0, socket.SOCK_STREAM)
    out: list[IP] = []
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            continue
        if ip not in out:
            out.append(ip)
    return out


def vet(host: str, port: int, policy: Policy,
        resolver: Callable[..., list[tuple[Any, ...]]] | None = None) -> list[IP]:
    """The addresses of ``host`` that may be connected to; ``BlockedAddress`` if there is none.

    Addresses that are refused are dropped (a name with a public and a private address is
    reached on the public one only). ``socket.gaierror`` propagates for names that do not exist.
    """
    addresses = resolve(host, port, resolver)
    if policy.host_allowed(host):
        return addresses
    vetted: list[IP] = []
    refused: tuple[str, str] | None = None
    for ip in addresses:
        reason = None if policy.address_allowed(ip) else blocked_reason(ip)
        if reason is None:
            vetted.append(ip)
        elif refused is None:
            refused = (str(ip), reason)
    if not vetted:
        address, reason = refused or ("(none)", "the name has no address")
        raise BlockedAddress(normalise_host(host), address, reason)
    return vetted
