import socket

import pytest

from tests.conftest import OutsideNetworkError


def test_outside_address_is_refused_and_recorded(network_attempts: list[str]) -> None:
    before = len(network_attempts)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with pytest.raises(OutsideNetworkError):
        sock.connect(("192.0.2.1", 80))  # TEST-NET-1: refused before any packet is sent
    sock.close()
    with pytest.raises(OutsideNetworkError):
        socket.getaddrinfo("example.com", 443)
    assert len(network_attempts) == before + 2
    del network_attempts[before:]  # the attempts were this test's purpose


def test_loopback_is_allowed() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname(), timeout=2)
    client.close()
    server.close()
