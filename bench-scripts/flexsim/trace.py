"""The lock-trace reader under the name the simulator's modules use
(flexsim.trace, `from . import trace as T`): flexlab.locktrace, the one
reader of the format, whose names it gives."""

from flexlab.locktrace import (ACQ_HOWS, FAIL_HOWS, HW_PATHS, K_ACQ, K_BUF, K_CLIENT, K_FAIL, K_FLUSH,  # noqa: F401
                               K_HW, K_HWREL, K_IO, K_REL, K_ROW, K_WAL, K_WFV, KIND_NAMES, ROW_OPS, VERSION,
                               Trace, TraceError, Txn, load_dir, parse_file, parse_text, trace_files)
