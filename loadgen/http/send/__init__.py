"""Sending: the streaming client (one request in, one record out) and the prompt-sizing probes, above the
API modules they look up (loadgen.http.api) and the parts they build on (loadgen.http)."""
