"""Scheduler addresses and the workers-or-scheduler choice, checked before any connection is tried."""

import pytest

from polytopo.core.cluster import check_cluster_choice, check_scheduler_address, open_client
from polytopo.core.errors import InvalidParameterError


@pytest.mark.parametrize(("address", "expected"), [
    ("tcp://10.0.0.5:8786", "tcp://10.0.0.5:8786"),
    ("tcp://scheduler.example.org:1", "tcp://scheduler.example.org:1"),
    ("tls://[::1]:65535", "tls://[::1]:65535"),
    ("  tcp://localhost:8786\n", "tcp://localhost:8786"),
    ("localhost:8786", "tcp://localhost:8786"),  # Dask's default protocol
])
def test_well_formed_addresses_are_kept_with_their_protocol(address, expected):
    assert check_scheduler_address(address) == expected


@pytest.mark.parametrize(("address", "problem"), [
    ("http://10.0.0.5:8786", "its protocol 'http' is not one of tcp, tls, ws, wss, ucx"),
    ("", "it names no host"),
    ("tcp://:8786", "it names no host"),
    ("tcp://a b:8786", "it names no host"),
    ("tcp://10.0.0.5", "it has no port from 1 to 65535 after the host"),
    ("tcp://10.0.0.5:0", "it has no port from 1 to 65535 after the host"),
    ("tcp://10.0.0.5:70000", "it has no port from 1 to 65535 after the host"),
    ("tcp://10.0.0.5:port", "it has no port from 1 to 65535 after the host"),
    ("tcp://10.0.0.5:8786/status", "it has more than HOST:PORT after the protocol"),
    ("tcp://[::1:8786", "its host is not a name, an IPv4 address or an IPv6 address in brackets"),
])
def test_malformed_addresses_are_refused_with_what_is_wrong(address, problem):
    expected = (f"Expected a Dask scheduler address tcp://HOST:PORT (for example tcp://192.168.1.20:8786) but got "
                f"{address.strip()!r}: {problem}")
    with pytest.raises(InvalidParameterError) as caught:
        check_scheduler_address(address)
    assert str(caught.value).startswith(expected)


def test_the_choice_is_workers_or_a_scheduler_or_this_process():
    assert check_cluster_choice() == (0, None)
    assert check_cluster_choice(3) == (3, None)
    assert check_cluster_choice(0, " h:8786 ") == (0, "tcp://h:8786")
    with pytest.raises(InvalidParameterError, match="either workers or a scheduler address but got both"):
        check_cluster_choice(2, "not an address")
    with pytest.raises(InvalidParameterError, match="whole number >= 0"):
        check_cluster_choice(-1)


def test_open_client_refuses_a_malformed_address_without_connecting():
    with pytest.raises(InvalidParameterError, match="but got 'localhost': it has no port"):
        with open_client(scheduler="localhost"):
            pass
