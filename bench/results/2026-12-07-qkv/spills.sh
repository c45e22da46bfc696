#!/bin/bash
# The spill matrix of spills.txt, from the repository root with a built build/. nf- rows: $NF_DIR
# (default /tmp/nf) held llama.mk and stdlib/ with the fused norm (committed since), and a tree
# before it gave the other rows. Scratch files go to /tmp/sp.
cd "$(dirname "$0")/../../.." && mkdir -p /tmp/sp
NF_DIR=${NF_DIR:-/tmp/nf}
M=build/tools/mkdsl/mkdsl
check() { # name file stdlib target extra...
  local name=$1 file=$2 std=$3 t=$4; shift 4
  local gpu=""; [ "$t" = sm_80 ] && gpu="--gpu a100 --set prefill_rows=64 --set prefill_qkv_rows=64 --set short_rows=64 --set prefill_ffn_cols=64"
  if ! $M build $file --stdlib $std --config llama_3_2_1b --target $t $gpu "$@" -o /tmp/sp/$name.$t.ptx 2>/tmp/sp/$name.$t.err; then echo "$name $t BUILD-FAIL $(head -c 200 /tmp/sp/$name.$t.err)"; return; fi
  r=$(ptxas -arch=$t -v /tmp/sp/$name.$t.ptx -o /tmp/sp/x.$t.cubin 2>&1 | grep -A1 'Function properties' | grep -o 'for [a-z_]*\|[0-9]* bytes spill stores' | paste - - | awk '{print $2":"$3}' | tr '\n' ' ')
  echo "$name $t $r"
}
K64="--set prefill_k_chunk=64"; QW="--set prefill_qkv_rows=256 --set prefill_qkv_cols=32"; D="--set prefill_cols=256 --set prefill_splits=4"
for t in sm_90a sm_90 sm_80; do
 for nf in 0 1; do
  if [ $nf = 1 ]; then F=$NF_DIR/llama.mk; S=$NF_DIR/stdlib; p=nf-; else F=examples/llama.mk; S=stdlib; p=; fi
  check ${p}base $F $S $t
  check ${p}qw $F $S $t $QW
  check ${p}k64qw $F $S $t $K64 $QW
  check ${p}k64d $F $S $t $K64 $D
  check ${p}k64qwd $F $S $t $K64 $QW $D
 done
done
