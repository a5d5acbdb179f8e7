# Sourced by .ci/run: one exit handler for everything the run starts or creates. Make a scratch
# folder with `scratch_dir NAME` (the folder's path goes into the variable NAME; not through
# $(...), whose subshell would lose the registration) and register a background process with
# `stop_on_exit PID`; on exit, whatever the cause, the processes are stopped and waited
# for, then the folders removed. A second `trap ... EXIT` would replace this one, so there is
# none: tests/packaging/test_ci_script.py checks both.
CLEANUP_DIRS=()
CLEANUP_PIDS=()

scratch_dir() {
  local dir
  dir="$(mktemp -d)"
  CLEANUP_DIRS+=("$dir")
  printf -v "$1" '%s' "$dir"
}

stop_on_exit() {
  CLEANUP_PIDS+=("$1")
}

cleanup() {
  local pid dir
  for pid in "${CLEANUP_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${CLEANUP_PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  for dir in "${CLEANUP_DIRS[@]}"; do
    rm -rf "$dir"
  done
}

trap cleanup EXIT
