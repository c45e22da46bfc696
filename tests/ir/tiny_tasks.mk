// RUN: build --emit=tasks %root/examples/llama_tiny.mk

// CHECK:EXIT: 0
// CHECK: // 138 tasks
// CHECK: task 0 embed#0[0] reads embed_tokens[0..256 at input 0 + 0..1, 0..64] writes y.0[0..64] bytes 384 flops 0
// CHECK: task 1 qkv_rope_append#1[0, 0] reads layer[0].input_norm[0..64], layer[0].qkv[0..16, 0..64], y.0[0..64] writes q.1[0..16] bytes 2464 flops 2048
// CHECK: task 2 qkv_rope_append#1[1, 0] reads layer[0].input_norm[0..64], layer[0].qkv[16..32, 0..64], y.0[0..64] writes q.1[16..32] bytes 2464 flops 2048
// CHECK: task 3 qkv_rope_append#1[2, 0] reads layer[0].input_norm[0..64], layer[0].qkv[32..48, 0..64], y.0[0..64] writes q.1[32..48] bytes 2464 flops 2048
// CHECK: task 4 qkv_rope_append#1[3, 0] reads layer[0].input_norm[0..64], layer[0].qkv[48..64, 0..64], y.0[0..64] writes q.1[48..64] bytes 2464 flops 2048
// CHECK: task 5 qkv_rope_append#1[4, 0] reads layer[0].input_norm[0..64], layer[0].qkv[64..80, 0..64], y.0[0..64] writes layer[0].k_cache[0..1, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 6 qkv_rope_append#1[5, 0] reads layer[0].input_norm[0..64], layer[0].qkv[80..96, 0..64], y.0[0..64] writes layer[0].k_cache[1..2, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 7 qkv_rope_append#1[6, 0] reads layer[0].input_norm[0..64], layer[0].qkv[96..112, 0..64], y.0[0..64] writes layer[0].v_cache[0..1, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 8 qkv_rope_append#1[7, 0] reads layer[0].input_norm[0..64], layer[0].qkv[112..128, 0..64], y.0[0..64] writes layer[0].v_cache[1..2, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 9 attention_partial#2[0, 0, 0] reads layer[0].k_cache[0..1, 0..64, 0..16], layer[0].v_cache[0..1, 0..64, 0..16], q.1[0..16] writes pm.2[0..1, 0..1], pl.2[0..1, 0..1], pacc.2[0..1, 0..16] bytes 4200 flops 1024
// CHECK: task 10 attention_partial#2[0, 0, 1] reads layer[0].k_cache[0..1, 0..64, 0..16], layer[0].v_cache[0..1, 0..64, 0..16], q.1[0..16] writes pm.2[1..2, 0..1], pl.2[1..2, 0..1], pacc.2[1..2, 0..16] bytes 4200 flops 1024
// CHECK: task 11 attention_partial#2[0, 1, 0] reads layer[0].k_cache[0..1, 0..64, 0..16], layer[0].v_cache[0..1, 0..64, 0..16], q.1[16..32] writes pm.2[0..1, 1..2], pl.2[0..1, 1..2], pacc.2[0..1, 16..32] bytes 4200 flops 1024
// CHECK: task 12 attention_partial#2[0, 1, 1] reads layer[0].k_cache[0..1, 0..64, 0..16], layer[0].v_cache[0..1, 0..64, 0..16], q.1[16..32] writes pm.2[1..2, 1..2], pl.2[1..2, 1..2], pacc.2[1..2, 16..32] bytes 4200 flops 1024
// CHECK: task 13 attention_partial#2[1, 0, 0] reads layer[0].k_cache[1..2, 0..64, 0..16], layer[0].v_cache[1..2, 0..64, 0..16], q.1[32..48] writes pm.2[0..1, 2..3], pl.2[0..1, 2..3], pacc.2[0..1, 32..48] bytes 4200 flops 1024
// CHECK: task 14 attention_partial#2[1, 0, 1] reads layer[0].k_cache[1..2, 0..64, 0..16], layer[0].v_cache[1..2, 0..64, 0..16], q.1[32..48] writes pm.2[1..2, 2..3], pl.2[1..2, 2..3], pacc.2[1..2, 32..48] bytes 4200 flops 1024
// CHECK: task 15 attention_partial#2[1, 1, 0] reads layer[0].k_cache[1..2, 0..64, 0..16], layer[0].v_cache[1..2, 0..64, 0..16], q.1[48..64] writes pm.2[0..1, 3..4], pl.2[0..1, 3..4], pacc.2[0..1, 48..64] bytes 4200 flops 1024
// CHECK: task 16 attention_partial#2[1, 1, 1] reads layer[0].k_cache[1..2, 0..64, 0..16], layer[0].v_cache[1..2, 0..64, 0..16], q.1[48..64] writes pm.2[1..2, 3..4], pl.2[1..2, 3..4], pacc.2[1..2, 48..64] bytes 4200 flops 1024
// CHECK: task 17 attention_combine#3[0] reads pm.2[0..2, 0..1], pl.2[0..2, 0..1], pacc.2[0..2, 0..16] writes o.3[0..16] bytes 176 flops 64
// CHECK: task 18 attention_combine#3[1] reads pm.2[0..2, 1..2], pl.2[0..2, 1..2], pacc.2[0..2, 16..32] writes o.3[16..32] bytes 176 flops 64
// CHECK: task 19 attention_combine#3[2] reads pm.2[0..2, 2..3], pl.2[0..2, 2..3], pacc.2[0..2, 32..48] writes o.3[32..48] bytes 176 flops 64
// CHECK: task 20 attention_combine#3[3] reads pm.2[0..2, 3..4], pl.2[0..2, 3..4], pacc.2[0..2, 48..64] writes o.3[48..64] bytes 176 flops 64
// CHECK: task 21 matvec_residual#4[0] reads layer[0].o_proj[0..8, 0..64], y.0[0..8], o.3[0..64] writes y.4[0..8] bytes 1216 flops 1024
// CHECK: task 22 matvec_residual#4[1] reads layer[0].o_proj[8..16, 0..64], y.0[8..16], o.3[0..64] writes y.4[8..16] bytes 1216 flops 1024
// CHECK: task 23 matvec_residual#4[2] reads layer[0].o_proj[16..24, 0..64], y.0[16..24], o.3[0..64] writes y.4[16..24] bytes 1216 flops 1024
// CHECK: task 24 matvec_residual#4[3] reads layer[0].o_proj[24..32, 0..64], y.0[24..32], o.3[0..64] writes y.4[24..32] bytes 1216 flops 1024
// CHECK: task 25 matvec_residual#4[4] reads layer[0].o_proj[32..40, 0..64], y.0[32..40], o.3[0..64] writes y.4[32..40] bytes 1216 flops 1024
// CHECK: task 26 matvec_residual#4[5] reads layer[0].o_proj[40..48, 0..64], y.0[40..48], o.3[0..64] writes y.4[40..48] bytes 1216 flops 1024
// CHECK: task 27 matvec_residual#4[6] reads layer[0].o_proj[48..56, 0..64], y.0[48..56], o.3[0..64] writes y.4[48..56] bytes 1216 flops 1024
// CHECK: task 28 matvec_residual#4[7] reads layer[0].o_proj[56..64, 0..64], y.0[56..64], o.3[0..64] writes y.4[56..64] bytes 1216 flops 1024
// CHECK: task 29 rmsnorm_swiglu#5[0] reads layer[0].post_norm[0..64], layer[0].gate_up[0..8, 0..64], layer[0].gate_up[128..136, 0..64], y.4[0..64] writes y.5[0..8] bytes 2448 flops 2048
// CHECK: task 30 rmsnorm_swiglu#5[1] reads layer[0].post_norm[0..64], layer[0].gate_up[8..16, 0..64], layer[0].gate_up[136..144, 0..64], y.4[0..64] writes y.5[8..16] bytes 2448 flops 2048
// CHECK: task 31 rmsnorm_swiglu#5[2] reads layer[0].post_norm[0..64], layer[0].gate_up[16..24, 0..64], layer[0].gate_up[144..152, 0..64], y.4[0..64] writes y.5[16..24] bytes 2448 flops 2048
// CHECK: task 32 rmsnorm_swiglu#5[3] reads layer[0].post_norm[0..64], layer[0].gate_up[24..32, 0..64], layer[0].gate_up[152..160, 0..64], y.4[0..64] writes y.5[24..32] bytes 2448 flops 2048
// CHECK: task 33 rmsnorm_swiglu#5[4] reads layer[0].post_norm[0..64], layer[0].gate_up[32..40, 0..64], layer[0].gate_up[160..168, 0..64], y.4[0..64] writes y.5[32..40] bytes 2448 flops 2048
// CHECK: task 34 rmsnorm_swiglu#5[5] reads layer[0].post_norm[0..64], layer[0].gate_up[40..48, 0..64], layer[0].gate_up[168..176, 0..64], y.4[0..64] writes y.5[40..48] bytes 2448 flops 2048
// CHECK: task 35 rmsnorm_swiglu#5[6] reads layer[0].post_norm[0..64], layer[0].gate_up[48..56, 0..64], layer[0].gate_up[176..184, 0..64], y.4[0..64] writes y.5[48..56] bytes 2448 flops 2048
// CHECK: task 36 rmsnorm_swiglu#5[7] reads layer[0].post_norm[0..64], layer[0].gate_up[56..64, 0..64], layer[0].gate_up[184..192, 0..64], y.4[0..64] writes y.5[56..64] bytes 2448 flops 2048
// CHECK: task 37 rmsnorm_swiglu#5[8] reads layer[0].post_norm[0..64], layer[0].gate_up[64..72, 0..64], layer[0].gate_up[192..200, 0..64], y.4[0..64] writes y.5[64..72] bytes 2448 flops 2048
// CHECK: task 38 rmsnorm_swiglu#5[9] reads layer[0].post_norm[0..64], layer[0].gate_up[72..80, 0..64], layer[0].gate_up[200..208, 0..64], y.4[0..64] writes y.5[72..80] bytes 2448 flops 2048
// CHECK: task 39 rmsnorm_swiglu#5[10] reads layer[0].post_norm[0..64], layer[0].gate_up[80..88, 0..64], layer[0].gate_up[208..216, 0..64], y.4[0..64] writes y.5[80..88] bytes 2448 flops 2048
// CHECK: task 40 rmsnorm_swiglu#5[11] reads layer[0].post_norm[0..64], layer[0].gate_up[88..96, 0..64], layer[0].gate_up[216..224, 0..64], y.4[0..64] writes y.5[88..96] bytes 2448 flops 2048
// CHECK: task 41 rmsnorm_swiglu#5[12] reads layer[0].post_norm[0..64], layer[0].gate_up[96..104, 0..64], layer[0].gate_up[224..232, 0..64], y.4[0..64] writes y.5[96..104] bytes 2448 flops 2048
// CHECK: task 42 rmsnorm_swiglu#5[13] reads layer[0].post_norm[0..64], layer[0].gate_up[104..112, 0..64], layer[0].gate_up[232..240, 0..64], y.4[0..64] writes y.5[104..112] bytes 2448 flops 2048
// CHECK: task 43 rmsnorm_swiglu#5[14] reads layer[0].post_norm[0..64], layer[0].gate_up[112..120, 0..64], layer[0].gate_up[240..248, 0..64], y.4[0..64] writes y.5[112..120] bytes 2448 flops 2048
// CHECK: task 44 rmsnorm_swiglu#5[15] reads layer[0].post_norm[0..64], layer[0].gate_up[120..128, 0..64], layer[0].gate_up[248..256, 0..64], y.4[0..64] writes y.5[120..128] bytes 2448 flops 2048
// CHECK: task 45 matvec_residual#6[0] reads layer[0].down[0..8, 0..128], y.4[0..8], y.5[0..128] writes y.6[0..8] bytes 2368 flops 2048
// CHECK: task 46 matvec_residual#6[1] reads layer[0].down[8..16, 0..128], y.4[8..16], y.5[0..128] writes y.6[8..16] bytes 2368 flops 2048
// CHECK: task 47 matvec_residual#6[2] reads layer[0].down[16..24, 0..128], y.4[16..24], y.5[0..128] writes y.6[16..24] bytes 2368 flops 2048
// CHECK: task 48 matvec_residual#6[3] reads layer[0].down[24..32, 0..128], y.4[24..32], y.5[0..128] writes y.6[24..32] bytes 2368 flops 2048
// CHECK: task 49 matvec_residual#6[4] reads layer[0].down[32..40, 0..128], y.4[32..40], y.5[0..128] writes y.6[32..40] bytes 2368 flops 2048
// CHECK: task 50 matvec_residual#6[5] reads layer[0].down[40..48, 0..128], y.4[40..48], y.5[0..128] writes y.6[40..48] bytes 2368 flops 2048
// CHECK: task 51 matvec_residual#6[6] reads layer[0].down[48..56, 0..128], y.4[48..56], y.5[0..128] writes y.6[48..56] bytes 2368 flops 2048
// CHECK: task 52 matvec_residual#6[7] reads layer[0].down[56..64, 0..128], y.4[56..64], y.5[0..128] writes y.6[56..64] bytes 2368 flops 2048
// CHECK: task 53 qkv_rope_append#7[0, 0] reads layer[1].input_norm[0..64], layer[1].qkv[0..16, 0..64], y.6[0..64] writes q.7[0..16] bytes 2464 flops 2048
// CHECK: task 54 qkv_rope_append#7[1, 0] reads layer[1].input_norm[0..64], layer[1].qkv[16..32, 0..64], y.6[0..64] writes q.7[16..32] bytes 2464 flops 2048
// CHECK: task 55 qkv_rope_append#7[2, 0] reads layer[1].input_norm[0..64], layer[1].qkv[32..48, 0..64], y.6[0..64] writes q.7[32..48] bytes 2464 flops 2048
// CHECK: task 56 qkv_rope_append#7[3, 0] reads layer[1].input_norm[0..64], layer[1].qkv[48..64, 0..64], y.6[0..64] writes q.7[48..64] bytes 2464 flops 2048
// CHECK: task 57 qkv_rope_append#7[4, 0] reads layer[1].input_norm[0..64], layer[1].qkv[64..80, 0..64], y.6[0..64] writes layer[1].k_cache[0..1, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 58 qkv_rope_append#7[5, 0] reads layer[1].input_norm[0..64], layer[1].qkv[80..96, 0..64], y.6[0..64] writes layer[1].k_cache[1..2, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 59 qkv_rope_append#7[6, 0] reads layer[1].input_norm[0..64], layer[1].qkv[96..112, 0..64], y.6[0..64] writes layer[1].v_cache[0..1, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 60 qkv_rope_append#7[7, 0] reads layer[1].input_norm[0..64], layer[1].qkv[112..128, 0..64], y.6[0..64] writes layer[1].v_cache[1..2, 0..64 at input 1 + 0..1, 0..16] bytes 2464 flops 2048
// CHECK: task 61 attention_partial#8[0, 0, 0] reads layer[1].k_cache[0..1, 0..64, 0..16], layer[1].v_cache[0..1, 0..64, 0..16], q.7[0..16] writes pm.8[0..1, 0..1], pl.8[0..1, 0..1], pacc.8[0..1, 0..16] bytes 4200 flops 1024
// CHECK: task 62 attention_partial#8[0, 0, 1] reads layer[1].k_cache[0..1, 0..64, 0..16], layer[1].v_cache[0..1, 0..64, 0..16], q.7[0..16] writes pm.8[1..2, 0..1], pl.8[1..2, 0..1], pacc.8[1..2, 0..16] bytes 4200 flops 1024
// CHECK: task 63 attention_partial#8[0, 1, 0] reads layer[1].k_cache[0..1, 0..64, 0..16], layer[1].v_cache[0..1, 0..64, 0..16], q.7[16..32] writes pm.8[0..1, 1..2], pl.8[0..1, 1..2], pacc.8[0..1, 16..32] bytes 4200 flops 1024
// CHECK: task 64 attention_partial#8[0, 1, 1] reads layer[1].k_cache[0..1, 0..64, 0..16], layer[1].v_cache[0..1, 0..64, 0..16], q.7[16..32] writes pm.8[1..2, 1..2], pl.8[1..2, 1..2], pacc.8[1..2, 16..32] bytes 4200 flops 1024
// CHECK: task 65 attention_partial#8[1, 0, 0] reads layer[1].k_cache[1..2, 0..64, 0..16], layer[1].v_cache[1..2, 0..64, 0..16], q.7[32..48] writes pm.8[0..1, 2..3], pl.8[0..1, 2..3], pacc.8[0..1, 32..48] bytes 4200 flops 1024
// CHECK: task 66 attention_partial#8[1, 0, 1] reads layer[1].k_cache[1..2, 0..64, 0..16], layer[1].v_cache[1..2, 0..64, 0..16], q.7[32..48] writes pm.8[1..2, 2..3], pl.8[1..2, 2..3], pacc.8[1..2, 32..48] bytes 4200 flops 1024
// CHECK: task 67 attention_partial#8[1, 1, 0] reads layer[1].k_cache[1..2, 0..64, 0..16], layer[1].v_cache[1..2, 0..64, 0..16], q.7[48..64] writes pm.8[0..1, 3..4], pl.8[0..1, 3..4], pacc.8[0..1, 48..64] bytes 4200 flops 1024
// CHECK: task 68 attention_partial#8[1, 1, 1] reads layer[1].k_cache[1..2, 0..64, 0..16], layer[1].v_cache[1..2, 0..64, 0..16], q.7[48..64] writes pm.8[1..2, 3..4], pl.8[1..2, 3..4], pacc.8[1..2, 48..64] bytes 4200 flops 1024
// CHECK: task 69 attention_combine#9[0] reads pm.8[0..2, 0..1], pl.8[0..2, 0..1], pacc.8[0..2, 0..16] writes o.9[0..16] bytes 176 flops 64
// CHECK: task 70 attention_combine#9[1] reads pm.8[0..2, 1..2], pl.8[0..2, 1..2], pacc.8[0..2, 16..32] writes o.9[16..32] bytes 176 flops 64
// CHECK: task 71 attention_combine#9[2] reads pm.8[0..2, 2..3], pl.8[0..2, 2..3], pacc.8[0..2, 32..48] writes o.9[32..48] bytes 176 flops 64
// CHECK: task 72 attention_combine#9[3] reads pm.8[0..2, 3..4], pl.8[0..2, 3..4], pacc.8[0..2, 48..64] writes o.9[48..64] bytes 176 flops 64
// CHECK: task 73 matvec_residual#10[0] reads layer[1].o_proj[0..8, 0..64], y.6[0..8], o.9[0..64] writes y.10[0..8] bytes 1216 flops 1024
// CHECK: task 74 matvec_residual#10[1] reads layer[1].o_proj[8..16, 0..64], y.6[8..16], o.9[0..64] writes y.10[8..16] bytes 1216 flops 1024
// CHECK: task 75 matvec_residual#10[2] reads layer[1].o_proj[16..24, 0..64], y.6[16..24], o.9[0..64] writes y.10[16..24] bytes 1216 flops 1024
// CHECK: task 76 matvec_residual#10[3] reads layer[1].o_proj[24..32, 0..64], y.6[24..32], o.9[0..64] writes y.10[24..32] bytes 1216 flops 1024
// CHECK: task 77 matvec_residual#10[4] reads layer[1].o_proj[32..40, 0..64], y.6[32..40], o.9[0..64] writes y.10[32..40] bytes 1216 flops 1024
// CHECK: task 78 matvec_residual#10[5] reads layer[1].o_proj[40..48, 0..64], y.6[40..48], o.9[0..64] writes y.10[40..48] bytes 1216 flops 1024
// CHECK: task 79 matvec_residual#10[6] reads layer[1].o_proj[48..56, 0..64], y.6[48..56], o.9[0..64] writes y.10[48..56] bytes 1216 flops 1024
// CHECK: task 80 matvec_residual#10[7] reads layer[1].o_proj[56..64, 0..64], y.6[56..64], o.9[0..64] writes y.10[56..64] bytes 1216 flops 1024
// CHECK: task 81 rmsnorm_swiglu#11[0] reads layer[1].post_norm[0..64], layer[1].gate_up[0..8, 0..64], layer[1].gate_up[128..136, 0..64], y.10[0..64] writes y.11[0..8] bytes 2448 flops 2048
// CHECK: task 82 rmsnorm_swiglu#11[1] reads layer[1].post_norm[0..64], layer[1].gate_up[8..16, 0..64], layer[1].gate_up[136..144, 0..64], y.10[0..64] writes y.11[8..16] bytes 2448 flops 2048
// CHECK: task 83 rmsnorm_swiglu#11[2] reads layer[1].post_norm[0..64], layer[1].gate_up[16..24, 0..64], layer[1].gate_up[144..152, 0..64], y.10[0..64] writes y.11[16..24] bytes 2448 flops 2048
// CHECK: task 84 rmsnorm_swiglu#11[3] reads layer[1].post_norm[0..64], layer[1].gate_up[24..32, 0..64], layer[1].gate_up[152..160, 0..64], y.10[0..64] writes y.11[24..32] bytes 2448 flops 2048
// CHECK: task 85 rmsnorm_swiglu#11[4] reads layer[1].post_norm[0..64], layer[1].gate_up[32..40, 0..64], layer[1].gate_up[160..168, 0..64], y.10[0..64] writes y.11[32..40] bytes 2448 flops 2048
// CHECK: task 86 rmsnorm_swiglu#11[5] reads layer[1].post_norm[0..64], layer[1].gate_up[40..48, 0..64], layer[1].gate_up[168..176, 0..64], y.10[0..64] writes y.11[40..48] bytes 2448 flops 2048
// CHECK: task 87 rmsnorm_swiglu#11[6] reads layer[1].post_norm[0..64], layer[1].gate_up[48..56, 0..64], layer[1].gate_up[176..184, 0..64], y.10[0..64] writes y.11[48..56] bytes 2448 flops 2048
// CHECK: task 88 rmsnorm_swiglu#11[7] reads layer[1].post_norm[0..64], layer[1].gate_up[56..64, 0..64], layer[1].gate_up[184..192, 0..64], y.10[0..64] writes y.11[56..64] bytes 2448 flops 2048
// CHECK: task 89 rmsnorm_swiglu#11[8] reads layer[1].post_norm[0..64], layer[1].gate_up[64..72, 0..64], layer[1].gate_up[192..200, 0..64], y.10[0..64] writes y.11[64..72] bytes 2448 flops 2048
// CHECK: task 90 rmsnorm_swiglu#11[9] reads layer[1].post_norm[0..64], layer[1].gate_up[72..80, 0..64], layer[1].gate_up[200..208, 0..64], y.10[0..64] writes y.11[72..80] bytes 2448 flops 2048
// CHECK: task 91 rmsnorm_swiglu#11[10] reads layer[1].post_norm[0..64], layer[1].gate_up[80..88, 0..64], layer[1].gate_up[208..216, 0..64], y.10[0..64] writes y.11[80..88] bytes 2448 flops 2048
// CHECK: task 92 rmsnorm_swiglu#11[11] reads layer[1].post_norm[0..64], layer[1].gate_up[88..96, 0..64], layer[1].gate_up[216..224, 0..64], y.10[0..64] writes y.11[88..96] bytes 2448 flops 2048
// CHECK: task 93 rmsnorm_swiglu#11[12] reads layer[1].post_norm[0..64], layer[1].gate_up[96..104, 0..64], layer[1].gate_up[224..232, 0..64], y.10[0..64] writes y.11[96..104] bytes 2448 flops 2048
// CHECK: task 94 rmsnorm_swiglu#11[13] reads layer[1].post_norm[0..64], layer[1].gate_up[104..112, 0..64], layer[1].gate_up[232..240, 0..64], y.10[0..64] writes y.11[104..112] bytes 2448 flops 2048
// CHECK: task 95 rmsnorm_swiglu#11[14] reads layer[1].post_norm[0..64], layer[1].gate_up[112..120, 0..64], layer[1].gate_up[240..248, 0..64], y.10[0..64] writes y.11[112..120] bytes 2448 flops 2048
// CHECK: task 96 rmsnorm_swiglu#11[15] reads layer[1].post_norm[0..64], layer[1].gate_up[120..128, 0..64], layer[1].gate_up[248..256, 0..64], y.10[0..64] writes y.11[120..128] bytes 2448 flops 2048
// CHECK: task 97 matvec_residual#12[0] reads layer[1].down[0..8, 0..128], y.10[0..8], y.11[0..128] writes y.12[0..8] bytes 2368 flops 2048
// CHECK: task 98 matvec_residual#12[1] reads layer[1].down[8..16, 0..128], y.10[8..16], y.11[0..128] writes y.12[8..16] bytes 2368 flops 2048
// CHECK: task 99 matvec_residual#12[2] reads layer[1].down[16..24, 0..128], y.10[16..24], y.11[0..128] writes y.12[16..24] bytes 2368 flops 2048
// CHECK: task 100 matvec_residual#12[3] reads layer[1].down[24..32, 0..128], y.10[24..32], y.11[0..128] writes y.12[24..32] bytes 2368 flops 2048
// CHECK: task 101 matvec_residual#12[4] reads layer[1].down[32..40, 0..128], y.10[32..40], y.11[0..128] writes y.12[32..40] bytes 2368 flops 2048
// CHECK: task 102 matvec_residual#12[5] reads layer[1].down[40..48, 0..128], y.10[40..48], y.11[0..128] writes y.12[40..48] bytes 2368 flops 2048
// CHECK: task 103 matvec_residual#12[6] reads layer[1].down[48..56, 0..128], y.10[48..56], y.11[0..128] writes y.12[48..56] bytes 2368 flops 2048
// CHECK: task 104 matvec_residual#12[7] reads layer[1].down[56..64, 0..128], y.10[56..64], y.11[0..128] writes y.12[56..64] bytes 2368 flops 2048
// CHECK: task 105 rmsnorm_lm_head_argmax#13[0] reads final_norm[0..64], lm_head[0..8, 0..64], y.12[0..64] writes logits.13[0..8], part_max.13[0..1], part_idx.13[0..1] bytes 1448 flops 1024
// CHECK: task 106 rmsnorm_lm_head_argmax#13[1] reads final_norm[0..64], lm_head[8..16, 0..64], y.12[0..64] writes logits.13[8..16], part_max.13[1..2], part_idx.13[1..2] bytes 1448 flops 1024
// CHECK: task 107 rmsnorm_lm_head_argmax#13[2] reads final_norm[0..64], lm_head[16..24, 0..64], y.12[0..64] writes logits.13[16..24], part_max.13[2..3], part_idx.13[2..3] bytes 1448 flops 1024
// CHECK: task 108 rmsnorm_lm_head_argmax#13[3] reads final_norm[0..64], lm_head[24..32, 0..64], y.12[0..64] writes logits.13[24..32], part_max.13[3..4], part_idx.13[3..4] bytes 1448 flops 1024
// CHECK: task 109 rmsnorm_lm_head_argmax#13[4] reads final_norm[0..64], lm_head[32..40, 0..64], y.12[0..64] writes logits.13[32..40], part_max.13[4..5], part_idx.13[4..5] bytes 1448 flops 1024
// CHECK: task 110 rmsnorm_lm_head_argmax#13[5] reads final_norm[0..64], lm_head[40..48, 0..64], y.12[0..64] writes logits.13[40..48], part_max.13[5..6], part_idx.13[5..6] bytes 1448 flops 1024
// CHECK: task 111 rmsnorm_lm_head_argmax#13[6] reads final_norm[0..64], lm_head[48..56, 0..64], y.12[0..64] writes logits.13[48..56], part_max.13[6..7], part_idx.13[6..7] bytes 1448 flops 1024
// CHECK: task 112 rmsnorm_lm_head_argmax#13[7] reads final_norm[0..64], lm_head[56..64, 0..64], y.12[0..64] writes logits.13[56..64], part_max.13[7..8], part_idx.13[7..8] bytes 1448 flops 1024
// CHECK: task 113 rmsnorm_lm_head_argmax#13[8] reads final_norm[0..64], lm_head[64..72, 0..64], y.12[0..64] writes logits.13[64..72], part_max.13[8..9], part_idx.13[8..9] bytes 1448 flops 1024
// CHECK: task 114 rmsnorm_lm_head_argmax#13[9] reads final_norm[0..64], lm_head[72..80, 0..64], y.12[0..64] writes logits.13[72..80], part_max.13[9..10], part_idx.13[9..10] bytes 1448 flops 1024
// CHECK: task 115 rmsnorm_lm_head_argmax#13[10] reads final_norm[0..64], lm_head[80..88, 0..64], y.12[0..64] writes logits.13[80..88], part_max.13[10..11], part_idx.13[10..11] bytes 1448 flops 1024
// CHECK: task 116 rmsnorm_lm_head_argmax#13[11] reads final_norm[0..64], lm_head[88..96, 0..64], y.12[0..64] writes logits.13[88..96], part_max.13[11..12], part_idx.13[11..12] bytes 1448 flops 1024
// CHECK: task 117 rmsnorm_lm_head_argmax#13[12] reads final_norm[0..64], lm_head[96..104, 0..64], y.12[0..64] writes logits.13[96..104], part_max.13[12..13], part_idx.13[12..13] bytes 1448 flops 1024
// CHECK: task 118 rmsnorm_lm_head_argmax#13[13] reads final_norm[0..64], lm_head[104..112, 0..64], y.12[0..64] writes logits.13[104..112], part_max.13[13..14], part_idx.13[13..14] bytes 1448 flops 1024
// CHECK: task 119 rmsnorm_lm_head_argmax#13[14] reads final_norm[0..64], lm_head[112..120, 0..64], y.12[0..64] writes logits.13[112..120], part_max.13[14..15], part_idx.13[14..15] bytes 1448 flops 1024
// CHECK: task 120 rmsnorm_lm_head_argmax#13[15] reads final_norm[0..64], lm_head[120..128, 0..64], y.12[0..64] writes logits.13[120..128], part_max.13[15..16], part_idx.13[15..16] bytes 1448 flops 1024
// CHECK: task 121 rmsnorm_lm_head_argmax#13[16] reads final_norm[0..64], lm_head[128..136, 0..64], y.12[0..64] writes logits.13[128..136], part_max.13[16..17], part_idx.13[16..17] bytes 1448 flops 1024
// CHECK: task 122 rmsnorm_lm_head_argmax#13[17] reads final_norm[0..64], lm_head[136..144, 0..64], y.12[0..64] writes logits.13[136..144], part_max.13[17..18], part_idx.13[17..18] bytes 1448 flops 1024
// CHECK: task 123 rmsnorm_lm_head_argmax#13[18] reads final_norm[0..64], lm_head[144..152, 0..64], y.12[0..64] writes logits.13[144..152], part_max.13[18..19], part_idx.13[18..19] bytes 1448 flops 1024
// CHECK: task 124 rmsnorm_lm_head_argmax#13[19] reads final_norm[0..64], lm_head[152..160, 0..64], y.12[0..64] writes logits.13[152..160], part_max.13[19..20], part_idx.13[19..20] bytes 1448 flops 1024
// CHECK: task 125 rmsnorm_lm_head_argmax#13[20] reads final_norm[0..64], lm_head[160..168, 0..64], y.12[0..64] writes logits.13[160..168], part_max.13[20..21], part_idx.13[20..21] bytes 1448 flops 1024
// CHECK: task 126 rmsnorm_lm_head_argmax#13[21] reads final_norm[0..64], lm_head[168..176, 0..64], y.12[0..64] writes logits.13[168..176], part_max.13[21..22], part_idx.13[21..22] bytes 1448 flops 1024
// CHECK: task 127 rmsnorm_lm_head_argmax#13[22] reads final_norm[0..64], lm_head[176..184, 0..64], y.12[0..64] writes logits.13[176..184], part_max.13[22..23], part_idx.13[22..23] bytes 1448 flops 1024
// CHECK: task 128 rmsnorm_lm_head_argmax#13[23] reads final_norm[0..64], lm_head[184..192, 0..64], y.12[0..64] writes logits.13[184..192], part_max.13[23..24], part_idx.13[23..24] bytes 1448 flops 1024
// CHECK: task 129 rmsnorm_lm_head_argmax#13[24] reads final_norm[0..64], lm_head[192..200, 0..64], y.12[0..64] writes logits.13[192..200], part_max.13[24..25], part_idx.13[24..25] bytes 1448 flops 1024
// CHECK: task 130 rmsnorm_lm_head_argmax#13[25] reads final_norm[0..64], lm_head[200..208, 0..64], y.12[0..64] writes logits.13[200..208], part_max.13[25..26], part_idx.13[25..26] bytes 1448 flops 1024
// CHECK: task 131 rmsnorm_lm_head_argmax#13[26] reads final_norm[0..64], lm_head[208..216, 0..64], y.12[0..64] writes logits.13[208..216], part_max.13[26..27], part_idx.13[26..27] bytes 1448 flops 1024
// CHECK: task 132 rmsnorm_lm_head_argmax#13[27] reads final_norm[0..64], lm_head[216..224, 0..64], y.12[0..64] writes logits.13[216..224], part_max.13[27..28], part_idx.13[27..28] bytes 1448 flops 1024
// CHECK: task 133 rmsnorm_lm_head_argmax#13[28] reads final_norm[0..64], lm_head[224..232, 0..64], y.12[0..64] writes logits.13[224..232], part_max.13[28..29], part_idx.13[28..29] bytes 1448 flops 1024
// CHECK: task 134 rmsnorm_lm_head_argmax#13[29] reads final_norm[0..64], lm_head[232..240, 0..64], y.12[0..64] writes logits.13[232..240], part_max.13[29..30], part_idx.13[29..30] bytes 1448 flops 1024
// CHECK: task 135 rmsnorm_lm_head_argmax#13[30] reads final_norm[0..64], lm_head[240..248, 0..64], y.12[0..64] writes logits.13[240..248], part_max.13[30..31], part_idx.13[30..31] bytes 1448 flops 1024
// CHECK: task 136 rmsnorm_lm_head_argmax#13[31] reads final_norm[0..64], lm_head[248..256, 0..64], y.12[0..64] writes logits.13[248..256], part_max.13[31..32], part_idx.13[31..32] bytes 1448 flops 1024
// CHECK: task 137 argmax_final#14[0] reads part_max.13[0..32], part_idx.13[0..32] writes next.14[] bytes 136 flops 0
