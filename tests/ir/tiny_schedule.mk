// RUN: build --emit=schedule --sms 4 %root/examples/llama_tiny.mk

// CHECK:EXIT: 0
// CHECK: // mkdsl schedule: 138 tasks, 26 counters, 4 queues
// CHECK: program "<root>/examples/llama_tiny.mk"
// CHECK: config tiny
// CHECK: target h200 arch sm_90a sms 4 smem 232448 warp 32 threads 512 bandwidth 4.8e+12
// CHECK:
// CHECK: tensors
// CHECK:   t0 embed_tokens weight bf16[256, 64] row_major sources "model.embed_tokens.weight"
// CHECK:   t1 "layer[0].input_norm" weight bf16[64] row_major sources "model.layers.0.input_layernorm.weight"
// CHECK:   t2 "layer[0].qkv" weight bf16[128, 64] tiled(8, 64) sources "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight"
// CHECK:   t3 "layer[0].k_cache" state bf16[2, 64, 16] row_major
// CHECK:   t4 "layer[0].v_cache" state bf16[2, 64, 16] row_major
// CHECK:   t5 "layer[0].o_proj" weight bf16[64, 64] tiled(8, 64) sources "model.layers.0.self_attn.o_proj.weight"
// CHECK:   t6 "layer[0].post_norm" weight bf16[64] row_major sources "model.layers.0.post_attention_layernorm.weight"
// CHECK:   t7 "layer[0].gate_up" weight bf16[256, 64] tiled(8, 64) sources "model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight"
// CHECK:   t8 "layer[0].down" weight bf16[64, 128] tiled(8, 64) sources "model.layers.0.mlp.down_proj.weight"
// CHECK:   t9 "layer[1].input_norm" weight bf16[64] row_major sources "model.layers.1.input_layernorm.weight"
// CHECK:   t10 "layer[1].qkv" weight bf16[128, 64] tiled(8, 64) sources "model.layers.1.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight", "model.layers.1.self_attn.v_proj.weight"
// CHECK:   t11 "layer[1].k_cache" state bf16[2, 64, 16] row_major
// CHECK:   t12 "layer[1].v_cache" state bf16[2, 64, 16] row_major
// CHECK:   t13 "layer[1].o_proj" weight bf16[64, 64] tiled(8, 64) sources "model.layers.1.self_attn.o_proj.weight"
// CHECK:   t14 "layer[1].post_norm" weight bf16[64] row_major sources "model.layers.1.post_attention_layernorm.weight"
// CHECK:   t15 "layer[1].gate_up" weight bf16[256, 64] tiled(8, 64) sources "model.layers.1.mlp.gate_proj.weight", "model.layers.1.mlp.up_proj.weight"
// CHECK:   t16 "layer[1].down" weight bf16[64, 128] tiled(8, 64) sources "model.layers.1.mlp.down_proj.weight"
// CHECK:   t17 final_norm weight bf16[64] row_major sources "model.norm.weight"
// CHECK:   t18 lm_head weight bf16[256, 64] tiled(8, 64) sources "lm_head.weight"
// CHECK:   t19 "y.0" activation f32[64] row_major
// CHECK:   t20 "q.1" activation bf16[64] row_major
// CHECK:   t21 "pm.2" activation f32[2, 4] row_major
// CHECK:   t22 "pl.2" activation f32[2, 4] row_major
// CHECK:   t23 "pacc.2" activation f32[2, 64] row_major
// CHECK:   t24 "o.3" activation bf16[64] row_major
// CHECK:   t25 "y.4" activation f32[64] row_major
// CHECK:   t26 "y.5" activation bf16[128] row_major
// CHECK:   t27 "y.6" activation f32[64] row_major
// CHECK:   t28 "q.7" activation bf16[64] row_major
// CHECK:   t29 "pm.8" activation f32[2, 4] row_major
// CHECK:   t30 "pl.8" activation f32[2, 4] row_major
// CHECK:   t31 "pacc.8" activation f32[2, 64] row_major
// CHECK:   t32 "o.9" activation bf16[64] row_major
// CHECK:   t33 "y.10" activation f32[64] row_major
// CHECK:   t34 "y.11" activation bf16[128] row_major
// CHECK:   t35 "y.12" activation f32[64] row_major
// CHECK:   t36 "logits.13" activation f32[256] row_major
// CHECK:   t37 "part_max.13" activation f32[32] row_major
// CHECK:   t38 "part_idx.13" activation i32[32] row_major
// CHECK:   t39 "next.14" activation i32[] row_major
// CHECK: inputs
// CHECK:   token i32
// CHECK:   pos i32
// CHECK: outputs
// CHECK:   logits t36
// CHECK:   next t39
// CHECK:
// CHECK: funcs
// CHECK:   f0 "embed<C=64, D=64, V=256>" op embed grid [1] as (t) params (table: tensor bf16[256, 64], token: scalar i32[], y: result f32[64])
// CHECK:   f1 "qkv_rope_append<C=64, Dh=16, K=64, KVH=2, N=128, R=8, S=64, eps=1e-05, rope_factor=1, rope_high=4, rope_low=1, rope_orig=8192, theta=500000>" op qkv_rope_append grid [8, 1] as (h, j) params (w: tensor bf16[128, 64], norm: tensor bf16[64], x: tensor f32[64], pos: scalar i32[], k_cache: inout bf16[2, 64, 16], v_cache: inout bf16[2, 64, 16], q: result bf16[64])
// CHECK:   f2 "attention_partial<C=16, Dh=16, KVH=2, NS=2, QD=64, S=64>" op attention_partial grid [2, 2, 2] as (g, i, s) params (q: tensor bf16[64], k_cache: tensor bf16[2, 64, 16], v_cache: tensor bf16[2, 64, 16], pos: scalar i32[], pm: result f32[2, 4], pl: result f32[2, 4], pacc: result f32[2, 64])
// CHECK:   f3 "attention_combine<H=4, NS=2, QD=64>" op attention_combine grid [4] as (h) params (pm: tensor f32[2, 4], pl: tensor f32[2, 4], pacc: tensor f32[2, 64], o: result bf16[64])
// CHECK:   f4 "matvec_residual<C=64, K=64, N=64, R=8>" op matvec_residual grid [8] as (t) params (w: tensor bf16[64, 64], x: tensor bf16[64], residual: tensor f32[64], y: result f32[64])
// CHECK:   f5 "rmsnorm_swiglu<C=64, K=64, N2=256, R=8, eps=1e-05>" op rmsnorm_swiglu grid [16] as (t) params (w: tensor bf16[256, 64], norm: tensor bf16[64], x: tensor f32[64], y: result bf16[128])
// CHECK:   f6 "matvec_residual<C=64, K=128, N=64, R=8>" op matvec_residual grid [8] as (t) params (w: tensor bf16[64, 128], x: tensor bf16[128], residual: tensor f32[64], y: result f32[64])
// CHECK:   f7 "rmsnorm_lm_head_argmax<C=64, K=64, R=8, V=256, eps=1e-05>" op rmsnorm_lm_head_argmax grid [32] as (t) params (w: tensor bf16[256, 64], norm: tensor bf16[64], x: tensor f32[64], logits: result f32[256], part_max: result f32[32], part_idx: result i32[32])
// CHECK:   f8 "argmax_final<P=32>" op argmax_final grid [1] as (t) params (part_max: tensor f32[32], part_idx: tensor i32[32], next: result i32[])
// CHECK: nodes
// CHECK:   n0 = f0 embed(t0, input 0, t19)  // 1 tasks
// CHECK:   n1 = f1 qkv_rope_append(t2, t1, t19, input 1, t3, t4, t20)  // 8 tasks
// CHECK:   n2 = f2 attention_partial(t20, t3, t4, input 1, t21, t22, t23)  // 8 tasks
// CHECK:   n3 = f3 attention_combine(t21, t22, t23, t24)  // 4 tasks
// CHECK:   n4 = f4 matvec_residual(t5, t24, t19, t25)  // 8 tasks
// CHECK:   n5 = f5 rmsnorm_swiglu(t7, t6, t25, t26)  // 16 tasks
// CHECK:   n6 = f6 matvec_residual(t8, t26, t25, t27)  // 8 tasks
// CHECK:   n7 = f1 qkv_rope_append(t10, t9, t27, input 1, t11, t12, t28)  // 8 tasks
// CHECK:   n8 = f2 attention_partial(t28, t11, t12, input 1, t29, t30, t31)  // 8 tasks
// CHECK:   n9 = f3 attention_combine(t29, t30, t31, t32)  // 4 tasks
// CHECK:   n10 = f4 matvec_residual(t13, t32, t27, t33)  // 8 tasks
// CHECK:   n11 = f5 rmsnorm_swiglu(t15, t14, t33, t34)  // 16 tasks
// CHECK:   n12 = f6 matvec_residual(t16, t34, t33, t35)  // 8 tasks
// CHECK:   n13 = f7 rmsnorm_lm_head_argmax(t18, t17, t35, t36, t37, t38)  // 32 tasks
// CHECK:   n14 = f8 argmax_final(t37, t38, t39)  // 1 tasks
// CHECK:
// CHECK: memory weights 214272 state 16384 activations 6656 smem_per_task 2048
// CHECK:   weight t0 at 0 size 32768
// CHECK:   weight t1 at 32768 size 128
// CHECK:   weight t2 at 33024 size 16384
// CHECK:   weight t5 at 49408 size 8192
// CHECK:   weight t6 at 57600 size 128
// CHECK:   weight t7 at 57856 size 32768
// CHECK:   weight t8 at 90624 size 16384
// CHECK:   weight t9 at 107008 size 128
// CHECK:   weight t10 at 107264 size 16384
// CHECK:   weight t13 at 123648 size 8192
// CHECK:   weight t14 at 131840 size 128
// CHECK:   weight t15 at 132096 size 32768
// CHECK:   weight t16 at 164864 size 16384
// CHECK:   weight t17 at 181248 size 128
// CHECK:   weight t18 at 181504 size 32768
// CHECK:   state t3 at 0 size 4096
// CHECK:   state t4 at 4096 size 4096
// CHECK:   state t11 at 8192 size 4096
// CHECK:   state t12 at 12288 size 4096
// CHECK:   activation t19 at 0 size 256
// CHECK:   activation t20 at 256 size 128
// CHECK:   activation t21 at 512 size 32
// CHECK:   activation t22 at 768 size 32
// CHECK:   activation t23 at 1024 size 512
// CHECK:   activation t24 at 1536 size 128
// CHECK:   activation t25 at 1792 size 256
// CHECK:   activation t26 at 2048 size 256
// CHECK:   activation t27 at 2304 size 256
// CHECK:   activation t28 at 2560 size 128
// CHECK:   activation t29 at 2816 size 32
// CHECK:   activation t30 at 3072 size 32
// CHECK:   activation t31 at 3328 size 512
// CHECK:   activation t32 at 3840 size 128
// CHECK:   activation t33 at 4096 size 256
// CHECK:   activation t34 at 4352 size 256
// CHECK:   activation t35 at 4608 size 256
// CHECK:   activation t36 at 4864 size 1024
// CHECK:   activation t37 at 5888 size 128
// CHECK:   activation t38 at 6144 size 128
// CHECK:   activation t39 at 6400 size 4
// CHECK:
// CHECK: counters
// CHECK:   c0 expects 1 from tasks 0 why "embed#0 task 0 -> y.0[0..64)"
// CHECK:   c1 expects 3 from tasks 1, 5, 7 why "qkv_rope_append#1 tasks 0, 4, 6 -> layer[0].k_cache[0..1, 0..64, 0..16), layer[0].v_cache[0..1, 0..64, 0..16), q.1[0..16)"
// CHECK:   c2 expects 3 from tasks 2, 5, 7 why "qkv_rope_append#1 tasks 1, 4, 6 -> layer[0].k_cache[0..1, 0..64, 0..16), layer[0].v_cache[0..1, 0..64, 0..16), q.1[16..32)"
// CHECK:   c3 expects 3 from tasks 3, 6, 8 why "qkv_rope_append#1 tasks 2, 5, 7 -> layer[0].k_cache[1..2, 0..64, 0..16), layer[0].v_cache[1..2, 0..64, 0..16), q.1[32..48)"
// CHECK:   c4 expects 3 from tasks 4, 6, 8 why "qkv_rope_append#1 tasks 3, 5, 7 -> layer[0].k_cache[1..2, 0..64, 0..16), layer[0].v_cache[1..2, 0..64, 0..16), q.1[48..64)"
// CHECK:   c5 expects 2 from tasks 9-10 why "attention_partial#2 tasks 0..1 -> pm.2[0..2, 0..1), pl.2[0..2, 0..1), pacc.2[0..2, 0..16)"
// CHECK:   c6 expects 2 from tasks 11-12 why "attention_partial#2 tasks 2..3 -> pm.2[0..2, 1..2), pl.2[0..2, 1..2), pacc.2[0..2, 16..32)"
// CHECK:   c7 expects 2 from tasks 13-14 why "attention_partial#2 tasks 4..5 -> pm.2[0..2, 2..3), pl.2[0..2, 2..3), pacc.2[0..2, 32..48)"
// CHECK:   c8 expects 2 from tasks 15-16 why "attention_partial#2 tasks 6..7 -> pm.2[0..2, 3..4), pl.2[0..2, 3..4), pacc.2[0..2, 48..64)"
// CHECK:   c9 expects 4 from tasks 17-20 why "attention_combine#3 tasks 0..3 -> o.3[0..64)"
// CHECK:   c10 expects 8 from tasks 21-28 why "matvec_residual#4 tasks 0..7 -> y.4[0..64)"
// CHECK:   c11 expects 16 from tasks 29-44 why "rmsnorm_swiglu#5 tasks 0..15 -> y.5[0..128)"
// CHECK:   c12 expects 8 from tasks 45-52 why "matvec_residual#6 tasks 0..7 -> y.6[0..64)"
// CHECK:   c13 expects 3 from tasks 53, 57, 59 why "qkv_rope_append#7 tasks 0, 4, 6 -> layer[1].k_cache[0..1, 0..64, 0..16), layer[1].v_cache[0..1, 0..64, 0..16), q.7[0..16)"
// CHECK:   c14 expects 3 from tasks 54, 57, 59 why "qkv_rope_append#7 tasks 1, 4, 6 -> layer[1].k_cache[0..1, 0..64, 0..16), layer[1].v_cache[0..1, 0..64, 0..16), q.7[16..32)"
// CHECK:   c15 expects 3 from tasks 55, 58, 60 why "qkv_rope_append#7 tasks 2, 5, 7 -> layer[1].k_cache[1..2, 0..64, 0..16), layer[1].v_cache[1..2, 0..64, 0..16), q.7[32..48)"
// CHECK:   c16 expects 3 from tasks 56, 58, 60 why "qkv_rope_append#7 tasks 3, 5, 7 -> layer[1].k_cache[1..2, 0..64, 0..16), layer[1].v_cache[1..2, 0..64, 0..16), q.7[48..64)"
// CHECK:   c17 expects 2 from tasks 61-62 why "attention_partial#8 tasks 0..1 -> pm.8[0..2, 0..1), pl.8[0..2, 0..1), pacc.8[0..2, 0..16)"
// CHECK:   c18 expects 2 from tasks 63-64 why "attention_partial#8 tasks 2..3 -> pm.8[0..2, 1..2), pl.8[0..2, 1..2), pacc.8[0..2, 16..32)"
// CHECK:   c19 expects 2 from tasks 65-66 why "attention_partial#8 tasks 4..5 -> pm.8[0..2, 2..3), pl.8[0..2, 2..3), pacc.8[0..2, 32..48)"
// CHECK:   c20 expects 2 from tasks 67-68 why "attention_partial#8 tasks 6..7 -> pm.8[0..2, 3..4), pl.8[0..2, 3..4), pacc.8[0..2, 48..64)"
// CHECK:   c21 expects 4 from tasks 69-72 why "attention_combine#9 tasks 0..3 -> o.9[0..64)"
// CHECK:   c22 expects 8 from tasks 73-80 why "matvec_residual#10 tasks 0..7 -> y.10[0..64)"
// CHECK:   c23 expects 16 from tasks 81-96 why "rmsnorm_swiglu#11 tasks 0..15 -> y.11[0..128)"
// CHECK:   c24 expects 8 from tasks 97-104 why "matvec_residual#12 tasks 0..7 -> y.12[0..64)"
// CHECK:   c25 expects 32 from tasks 105-136 why "rmsnorm_lm_head_argmax#13 tasks 0..31 -> part_max.13[0..32), part_idx.13[0..32)"
// CHECK:
// CHECK: queues
// CHECK:   sm 0:  // 35 tasks, 72896 bytes
// CHECK:     task 0 embed#0[0] signal c0 bytes 384 flops 0 reads t0[0..256 at input 0 + 0..1, 0..64] writes t19[0..64]
// CHECK:     task 4 qkv_rope_append#1[3, 0] signal c4 bytes 2464 flops 2048 reads t1[0..64], t2[48..64, 0..64], t19[0..64] writes t20[48..64]
// CHECK:     task 8 qkv_rope_append#1[7, 0] signal c3,c4 bytes 2464 flops 2048 reads t1[0..64], t2[112..128, 0..64], t19[0..64] writes t4[1..2, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 12 attention_partial#2[0, 1, 1] wait c2 signal c6 bytes 4200 flops 1024 reads t3[0..1, 0..64, 0..16], t4[0..1, 0..64, 0..16], t20[16..32] writes t21[1..2, 1..2], t22[1..2, 1..2], t23[1..2, 16..32]
// CHECK:     task 16 attention_partial#2[1, 1, 1] wait c4 signal c8 bytes 4200 flops 1024 reads t3[1..2, 0..64, 0..16], t4[1..2, 0..64, 0..16], t20[48..64] writes t21[1..2, 3..4], t22[1..2, 3..4], t23[1..2, 48..64]
// CHECK:     task 20 attention_combine#3[3] wait c8 signal c9 bytes 176 flops 64 reads t21[0..2, 3..4], t22[0..2, 3..4], t23[0..2, 48..64] writes t24[48..64]
// CHECK:     task 24 matvec_residual#4[3] wait c9 signal c10 bytes 1216 flops 1024 reads t5[24..32, 0..64], t19[24..32], t24[0..64] writes t25[24..32]
// CHECK:     task 28 matvec_residual#4[7] signal c10 bytes 1216 flops 1024 reads t5[56..64, 0..64], t19[56..64], t24[0..64] writes t25[56..64]
// CHECK:     task 32 rmsnorm_swiglu#5[3] wait c10 signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[24..32, 0..64], t7[152..160, 0..64], t25[0..64] writes t26[24..32]
// CHECK:     task 36 rmsnorm_swiglu#5[7] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[56..64, 0..64], t7[184..192, 0..64], t25[0..64] writes t26[56..64]
// CHECK:     task 40 rmsnorm_swiglu#5[11] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[88..96, 0..64], t7[216..224, 0..64], t25[0..64] writes t26[88..96]
// CHECK:     task 44 rmsnorm_swiglu#5[15] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[120..128, 0..64], t7[248..256, 0..64], t25[0..64] writes t26[120..128]
// CHECK:     task 48 matvec_residual#6[3] wait c11 signal c12 bytes 2368 flops 2048 reads t8[24..32, 0..128], t25[24..32], t26[0..128] writes t27[24..32]
// CHECK:     task 52 matvec_residual#6[7] signal c12 bytes 2368 flops 2048 reads t8[56..64, 0..128], t25[56..64], t26[0..128] writes t27[56..64]
// CHECK:     task 56 qkv_rope_append#7[3, 0] wait c12 signal c16 bytes 2464 flops 2048 reads t9[0..64], t10[48..64, 0..64], t27[0..64] writes t28[48..64]
// CHECK:     task 60 qkv_rope_append#7[7, 0] signal c15,c16 bytes 2464 flops 2048 reads t9[0..64], t10[112..128, 0..64], t27[0..64] writes t12[1..2, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 64 attention_partial#8[0, 1, 1] wait c14 signal c18 bytes 4200 flops 1024 reads t11[0..1, 0..64, 0..16], t12[0..1, 0..64, 0..16], t28[16..32] writes t29[1..2, 1..2], t30[1..2, 1..2], t31[1..2, 16..32]
// CHECK:     task 68 attention_partial#8[1, 1, 1] wait c16 signal c20 bytes 4200 flops 1024 reads t11[1..2, 0..64, 0..16], t12[1..2, 0..64, 0..16], t28[48..64] writes t29[1..2, 3..4], t30[1..2, 3..4], t31[1..2, 48..64]
// CHECK:     task 72 attention_combine#9[3] wait c20 signal c21 bytes 176 flops 64 reads t29[0..2, 3..4], t30[0..2, 3..4], t31[0..2, 48..64] writes t32[48..64]
// CHECK:     task 76 matvec_residual#10[3] wait c21 signal c22 bytes 1216 flops 1024 reads t13[24..32, 0..64], t27[24..32], t32[0..64] writes t33[24..32]
// CHECK:     task 80 matvec_residual#10[7] signal c22 bytes 1216 flops 1024 reads t13[56..64, 0..64], t27[56..64], t32[0..64] writes t33[56..64]
// CHECK:     task 84 rmsnorm_swiglu#11[3] wait c22 signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[24..32, 0..64], t15[152..160, 0..64], t33[0..64] writes t34[24..32]
// CHECK:     task 88 rmsnorm_swiglu#11[7] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[56..64, 0..64], t15[184..192, 0..64], t33[0..64] writes t34[56..64]
// CHECK:     task 92 rmsnorm_swiglu#11[11] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[88..96, 0..64], t15[216..224, 0..64], t33[0..64] writes t34[88..96]
// CHECK:     task 96 rmsnorm_swiglu#11[15] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[120..128, 0..64], t15[248..256, 0..64], t33[0..64] writes t34[120..128]
// CHECK:     task 100 matvec_residual#12[3] wait c23 signal c24 bytes 2368 flops 2048 reads t16[24..32, 0..128], t33[24..32], t34[0..128] writes t35[24..32]
// CHECK:     task 104 matvec_residual#12[7] signal c24 bytes 2368 flops 2048 reads t16[56..64, 0..128], t33[56..64], t34[0..128] writes t35[56..64]
// CHECK:     task 108 rmsnorm_lm_head_argmax#13[3] wait c24 signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[24..32, 0..64], t35[0..64] writes t36[24..32], t37[3..4], t38[3..4]
// CHECK:     task 112 rmsnorm_lm_head_argmax#13[7] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[56..64, 0..64], t35[0..64] writes t36[56..64], t37[7..8], t38[7..8]
// CHECK:     task 116 rmsnorm_lm_head_argmax#13[11] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[88..96, 0..64], t35[0..64] writes t36[88..96], t37[11..12], t38[11..12]
// CHECK:     task 120 rmsnorm_lm_head_argmax#13[15] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[120..128, 0..64], t35[0..64] writes t36[120..128], t37[15..16], t38[15..16]
// CHECK:     task 124 rmsnorm_lm_head_argmax#13[19] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[152..160, 0..64], t35[0..64] writes t36[152..160], t37[19..20], t38[19..20]
// CHECK:     task 128 rmsnorm_lm_head_argmax#13[23] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[184..192, 0..64], t35[0..64] writes t36[184..192], t37[23..24], t38[23..24]
// CHECK:     task 132 rmsnorm_lm_head_argmax#13[27] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[216..224, 0..64], t35[0..64] writes t36[216..224], t37[27..28], t38[27..28]
// CHECK:     task 136 rmsnorm_lm_head_argmax#13[31] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[248..256, 0..64], t35[0..64] writes t36[248..256], t37[31..32], t38[31..32]
// CHECK:   sm 1:  // 35 tasks, 72648 bytes
// CHECK:     task 1 qkv_rope_append#1[0, 0] wait c0 signal c1 bytes 2464 flops 2048 reads t1[0..64], t2[0..16, 0..64], t19[0..64] writes t20[0..16]
// CHECK:     task 5 qkv_rope_append#1[4, 0] signal c1,c2 bytes 2464 flops 2048 reads t1[0..64], t2[64..80, 0..64], t19[0..64] writes t3[0..1, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 9 attention_partial#2[0, 0, 0] wait c1 signal c5 bytes 4200 flops 1024 reads t3[0..1, 0..64, 0..16], t4[0..1, 0..64, 0..16], t20[0..16] writes t21[0..1, 0..1], t22[0..1, 0..1], t23[0..1, 0..16]
// CHECK:     task 13 attention_partial#2[1, 0, 0] wait c3 signal c7 bytes 4200 flops 1024 reads t3[1..2, 0..64, 0..16], t4[1..2, 0..64, 0..16], t20[32..48] writes t21[0..1, 2..3], t22[0..1, 2..3], t23[0..1, 32..48]
// CHECK:     task 17 attention_combine#3[0] wait c5 signal c9 bytes 176 flops 64 reads t21[0..2, 0..1], t22[0..2, 0..1], t23[0..2, 0..16] writes t24[0..16]
// CHECK:     task 21 matvec_residual#4[0] wait c9 signal c10 bytes 1216 flops 1024 reads t5[0..8, 0..64], t19[0..8], t24[0..64] writes t25[0..8]
// CHECK:     task 25 matvec_residual#4[4] signal c10 bytes 1216 flops 1024 reads t5[32..40, 0..64], t19[32..40], t24[0..64] writes t25[32..40]
// CHECK:     task 29 rmsnorm_swiglu#5[0] wait c10 signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[0..8, 0..64], t7[128..136, 0..64], t25[0..64] writes t26[0..8]
// CHECK:     task 33 rmsnorm_swiglu#5[4] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[32..40, 0..64], t7[160..168, 0..64], t25[0..64] writes t26[32..40]
// CHECK:     task 37 rmsnorm_swiglu#5[8] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[64..72, 0..64], t7[192..200, 0..64], t25[0..64] writes t26[64..72]
// CHECK:     task 41 rmsnorm_swiglu#5[12] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[96..104, 0..64], t7[224..232, 0..64], t25[0..64] writes t26[96..104]
// CHECK:     task 45 matvec_residual#6[0] wait c11 signal c12 bytes 2368 flops 2048 reads t8[0..8, 0..128], t25[0..8], t26[0..128] writes t27[0..8]
// CHECK:     task 49 matvec_residual#6[4] signal c12 bytes 2368 flops 2048 reads t8[32..40, 0..128], t25[32..40], t26[0..128] writes t27[32..40]
// CHECK:     task 53 qkv_rope_append#7[0, 0] wait c12 signal c13 bytes 2464 flops 2048 reads t9[0..64], t10[0..16, 0..64], t27[0..64] writes t28[0..16]
// CHECK:     task 57 qkv_rope_append#7[4, 0] signal c13,c14 bytes 2464 flops 2048 reads t9[0..64], t10[64..80, 0..64], t27[0..64] writes t11[0..1, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 61 attention_partial#8[0, 0, 0] wait c13 signal c17 bytes 4200 flops 1024 reads t11[0..1, 0..64, 0..16], t12[0..1, 0..64, 0..16], t28[0..16] writes t29[0..1, 0..1], t30[0..1, 0..1], t31[0..1, 0..16]
// CHECK:     task 65 attention_partial#8[1, 0, 0] wait c15 signal c19 bytes 4200 flops 1024 reads t11[1..2, 0..64, 0..16], t12[1..2, 0..64, 0..16], t28[32..48] writes t29[0..1, 2..3], t30[0..1, 2..3], t31[0..1, 32..48]
// CHECK:     task 69 attention_combine#9[0] wait c17 signal c21 bytes 176 flops 64 reads t29[0..2, 0..1], t30[0..2, 0..1], t31[0..2, 0..16] writes t32[0..16]
// CHECK:     task 73 matvec_residual#10[0] wait c21 signal c22 bytes 1216 flops 1024 reads t13[0..8, 0..64], t27[0..8], t32[0..64] writes t33[0..8]
// CHECK:     task 77 matvec_residual#10[4] signal c22 bytes 1216 flops 1024 reads t13[32..40, 0..64], t27[32..40], t32[0..64] writes t33[32..40]
// CHECK:     task 81 rmsnorm_swiglu#11[0] wait c22 signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[0..8, 0..64], t15[128..136, 0..64], t33[0..64] writes t34[0..8]
// CHECK:     task 85 rmsnorm_swiglu#11[4] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[32..40, 0..64], t15[160..168, 0..64], t33[0..64] writes t34[32..40]
// CHECK:     task 89 rmsnorm_swiglu#11[8] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[64..72, 0..64], t15[192..200, 0..64], t33[0..64] writes t34[64..72]
// CHECK:     task 93 rmsnorm_swiglu#11[12] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[96..104, 0..64], t15[224..232, 0..64], t33[0..64] writes t34[96..104]
// CHECK:     task 97 matvec_residual#12[0] wait c23 signal c24 bytes 2368 flops 2048 reads t16[0..8, 0..128], t33[0..8], t34[0..128] writes t35[0..8]
// CHECK:     task 101 matvec_residual#12[4] signal c24 bytes 2368 flops 2048 reads t16[32..40, 0..128], t33[32..40], t34[0..128] writes t35[32..40]
// CHECK:     task 105 rmsnorm_lm_head_argmax#13[0] wait c24 signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[0..8, 0..64], t35[0..64] writes t36[0..8], t37[0..1], t38[0..1]
// CHECK:     task 109 rmsnorm_lm_head_argmax#13[4] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[32..40, 0..64], t35[0..64] writes t36[32..40], t37[4..5], t38[4..5]
// CHECK:     task 113 rmsnorm_lm_head_argmax#13[8] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[64..72, 0..64], t35[0..64] writes t36[64..72], t37[8..9], t38[8..9]
// CHECK:     task 117 rmsnorm_lm_head_argmax#13[12] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[96..104, 0..64], t35[0..64] writes t36[96..104], t37[12..13], t38[12..13]
// CHECK:     task 121 rmsnorm_lm_head_argmax#13[16] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[128..136, 0..64], t35[0..64] writes t36[128..136], t37[16..17], t38[16..17]
// CHECK:     task 125 rmsnorm_lm_head_argmax#13[20] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[160..168, 0..64], t35[0..64] writes t36[160..168], t37[20..21], t38[20..21]
// CHECK:     task 129 rmsnorm_lm_head_argmax#13[24] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[192..200, 0..64], t35[0..64] writes t36[192..200], t37[24..25], t38[24..25]
// CHECK:     task 133 rmsnorm_lm_head_argmax#13[28] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[224..232, 0..64], t35[0..64] writes t36[224..232], t37[28..29], t38[28..29]
// CHECK:     task 137 argmax_final#14[0] wait c25 bytes 136 flops 0 reads t37[0..32], t38[0..32] writes t39[]
// CHECK:   sm 2:  // 34 tasks, 72512 bytes
// CHECK:     task 2 qkv_rope_append#1[1, 0] wait c0 signal c2 bytes 2464 flops 2048 reads t1[0..64], t2[16..32, 0..64], t19[0..64] writes t20[16..32]
// CHECK:     task 6 qkv_rope_append#1[5, 0] signal c3,c4 bytes 2464 flops 2048 reads t1[0..64], t2[80..96, 0..64], t19[0..64] writes t3[1..2, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 10 attention_partial#2[0, 0, 1] wait c1 signal c5 bytes 4200 flops 1024 reads t3[0..1, 0..64, 0..16], t4[0..1, 0..64, 0..16], t20[0..16] writes t21[1..2, 0..1], t22[1..2, 0..1], t23[1..2, 0..16]
// CHECK:     task 14 attention_partial#2[1, 0, 1] wait c3 signal c7 bytes 4200 flops 1024 reads t3[1..2, 0..64, 0..16], t4[1..2, 0..64, 0..16], t20[32..48] writes t21[1..2, 2..3], t22[1..2, 2..3], t23[1..2, 32..48]
// CHECK:     task 18 attention_combine#3[1] wait c6 signal c9 bytes 176 flops 64 reads t21[0..2, 1..2], t22[0..2, 1..2], t23[0..2, 16..32] writes t24[16..32]
// CHECK:     task 22 matvec_residual#4[1] wait c9 signal c10 bytes 1216 flops 1024 reads t5[8..16, 0..64], t19[8..16], t24[0..64] writes t25[8..16]
// CHECK:     task 26 matvec_residual#4[5] signal c10 bytes 1216 flops 1024 reads t5[40..48, 0..64], t19[40..48], t24[0..64] writes t25[40..48]
// CHECK:     task 30 rmsnorm_swiglu#5[1] wait c10 signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[8..16, 0..64], t7[136..144, 0..64], t25[0..64] writes t26[8..16]
// CHECK:     task 34 rmsnorm_swiglu#5[5] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[40..48, 0..64], t7[168..176, 0..64], t25[0..64] writes t26[40..48]
// CHECK:     task 38 rmsnorm_swiglu#5[9] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[72..80, 0..64], t7[200..208, 0..64], t25[0..64] writes t26[72..80]
// CHECK:     task 42 rmsnorm_swiglu#5[13] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[104..112, 0..64], t7[232..240, 0..64], t25[0..64] writes t26[104..112]
// CHECK:     task 46 matvec_residual#6[1] wait c11 signal c12 bytes 2368 flops 2048 reads t8[8..16, 0..128], t25[8..16], t26[0..128] writes t27[8..16]
// CHECK:     task 50 matvec_residual#6[5] signal c12 bytes 2368 flops 2048 reads t8[40..48, 0..128], t25[40..48], t26[0..128] writes t27[40..48]
// CHECK:     task 54 qkv_rope_append#7[1, 0] wait c12 signal c14 bytes 2464 flops 2048 reads t9[0..64], t10[16..32, 0..64], t27[0..64] writes t28[16..32]
// CHECK:     task 58 qkv_rope_append#7[5, 0] signal c15,c16 bytes 2464 flops 2048 reads t9[0..64], t10[80..96, 0..64], t27[0..64] writes t11[1..2, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 62 attention_partial#8[0, 0, 1] wait c13 signal c17 bytes 4200 flops 1024 reads t11[0..1, 0..64, 0..16], t12[0..1, 0..64, 0..16], t28[0..16] writes t29[1..2, 0..1], t30[1..2, 0..1], t31[1..2, 0..16]
// CHECK:     task 66 attention_partial#8[1, 0, 1] wait c15 signal c19 bytes 4200 flops 1024 reads t11[1..2, 0..64, 0..16], t12[1..2, 0..64, 0..16], t28[32..48] writes t29[1..2, 2..3], t30[1..2, 2..3], t31[1..2, 32..48]
// CHECK:     task 70 attention_combine#9[1] wait c18 signal c21 bytes 176 flops 64 reads t29[0..2, 1..2], t30[0..2, 1..2], t31[0..2, 16..32] writes t32[16..32]
// CHECK:     task 74 matvec_residual#10[1] wait c21 signal c22 bytes 1216 flops 1024 reads t13[8..16, 0..64], t27[8..16], t32[0..64] writes t33[8..16]
// CHECK:     task 78 matvec_residual#10[5] signal c22 bytes 1216 flops 1024 reads t13[40..48, 0..64], t27[40..48], t32[0..64] writes t33[40..48]
// CHECK:     task 82 rmsnorm_swiglu#11[1] wait c22 signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[8..16, 0..64], t15[136..144, 0..64], t33[0..64] writes t34[8..16]
// CHECK:     task 86 rmsnorm_swiglu#11[5] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[40..48, 0..64], t15[168..176, 0..64], t33[0..64] writes t34[40..48]
// CHECK:     task 90 rmsnorm_swiglu#11[9] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[72..80, 0..64], t15[200..208, 0..64], t33[0..64] writes t34[72..80]
// CHECK:     task 94 rmsnorm_swiglu#11[13] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[104..112, 0..64], t15[232..240, 0..64], t33[0..64] writes t34[104..112]
// CHECK:     task 98 matvec_residual#12[1] wait c23 signal c24 bytes 2368 flops 2048 reads t16[8..16, 0..128], t33[8..16], t34[0..128] writes t35[8..16]
// CHECK:     task 102 matvec_residual#12[5] signal c24 bytes 2368 flops 2048 reads t16[40..48, 0..128], t33[40..48], t34[0..128] writes t35[40..48]
// CHECK:     task 106 rmsnorm_lm_head_argmax#13[1] wait c24 signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[8..16, 0..64], t35[0..64] writes t36[8..16], t37[1..2], t38[1..2]
// CHECK:     task 110 rmsnorm_lm_head_argmax#13[5] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[40..48, 0..64], t35[0..64] writes t36[40..48], t37[5..6], t38[5..6]
// CHECK:     task 114 rmsnorm_lm_head_argmax#13[9] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[72..80, 0..64], t35[0..64] writes t36[72..80], t37[9..10], t38[9..10]
// CHECK:     task 118 rmsnorm_lm_head_argmax#13[13] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[104..112, 0..64], t35[0..64] writes t36[104..112], t37[13..14], t38[13..14]
// CHECK:     task 122 rmsnorm_lm_head_argmax#13[17] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[136..144, 0..64], t35[0..64] writes t36[136..144], t37[17..18], t38[17..18]
// CHECK:     task 126 rmsnorm_lm_head_argmax#13[21] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[168..176, 0..64], t35[0..64] writes t36[168..176], t37[21..22], t38[21..22]
// CHECK:     task 130 rmsnorm_lm_head_argmax#13[25] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[200..208, 0..64], t35[0..64] writes t36[200..208], t37[25..26], t38[25..26]
// CHECK:     task 134 rmsnorm_lm_head_argmax#13[29] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[232..240, 0..64], t35[0..64] writes t36[232..240], t37[29..30], t38[29..30]
// CHECK:   sm 3:  // 34 tasks, 72512 bytes
// CHECK:     task 3 qkv_rope_append#1[2, 0] wait c0 signal c3 bytes 2464 flops 2048 reads t1[0..64], t2[32..48, 0..64], t19[0..64] writes t20[32..48]
// CHECK:     task 7 qkv_rope_append#1[6, 0] signal c1,c2 bytes 2464 flops 2048 reads t1[0..64], t2[96..112, 0..64], t19[0..64] writes t4[0..1, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 11 attention_partial#2[0, 1, 0] wait c2 signal c6 bytes 4200 flops 1024 reads t3[0..1, 0..64, 0..16], t4[0..1, 0..64, 0..16], t20[16..32] writes t21[0..1, 1..2], t22[0..1, 1..2], t23[0..1, 16..32]
// CHECK:     task 15 attention_partial#2[1, 1, 0] wait c4 signal c8 bytes 4200 flops 1024 reads t3[1..2, 0..64, 0..16], t4[1..2, 0..64, 0..16], t20[48..64] writes t21[0..1, 3..4], t22[0..1, 3..4], t23[0..1, 48..64]
// CHECK:     task 19 attention_combine#3[2] wait c7 signal c9 bytes 176 flops 64 reads t21[0..2, 2..3], t22[0..2, 2..3], t23[0..2, 32..48] writes t24[32..48]
// CHECK:     task 23 matvec_residual#4[2] wait c9 signal c10 bytes 1216 flops 1024 reads t5[16..24, 0..64], t19[16..24], t24[0..64] writes t25[16..24]
// CHECK:     task 27 matvec_residual#4[6] signal c10 bytes 1216 flops 1024 reads t5[48..56, 0..64], t19[48..56], t24[0..64] writes t25[48..56]
// CHECK:     task 31 rmsnorm_swiglu#5[2] wait c10 signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[16..24, 0..64], t7[144..152, 0..64], t25[0..64] writes t26[16..24]
// CHECK:     task 35 rmsnorm_swiglu#5[6] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[48..56, 0..64], t7[176..184, 0..64], t25[0..64] writes t26[48..56]
// CHECK:     task 39 rmsnorm_swiglu#5[10] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[80..88, 0..64], t7[208..216, 0..64], t25[0..64] writes t26[80..88]
// CHECK:     task 43 rmsnorm_swiglu#5[14] signal c11 bytes 2448 flops 2048 reads t6[0..64], t7[112..120, 0..64], t7[240..248, 0..64], t25[0..64] writes t26[112..120]
// CHECK:     task 47 matvec_residual#6[2] wait c11 signal c12 bytes 2368 flops 2048 reads t8[16..24, 0..128], t25[16..24], t26[0..128] writes t27[16..24]
// CHECK:     task 51 matvec_residual#6[6] signal c12 bytes 2368 flops 2048 reads t8[48..56, 0..128], t25[48..56], t26[0..128] writes t27[48..56]
// CHECK:     task 55 qkv_rope_append#7[2, 0] wait c12 signal c15 bytes 2464 flops 2048 reads t9[0..64], t10[32..48, 0..64], t27[0..64] writes t28[32..48]
// CHECK:     task 59 qkv_rope_append#7[6, 0] signal c13,c14 bytes 2464 flops 2048 reads t9[0..64], t10[96..112, 0..64], t27[0..64] writes t12[0..1, 0..64 at input 1 + 0..1, 0..16]
// CHECK:     task 63 attention_partial#8[0, 1, 0] wait c14 signal c18 bytes 4200 flops 1024 reads t11[0..1, 0..64, 0..16], t12[0..1, 0..64, 0..16], t28[16..32] writes t29[0..1, 1..2], t30[0..1, 1..2], t31[0..1, 16..32]
// CHECK:     task 67 attention_partial#8[1, 1, 0] wait c16 signal c20 bytes 4200 flops 1024 reads t11[1..2, 0..64, 0..16], t12[1..2, 0..64, 0..16], t28[48..64] writes t29[0..1, 3..4], t30[0..1, 3..4], t31[0..1, 48..64]
// CHECK:     task 71 attention_combine#9[2] wait c19 signal c21 bytes 176 flops 64 reads t29[0..2, 2..3], t30[0..2, 2..3], t31[0..2, 32..48] writes t32[32..48]
// CHECK:     task 75 matvec_residual#10[2] wait c21 signal c22 bytes 1216 flops 1024 reads t13[16..24, 0..64], t27[16..24], t32[0..64] writes t33[16..24]
// CHECK:     task 79 matvec_residual#10[6] signal c22 bytes 1216 flops 1024 reads t13[48..56, 0..64], t27[48..56], t32[0..64] writes t33[48..56]
// CHECK:     task 83 rmsnorm_swiglu#11[2] wait c22 signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[16..24, 0..64], t15[144..152, 0..64], t33[0..64] writes t34[16..24]
// CHECK:     task 87 rmsnorm_swiglu#11[6] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[48..56, 0..64], t15[176..184, 0..64], t33[0..64] writes t34[48..56]
// CHECK:     task 91 rmsnorm_swiglu#11[10] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[80..88, 0..64], t15[208..216, 0..64], t33[0..64] writes t34[80..88]
// CHECK:     task 95 rmsnorm_swiglu#11[14] signal c23 bytes 2448 flops 2048 reads t14[0..64], t15[112..120, 0..64], t15[240..248, 0..64], t33[0..64] writes t34[112..120]
// CHECK:     task 99 matvec_residual#12[2] wait c23 signal c24 bytes 2368 flops 2048 reads t16[16..24, 0..128], t33[16..24], t34[0..128] writes t35[16..24]
// CHECK:     task 103 matvec_residual#12[6] signal c24 bytes 2368 flops 2048 reads t16[48..56, 0..128], t33[48..56], t34[0..128] writes t35[48..56]
// CHECK:     task 107 rmsnorm_lm_head_argmax#13[2] wait c24 signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[16..24, 0..64], t35[0..64] writes t36[16..24], t37[2..3], t38[2..3]
// CHECK:     task 111 rmsnorm_lm_head_argmax#13[6] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[48..56, 0..64], t35[0..64] writes t36[48..56], t37[6..7], t38[6..7]
// CHECK:     task 115 rmsnorm_lm_head_argmax#13[10] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[80..88, 0..64], t35[0..64] writes t36[80..88], t37[10..11], t38[10..11]
// CHECK:     task 119 rmsnorm_lm_head_argmax#13[14] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[112..120, 0..64], t35[0..64] writes t36[112..120], t37[14..15], t38[14..15]
// CHECK:     task 123 rmsnorm_lm_head_argmax#13[18] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[144..152, 0..64], t35[0..64] writes t36[144..152], t37[18..19], t38[18..19]
// CHECK:     task 127 rmsnorm_lm_head_argmax#13[22] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[176..184, 0..64], t35[0..64] writes t36[176..184], t37[22..23], t38[22..23]
// CHECK:     task 131 rmsnorm_lm_head_argmax#13[26] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[208..216, 0..64], t35[0..64] writes t36[208..216], t37[26..27], t38[26..27]
// CHECK:     task 135 rmsnorm_lm_head_argmax#13[30] signal c25 bytes 1448 flops 1024 reads t17[0..64], t18[240..248, 0..64], t35[0..64] writes t36[240..248], t37[30..31], t38[30..31]
