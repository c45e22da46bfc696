#!/usr/bin/env bash
# ptx_in_loop.sh: PTX or AMDGCN assembly on stdin; succeeds when every argument (an extended
# regex) matches some instruction that lies inside a loop: between a label and a later branch back
# to it. Used by the FileCheck tests where "inside a loop" is the point (a spin wait) but the label
# numbering and block order are LLVM's business:
#   // RUN: %mkdsl build %s --emit=ptx | %S/ptx_in_loop.sh 'ld\.acquire\.gpu\.global\.u32'
set -uo pipefail
(($#)) || { echo "usage: ptx_in_loop.sh REGEX... < file.ptx" >&2; exit 2; }
ptx=$(cat)
[[ -n $ptx ]] || { echo "ptx_in_loop: no assembly on stdin" >&2; exit 1; }
status=0
for re in "$@"; do
  if ! awk -v re="$re" '
    { line[NR] = $0 }
    /^[$.A-Za-z_][$.A-Za-z0-9_]*:/ { lab = $0; sub(/:.*/, "", lab); at[lab] = NR }
    END {
      # Backward branches after LABEL:, PTX "bra LABEL;" or "bra.uni LABEL;" (predicated or
      # not), AMDGCN "s_branch LABEL" or "s_cbranch_<cond> LABEL".
      for (i = 1; i <= NR; i++) {
        s = line[i]; t = ""
        if (match(s, /bra(\.uni)?[ \t]+[$A-Za-z_][$A-Za-z0-9_]*;/)) {
          t = substr(s, RSTART, RLENGTH); sub(/^bra(\.uni)?[ \t]+/, "", t); sub(/;$/, "", t)
        } else if (match(s, /s_c?branch(_[a-z0-9]+)?[ \t]+[.A-Za-z_][.A-Za-z0-9_]*/)) {
          t = substr(s, RSTART, RLENGTH); sub(/^s_c?branch(_[a-z0-9]+)?[ \t]+/, "", t)
        }
        if (t != "" && (t in at) && at[t] <= i) { lo[++n] = at[t]; hi[n] = i }
      }
      found = 0; seen = 0
      for (i = 1; i <= NR && !found; i++) {
        if (line[i] ~ /^[ \t]*\/\//) continue
        if (line[i] ~ re) {
          seen++
          for (k = 1; k <= n; k++) if (lo[k] <= i && i <= hi[k]) { found = 1; break }
        }
      }
      if (!found) {
        if (seen) printf "ptx_in_loop: /%s/ matches %d line(s), none inside a loop\n", re, seen > "/dev/stderr"
        else printf "ptx_in_loop: /%s/ matches nothing\n", re > "/dev/stderr"
        exit 1
      }
    }' <<<"$ptx"; then
    status=1
  fi
done
exit $status
