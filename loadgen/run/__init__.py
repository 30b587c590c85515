"""One `goodput run` from a checked spec to files on disk and an exit code: the run's orchestrator, above the
dispatch core (loadgen.dispatch) and the workers (loadgen.workers), which it wires together.

- Lifecycle: the output directory (`directory`: `prepare_run_dir`, `RunDir`), what the run needs in hand
  before its first request (`setup`: `plan_run`), the embedded server (`embedded`), the model listing and
  prompt sizing, the run itself (`session`: `execute`; with workers, `with_workers`), its end (`conclusion`).
- Output wiring: the result files (`outputs`: `build_outputs`, `run_summary_config`), the HTML report
  (`html_report`), the roofline section, the Prometheus exporters and the server's /metrics (`prometheus`,
  `scrape`, `gpu_scrape`), the gate during and after the run (`gate`), the CI report files
  (`output_files`).

The names below are imported on first use (metrics.lazy_face): `goodput run` imports each part when it
gets there, and the result files' machinery only after the last request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from metrics import lazy_names

if TYPE_CHECKING:
    from loadgen.run.cache_prediction import resolve_block_size
    from loadgen.run.directory import (
        DEFAULT_ROOT,
        MAX_SUFFIX,
        OutputDirError,
        RunDir,
        check_writable,
        make_dirs,
        prepare_run_dir,
        refuse_current_dir,
        remove_created_dirs,
        run_files,
    )
    from loadgen.run.embedded import EmbeddedServerError, embedded_server
    from loadgen.run.gate import EXIT_THRESHOLDS_FAILED, GatePlan, build_gate_plan, judge, load_run_view
    from loadgen.run.gpu_scrape import add_gpu_section
    from loadgen.run.html_report import write_run_report
    from loadgen.run.output_files import check_output_file, check_output_files
    from loadgen.run.outputs import build_outputs, run_summary_config
    from loadgen.run.prometheus import add_server_section, load_server_section, rebuild_textfile
    from loadgen.run.scrape import metrics_url_for
    from loadgen.run.session import execute
    from loadgen.run.setup import plan_run

__all__ = [
    "DEFAULT_ROOT",
    "EXIT_THRESHOLDS_FAILED",
    "MAX_SUFFIX",
    "EmbeddedServerError",
    "GatePlan",
    "OutputDirError",
    "RunDir",
    "add_gpu_section",
    "add_server_section",
    "build_gate_plan",
    "build_outputs",
    "check_output_file",
    "check_output_files",
    "check_writable",
    "embedded_server",
    "execute",
    "judge",
    "load_run_view",
    "load_server_section",
    "make_dirs",
    "metrics_url_for",
    "plan_run",
    "prepare_run_dir",
    "rebuild_textfile",
    "refuse_current_dir",
    "remove_created_dirs",
    "resolve_block_size",
    "run_files",
    "run_summary_config",
    "write_run_report",
]

__getattr__ = lazy_names(__name__, {
    "resolve_block_size": "cache_prediction",
    "DEFAULT_ROOT": "directory", "MAX_SUFFIX": "directory", "OutputDirError": "directory",
    "RunDir": "directory", "check_writable": "directory", "make_dirs": "directory",
    "prepare_run_dir": "directory", "refuse_current_dir": "directory", "remove_created_dirs": "directory",
    "run_files": "directory",
    "EmbeddedServerError": "embedded", "embedded_server": "embedded",
    "EXIT_THRESHOLDS_FAILED": "gate", "GatePlan": "gate", "build_gate_plan": "gate", "judge": "gate",
    "load_run_view": "gate",
    "add_gpu_section": "gpu_scrape",
    "write_run_report": "html_report",
    "check_output_file": "output_files", "check_output_files": "output_files",
    "build_outputs": "outputs", "run_summary_config": "outputs",
    "add_server_section": "prometheus", "load_server_section": "prometheus", "rebuild_textfile": "prometheus",
    "metrics_url_for": "scrape",
    "execute": "session",
    "plan_run": "setup",
})
