#!/usr/bin/env bash
# Runs gauntlet as a CI gate and turns its state into the job's result.
#
#   ci/gate.sh [GAUNTLET ARGS...]        e.g.  ci/gate.sh run suite.yaml --target fake:safe
#
# Environment (all optional):
#   GAUNTLET              the binary (default: gauntlet on PATH)
#   GAUNTLET_OUT          the reports folder (default gauntlet-out; passed as --out)
#   GAUNTLET_CONDITIONAL  fail | pass: what CONDITIONAL (exit 3) does to the job (default fail)
#   GAUNTLET_INCONCLUSIVE fail | pass: what INCONCLUSIVE (exit 4) does (default fail; pass
#                         only if missing evidence must not block, it is never a green gate)
#   GITHUB_STEP_SUMMARY   when set (GitHub Actions), summary.md is appended to the job summary
#   GITHUB_OUTPUT         when set, `status`, `exit-code` and `out` are written as step outputs
#
# Exits 0 when the gate lets the change through, else gauntlet's own exit code (1 FAIL,
# 2 usage or configuration error, 3 CONDITIONAL, 4 INCONCLUSIVE), so the job log says why.
set -uo pipefail

bin="${GAUNTLET:-gauntlet}"
out="${GAUNTLET_OUT:-gauntlet-out}"
conditional="${GAUNTLET_CONDITIONAL:-fail}"
inconclusive="${GAUNTLET_INCONCLUSIVE:-fail}"
for policy in "$conditional" "$inconclusive"; do
  case "$policy" in
    fail|pass) ;;
    *) echo "gate: a policy is fail or pass, not '$policy'" >&2; exit 2 ;;
  esac
done
if [ "$#" -eq 0 ]; then
  echo "gate: give the gauntlet command, e.g. ci/gate.sh redteam --target NAME" >&2
  exit 2
fi

"$bin" "$@" --out "$out"
code=$?

case "$code" in
  0) status=PASS ;;
  1) status=FAIL ;;
  2) status=ERROR ;;
  3) status=CONDITIONAL ;;
  4) status=INCONCLUSIVE ;;
  *) status=CRASHED ;;
esac

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  if [ -f "$out/summary.md" ]; then
    cat "$out/summary.md" >> "$GITHUB_STEP_SUMMARY"
  else
    printf '### gauntlet: %s (exit %s)\n\nNo summary was written.\n' "$status" "$code" >> "$GITHUB_STEP_SUMMARY"
  fi
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "status=$status"
    echo "exit-code=$code"
    echo "out=$out"
  } >> "$GITHUB_OUTPUT"
fi

verdict=$code
if [ "$code" -eq 3 ] && [ "$conditional" = pass ]; then verdict=0; fi
if [ "$code" -eq 4 ] && [ "$inconclusive" = pass ]; then
  echo "gate: INCONCLUSIVE let through by policy: evidence is missing, this is not a pass" >&2
  verdict=0
fi
echo "gate: gauntlet said $status (exit $code); the job $( [ "$verdict" -eq 0 ] && echo passes || echo fails )" >&2
exit "$verdict"
