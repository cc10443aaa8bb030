"""Loaded by Python at start-up when this directory is on PYTHONPATH.

Names under WARREN_TLS_DOMAIN resolve to WARREN_TLS_ADDR, as wildcard DNS
would send them to warren, without touching the host's resolver (the
Python twin of test/e2e/tls/resolve.mjs). Every other name resolves as
usual.
"""

import os
import socket

_domain = os.environ.get("WARREN_TLS_DOMAIN", "").lower().rstrip(".")
_addr = os.environ.get("WARREN_TLS_ADDR", "")
_getaddrinfo = socket.getaddrinfo


def _ours(host):
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    host = host.lower().rstrip(".")
    return host == _domain or host.endswith("." + _domain)


def _resolve(host, port, family=0, type=0, proto=0, flags=0):
    if _domain and _addr and _ours(host):
        # The address is numeric, so this is answered without a lookup,
        # with the caller's port, socket type and protocol.
        return _getaddrinfo(_addr, port, socket.AF_INET, type, proto, flags)
    return _getaddrinfo(host, port, family, type, proto, flags)


socket.getaddrinfo = _resolve
