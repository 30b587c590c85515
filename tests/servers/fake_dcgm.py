"""A small stand-in for NVIDIA's DCGM exporter: its metric names, HELP/TYPE lines and label set, in
Prometheus text format, on a free loopback port; every value comes from `script(unix_s)` at the moment of
the scrape, so a test can script values over time and derive the figures by hand.

    with FakeDcgm(lambda t: {0: {"power_w": 300.0, ...}, 1: {...}}) as dcgm:
        ... dcgm.url ...  dcgm.scrapes ...
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[float], dict[int, dict[str, float]]]
# key → (family, HELP text as the exporter's default counters give it)
FIELDS = {
    "util_pct": ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."),
    "power_w": ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W)."),
    "fb_used_mib": ("DCGM_FI_DEV_FB_USED", "Frame buffer memory used (in MiB)."),
    "sm_active": ("DCGM_FI_PROF_SM_ACTIVE", "The ratio of cycles an SM has at least 1 warp assigned (in %)."),
    "temp_c": ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C)."),
}


def uuid_of(gpu: int) -> str:
    return f"GPU-5f3c2a10-8e1d-4b7a-9c2e-00000000000{gpu}"


def exposition(values: dict[int, dict[str, float]], *, hostname: str = "node-1") -> str:
    lines: list[str] = []
    for key, (family, help_text) in FIELDS.items():
        lines += [f"# HELP {family} {help_text}", f"# TYPE {family} gauge"]
        for gpu, fields in sorted(values.items()):
            if key in fields:
                labels = (f'gpu="{gpu}",UUID="{uuid_of(gpu)}",pci_bus_id="00000000:{0x18 + gpu:02X}:00.0",'
                          f'device="nvidia{gpu}",modelName="NVIDIA H100 80GB HBM3",Hostname="{hostname}",'
                          'DCGM_FI_DRIVER_VERSION="550.54.15"')
                lines.append(f"{family}{{{labels}}} {fields[key]:g}")
    return "\n".join(lines) + "\n"


class FakeDcgm:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.scrapes: list[float] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != "/metrics":
                    self.send_error(404)
                    return
                now = time.time()
                fake.scrapes.append(now)
                body = exposition(fake.script(now)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/metrics"

    def __enter__(self) -> FakeDcgm:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
