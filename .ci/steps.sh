# Sourced by .ci/run and .ci/test. `step NAME CMD...` runs CMD and records
# its wall-clock seconds; the shell that sourced this first prints the table
# of every step when it exits (a failing step is marked, and still ends the
# run with its exit code).
if [ -z "${RECON_CI_STEPS:-}" ]; then
  RECON_CI_STEPS="$(mktemp)"
  export RECON_CI_STEPS
  recon_ci_t0=$SECONDS
  recon_ci_table() {
    local rc=$?
    {
      echo "== step seconds =="
      awk -F '\t' '{ printf "%6d  %s%s\n", $2, $1, ($3 == 0 ? "" : "  (failed: exit " $3 ")") }' "$RECON_CI_STEPS"
      printf '%6d  total\n' $((SECONDS - recon_ci_t0))
    } >&2
    rm -f "$RECON_CI_STEPS"
    exit $rc
  }
  trap recon_ci_table EXIT
fi

step() {
  local name=$1 t0=$SECONDS rc=0
  shift
  echo "== $name" >&2
  "$@" || rc=$?
  printf '%s\t%d\t%d\n' "$name" $((SECONDS - t0)) "$rc" >> "$RECON_CI_STEPS"
  return $rc
}
