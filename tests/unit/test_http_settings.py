"""HTTP transport settings: loopback detection, allow-lists, the bind rule."""

import pytest

from nineplan_adapters.config import ConfigError, Settings
from nineplan_adapters.entrypoints.asgi import check_bind, is_loopback
from nineplan_adapters.entrypoints.mcp.http import transport_security


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.5", False),
        ("plans.example", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool):
    """127.0.0.0/8, ::1 and localhost count as loopback; other addresses and names do not."""
    assert is_loopback(host) is loopback


def test_allow_lists_default_to_loopback_and_grow_from_settings():
    """The Host and Origin allow-lists hold loopback, the bound host and what the settings add."""
    security = transport_security(
        Settings(
            http_allowed_hosts=("plans.example:*",), http_allowed_origins=("https://ui.example",)
        )
    )
    assert security.enable_dns_rebinding_protection
    assert "127.0.0.1:*" in security.allowed_hosts
    assert "plans.example:*" in security.allowed_hosts
    assert "https://ui.example" in security.allowed_origins
    bound = transport_security(Settings(http_host="10.1.2.3", http_token="t"))
    assert "10.1.2.3:*" in bound.allowed_hosts


def test_binding_beyond_loopback_needs_a_token():
    """Listening beyond loopback is refused without a token, naming the variable."""
    check_bind(Settings())
    check_bind(Settings(http_host="0.0.0.0", http_token="t"))
    with pytest.raises(ConfigError) as caught:
        check_bind(Settings(http_host="0.0.0.0"))
    assert caught.value.variable == "NINEPLAN_HTTP_HOST"
