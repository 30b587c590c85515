"""A base URL and an API's name → the endpoint's full URL."""

from __future__ import annotations

from urllib.parse import urlsplit

# The package's __init__ has run before this module (it registers every API), so the registry is full.
from loadgen.http.api.registry import api_for


def endpoint_url(base_url: str, endpoint: str) -> str:
    """`http://host:8000`, `.../v1`, `.../v1/` or `http://host/prefix[/v1]` → the endpoint's full URL."""
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base URL must look like http://host:port[/v1], got {base_url!r}")
    if parts.query or parts.fragment:
        raise ValueError(f"base URL must not carry a query or fragment, got {base_url!r}")
    api = api_for(endpoint)  # ValueError for an unknown one
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}/{api.path}"
